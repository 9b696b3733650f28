"""readbox from Python: safe, read-only cat, ls, find, grep, head, tail, wc, stat, diff, pwd and
the restricted shell `sh`, answered as the envelope dict `{"output", "error", "truncated"}` (and
`"notes"` when there are any).

    >>> import readbox
    >>> readbox.call("grep", {"pattern": "TODO", "path": "src"}, working_directory="/repo")
    {'output': 'src/app.py:12:# TODO: retry\\n', 'error': None, 'truncated': False}

Every call is a child process of the binary this package installed (`find_bin()`), started as
`readbox call TOOL JSON` without a shell, with the policy in its environment and standard input
closed. The confinement, the Landlock sandbox, the caps and the kill at the timeout all happen in
the child, so none of them can reach the caller's interpreter, and a crash ends only the child.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from typing import Any

from ._policy import TOOLS, Policy

__all__ = ["TOOLS", "Policy", "ReadboxError", "call", "find_bin", "schema", "sh"]

# How long past its timeout a child may run before the caller kills it. The binary's watchdog
# answers at the deadline; this only bounds a child that cannot (the same grace as `readbox mcp`).
_GRACE = 2.0


class ReadboxError(RuntimeError):
    """The binary gave no envelope (it was killed, or could not start), or a meta command such as
    `schema` answered an error."""


def find_bin() -> str:
    """The path of the readbox binary installed with this package.

    Looked for as pip, `pip install --user`, `pip install --target` and uv lay a wheel's scripts
    out; `FileNotFoundError` when none is there."""
    exe = "readbox" + (sysconfig.get_config_var("EXE") or "")
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    user_scheme = sysconfig.get_preferred_scheme("user")
    candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    # `pip install --target DIR` puts the scripts in DIR/bin, beside the package's folder.
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates.append(os.path.join(pkg_root, "bin", exe))
    # `pip install --prefix P`: the package is in P/lib/pythonX.Y/site-packages, scripts in P/bin.
    candidates.append(
        os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(pkg_root))), "bin", exe)
    )
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        f"the readbox binary is not installed beside this package (looked at {candidates[0]})"
    )


def call(tool: str, args: Mapping[str, Any] | None = None, **policy: Any) -> dict[str, Any]:
    """Run TOOL with ARGS (its parameters by name, as `readbox schema` lists them) and return the
    envelope as a dict.

    POLICY is the keyword arguments of `Policy` (`working_directory`, `allowed_directories`,
    `allowed_tools`, `exclude_patterns`, `timeout`, `max_output_bytes`, `max_read_bytes`,
    `max_entries`, `redact`, `respect_ignore_files`); a bad value raises `ValueError` before
    anything runs. Errors of the call itself (`denied:`, `not found:`, `timeout:`, `usage:` for a
    value of the wrong type …) are the envelope's `error`, never an exception."""
    return run(Policy(**policy), tool, {} if args is None else args)


def sh(command: str, **policy: Any) -> dict[str, Any]:
    """Run one command line through `readbox sh` (pipes, lists, globs; nothing but readbox's
    tools runs) and return its envelope. POLICY as for `call`."""
    if not isinstance(command, str):
        raise TypeError(f"command must be a str, not {type(command).__name__}")
    return call("sh", {"command": command}, **policy)


def schema(**policy: Any) -> list[dict[str, Any]]:
    """The definitions of the enabled tools (`name`, `description`, `input_schema`), as
    `readbox schema` prints them."""
    p = Policy(**policy)
    env = run_argv(p, ["schema"], None, uncapped=True)
    if not env["truncated"]:
        return _document(env, "schema")
    return [
        d
        for t in schema_tools(p)
        for d in _definition(run_argv(p.with_tools((t,)), ["schema"], None, uncapped=True))
    ]


def schema_tools(policy: Policy) -> tuple[str, ...]:
    """The tools to ask for one by one when a locked output cap cuts the whole schema."""
    return policy.settings["allowed_tools"] or TOOLS


def _definition(env: dict[str, Any]) -> list[dict[str, Any]]:
    # One tool's definition; none for a tool the configuration does not enable.
    if env["error"] is not None and env["error"].startswith("config:"):
        return []
    return _document(env, "schema")


# The runners below are shared with readbox.adk; they take a checked Policy.


def run(policy: Policy, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """`readbox call TOOL JSON` under POLICY, waiting for it; the envelope."""
    return run_argv(policy, _call_argv(tool, args), policy.settings["timeout"])


async def run_async(
    policy: Policy, tool: str, args: Mapping[str, Any], timeout: float | None
) -> dict[str, Any]:
    """`run` for an event loop: the loop goes on while the child works; cancelling kills it."""
    return await run_argv_async(policy, _call_argv(tool, args), timeout)


def run_argv(
    policy: Policy, argv: list[str], timeout: float | None, uncapped: bool = False
) -> dict[str, Any]:
    bin_ = find_bin()
    try:
        done = subprocess.run(
            [bin_, *argv],
            env=policy.environ(uncapped=uncapped),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=None if timeout is None else timeout + _GRACE,
        )
    except subprocess.TimeoutExpired:
        return _timed_out(timeout)
    except OSError as e:
        raise ReadboxError(f"readbox could not start: {e}") from e
    return _envelope(done.returncode, done.stdout, done.stderr)


async def run_argv_async(
    policy: Policy, argv: list[str], timeout: float | None, uncapped: bool = False
) -> dict[str, Any]:
    bin_ = find_bin()
    try:
        proc = await asyncio.create_subprocess_exec(
            bin_,
            *argv,
            env=policy.environ(uncapped=uncapped),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as e:
        raise ReadboxError(f"readbox could not start: {e}") from e
    try:
        limit = None if timeout is None else timeout + _GRACE
        try:
            out, err = await asyncio.wait_for(proc.communicate(), limit)
        except asyncio.TimeoutError:
            return _timed_out(timeout)
        return _envelope(proc.returncode, out, err)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _call_argv(tool: str, args: Mapping[str, Any]) -> list[str]:
    if not isinstance(tool, str):
        raise TypeError(f"tool must be a str, not {type(tool).__name__}")
    if not isinstance(args, Mapping):
        raise TypeError(f"args must be a dict, not {type(args).__name__}")
    return ["call", tool, json.dumps(dict(args), ensure_ascii=False)]


def _envelope(status: int, stdout: bytes, stderr: bytes) -> dict[str, Any]:
    try:
        env = json.loads(stdout)
        if isinstance(env, dict) and {"output", "error", "truncated"} <= env.keys():
            return env
    except ValueError:
        pass
    why = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
    tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    raise ReadboxError(f"readbox gave no envelope ({why}) {tail[0]}".rstrip())


def _timed_out(timeout: float | None) -> dict[str, Any]:
    return {
        "output": "",
        "error": f"timeout: the call took longer than {timeout:g} s",
        "truncated": False,
    }


def _document(env: dict[str, Any], what: str) -> Any:
    if env["error"] is not None:
        raise ReadboxError(f"readbox {what}: {env['error']}")
    if env["truncated"]:
        raise ReadboxError(
            f"readbox {what}: the document was cut at the configured max_output_bytes"
        )
    return json.loads(env["output"])


def main() -> None:
    """`python -m readbox ARGS…`: the binary with ARGS, in place of this process."""
    bin_ = find_bin()
    if sys.platform == "win32":
        sys.exit(subprocess.call([bin_, *sys.argv[1:]]))
    os.execv(bin_, [bin_, *sys.argv[1:]])
