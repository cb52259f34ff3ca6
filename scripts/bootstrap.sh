#!/usr/bin/env bash
# Installs exactly the Debian packages seqc needs. Idempotent: when every
# package is already present it returns without touching apt.
#
#   scripts/bootstrap.sh            toolchain for building and testing
#   scripts/bootstrap.sh --golden   also PyTorch, to regenerate test/golden
#   scripts/bootstrap.sh --bench    also what bench/compare's peers need from
#                                   Debian (PyTorch 1.13, tcmalloc, OpenBLAS,
#                                   BLIS, matplotlib, venv for setup-peers.sh)
set -euo pipefail

LLVM_VERSION=22
packages=(
  cmake ninja-build make ccache
  "llvm-${LLVM_VERSION}-dev" "llvm-${LLVM_VERSION}-tools"
  "libmlir-${LLVM_VERSION}-dev" "mlir-${LLVM_VERSION}-tools"
  "clang-${LLVM_VERSION}" "lld-${LLVM_VERSION}" "libclang-rt-${LLVM_VERSION}-dev"
  "libomp-${LLVM_VERSION}-dev"
  libgtest-dev libbenchmark-dev
  python3 python3-numpy
  python3-dev pybind11-dev python3-pytest
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev
  libopenmpi-dev openmpi-bin
)
for arg in "$@"; do
  case "$arg" in
    --golden) packages+=(python3-torch) ;;
    --bench) packages+=(python3-torch libtcmalloc-minimal4 libopenblas-dev
                        libblis-dev python3-matplotlib python3-venv) ;;
    *) echo "bootstrap.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
