"""readbox.adk.ReadboxToolset under google-adk, offline: every tool through `run_async`, the
constructor's checks, filters and prefixes, BashToolset's methods, declarations through ADK's
Gemini model, timeouts that leave the event loop free, ADK's McpToolset against `readbox mcp`, and
an agent loop driven by a scripted model."""

import asyncio
import http.server
import inspect
import json
import os
import threading
import time

import pytest
from google.adk.agents import LlmAgent
from google.adk.features import FeatureName
from google.adk.features._feature_registry import temporary_feature_override
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

import readbox
from conftest import CANARY, no_secret
from readbox.adk import ReadboxToolset


def run(coro):
    return asyncio.run(coro)


async def tools_by_name(ts):
    return {t.name: t for t in await ts.get_tools()}


def test_get_tools_is_one_tool_per_enabled_tool(sb):
    async def main():
        every = await ReadboxToolset(working_directory=sb.root).get_tools()
        some = await ReadboxToolset(
            working_directory=sb.root, allowed_tools=["grep", "cat"]
        ).get_tools()
        none = await ReadboxToolset(working_directory=sb.root, allowed_tools=[]).get_tools()
        return [t.name for t in every], [t.name for t in some], none

    every, some, none = run(main())
    assert every == list(readbox.TOOLS)
    assert some == ["cat", "grep"]
    assert none == []


def test_every_tool_through_run_async(sb):
    sb.file("a.txt", "one\ntwo\nthree\n")
    sb.file("b.txt", "one\n2\nthree\n")
    sb.file("src/main.py", "print(2 + 3)\n")

    async def main():
        t = await tools_by_name(ReadboxToolset(working_directory=sb.root))

        async def call(name, **args):
            return await t[name].run_async(args=args, tool_context=None)

        return {
            "cat": await call("cat", path="a.txt"),
            "pwd": await call("pwd"),
            "ls": await call("ls", path="."),
            "find": await call("find", pattern="*.py", file_type="file"),
            "grep": await call("grep", pattern="print", path="src"),
            "head": await call("head", path="a.txt", lines=2),
            "tail": await call("tail", path="a.txt", lines=2),
            "wc": await call("wc", path="a.txt"),
            "stat": await call("stat", path="b.txt"),
            "diff": await call("diff", path_a="a.txt", path_b="b.txt"),
            "sh": await call("sh", command="ls src | wc"),
            "bad": await call("head", path="a.txt", lines=-1),
        }

    r = run(main())
    assert r["cat"] == {"output": "one\ntwo\nthree\n", "error": None, "truncated": False}
    assert r["pwd"]["output"] == sb.root + "\n"
    assert r["ls"]["output"] == "a.txt\nb.txt\nsrc/\n"
    assert r["find"]["output"] == "src/main.py\n"
    assert r["grep"]["output"] == "src/main.py:1:print(2 + 3)\n"
    assert r["head"]["output"] == "one\ntwo\n"
    assert r["tail"]["output"] == "two\nthree\n"
    assert json.loads(r["wc"]["output"]) == {"lines": 3, "words": 3, "bytes": 14}
    assert json.loads(r["stat"]["output"])["size_bytes"] == 12
    assert r["diff"]["output"].splitlines()[2:] == [
        "@@ -1,3 +1,3 @@",
        " one",
        "-two",
        "+2",
        " three",
    ]
    assert r["sh"]["output"].split() == ["1", "1", "8", "-"]
    assert r["bad"]["error"].startswith("usage:")


def test_bash_toolset_methods_have_the_schemas_signatures(sb):
    ts = ReadboxToolset(working_directory=sb.root)
    for definition in readbox.schema(working_directory=sb.root):
        method = getattr(ts, definition["name"])
        assert inspect.iscoroutinefunction(method)
        params = list(inspect.signature(method).parameters.values())
        props = definition["input_schema"]["properties"]
        assert [p.name for p in params] == list(props), definition["name"]
        for p in params:
            if p.name in definition["input_schema"]["required"]:
                assert p.default is inspect.Parameter.empty, (definition["name"], p.name)
            else:
                assert p.default == props[p.name]["default"], (definition["name"], p.name)


