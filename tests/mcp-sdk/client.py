"""`readbox mcp` driven by the official MCP Python SDK (the `mcp` package, its version pinned in
.ci/run), as an agent host would drive it: the handshake through ClientSession and stdio_client,
the tool list, each tool called once, a denied path, a truncated call, a client whose roots
narrow to a subfolder, one whose only root lies outside the configured roots, and the stateless
2026-07-28 form through Client(mode="auto"), which probes server/discover and answers the roots
request of a call.

usage: python client.py PATH/TO/readbox

Builds its own sandbox in a temporary folder. Prints one line per check and a last line
`N passed, N failed`; the exit status is 1 when a check failed. The SDK's stdio client passes
the server only a few variables of its own environment, so the READBOX_* ones are given in `env`.
"""

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = sys.argv[1]
CANARY = "CANARY-SDK-OUTSIDE-41c9"
results = []


def check(ok, what, detail=""):
    results.append(bool(ok))
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f": {detail}"))


def text(result, i=0):
    return result.content[i].text


def params(root, env=None):
    """The server, started in `root` with `root` as its one configured root (readbox mcp never
    takes its working directory as a root); `env` may leave READBOX_ROOTS out with None."""
    env = {"READBOX_TIMEOUT": "10", "READBOX_ROOTS": str(root), **(env or {})}
    return StdioServerParameters(
        command=BIN, args=["mcp"], cwd=str(root),
        env={k: v for k, v in env.items() if v is not None})


def roots_answer(*uris):
    async def callback(_context):
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in uris])
    return callback


@contextlib.asynccontextmanager
async def handshake(root, env=None, roots=None, init=None):
    """A ClientSession over stdio_client, initialized (the handshake era); `init` receives the
    initialize result."""
    async with stdio_client(params(root, env)) as (read, write):
        async with ClientSession(read, write, list_roots_callback=roots) as session:
            result = await session.initialize()
            if init is not None:
                init.append(result)
            yield session


async def each_tool(root):
    async with handshake(root) as s:
        listed = (await s.list_tools()).tools
        check(sorted(t.name for t in listed) ==
              sorted(["cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff", "sh"]),
              "tools/list names the ten tools and sh", [t.name for t in listed])
        check(all(t.annotations.read_only_hint is True and t.annotations.open_world_hint is False
                  for t in listed), "every tool is read-only and closed-world")
        calls = [
            ("cat", {"path": "a.txt"}, "top\nneedle\n"),
            ("pwd", {}, f"{root}\n"),
            ("ls", {}, "a.txt\nb.txt\nlong.txt\nsub/\n"),
            ("find", {"pattern": "*.txt", "file_type": "file"}, "a.txt\nb.txt\nlong.txt\nsub/x.txt\n"),
            ("grep", {"pattern": "needle"}, "a.txt:2:needle\n"),
            ("head", {"path": "a.txt", "lines": 1}, "top\n"),
            ("tail", {"path": "a.txt", "lines": 1}, "needle\n"),
            ("diff", {"path_a": "a.txt", "path_b": "b.txt", "context_lines": 0},
             "--- a.txt\n+++ b.txt\n@@ -2 +2 @@\n-needle\n+haystack\n"),
            ("sh", {"command": "cat a.txt | grep needle - && head a.txt 1"},
             "(standard input):2:needle\ntop\n"),
        ]
        for tool, args, want in calls:
            r = await s.call_tool(tool, args)
            check(not r.is_error and text(r) == want, f"{tool} {args}", r)
        r = await s.call_tool("wc", {"path": "a.txt"})
        check(r.structured_content == {"lines": 2, "words": 2, "bytes": 11},
              "wc gives structured content", r)
        r = await s.call_tool("stat", {"path": "a.txt"})
        sc = r.structured_content or {}
        check(sc.get("type") == "file" and sc.get("size_bytes") == 11,
              "stat gives structured content", r)
        r = await s.call_tool("cat", {"path": "../outside/secret.txt"})
        check(r.is_error and text(r) == "denied: ../outside/secret.txt", "an outside path is denied", r)
        r = await s.call_tool("cat", {"path": ".env"})
        check(r.is_error and text(r) == "denied: .env", "an excluded file is denied", r)
        r = await s.call_tool("head", {"path": "a.txt", "lines": 20000})
        check(r.is_error and text(r).startswith("usage: "), "a bad value is a usage error", r)
        r = await s.call_tool("grep", {"pattern": "absent"})
        check(not r.is_error and text(r) == "no line matched" and r.meta["exitStatus"] == 1,
              "an empty answer is said in words; _meta keeps the status", r)


