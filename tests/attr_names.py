#!/usr/bin/env python3
"""attr_names.py -- every attribute name the compiler and the runtime read or
write by string (dgc_attr_*, dgc_node_attr, dgc_node_set_*) is declared in
an op's attribute schema (compiler/ir/ops.c) or is "dtype", which every op
takes.  Kernels still look attributes up by name at run time, where a
misspelt name silently becomes the default: this catches the misspelling
when the tests run (issue 20).

usage: attr_names.py SOURCE_ROOT   (exit 0: all declared; 1: listed)
"""
import os
import re
import sys

CALL = re.compile(r'dgc_(?:attr_(?:int|bool|float|str)|node_attr|'
                  r'node_set_(?:int|ints|bool|float|str|dtype|shape|'
                  r'tensor))\([^,;()]+,\s*"([A-Za-z_0-9]+)"')
SPEC = re.compile(r'\{"(\w+)", DGC_A_')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    with open(os.path.join(root, "compiler/ir/ops.c"), encoding="utf-8") as f:
        declared = set(SPEC.findall(f.read())) | {"dtype"}
    bad = []
    n = 0
    for top in ("compiler", "runtime"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for m in CALL.finditer(text):
                    n += 1
                    if m.group(1) not in declared:
                        line = text.count("\n", 0, m.start()) + 1
                        bad.append("%s:%d: attr '%s' is in no op's schema "
                                   "(compiler/ir/ops.c)"
                                   % (os.path.relpath(path, root), line,
                                      m.group(1)))
    for b in bad:
        print(b)
    print("attr_names: %d uses checked, %d undeclared" % (n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
