#!/usr/bin/env python3
"""Builds the benchmark corpus in the folder given as argv[1] (once; a stamp file marks it done).

- tree/: a source-like tree of about 5,000 files and 60 MB, with nested .gitignore files, ignored
  build output and a .git directory, seeded so that every run measures the same bytes;
- big.log: 2 GiB of log lines; oneline.txt: 1 GiB without a newline; cat.txt: 100 MiB of text;
- a.txt, b.txt: 200,000 lines that differ in scattered places; a2k.txt, b2k.txt: their first
  2,000 lines (readbox's diff compares at most 2,000 lines per file);
- small.txt: one line;
- secrets.txt: 10 MiB of lines that each hold a fake credential of the GitHub form, built here
  at run time (the repository holds none), for the cost of redaction where it has most to do;
- tails.txt: 2 MiB of 480 KB lines, each of eight 60 KB token-shaped runs full of matches (a
  JWT's `.eyJ…` repeated), for the cost of a long line that redaction reads in pieces.
"""

import os
import random
import sys

WORDS = ("fn let mut match impl struct enum trait where self return if else for while loop "
         "break continue pub use mod crate super async await move ref type const static "
         "unsafe extern dyn Box Vec String Option Some None Result Ok Err println format "
         "iter map filter collect into clone unwrap expect len push insert remove get "
         "config reader writer buffer handle parse token value error index count offset").split()
RARE = "zanzibar_quokka"


def line(rng):
    n = rng.randint(2, 14)
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.00002:
        words.insert(rng.randint(0, n), RARE)
    return "    " * rng.randint(0, 3) + " ".join(words) + ("\n")


def write_tree(top, rng):
    total, files = 0, 0
    exts = (".rs", ".py", ".js", ".c", ".h", ".md", ".txt", ".toml")
    for a in range(13):
        for b in range(12):
            for c in range(4):
                d = os.path.join(top, f"pkg{a}", f"mod{b}", f"part{c}")
                os.makedirs(d, exist_ok=True)
                for k in range(8):
                    name = f"file{k}{exts[(a + b + c + k) % len(exts)]}"
                    size = rng.randint(2000, 22000)
                    chunks, n = [], 0
                    while n < size:
                        s = line(rng)
                        chunks.append(s)
                        n += len(s)
                    with open(os.path.join(d, name), "w") as f:
                        f.write("".join(chunks))
                    total += n
                    files += 1
            # Ignored build output beside the sources.
            bd = os.path.join(top, f"pkg{a}", f"mod{b}", "build")
            os.makedirs(bd, exist_ok=True)
            with open(os.path.join(bd, "out.o"), "w") as f:
                f.write(line(rng) * 50)
        with open(os.path.join(top, f"pkg{a}", ".gitignore"), "w") as f:
            f.write("build/\n*.log\n!keep.log\n")
    with open(os.path.join(top, ".gitignore"), "w") as f:
        f.write("/target\n*.tmp\n")
    os.makedirs(os.path.join(top, "target", "debug"), exist_ok=True)
    with open(os.path.join(top, "target", "debug", "junk.txt"), "w") as f:
        f.write(line(rng) * 2000)
    os.makedirs(os.path.join(top, ".git", "objects", "ab"), exist_ok=True)
    with open(os.path.join(top, ".git", "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
    with open(os.path.join(top, ".git", "objects", "ab", "cdef"), "w") as f:
        f.write(line(rng) * 100)
    return files, total


def big_file(path, size, text):
    with open(path, "wb") as f:
        block = (text * ((1 << 20) // len(text) + 1))[: 1 << 20]
        left = size
        while left > 0:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n


def secrets_file(path, size):
    """Lines `token_N = ghp_…` of fake, format-valid tokens, seeded."""
    rng = random.Random(7)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    prefix = "gh" + "p_"
    with open(path, "w") as f:
        n = written = 0
        while written < size:
            body = "".join(rng.choice(alphabet) for _ in range(36))
            text = f"token_{n} = {prefix}{body}\n"
            f.write(text)
            written += len(text)
            n += 1


def main():
    out = sys.argv[1]
    secrets = os.path.join(out, "secrets.txt")
    if not os.path.exists(secrets):
        os.makedirs(out, exist_ok=True)
        secrets_file(secrets + ".part", 10 << 20)
        os.rename(secrets + ".part", secrets)
    tails = os.path.join(out, "tails.txt")
    if not os.path.exists(tails):
        run = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIx" + ".ey" "Jabcd" * 7500
        with open(tails + ".part", "w") as f:
            f.write(((run + " ") * 8 + "\n") * 4)
        os.rename(tails + ".part", tails)
    stamp = os.path.join(out, ".complete")
    if os.path.exists(stamp):
        return
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261130)
    files, total = write_tree(os.path.join(out, "tree"), rng)
    print(f"tree: {files} files, {total / 1e6:.1f} MB", file=sys.stderr)
    big_file(os.path.join(out, "big.log"), 2 << 30,
             b"2026-11-30T00:00:00.000Z INFO handled GET /api/v1/items in 12 ms status=200\n")
    big_file(os.path.join(out, "oneline.txt"), 1 << 30, b"x")
    big_file(os.path.join(out, "cat.txt"), 100 << 20, b"the quick brown fox jumps over the lazy dog\n")
    a = [line(rng) for _ in range(200_000)]
    b = list(a)
    for _ in range(300):
        i = rng.randrange(len(b))
        b[i] = line(rng)
    for _ in range(50):
        del b[rng.randrange(len(b))]
        b.insert(rng.randrange(len(b)), line(rng))
    for name, lines in (("a.txt", a), ("b.txt", b), ("a2k.txt", a[:2000]), ("b2k.txt", b[:2000])):
        with open(os.path.join(out, name), "w") as f:
            f.write("".join(lines))
    with open(os.path.join(out, "small.txt"), "w") as f:
        f.write("hello\n")
    with open(stamp, "w") as f:
        f.write("ok\n")


if __name__ == "__main__":
    main()
