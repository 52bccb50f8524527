#!/usr/bin/env python3
"""Name the sanitizer-build tests that failed only because LeakSanitizer's
own tracer crashed ("LeakSanitizer has encountered a fatal error", which
happens now and then when it stops PoCL's worker threads at exit).

usage: lsan_retry.py BUILD_DIR
Prints the test names (one per line) when every failure is of that kind;
prints nothing and exits 1 when there is any other failure, so the caller
keeps the real failure.
"""
import json
import os
import sys


def main():
    log = os.path.join(sys.argv[1], "meson-logs", "testlog.json")
    names = []
    with open(log, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            if t["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
                continue
            if "LeakSanitizer has encountered a fatal error" not in t.get("stderr", ""):
                return 1
            # "dgrun:suite / name" -> name
            names.append(t["name"].split(" / ", 1)[-1])
    print("\n".join(names))
    return 0 if names else 1


if __name__ == "__main__":
    sys.exit(main())
