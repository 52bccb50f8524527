#!/usr/bin/env python3
"""layers.py -- fail on an #include that goes up a layer (docs/architecture.md).

The build already refuses most such includes (each layer's include path
holds only itself and the layers below it: compiler/meson.build,
runtime/*/meson.build); this test says so by name, and also catches an
include that happens to compile because a header of the same name sits in
a permitted folder.  Every `#include "x"` in a source folder below must
name a header of the folder itself or of a layer it may call.

usage: layers.py SOURCE_ROOT   (exit 0: clean; 1: violations, listed)
"""
import os
import re
import sys

# folder -> the folders its files may include from (besides themselves).
# Mirrors the include_directories of meson.build, compiler/meson.build and
# runtime/*/meson.build.
BASE = ["include", "common"]
COMPILER = ["compiler/ir", "compiler/infer", "compiler/load",
            "compiler/grad", "compiler/passes", "compiler"]
ALLOWED = {
    "include": [],
    "common": ["include"],
    "compiler/ir": BASE,
    "compiler/infer": BASE + ["compiler/ir"],
    "compiler/load": BASE + ["compiler/ir", "compiler/infer"],
    "compiler/grad": BASE + ["compiler/ir", "compiler/infer"],
    "compiler/passes": BASE + ["compiler/ir", "compiler/infer",
                               "compiler/load", "compiler/grad"],
    "compiler": BASE + COMPILER,
    "runtime/core": BASE + COMPILER,
    "runtime/cpu": BASE + COMPILER + ["runtime/core", "opencl_kernels"],
    "runtime/opencl": BASE + COMPILER + ["runtime/core"],
    "runtime/trace": BASE,
    "runtime/exec": BASE + COMPILER + ["runtime/core", "runtime/trace"],
    "runtime/mpi": BASE + COMPILER + ["runtime/core", "runtime/trace",
                                      "runtime/exec"],
    "runtime/session": BASE + COMPILER + ["runtime/core", "runtime/trace",
                                          "runtime/exec", "runtime/mpi"],
    "cli": BASE,
    # the OpenCL C sources: no includes; the CPU may compile one's shared
    # functions as C (runtime/cpu/special_math.c: ops10b.cl)
    "opencl_kernels": [],
}
# Headers generated into the build tree, and the folder they belong to
# (besides X.pb-c.h, which belongs to the folder holding X.proto).
GENERATED = {}
GENERATED_RE = [(re.compile(r"^cl_embed.*\.h$"), "runtime/opencl"),
                # the registries tools/gen_registry.py writes (issue 20)
                (re.compile(r"^cpu_kernels_gen\.h$"), "runtime/cpu"),
                (re.compile(r"^cl_kernels_gen\.h$"), "runtime/opencl"),
                (re.compile(r"^grad_rules_gen\.h$"), "compiler/grad")]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    where = {}  # header file name -> folders holding one
    for folder in ALLOWED:
        d = os.path.join(root, folder)
        for name in os.listdir(d):
            if name.endswith((".h", ".def", ".cl")):
                where.setdefault(name, []).append(folder)
            elif name.endswith(".proto"):  # protoc-c writes X.pb-c.h
                where.setdefault(name[:-6] + ".pb-c.h", []).append(folder)
    bad = []
    checked = 0
    for folder, allowed in ALLOWED.items():
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h", ".def")):
                continue
            path = os.path.join(folder, name)
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                checked += 1
                line = text.count("\n", 0, m.start()) + 1
                base = os.path.basename(inc)
                homes = where.get(base)
                if not homes:
                    homes = [GENERATED[base]] if base in GENERATED else [
                        h for r, h in GENERATED_RE if r.match(base)]
                if not homes:
                    bad.append("%s:%d: #include \"%s\": no such header in "
                               "any layer" % (path, line, inc))
                    continue
                if folder in homes:
                    continue
                if len(homes) > 1:
                    bad.append("%s:%d: #include \"%s\": header name in "
                               "several layers (%s)"
                               % (path, line, inc, ", ".join(homes)))
                    continue
                if homes[0] not in allowed:
                    bad.append("%s:%d: #include \"%s\" goes up a layer: "
                               "%s may include only %s"
                               % (path, line, inc, homes[0],
                                  ", ".join([folder] + allowed)))
    for b in bad:
        print(b)
    print("layers: %d includes checked, %d going up a layer"
          % (checked, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