def test_bash_toolset_methods_answer_envelopes(sb):
    sb.file("a.txt", "alpha\nbeta\n")
    sb.file("sub/deep/b.txt", "beta\n")
    sb.file(".hidden", "")

    async def main():
        ts = ReadboxToolset(working_directory=sb.root)
        return (
            await ts.cat("a.txt"),
            await ts.grep("beta"),
            await ts.grep("beta", ".", False),
            await ts.grep("BETA", ignore_case=True, file_pattern="b.*"),
            await ts.find(".", "*.txt", "file", 1),
            await ts.ls(show_hidden=True),
            await ts.head("a.txt", 1),
            await ts.cat(".env"),
        )

    cat, grep, flat, icase, find, ls, head, env = run(main())
    assert cat == {"output": "alpha\nbeta\n", "error": None, "truncated": False}
    assert grep["output"] == "a.txt:2:beta\nsub/deep/b.txt:1:beta\n"
    assert flat["output"] == "a.txt:2:beta\n"
    assert icase["output"] == "sub/deep/b.txt:1:beta\n"
    assert find["output"] == "a.txt\n"
    # The excluded .env is never listed.
    assert ls["output"] == ".hidden\na.txt\nsub/\n"
    assert head["output"] == "alpha\n"
    assert env["error"] == "denied: .env" and no_secret(env)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(timeout=0),
        dict(timeout=-3),
        dict(allowed_tools=["cat", "rm"]),
        dict(working_directory="/nonexistent/readbox-test"),
        dict(allowed_directories=["/nonexistent/readbox-test"]),
        dict(max_output_bytes=0),
        dict(max_entries=-1),
    ],
)
def test_constructor_errors_are_value_errors(sb, kwargs):
    with pytest.raises(ValueError):
        ReadboxToolset(**dict(dict(working_directory=sb.root), **kwargs))


def test_the_binary_checks_the_policy_when_the_toolset_is_made(sb):
    # A glob that does not compile is found by readbox itself, as its `config:` error.
    with pytest.raises(
        ValueError, match=r"^config: READBOX_EXCLUDE: pattern 'a\{b' is not a valid glob"
    ):
        ReadboxToolset(working_directory=sb.root, exclude_patterns=["a{b"])


def test_settings_in_effect_are_attributes(sb):
    ts = ReadboxToolset(sb.root, None, ["cat"], [], 2.5, 1000, 2000, 30, redact=False)
    assert (ts.working_directory, ts.allowed_directories, ts.allowed_tools) == (
        sb.root,
        [sb.root],
        ["cat"],
    )
    assert (
        ts.exclude_patterns,
        ts.timeout,
        ts.max_output_bytes,
        ts.max_read_bytes,
        ts.max_entries,
    ) == ([], 2.5, 1000, 2000, 30)
    assert (ts.redact, ts.respect_ignore_files) == (False, True)
    d = ReadboxToolset(working_directory=sb.root)
    assert (d.timeout, d.max_output_bytes, d.max_read_bytes, d.max_entries) == (
        10.0,
        32768,
        8 << 20,
        10000,
    )
    assert d.exclude_patterns == [".env", ".env.*", ".ssh", ".aws", "*.pem", "*.key"]


def test_working_directory_is_fixed_when_the_toolset_is_made(sb, monkeypatch):
    monkeypatch.chdir(sb.root)
    ts = ReadboxToolset()
    monkeypatch.chdir(sb.outside)
    assert run(ts.pwd())["output"] == sb.root + "\n"
    assert run(ts.cat("../outside/secret.txt"))["error"] == "denied: ../outside/secret.txt"


def test_tool_filter_and_tool_name_prefix(sb):
    sb.file("main.py", "print(1)\n")

    async def main():
        listed = await ReadboxToolset(
            working_directory=sb.root, tool_filter=["cat", "ls", "nope"]
        ).get_tools()
        picked = await ReadboxToolset(
            working_directory=sb.root, tool_filter=lambda tool, ctx=None: tool.name.startswith("g")
        ).get_tools()
        pts = ReadboxToolset(
            working_directory=sb.root, allowed_tools=["cat", "wc"], tool_name_prefix="fs"
        )
        prefixed = await pts.get_tools_with_prefix()
        cat = prefixed[0]
        return (
            [t.name for t in listed],
            [t.name for t in picked],
            [t.name for t in prefixed],
            cat._get_declaration().name,
            await cat.run_async(args={"path": "main.py"}, tool_context=None),
        )

    listed, picked, prefixed, decl_name, answer = run(main())
    assert listed == ["cat", "ls"]
    assert picked == ["grep"]
    assert prefixed == ["fs_cat", "fs_wc"]
    assert decl_name == "fs_cat"
    assert answer == {"output": "print(1)\n", "error": None, "truncated": False}