async def first_contact(root):
    init = []
    async with handshake(root, init=init) as s:
        check(str(root) in (init[0].instructions or ""), "instructions name the root", init)
    async with handshake(root, env={"READBOX_ROOTS": None}) as s:
        r = await s.call_tool("cat", {"path": "a.txt"})
        check(r.is_error and text(r).startswith("denied: ") and "READBOX_ROOTS" in text(r),
              "without roots every call is denied, saying how to give them", r)
    sub = root / "sub"
    async with handshake(root, env={"READBOX_ROOTS": None}, roots=roots_answer(sub.as_uri())) as s:
        r = await s.call_tool("cat", {"path": "x.txt"})
        check(not r.is_error and text(r) == "x\n", "without configured roots, the client's are the roots", r)


async def truncated(root):
    async with handshake(root, env={"READBOX_MAX_OUTPUT_BYTES": "30"}) as s:
        r = await s.call_tool("cat", {"path": "long.txt"})
        check(not r.is_error and len(text(r).encode()) <= 30 and r.meta["truncated"] is True,
              "a truncated call is not an error and says so in _meta", r)
        check(len(r.content) == 2 and '{"path": "long.txt", "from_line": 3}' in text(r, 1),
              "its notes, in a second block, give the call that continues it as parameters", r)


async def narrowed(root):
    sub = root / "sub"
    async with handshake(root, roots=roots_answer(sub.as_uri())) as s:
        r = await s.call_tool("cat", {"path": str(sub / "x.txt")})
        check(not r.is_error and text(r) == "x\n", "a file beneath the client's root is read", r)
        r = await s.call_tool("cat", {"path": str(root / "a.txt")})
        check(r.is_error and text(r).startswith("denied: "),
              "a file beside the client's root is denied", r)
        r = await s.call_tool("pwd", {})
        check(text(r) == f"{sub}\n", "relative paths start at the client's root", r)


async def outside_root(root):
    async with handshake(root, roots=roots_answer("file:///etc")) as s:
        for tool, args in [("cat", {"path": "a.txt"}), ("cat", {"path": "/etc/hostname"}),
                           ("ls", {"path": str(root)}), ("grep", {"pattern": "CANARY"})]:
            r = await s.call_tool(tool, args)
            check(r.is_error and text(r).startswith("denied: "),
                  f"a client root outside leaves nothing: {tool} {args}", r)


async def stateless(root):
    sub = root / "sub"
    async with Client(params(root), mode="auto", list_roots_callback=roots_answer(sub.as_uri())) as c:
        check(c.session.protocol_version == "2026-07-28",
              "Client(mode='auto') settles on the stateless form", c.session.protocol_version)
        listed = (await c.list_tools()).tools
        check(len(listed) == 11, "tools/list (stateless)", len(listed))
        r = await c.call_tool("cat", {"path": "x.txt"})
        check(not r.is_error and text(r) == "x\n", "a call narrowed by roots given on request", r)
        r = await c.call_tool("cat", {"path": str(root / "a.txt")})
        check(r.is_error and text(r).startswith("denied: "), "stateless: beside the root is denied", r)


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        root = base / "root"
        (root / "sub").mkdir(parents=True)
        (base / "outside").mkdir()
        (base / "outside" / "secret.txt").write_text(CANARY + "\n")
        (root / "a.txt").write_text("top\nneedle\n")
        (root / "b.txt").write_text("top\nhaystack\n")
        (root / "sub" / "x.txt").write_text("x\n")
        (root / "long.txt").write_text("0123456789\n" * 50)
        (root / ".env").write_text(CANARY + "\n")
        for part in (each_tool, first_contact, truncated, narrowed, outside_root, stateless):
            try:
                await part(root)
            except Exception as e:  # a failure of the client or the server: report, go on
                check(False, part.__name__, f"{type(e).__name__}: {e}")
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
