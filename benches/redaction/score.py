#!/usr/bin/env python3
"""Scores detectors on the corpus that corpus.py wrote, and prints Markdown tables.

    score.py CORPUS --redacted NAME DIR ... --flagged NAME DETECT_SECRETS_JSON ...

A redacting detector (readbox) gives a folder of redacted copies: a file with a secret counts
as found when no value of its secrets, nor any 8-character piece of one, is left (pieces that
the rest of the file also holds do not count), and a look-alike counts as a false positive
when its copy differs from it at all. A flagging detector (detect-secrets) gives its JSON
report: a file with a secret counts as found when a finding is on a line that holds the
secret (or its BEGIN line), and a look-alike counts as a false positive when it has any
finding.
"""

import json
import os
import sys
from collections import defaultdict


def pieces_left(text, values, original):
    """Whether text shows an 8-character piece of a value that only the value holds."""
    rest = original
    for v in sorted(values, key=len, reverse=True):
        rest = rest.replace(v, "\0")
    for v in values:
        for i in range(max(1, len(v) - 7)):
            p = v[i:i + 8]
            if p in text and p not in rest:
                return True
    return False


def secret_lines(text, entry):
    lines = {entry["line"]}
    for n, line in enumerate(text.splitlines(), 1):
        if any(v in line for v in entry["values"]):
            lines.add(n)
    return lines


def score_redacted(corpus, manifest, folder):
    found, changed = {}, {}
    for e in manifest:
        original = open(os.path.join(corpus, e["file"]), encoding="utf-8").read()
        shown = open(os.path.join(folder, e["file"]), encoding="utf-8", errors="replace").read()
        if e["kind"] == "secret":
            found[e["file"]] = not pieces_left(shown, e["values"], original)
        else:
            changed[e["file"]] = shown != original
    return found, changed


def score_flagged(corpus, manifest, report):
    results = json.load(open(report))["results"]
    found, changed = {}, {}
    for e in manifest:
        hits = {f["line_number"] for f in results.get(e["file"], [])}
        if e["kind"] == "secret":
            text = open(os.path.join(corpus, e["file"]), encoding="utf-8").read()
            found[e["file"]] = bool(hits & secret_lines(text, e))
        else:
            changed[e["file"]] = bool(hits)
    return found, changed


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    print(line(header))
    print("| " + " | ".join("-" * w for w in widths) + " |")
    for r in rows:
        print(line(r))
    print()


def pct(k, n):
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else "-"


def main():
    corpus = sys.argv[1]
    manifest = json.load(open(os.path.join(corpus, "manifest.json")))
    detectors = []
    args = sys.argv[2:]
    while args:
        mode, name, path = args[:3]
        args = args[3:]
        score = score_redacted if mode == "--redacted" else score_flagged
        detectors.append((name,) + score(corpus, manifest, path))
    secrets = [e for e in manifest if e["kind"] == "secret"]
    looks = [e for e in manifest if e["kind"] == "lookalike"]

    rows = []
    for name, found, changed in detectors:
        rows.append([name, pct(sum(found.values()), len(secrets)), pct(sum(changed.values()), len(looks))])
    table(["detector", "secrets found (recall)", "look-alikes changed or flagged (false positives)"], rows)

    fams = defaultdict(list)
    for e in secrets:
        fams[e["family"]].append(e["file"])
    # The families no readbox rule describes go last.
    order = sorted(fams, key=lambda f: f.startswith("outside"))
    rows = [[fam, len(fams[fam])] + [pct(sum(d[1][f] for f in fams[fam]), len(fams[fam])) for d in detectors]
            for fam in order]
    table(["family", "files"] + [f"{d[0]} found" for d in detectors], rows)

    cats = defaultdict(list)
    for e in looks:
        cats[e["family"]].append(e["file"])
    rows = [[cat, len(files)] + [pct(sum(d[2][f] for f in files), len(files)) for d in detectors]
            for cat, files in cats.items()]
    table(["look-alike", "files"] + [f"{d[0]} false positives" for d in detectors], rows)


if __name__ == "__main__":
    main()