def test_no_tools_means_every_method_is_disabled(sb):
    ts = ReadboxToolset(working_directory=sb.root, allowed_tools=[])
    assert run(ts.pwd())["error"] == "disabled: pwd is not enabled"
    assert run(ts.sh("pwd"))["error"] == "disabled: sh is not enabled"


def test_declarations_keep_descriptions_ranges_enums_and_defaults(sb):
    async def main():
        return await tools_by_name(ReadboxToolset(working_directory=sb.root))

    t = run(main())
    with temporary_feature_override(FeatureName.JSON_SCHEMA_FOR_FUNC_DECL, True):
        decl = t["find"]._get_declaration()
        assert decl.parameters is None
        assert decl.parameters_json_schema["properties"]["file_type"]["enum"] == [
            "all",
            "file",
            "directory",
        ]
    with temporary_feature_override(FeatureName.JSON_SCHEMA_FOR_FUNC_DECL, False):
        decl = t["find"]._get_declaration()
        assert decl.parameters_json_schema is None
        props = decl.parameters.properties
        assert decl.parameters.type == types.Type.OBJECT
        assert props["file_type"].enum == ["all", "file", "directory"]
        assert (
            props["max_depth"].type,
            props["max_depth"].minimum,
            props["max_depth"].maximum,
        ) == (types.Type.INTEGER, 0, 100)
        assert props["max_depth"].default == 20
        assert props["path"].description == "the directory to search"
        g = t["grep"]._get_declaration().parameters
        assert g.required == ["pattern"] and g.properties["recursive"].type == types.Type.BOOLEAN
        assert t["pwd"]._get_declaration().parameters is None
        assert t["sh"]._get_declaration().parameters.required == ["command"]
    for tool in t.values():
        assert tool._get_declaration().description == tool.description != ""


class FakeGemini(http.server.BaseHTTPRequestHandler):
    """Answers generateContent with one text part and keeps each request body."""

    bodies = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        FakeGemini.bodies.append((self.path, json.loads(body)))
        answer = json.dumps(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "done"}]},
                        "finishReason": "STOP",
                    }
                ]
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("json_schema", [True, False])
def test_declarations_reach_the_gemini_api_request(sb, json_schema):
    from google.adk.models.google_llm import Gemini
    from google.genai import Client

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeGemini)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    FakeGemini.bodies.clear()
    client = Client(
        api_key="offline",
        http_options=types.HttpOptions(base_url=f"http://127.0.0.1:{server.server_port}"),
    )
    try:
        with temporary_feature_override(FeatureName.JSON_SCHEMA_FOR_FUNC_DECL, json_schema):
            texts = run(
                _agent_run(Gemini(model="gemini-2.5-flash", client=client), sb, "list the files")
            )
    finally:
        server.shutdown()
    assert texts == ["done"]
    path, body = FakeGemini.bodies[0]
    assert path.endswith("/models/gemini-2.5-flash:generateContent")
    decls = {d["name"]: d for tool in body["tools"] for d in tool["functionDeclarations"]}
    assert sorted(decls) == sorted(readbox.TOOLS)
    assert decls["pwd"].keys() == {"name", "description"}
    if json_schema:
        # The SDK sends the field by its proto name, which the API's JSON accepts as well.
        params = decls["head"]["parameters_json_schema"]
        assert params["properties"]["lines"] == {
            "type": "integer",
            "minimum": 0,
            "maximum": 10000,
            "description": params["properties"]["lines"]["description"],
            "default": 10,
        }
    else:
        params = decls["head"]["parameters"]
        assert params["type"] == "OBJECT" and params["required"] == ["path"]
        assert params["properties"]["lines"]["type"] == "INTEGER"
        assert (
            params["properties"]["lines"]["minimum"],
            params["properties"]["lines"]["maximum"],
        ) == (0, 10000)
        assert "additionalProperties" not in json.dumps(params)


class ScriptedModel(BaseLlm):
    """A model that asks for cat, then grep, then answers with what the two tools returned."""

    model: str = "scripted"
    requests: list = []

    async def generate_content_async(self, llm_request, stream=False):
        self.requests.append(llm_request)
        step = len(self.requests)
        if step == 1:
            call = types.FunctionCall(name="cat", args={"path": "main.py"})
        elif step == 2:
            call = types.FunctionCall(name="grep", args={"pattern": "TODO", "path": "."})
        else:
            results = [
                p.function_response.response
                for c in llm_request.contents
                for p in c.parts or []
                if p.function_response
            ]
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=json.dumps(results))])
            )
            return
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=call)])
        )


