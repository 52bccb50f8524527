#!/usr/bin/env bash
# demo.sh -- build dgrun if needed and train the digits MLP on the OpenCL
# devices (PoCL turns the CPU into GPU:0 on machines without a GPU), printing
# where every op was placed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
exec build/cli/dgrun train graphs/digits_mlp.json --opencl-devices all --log-device-placement "$@"
