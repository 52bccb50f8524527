#!/usr/bin/env bash
# make.sh -- regenerate the TensorFlow fixture graphs in tests/data/tf/.
# Creates tools/tf_fixtures/.venv (gitignored) with tensorflow-cpu from PyPI
# on first use (a large download), then runs export.py with it.  The test
# suite never needs TensorFlow: it reads the committed fixtures only.
# Usage: tools/tf_fixtures/make.sh [OUT]     (default OUT: tests/data/tf)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import tensorflow" >/dev/null 2>&1; then
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet tensorflow-cpu
fi
exec "$venv/bin/python" "$here/export.py" "$@"