async def _agent_run(model, sb, prompt, **toolset):
    agent = LlmAgent(
        model=model,
        name="reader",
        instruction="Read files.",
        tools=[ReadboxToolset(working_directory=sb.root, **toolset)],
    )
    runner = InMemoryRunner(agent=agent, app_name="readbox-test")
    session = await runner.session_service.create_session(app_name="readbox-test", user_id="u")
    texts = []
    async for event in runner.run_async(
        user_id="u",
        session_id=session.id,
        new_message=types.Content(role="user", parts=[types.Part(text=prompt)]),
    ):
        for part in (event.content.parts if event.content else None) or []:
            if part.text and not event.partial:
                texts.append(part.text)
    await runner.close()
    return texts


def test_an_agent_loop_calls_two_tools(sb):
    sb.file("main.py", "# TODO: add\nprint(2 + 3)\n")
    model = ScriptedModel(requests=[])
    texts = run(_agent_run(model, sb, "what is left to do?"))
    assert len(model.requests) == 3
    declared = [
        d.name for tool in model.requests[0].config.tools for d in tool.function_declarations
    ]
    assert sorted(declared) == sorted(readbox.TOOLS)
    assert json.loads(texts[-1]) == [
        {"output": "# TODO: add\nprint(2 + 3)\n", "error": None, "truncated": False},
        {"output": "main.py:1:# TODO: add\n", "error": None, "truncated": False},
    ]


def test_a_timeout_leaves_the_event_loop_free(sb):
    path = sb.file("huge.bin", b"")
    os.truncate(path, 1 << 40)
    for i in range(40):
        p = sb.file(f"tree/d{i:02}/f.txt", "needle\n" * 1200)
        os.truncate(p, 1 << 36)

    async def main():
        ts = ReadboxToolset(working_directory=sb.root, timeout=0.5, max_read_bytes=1 << 60)
        gaps = []

        async def ticker():
            last = time.monotonic()
            while True:
                await asyncio.sleep(0.01)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        t = time.monotonic()
        wc, grep = await asyncio.gather(ts.wc("huge.bin"), ts.grep("needle", "tree"))
        took = time.monotonic() - t
        tick.cancel()
        return wc, grep, took, gaps

    wc, grep, took, gaps = run(main())
    assert wc["error"] == grep["error"] == "timeout: the call took longer than 0.5 s"
    assert grep["output"].startswith("tree/d00/f.txt:1:needle\n")
    assert 0.5 <= took < 1.5, took
    # A caller blocked by the calls would see one gap of half a second.
    assert len(gaps) >= 5 and max(gaps) < 0.25, gaps


def _readbox_children():
    me = str(os.getpid())
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                found.append(pid)
    return found


def test_a_cancelled_call_kills_its_child(sb):
    path = sb.file("huge.bin", b"")
    os.truncate(path, 1 << 40)

    async def main():
        ts = ReadboxToolset(working_directory=sb.root, timeout=60, max_read_bytes=1 << 50)
        task = asyncio.create_task(ts.wc("huge.bin"))
        await asyncio.sleep(0.3)
        during = _readbox_children()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return during, _readbox_children()

    during, after = run(main())
    assert len(during) == 1
    assert after == []


def test_mcp_toolset_drives_readbox_mcp(sb):
    from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
    from mcp import StdioServerParameters

    sb.file("main.py", "print(2 + 3)\n")

    async def main():
        files = McpToolset(
            connection_params=StdioConnectionParams(
                server_params=StdioServerParameters(
                    command=readbox.find_bin(),
                    args=["mcp"],
                    env={"READBOX_ROOTS": sb.root, "READBOX_WORKDIR": sb.root},
                ),
                timeout=10,
            )
        )
        try:
            tools = {t.name: t for t in await files.get_tools()}
            cat = await tools["cat"].run_async(args={"path": "main.py"}, tool_context=None)
            env = await tools["cat"].run_async(args={"path": ".env"}, tool_context=None)
            out = await tools["cat"].run_async(
                args={"path": "../outside/secret.txt"}, tool_context=None
            )
            grep = await tools["sh"].run_async(
                args={"command": "grep print . | wc"}, tool_context=None
            )
        finally:
            await files.close()
        return sorted(tools), cat, env, out, grep

    names, cat, env, out, grep = run(main())
    assert names == sorted(readbox.TOOLS)
    assert cat["content"][0]["text"] == "print(2 + 3)\n" and not cat.get("isError")
    assert env["isError"] and env["content"][0]["text"].startswith("denied: .env")
    assert out["isError"] and "denied: ../outside/secret.txt" in out["content"][0]["text"]
    assert grep["content"][0]["text"].split() == ["1", "3", "23", "-"]
    assert CANARY not in json.dumps([cat, env, out, grep])


