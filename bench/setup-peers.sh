#!/usr/bin/env bash
# Installs the benchmark peers that come from PyPI (PyTorch 2.x, IREE's
# compiler and runtime, ONNX Runtime and OpenVINO with onnx/onnxscript for
# torch.onnx.export, JAX's CPU build for XLA) into a virtual environment
# outside the source tree.
# Idempotent and cached: a second run with the same requirements returns at
# once. Nothing in `make test` or in seqc itself needs what this installs.
#
#   bench/setup-peers.sh            bench/compare's peers; prints the venv's
#                                   python on success (bench/compare --no-setup
#                                   uses an existing venv without running this)
#   bench/setup-peers.sh --generate bench/generate's peers instead: gguf,
#                                   llama-cpp-python (which compiles llama.cpp
#                                   for the host, minutes), transformers and a
#                                   CPU build of torch; nothing from apt
#                                   (Debian's python3-torch is bench/compare's
#                                   PyTorch 1.13 peer), only python3-venv
#
# SEQC_PEERS_VENV   where the venv lives (default ~/.cache/seqc/bench-venv)
#
# A peer that fails to install is reported (peers.json, or peers-generate.json
# for --generate, beside the venv's python records what installed) and the
# others still install: bench/compare and bench/generate say which peer is
# missing and why.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${SEQC_PEERS_VENV:-$HOME/.cache/seqc/bench-venv}
case "$venv" in
  "$root"/*) echo "setup-peers.sh: the venv must live outside the source tree ($venv)" >&2; exit 2 ;;
esac
group=compare
for arg in "$@"; do
  case "$arg" in
    --generate) group=generate ;;
    *) echo "setup-peers.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

# One requirement per line: name, then the import that proves it works.
if [[ $group == compare ]]; then
  # Debian's packages the peers need (venv, BLAS/BLIS, tcmalloc, matplotlib).
  bash "$root/scripts/bootstrap.sh" --bench || exit 1
  requirements=(
    "torch torch"
    "numpy numpy"
    "iree-base-compiler iree.compiler"
    "iree-base-runtime iree.runtime"
    "onnx onnx"
    "onnxscript onnxscript"
    "onnxruntime onnxruntime"
    "openvino openvino"
    "jax[cpu] jax"
  )
  stamp="$venv/.seqc-peers"
  status_file="$venv/peers.json"
else
  if [[ ! -x "$venv/bin/python" ]] && ! /usr/bin/python3 -c "import ensurepip" 2>/dev/null; then
    echo "setup-peers.sh: python3 cannot create a venv; install Debian's python3-venv" >&2
    exit 1
  fi
  requirements=(
    "numpy numpy"
    "gguf gguf"
    "torch torch"
    "transformers transformers"
    "llama-cpp-python llama_cpp"
  )
  stamp="$venv/.seqc-peers-generate"
  status_file="$venv/peers-generate.json"
fi
want=$(printf '%s\n' "${requirements[@]}")
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "$venv/bin/python"
  exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
  mkdir -p "$(dirname "$venv")"
  /usr/bin/python3 -m venv "$venv" || { echo "setup-peers.sh: cannot create $venv" >&2; exit 1; }
fi
py="$venv/bin/python"
"$py" -m pip install -q --upgrade pip >&2 || true

# torch: the CPU wheel (a tenth of PyPI's, which brings CUDA's libraries)
# where its index answers; llama-cpp-python: llama.cpp built for this host.
install() {
  case "$1" in
    torch)
      if [[ $group == generate ]]; then
        "$py" -m pip install -q --timeout 30 --index-url https://download.pytorch.org/whl/cpu torch >&2 ||
          "$py" -m pip install -q torch >&2
      else
        "$py" -m pip install -q torch >&2
      fi ;;
    llama-cpp-python)
      echo "setup-peers.sh: building llama-cpp-python (compiles llama.cpp: minutes)" >&2
      CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=ON}" "$py" -m pip install -q llama-cpp-python >&2 ;;
    *) "$py" -m pip install -q "$1" >&2 ;;
  esac
}

status="{"
sep=""
for req in "${requirements[@]}"; do
  read -r name module <<<"$req"
  if "$py" -c "import $module" 2>/dev/null || install "$name" && "$py" -c "import $module" 2>/dev/null; then
    status+="$sep\"$name\": \"ok\""
  else
    echo "setup-peers.sh: $name did not install; its peer will be skipped" >&2
    status+="$sep\"$name\": \"failed to install\""
    failed=1
  fi
  sep=", "
done
status+="}"
echo "$status" > "$status_file"
# Only a complete install is cached; a partial one is retried next time.
if [[ -z "${failed:-}" ]]; then
  echo "$want" > "$stamp"
fi
echo "$py"
