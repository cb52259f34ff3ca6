#!/usr/bin/env bash
# The device check of the nvptx target (docs/gpu.md, "Running the device
# check"):
#
#   scripts/gpu-check.sh prepare [DIR] [--only REGEX] [--gpu-arch sm_90] [--gpu-binary K] [--cpu-only]
#       here, after `make build`: compiles the examples and the GPU benchmark
#       models for --target=nvptx and for the CPU, writes the CPU outputs as
#       references and packs everything the GPU machine needs into DIR
#       (default gpu-check/, gitignored, at most 64 MiB).
#   scripts/gpu-check.sh run [DIR] [--cpu-dry-run] [--budget S] [--only REGEX]
#       on the GPU machine, from the repository root, without a build:
#       compares every GPU binary's outputs with the references, times
#       attention, bf16 and tf32 matmuls, the selective scan and layer norm beside
#       PyTorch and writes DIR/summary.md. --cpu-dry-run runs the CPU builds instead.
#
# The work is in bench/gpu_check.py (a copy travels in DIR as check.py).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() {
  sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
command=$1
shift
dir=gpu-check
if [[ $# -ge 1 && $1 != -* ]]; then
  dir=$1
  shift
fi
case "$command" in
  prepare)
    exec "${PYTHON:-python3}" "$root/bench/gpu_check.py" prepare "$dir" "$@" ;;
  run)
    if [[ ! -f "$dir/run" ]]; then
      echo "gpu-check: $dir/run not found; run 'scripts/gpu-check.sh prepare $dir' first" >&2
      exit 1
    fi
    exec bash "$dir/run" "$@" ;;
  *) usage ;;
esac
