#!/usr/bin/env bash
# get_onednn3.sh -- install oneDNN 3.2 (PyPI's onednn-devel-cpu-gomp and
# onednn-cpu-gomp 2023.2.0: headers and libdnnl.so.3, OpenMP threading
# through the system's libgomp, no other Intel runtime) into a prefix, for
# bench/bench_dnnl_conv.py --prefix3 PREFIX (docs/decisions.md, "oneDNN 3.x").
# Needs python3-venv (scripts/setup.sh installs it) and PyPI; touches no
# system Python.  Prints the prefix.  dgrun itself builds against Debian's
# libdnnl 2.6.
# Usage: scripts/get_onednn3.sh [PREFIX]   (default: .onednn3 in the repo)
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${1:-$PWD/.onednn3}
SPEC=onednn-devel-cpu-gomp==2023.2.0
if [ -f "$PREFIX/include/oneapi/dnnl/dnnl.h" ] && [ -f "$PREFIX/lib/libdnnl.so.3" ]; then
    echo "$PREFIX"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv" >&2
"$tmp/venv/bin/pip" install --no-cache-dir --disable-pip-version-check \
    --prefix "$PREFIX" "$SPEC" >&2
# the wheels' data files: include/ and lib/ under the prefix
test -f "$PREFIX/include/oneapi/dnnl/dnnl.h"
test -f "$PREFIX/lib/libdnnl.so.3"
echo "$PREFIX"
