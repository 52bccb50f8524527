#!/usr/bin/env bash
# setup.sh -- install dgrun's build dependencies on Debian/Ubuntu (apt-get,
# as root or through sudo; `apt-get update` runs once, and only when a
# package is missing), then configure and build dgrun into build/.
# Usage: scripts/setup.sh            (then: build/cli/dgrun --help)
#        scripts/setup.sh --deps-only (install the packages, build nothing)
# Warnings are not errors here (werror defaults to false: a user's newer
# compiler must not break the build); scripts/test.sh builds with -Werror.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential meson ninja-build pkg-config ocl-icd-opencl-dev
      opencl-headers pocl-opencl-icd libclblast-dev libcjson-dev
      libcmocka-dev libopenblas-dev libdnnl-dev libprotobuf-c-dev
      protobuf-c-compiler python3-numpy python3-venv chromium
      openmpi-bin libopenmpi-dev iproute2
      oclgrind  # a second OpenCL implementation: scripts/test.sh's Oclgrind block
      clang libclang-rt-dev)  # clang + libFuzzer: tests/fuzz (scripts/test.sh)

if command -v dpkg-query >/dev/null 2>&1; then
    missing=()
    for p in "${PKGS[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if ((${#missing[@]})); then
        echo "setup: installing ${missing[*]}"
        SUDO=()
        if [ "$(id -u)" -ne 0 ]; then
            if command -v sudo >/dev/null 2>&1; then
                SUDO=(sudo)
            else
                echo "setup: error: missing packages (${missing[*]}); run as root" >&2
                exit 1
            fi
        fi
        "${SUDO[@]}" apt-get update
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${missing[@]}"
    fi
else
    echo "setup: no dpkg here; assuming the dependencies are installed: ${PKGS[*]}" >&2
fi

if [ "${1:-}" = --deps-only ]; then
    exit 0
fi
if [ ! -f build/build.ninja ]; then
    meson setup build
fi
ninja -C build