def test_a_small_output_cap_still_declares_every_tool(sb):
    ts = ReadboxToolset(working_directory=sb.root, max_output_bytes=64)
    assert [t.name for t in run(ts.get_tools())] == list(readbox.TOOLS)
    assert ts.max_output_bytes == 64


def test_uvx_serves_readbox_mcp_from_the_wheel(sb, tmp_path):
    """`uvx --from readbox-tools readbox mcp`, the MCP hosts' form, with the wheel that .ci/run
    built (READBOX_WHEELS names its folder) and nothing from the network."""
    from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
    from mcp import StdioServerParameters

    wheels = os.environ.get("READBOX_WHEELS")
    if not wheels:
        pytest.skip("READBOX_WHEELS (the folder of the built wheel) is not set")
    uvx = os.path.join(os.path.dirname(os.path.realpath(readbox.find_bin())), "uvx")
    sb.file("main.py", "print(2 + 3)\n")

    async def main():
        files = McpToolset(
            connection_params=StdioConnectionParams(
                server_params=StdioServerParameters(
                    command=uvx,
                    args=[
                        "--offline",
                        "--no-config",
                        "--find-links",
                        wheels,
                        "--from",
                        "readbox-tools",
                        "readbox",
                        "mcp",
                    ],
                    env={
                        "PATH": os.environ["PATH"],
                        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
                        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
                        "READBOX_ROOTS": sb.root,
                        "READBOX_WORKDIR": sb.root,
                    },
                ),
                timeout=30,
            )
        )
        try:
            tools = {t.name: t for t in await files.get_tools()}
            cat = await tools["cat"].run_async(args={"path": "main.py"}, tool_context=None)
        finally:
            await files.close()
        return sorted(tools), cat

    names, cat = run(main())
    assert names == sorted(readbox.TOOLS)
    assert cat["content"][0]["text"] == "print(2 + 3)\n"


def test_a_crashed_or_hung_child_is_an_answer_for_the_agent(sb, monkeypatch):
    ts = ReadboxToolset(working_directory=sb.root, timeout=0.2)
    crash = sb.write("crash", "#!/bin/sh\nkill -KILL $$\n")
    hang = sb.write("hang", "#!/bin/sh\nexec sleep 30\n")
    for p in (crash, hang):
        os.chmod(p, 0o755)
    monkeypatch.setattr(readbox, "find_bin", lambda: crash)
    r = run(ts.cat("a.txt"))
    assert r == {
        "output": "",
        "error": "io: readbox gave no envelope (killed by signal 9)",
        "truncated": False,
    }
    monkeypatch.setattr(readbox, "find_bin", lambda: hang)
    t = time.monotonic()
    r = run(ts.pwd())
    assert r["error"] == "timeout: the call took longer than 0.2 s"
    assert 2.2 <= time.monotonic() - t < 3.5
    assert _readbox_children() == []


def test_a_locked_config_binds_the_toolset(sb, monkeypatch):
    """Arguments left out take the locked values; one that widens the lock is refused when the
    toolset is made; a locked output cap below the whole schema still declares every tool."""
    cfg = sb.write(
        "readbox.toml",
        f'lock = true\nmax_output_bytes = 4000\nallowed_directories = ["{sb.root}"]\n',
    )
    monkeypatch.setenv("READBOX_CONFIG", cfg)
    ts = ReadboxToolset(working_directory=sb.root)
    assert (ts.max_output_bytes, ts.allowed_directories) == (4000, [sb.root])
    assert [t.name for t in run(ts.get_tools())] == list(readbox.TOOLS)
    with pytest.raises(ValueError, match="above the locked 4000"):
        ReadboxToolset(working_directory=sb.root, max_output_bytes=5000)
    with pytest.raises(ValueError, match="not within the locked roots"):
        ReadboxToolset(working_directory=sb.base, allowed_directories=[sb.base])
    r = readbox.call("pwd", {}, working_directory=sb.root, max_output_bytes=5000)
    assert r["error"] == "config: READBOX_MAX_OUTPUT_BYTES: 5000 is above the locked 4000"
