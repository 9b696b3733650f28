"""What `readbox mcp` costs: the time from starting the server to its answer to `initialize`, and
the time of a `tools/call` round trip against the same call run as a plain `readbox call`.

usage: python3 benches/mcp.py [PATH/TO/readbox] [ROUNDS]

Standard library only. Runs in a temporary folder holding one small file; prints the medians in
milliseconds. The plain call is timed with hyperfine (-N, no shell) when it is installed, else
with subprocess (which adds Python's own cost of starting a process).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/readbox")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 300
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}
ARGS = {"path": "small.txt"}


def line(obj):
    return (json.dumps(obj) + "\n").encode()


def start(cwd):
    return subprocess.Popen([BIN, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            cwd=cwd, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                          "READBOX_ROOTS": cwd})


def to_initialize(cwd):
    """Milliseconds from starting the server to reading its answer to initialize."""
    times = []
    for _ in range(ROUNDS // 3):
        t0 = time.perf_counter()
        p = start(cwd)
        p.stdin.write(line(INIT))
        p.stdin.flush()
        p.stdout.readline()
        times.append((time.perf_counter() - t0) * 1e3)
        p.stdin.close()
        p.wait()
    return statistics.median(times)


def round_trips(cwd):
    """Milliseconds of a tools/call round trip, the server already running."""
    p = start(cwd)
    p.stdin.write(line(INIT) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    p.stdin.flush()
    p.stdout.readline()
    times = []
    for i in range(ROUNDS + 20):
        msg = line({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": "cat", "arguments": ARGS}})
        t0 = time.perf_counter()
        p.stdin.write(msg)
        p.stdin.flush()
        answer = json.loads(p.stdout.readline())
        if i >= 20:                                   # the first ones warm up
            times.append((time.perf_counter() - t0) * 1e3)
        assert answer["result"]["content"][0]["text"] == "hello\n", answer
    p.stdin.close()
    p.wait()
    return statistics.median(times)


def plain_call(cwd):
    """Milliseconds of `readbox call cat '{"path": "small.txt"}'`, run as its own process."""
    cmd = [BIN, "call", "cat", json.dumps(ARGS)]
    if shutil.which("hyperfine"):
        out = os.path.join(cwd, "hf.json")
        subprocess.run(["hyperfine", "-N", "--warmup", "20", "--runs", str(ROUNDS),
                        "--export-json", out, subprocess.list2cmdline(cmd)],
                       cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            return statistics.median(json.load(f)["results"][0]["times"]) * 1e3
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    with tempfile.TemporaryDirectory() as cwd:
        with open(os.path.join(cwd, "small.txt"), "w") as f:
            f.write("hello\n")
        init = to_initialize(cwd)
        trip = round_trips(cwd)
        plain = plain_call(cwd)
    print(f"start to initialize answer: {init:.2f} ms (median)")
    print(f"tools/call cat round trip:  {trip:.2f} ms (median)")
    print(f"readbox call cat:           {plain:.2f} ms (median)")
    print(f"overhead of a tools/call:   {trip - plain:.2f} ms")


if __name__ == "__main__":
    main()
