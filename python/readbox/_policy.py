"""The policy keyword arguments: checked in Python, handed to each child through its environment.

The arguments are named as readbox's config keys are (`working_directory`, `allowed_directories`,
`allowed_tools`, `exclude_patterns`, `timeout`, `max_output_bytes`, `max_read_bytes`,
`max_entries`, `redact`, `respect_ignore_files`). A value that readbox would refuse raises
`ValueError` here (a wrong type raises `TypeError`), so a mistake shows where the object is made,
not as a `config:` answer at the first call. A setting left at `None` is readbox's own default
(or what a config file says), never a copy of it: under a locked config a copied default could
widen the lock and be refused.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping

# readbox's registry, in its order: the ten reading tools and the shell. A test checks this list
# against `readbox schema`.
TOOLS = ("cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff", "sh")

# The variables that the arguments set. Each is taken out of the caller's environment before the
# arguments are put in, so that what the object says is what the child gets.
_VARS = {
    "working_directory": "READBOX_WORKDIR",
    "allowed_directories": "READBOX_ROOTS",
    "allowed_tools": "READBOX_TOOLS",
    "exclude_patterns": "READBOX_EXCLUDE",
    "timeout": "READBOX_TIMEOUT",
    "max_output_bytes": "READBOX_MAX_OUTPUT_BYTES",
    "max_read_bytes": "READBOX_MAX_READ_BYTES",
    "max_entries": "READBOX_MAX_ENTRIES",
    "redact": "READBOX_REDACT",
    "respect_ignore_files": "READBOX_RESPECT_IGNORE_FILES",
}


class Policy:
    """One checked set of policy arguments and the child environment they make.

    `working_directory` defaults to the current directory when the object is made and is kept
    as an absolute, resolved path; relative `allowed_directories` are taken from it. `None`
    leaves a setting to readbox: roots `[working_directory]`, all tools, the default excludes
    (`[]` is no excludes), timeout 10 s, 32768 output bytes, 8 MiB read, 10000 entries,
    redaction and ignore files on.
    """

    __slots__ = ("settings", "env")

    def __init__(
        self,
        working_directory: str | os.PathLike[str] | None = None,
        allowed_directories: Iterable[str | os.PathLike[str]] | None = None,
        allowed_tools: Iterable[str] | None = None,
        exclude_patterns: Iterable[str] | None = None,
        timeout: float | None = None,
        max_output_bytes: int | None = None,
        max_read_bytes: int | None = None,
        max_entries: int | None = None,
        *,
        redact: bool | None = None,
        respect_ignore_files: bool | None = None,
    ) -> None:
        wd = _directory(
            "working_directory", os.getcwd() if working_directory is None else working_directory
        )
        roots = None
        if allowed_directories is not None:
            given = _strings("allowed_directories", allowed_directories, path=True)
            if not given:
                raise ValueError(
                    "allowed_directories: give at least one directory (None: the working directory)"
                )
            roots = tuple(_directory("allowed_directories", os.path.join(wd, d)) for d in given)
            if not any(_beneath(wd, r) for r in roots):
                raise ValueError(
                    f"working_directory {wd!r} is not beneath any of allowed_directories"
                )
        tools = None
        if allowed_tools is not None:
            tools = tuple(_strings("allowed_tools", allowed_tools))
            for t in tools:
                if t not in TOOLS:
                    raise ValueError(f"allowed_tools: unknown tool {t!r}; tools: {' '.join(TOOLS)}")
        excludes = None
        if exclude_patterns is not None:
            excludes = tuple(_strings("exclude_patterns", exclude_patterns))
            for p in excludes:
                if not p or ":" in p:
                    raise ValueError(
                        f"exclude_patterns: {p!r}: a pattern must be non-empty and hold no ':'"
                    )
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
                raise TypeError(
                    f"timeout must be a number of seconds, not {type(timeout).__name__}"
                )
            if not (math.isfinite(timeout) and timeout > 0):
                raise ValueError(
                    f"timeout must be a finite number of seconds greater than 0, not {timeout!r}"
                )
            timeout = float(timeout)
        counts = {}
        for name, v in (
            ("max_output_bytes", max_output_bytes),
            ("max_read_bytes", max_read_bytes),
            ("max_entries", max_entries),
        ):
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, int):
                    raise TypeError(f"{name} must be an int, not {type(v).__name__}")
                if v <= 0:
                    raise ValueError(f"{name} must be greater than 0, not {v!r}")
            counts[name] = v
        for name, v in (("redact", redact), ("respect_ignore_files", respect_ignore_files)):
            if v is not None and not isinstance(v, bool):
                raise TypeError(f"{name} must be a bool, not {type(v).__name__}")

        self.settings = {
            "working_directory": wd,
            "allowed_directories": roots,
            "allowed_tools": tools,
            "exclude_patterns": excludes,
            "timeout": timeout,
            **counts,
            "redact": redact,
            "respect_ignore_files": respect_ignore_files,
        }
        env = {}
        for key, value in self.settings.items():
            if value is None:
                continue
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif key == "allowed_tools":
                # An empty list is "," : no tool names, which readbox reads as none enabled
                # (an empty variable would count as unset, that is all tools).
                text = ",".join(value) or ","
            elif isinstance(value, tuple):
                text = ":".join(value)
            else:
                text = repr(value) if isinstance(value, float) else str(value)
            env[_VARS[key]] = text
        self.env = env

    def environ(
        self, base: Mapping[str, str] | None = None, uncapped: bool = False
    ) -> dict[str, str]:
        """The child's environment: BASE (the caller's) without the variables these settings own,
        plus the settings that were given and `READBOX_FORMAT=json`. UNCAPPED leaves
        `max_output_bytes` to readbox, for the meta commands whose JSON document must arrive whole
        (`schema`, `policy`): the cap is meant for the tools' answers."""
        base = os.environ if base is None else base
        owned = set(_VARS.values()) | {"READBOX_FORMAT"}
        out = {k: v for k, v in base.items() if k not in owned}
        out.update(self.env)
        if uncapped:
            out.pop(_VARS["max_output_bytes"], None)
        out["READBOX_FORMAT"] = "json"
        return out

    def with_tools(self, tools: tuple[str, ...]) -> Policy:
        """The same settings with only TOOLS enabled (a narrowing, which a lock allows)."""
        other = object.__new__(Policy)
        other.settings = dict(self.settings, allowed_tools=tools)
        other.env = dict(self.env, READBOX_TOOLS=",".join(tools) or ",")
        return other

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.settings.items() if v is not None)
        return f"Policy({given})"


def _strings(name: str, values, path: bool = False) -> list[str]:
    if isinstance(values, (str, bytes, os.PathLike)):
        raise TypeError(f"{name} must be a list, not a single {type(values).__name__}")
    try:
        items = list(values)
    except TypeError:
        raise TypeError(f"{name} must be a list, not {type(values).__name__}") from None
    out = []
    for v in items:
        if path and isinstance(v, os.PathLike):
            v = os.fspath(v)
        if not isinstance(v, str):
            raise TypeError(f"{name}: each item must be a str, not {type(v).__name__}")
        out.append(v)
    return out


def _directory(name: str, value) -> str:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a path, not {type(value).__name__}")
    if not value or "\0" in value:
        raise ValueError(f"{name}: {value!r} is not a path")
    real = os.path.realpath(os.path.abspath(value))
    if not os.path.isdir(real):
        raise ValueError(f"{name}: {value!r} is not an existing directory")
    if name == "allowed_directories" and ":" in real:
        # READBOX_ROOTS is ':'-separated.
        raise ValueError(f"{name}: {value!r}: a directory whose path holds ':' cannot be passed")
    return real


def _beneath(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
