"""What a call from Python costs: one `ReadboxToolset` call (`await toolset.cat(...)`), one
`readbox.call(...)`, against one `readbox call cat JSON` started from a shell.

usage: target/py-venv/bin/python benches/python.py [ROUNDS]

Runs in the interpreter that has the package installed (with its adk extra), in a temporary
folder holding one small file; prints the median of each in milliseconds. The shell's call is
timed with hyperfine (-N, no shell in between) when it is installed, else as the wall time of a
bash loop of ROUNDS calls divided by ROUNDS.
"""

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import readbox
from readbox.adk import ReadboxToolset

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
ARGS = json.dumps({"path": "small.txt"})


def shell_ms(bin_, folder):
    if shutil.which("hyperfine"):
        out = os.path.join(folder, "hf.json")
        subprocess.run(
            [
                "hyperfine",
                "-N",
                "--warmup",
                "20",
                "--runs",
                str(ROUNDS),
                "--export-json",
                out,
                f"{bin_} call cat '{ARGS}'",
            ],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        with open(out) as f:
            return json.load(f)["results"][0]["median"] * 1000
    loop = f"for i in $(seq {ROUNDS}); do {bin_} call cat '{ARGS}' >/dev/null; done"
    t = time.perf_counter()
    subprocess.run(["bash", "-c", loop], cwd=folder, check=True)
    return (time.perf_counter() - t) * 1000 / ROUNDS


def median_ms(fn):
    times = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main():
    with tempfile.TemporaryDirectory() as folder:
        folder = os.path.realpath(folder)
        with open(os.path.join(folder, "small.txt"), "w") as f:
            f.write("hello\n" * 10)
        toolset = ReadboxToolset(working_directory=folder)
        loop = asyncio.new_event_loop()
        assert loop.run_until_complete(toolset.cat("small.txt"))["error"] is None
        toolset_ms = median_ms(lambda: loop.run_until_complete(toolset.cat("small.txt")))
        call_ms = median_ms(
            lambda: readbox.call("cat", {"path": "small.txt"}, working_directory=folder)
        )
        loop.close()
        plain_ms = shell_ms(readbox.find_bin(), folder)
    print(f"ReadboxToolset.cat   {toolset_ms:6.2f} ms")
    print(f"readbox.call('cat')  {call_ms:6.2f} ms")
    print(f"readbox call cat     {plain_ms:6.2f} ms  (from a shell)")


if __name__ == "__main__":
    main()
