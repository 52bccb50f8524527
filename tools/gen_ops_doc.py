#!/usr/bin/env python3
"""gen_ops_doc.py -- the supported-op table of docs/graphdef.md, generated
from the op table (`dgrun ops --markdown`), never written by hand (issue 22).

usage: gen_ops_doc.py DGRUN [--check]
Replaces the lines between `<!-- ops:begin -->` and `<!-- ops:end -->` in
docs/graphdef.md; with --check only compares (exit 1 when stale: run it
without --check and commit the result).
"""
import os
import subprocess
import sys

ROOT = os.environ.get("DGRUN_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), ".."))
DOC = os.path.join(ROOT, "docs", "graphdef.md")
BEGIN, END = "<!-- ops:begin -->", "<!-- ops:end -->"


def main():
    dgrun, check = sys.argv[1], "--check" in sys.argv[2:]
    table = subprocess.run([dgrun, "ops", "--markdown"], check=True,
                           capture_output=True, text=True).stdout
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        print("%s: no %s ... %s markers" % (DOC, BEGIN, END))
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + "\n" + table + END + tail
    if check:
        if new != text:
            print("docs/graphdef.md's op table is stale: run "
                  "tools/gen_ops_doc.py DGRUN")
            return 1
        print("docs/graphdef.md's op table matches `dgrun ops --markdown`")
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
