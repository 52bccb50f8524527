#!/usr/bin/env python3
"""attr_names.py -- attribute names have one list (issue 20):
compiler/ir/attr_names.def, in strcmp order (dgc_attr_id_of binary-searches
it), holds exactly the names the op schemas (compiler/ir/ops.c, AS(name,
...) rows) declare plus "dtype", which every op takes;
every name the compiler reads or writes by string (dgc_attr_int/bool/float,
dgc_node_attr, dgc_node_set_*) is in it (the loaders' and passes' string
lookups: a misspelt one would silently be the default); and runtime/ reads
attributes only by id (dgc_attr_i, _b, _f, _str, _ints, _tensor,
dgc_attr_at, dgc_attr_get with DGC_AT_*: a misspelt id does not compile),
never by string.

usage: attr_names.py SOURCE_ROOT   (exit 0: all fine; 1: problems listed)
"""
import os
import re
import sys

CALL = re.compile(r'dgc_(?:attr_(?:int|bool|float|str)|node_attr|'
                  r'node_set_(?:int|ints|bool|float|str|dtype|shape|'
                  r'tensor))\([^,;()]+,\s*"([A-Za-z_0-9]+)"')
BY_NAME = re.compile(r'\bdgc_(?:attr_(?:int|bool|float)|node_attr)\s*\(')
SPEC = re.compile(r'\bAS\((\w+), DGC_A_')
ROW = re.compile(r'^DGC_ATTR\((\w+)\)$', re.M)


def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                path = os.path.join(d, name)
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, root), f.read()


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = []
    with open(os.path.join(root, "compiler/ir/attr_names.def"),
              encoding="utf-8") as f:
        rows = ROW.findall(f.read())
    with open(os.path.join(root, "compiler/ir/ops.c"), encoding="utf-8") as f:
        schema = set(SPEC.findall(f.read())) | {"dtype"}
    listed = set(rows)
    if rows != sorted(rows, key=lambda s: s.encode()):
        bad.append("compiler/ir/attr_names.def: rows not in strcmp order")
    if len(listed) != len(rows):
        bad.append("compiler/ir/attr_names.def: a row is there twice")
    for name in sorted(schema - listed):
        bad.append("compiler/ir/ops.c: schema attr '%s' is not in "
                   "attr_names.def" % name)
    for name in sorted(listed - schema):
        bad.append("compiler/ir/attr_names.def: '%s' is in no op's schema "
                   "(compiler/ir/ops.c)" % name)
    n = 0
    for top in ("compiler", "runtime"):
        for path, text in sources(root, top):
            for m in CALL.finditer(text):
                n += 1
                if m.group(1) not in listed:
                    bad.append("%s:%d: attr '%s' is in no op's schema "
                               "(compiler/ir/ops.c)"
                               % (path, line_of(text, m.start()), m.group(1)))
            if top != "runtime":
                continue
            for m in BY_NAME.finditer(text):
                bad.append("%s:%d: runtime reads an attr by name; use the id "
                           "accessors of compiler/ir/attr_get.h"
                           % (path, line_of(text, m.start())))
    for b in bad:
        print(b)
    print("attr_names: %d names listed, %d string uses checked, %d problems"
          % (len(rows), n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
