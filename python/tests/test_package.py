"""The module `readbox`: the installed binary, calls as envelope dicts, the policy arguments, the
child's environment, timeouts and `python -m readbox`."""

import json
import os
import subprocess
import sys
import time

import pytest

import readbox
from conftest import CANARY, no_secret


def test_find_bin_is_the_binary_beside_this_interpreter():
    path = readbox.find_bin()
    assert os.path.dirname(path) == os.path.dirname(sys.executable)
    assert os.access(path, os.X_OK)
    done = subprocess.run([path, "version"], capture_output=True)
    assert json.loads(done.stdout)["output"].startswith("readbox ")


def test_tools_is_the_registry_of_the_binary(sb):
    assert [t["name"] for t in readbox.schema(working_directory=sb.root)] == list(readbox.TOOLS)


def test_every_tool_answers_its_envelope(sb):
    sb.file("a.txt", "one\ntwo\nthree\n")
    sb.file("b.txt", "one\n2\nthree\n")
    sb.file("src/main.py", "print(2 + 3)\n")
    wd = dict(working_directory=sb.root)
    assert readbox.call("cat", {"path": "a.txt"}, **wd) == {
        "output": "one\ntwo\nthree\n",
        "error": None,
        "truncated": False,
    }
    assert readbox.call("cat", {"path": "a.txt", "from_line": 3}, **wd)["output"] == "three\n"
    assert readbox.call("pwd", {}, **wd)["output"] == sb.root + "\n"
    assert readbox.call("ls", {}, **wd)["output"] == "a.txt\nb.txt\nsrc/\n"
    assert readbox.call("ls", {"show_hidden": True}, **wd)["output"] == "a.txt\nb.txt\nsrc/\n"
    assert readbox.call("find", {"pattern": "*.py"}, **wd)["output"] == "src/main.py\n"
    assert (
        readbox.call("grep", {"pattern": "print", "path": "src"}, **wd)["output"]
        == "src/main.py:1:print(2 + 3)\n"
    )
    assert readbox.call("head", {"path": "a.txt", "lines": 1}, **wd)["output"] == "one\n"
    assert readbox.call("tail", {"path": "a.txt", "lines": 1}, **wd)["output"] == "three\n"
    assert json.loads(readbox.call("wc", {"path": "a.txt"}, **wd)["output"]) == {
        "lines": 3,
        "words": 3,
        "bytes": 14,
    }
    st = json.loads(readbox.call("stat", {"path": "a.txt"}, **wd)["output"])
    assert (st["path"], st["type"], st["size_bytes"]) == ("a.txt", "file", 14)
    d = readbox.call("diff", {"path_a": "a.txt", "path_b": "b.txt", "context_lines": 0}, **wd)
    assert d["error"] is None and "-two\n+2\n" in d["output"]
    assert readbox.sh("grep three . | head - 1", **wd)["output"] == "a.txt:3:three\n"


def test_a_wrong_type_is_a_usage_error_not_an_exception(sb):
    sb.file("a.txt", "x\n")
    r = readbox.call("head", {"path": "a.txt", "lines": "5"}, working_directory=sb.root)
    assert r["error"].startswith("usage:") and r["output"] == ""


def test_notes_are_kept(sb):
    sb.file("big.txt", "".join(f"line {i}\n" for i in range(1, 2001)))
    r = readbox.call("cat", {"path": "big.txt"}, working_directory=sb.root, max_output_bytes=100)
    assert r["truncated"] is True
    assert r["output"] == "".join(f"line {i}\n" for i in range(1, 14))
    assert any("big.txt" in n and "14" in n for n in r["notes"]), r["notes"]


def test_excluded_and_outside_paths_are_denied(sb):
    wd = dict(working_directory=sb.root)
    for path in (
        ".env",
        "../outside/secret.txt",
        os.path.join(sb.outside, "secret.txt"),
        "../outside",
    ):
        r = readbox.call("cat", {"path": path}, **wd)
        assert r["error"] == f"denied: {path}", r
        assert no_secret(r)
    assert readbox.call("grep", {"pattern": "CANARY", "path": "."}, **wd)["output"] == ""
    assert no_secret(readbox.sh("cat .env ../outside/secret.txt", **wd))


def test_exclude_patterns_none_is_the_defaults_and_empty_is_none(sb):
    wd = dict(working_directory=sb.root)
    assert (
        readbox.call("cat", {"path": ".env"}, **wd, exclude_patterns=None)["error"]
        == "denied: .env"
    )
    opened = readbox.call("cat", {"path": ".env"}, **wd, exclude_patterns=[], redact=False)
    assert opened["output"].startswith("TOKEN=CANARY-DOTENV-")
    sb.file("notes.md", "n\n")
    assert (
        readbox.call("cat", {"path": "notes.md"}, **wd, exclude_patterns=["*.md"])["error"]
        == "denied: notes.md"
    )
    # The given patterns replace the defaults.
    assert (
        readbox.call("cat", {"path": ".env"}, **wd, exclude_patterns=["*.md"], redact=False)[
            "error"
        ]
        is None
    )


def test_allowed_directories_and_working_directory(sb):
    sb.file("sub/x.txt", "x\n")
    sub = os.path.join(sb.root, "sub")
    r = readbox.call("cat", {"path": "x.txt"}, working_directory=sub, allowed_directories=[sb.root])
    assert r["output"] == "x\n"
    assert (
        readbox.call(
            "cat", {"path": "../.env"}, working_directory=sub, allowed_directories=[sb.root]
        )["error"]
        == "denied: ../.env"
    )
    # A relative root is taken from the working directory.
    r = readbox.call(
        "cat", {"path": "secret.txt"}, working_directory=sb.outside, allowed_directories=["."]
    )
    assert r["output"] == CANARY + "\n"
    assert (
        readbox.call(
            "cat", {"path": "../root/sub/x.txt"}, working_directory=sub, allowed_directories=["."]
        )["error"]
        == "denied: ../root/sub/x.txt"
    )


def test_allowed_tools(sb):
    wd = dict(working_directory=sb.root)
    assert (
        readbox.call("grep", {"pattern": "x"}, **wd, allowed_tools=["cat"])["error"]
        == "disabled: grep is not enabled"
    )
    assert (
        readbox.call("pwd", {}, **wd, allowed_tools=[])["error"] == "disabled: pwd is not enabled"
    )
    assert readbox.schema(**wd, allowed_tools=[]) == []
    assert [t["name"] for t in readbox.schema(**wd, allowed_tools=["cat", "sh"])] == ["cat", "sh"]
    assert (
        readbox.sh("cat x | grep y", **wd, allowed_tools=["cat", "sh"])["error"]
        == "disabled: grep is not enabled"
    )


def test_limits_reach_the_child(sb):
    sb.file("big.txt", "a" * 100 + "\n")
    wd = dict(working_directory=sb.root)
    r = readbox.call("cat", {"path": "big.txt"}, **wd, max_read_bytes=50)
    assert r["error"] == "limit: read more than max_read_bytes (50 bytes; READBOX_MAX_READ_BYTES)"
    for i in range(5):
        sb.file(f"d/f{i}", "")
    r = readbox.call("ls", {"path": "d"}, **wd, max_entries=3)
    assert r["error"].startswith("limit:") and "max_entries" in r["error"]
    assert readbox.call("ls", {"path": "d"}, **wd, max_entries=5)["error"] is None


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(timeout=0), ValueError),
        (dict(timeout=-1.0), ValueError),
        (dict(timeout=float("nan")), ValueError),
        (dict(timeout=float("inf")), ValueError),
        (dict(timeout="10"), TypeError),
        (dict(allowed_tools=["cat", "nope"]), ValueError),
        (dict(allowed_tools="cat"), TypeError),
        (dict(working_directory="missing"), ValueError),
        (dict(allowed_directories=["missing"]), ValueError),
        (dict(allowed_directories=[]), ValueError),
        (dict(exclude_patterns=["a:b"]), ValueError),
        (dict(exclude_patterns=[""]), ValueError),
        (dict(max_output_bytes=0), ValueError),
        (dict(max_read_bytes=-5), ValueError),
        (dict(max_entries=1.5), TypeError),
        (dict(max_entries=True), TypeError),
        (dict(redact="no"), TypeError),
    ],
)
def test_bad_policy_arguments_raise_before_anything_runs(sb, kwargs, error):
    kwargs = dict(kwargs)
    for key in ("working_directory",):
        if key in kwargs:
            kwargs[key] = os.path.join(sb.root, kwargs[key])
    if kwargs.get("allowed_directories"):
        kwargs["allowed_directories"] = [
            os.path.join(sb.root, d) for d in kwargs["allowed_directories"]
        ]
    with pytest.raises(error):
        readbox.call("pwd", {}, **dict(dict(working_directory=sb.root), **kwargs))


def test_a_working_directory_outside_the_roots_is_refused(sb):
    with pytest.raises(ValueError, match="not beneath"):
        readbox.call("pwd", {}, working_directory=sb.outside, allowed_directories=[sb.root])


def test_an_unknown_policy_argument_is_a_type_error(sb):
    with pytest.raises(TypeError):
        readbox.call("pwd", {}, working_directory=sb.root, max_bytes=10)


def test_the_callers_readbox_variables_do_not_override_the_arguments(sb, monkeypatch):
    sb.file("a.txt", "hello\n")
    monkeypatch.setenv("READBOX_FORMAT", "text")
    monkeypatch.setenv("READBOX_ROOTS", "/")
    monkeypatch.setenv("READBOX_EXCLUDE", "")
    monkeypatch.setenv("READBOX_TOOLS", "pwd")
    wd = dict(working_directory=sb.root)
    assert readbox.call("cat", {"path": "a.txt"}, **wd) == {
        "output": "hello\n",
        "error": None,
        "truncated": False,
    }
    assert readbox.call("cat", {"path": ".env"}, **wd)["error"] == "denied: .env"
    assert readbox.call("cat", {"path": os.path.join(sb.outside, "secret.txt")}, **wd)[
        "error"
    ].startswith("denied:")


def test_the_caller_is_not_confined_by_a_call(sb):
    sb.file("a.txt", "x\n")
    assert readbox.call("cat", {"path": "a.txt"}, working_directory=sb.root)["error"] is None
    with open(os.path.join(sb.outside, "secret.txt")) as f:
        assert f.read() == CANARY + "\n"


def test_standard_input_is_never_the_callers(sb):
    # `-` reads the child's standard input, which is /dev/null, never this process's.
    r = readbox.call("wc", {"path": "-"}, working_directory=sb.root)
    assert r["error"].startswith("not a file: - ("), r


def test_timeout_on_a_sparse_terabyte_ends_at_the_timeout(sb):
    path = sb.file("huge.bin", b"")
    os.truncate(path, 1 << 40)
    t = time.monotonic()
    r = readbox.call(
        "wc", {"path": "huge.bin"}, working_directory=sb.root, timeout=0.5, max_read_bytes=1 << 50
    )
    took = time.monotonic() - t
    assert r["error"] == "timeout: the call took longer than 0.5 s"
    assert 0.5 <= took < 1.5, took


def test_timeout_in_a_huge_tree_keeps_the_matches_found(sb):
    # Forty folders of text files that each go on as a 64 GiB hole, past the first 8 KiB (so
    # they are not binary): 2.5 TiB for grep to walk.
    for i in range(40):
        path = sb.file(f"tree/d{i:02}/f.txt", "needle\n" * 1200)
        os.truncate(path, 1 << 36)
    t = time.monotonic()
    r = readbox.call(
        "grep",
        {"pattern": "needle", "path": "tree"},
        working_directory=sb.root,
        timeout=0.5,
        max_read_bytes=1 << 60,
    )
    took = time.monotonic() - t
    assert r["error"] == "timeout: the call took longer than 0.5 s"
    assert r["output"].startswith("tree/d00/f.txt:1:needle\n"), r["output"][:200]
    assert 0.5 <= took < 1.5, took


def test_python_dash_m_readbox_runs_the_binary(sb):
    sb.file("a.txt", "hi\n")
    done = subprocess.run(
        [sys.executable, "-m", "readbox", "cat", "a.txt"],
        cwd=sb.root,
        capture_output=True,
        env=dict(os.environ, READBOX_FORMAT="text"),
    )
    assert (done.returncode, done.stdout) == (0, b"hi\n")
    done = subprocess.run(
        [sys.executable, "-m", "readbox", "cat", ".env"], cwd=sb.root, capture_output=True
    )
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"] == "denied: .env"


def test_schema_declares_ranges_and_enums(sb):
    tools = {t["name"]: t for t in readbox.schema(working_directory=sb.root)}
    props = tools["find"]["input_schema"]["properties"]
    assert props["file_type"]["enum"] == ["all", "file", "directory"]
    assert (props["max_depth"]["minimum"], props["max_depth"]["maximum"]) == (0, 100)
    assert tools["grep"]["input_schema"]["required"] == ["pattern"]


def test_schema_arrives_whole_under_a_small_output_cap(sb):
    # The cap bounds the tools' answers; the list of definitions is not cut by it.
    names = [t["name"] for t in readbox.schema(working_directory=sb.root, max_output_bytes=100)]
    assert names == list(readbox.TOOLS)
    sb.file("a.txt", "x" * 300 + "\n")
    r = readbox.call("cat", {"path": "a.txt"}, working_directory=sb.root, max_output_bytes=100)
    assert r["truncated"] is True and len(r["output"]) == 100


def _stand_in(sb, name, script):
    """A program in place of the binary, for what the real one never does."""
    path = sb.write(name, "#!/bin/sh\n" + script + "\n")
    os.chmod(path, 0o755)
    return path


def test_a_crashed_child_is_an_exception_and_the_caller_goes_on(sb, monkeypatch):
    monkeypatch.setattr(readbox, "find_bin", lambda: _stand_in(sb, "crash", "kill -SEGV $$"))
    with pytest.raises(readbox.ReadboxError, match="killed by signal 11"):
        readbox.call("pwd", {}, working_directory=sb.root)


def test_a_child_that_outlives_its_timeout_is_killed(sb, monkeypatch):
    # The binary's watchdog answers at the deadline; a child that does not is killed 2 s after.
    monkeypatch.setattr(readbox, "find_bin", lambda: _stand_in(sb, "hang", "exec sleep 30"))
    t = time.monotonic()
    r = readbox.call("pwd", {}, working_directory=sb.root, timeout=0.2)
    took = time.monotonic() - t
    assert r == {
        "output": "",
        "error": "timeout: the call took longer than 0.2 s",
        "truncated": False,
    }
    assert 2.2 <= took < 3.5, took
