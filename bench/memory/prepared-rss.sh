#!/usr/bin/env bash
# The resident memory of model instances that share weights, and of a
# generation: examples/llama.seq at SmolLM2-135M's shape (random f32
# weights), compiled by BUILD/bin/seqc and linked with BUILD/lib's runtime
# into bench/memory/prepared-rss.c's host, then
#   1 and 4 instances (clones), each running forward on 128 tokens;
#   one instance generating NEW tokens after a 128-token prompt;
# first with the random weights on the heap, then with the same weights
# saved to WORK/weights.safetensors and loaded from it (memory-mapped:
# the parameters only the preparation reads leave the resident set once
# prepared, docs/runtime.md "Memory of the parameters").
# usage: bench/memory/prepared-rss.sh [BUILD (build)] [NEW (100)] [WORK]
# (docs/performance.md, "Generation"; docs/runtime.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
new=${2:-100}
work=${3:-$(mktemp -d)}
mkdir -p "$work"
llvm=${LLVM_PREFIX:-/usr/lib/llvm-22}
defines="-D vocab=49152 -D dim=576 -D heads=9 -D kv_heads=3 -D hidden=1536
  -D depth=30 -D theta=100000.0 -D tied=1 -D max_len=$((128 + new + 8))"
if [ ! -f "$work/model.o" ]; then
  # shellcheck disable=SC2086
  "$build/bin/seqc" "$root/examples/llama.seq" $defines -c -o "$work/model.o"
fi
"$llvm/bin/clang" -O2 -I "$root/runtime/include" -fuse-ld=lld \
  "$root/bench/memory/prepared-rss.c" "$work/model.o" \
  "$build/lib/libseqc_runtime.a" -fopenmp=libomp -lstdc++ -lm \
  --rtlib=compiler-rt -o "$work/prepared-rss"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
[ -f "$work/weights.safetensors" ] ||
  "$work/prepared-rss" save "$work/weights.safetensors"
# Each case twice: with the parameters only the preparation reads dropped
# once prepared (as the runtime does), then kept (--keep-params: the
# manifest's "prepared_only" marks set to false, as before the marks).
for weights in random file; do
  for keep in "" --keep-params; do
    args=($keep)
    [ "$weights" = random ] || args+=(--weights "$work/weights.safetensors")
    label="$weights weights${keep:+, $keep}"
    echo "== $label: 1 instance"; "$work/prepared-rss" "${args[@]}" clones 1
    echo "== $label: 4 instances"; "$work/prepared-rss" "${args[@]}" clones 4
    echo "== $label: generate $new after 128"
    "$work/prepared-rss" "${args[@]}" generate 128 "$new"
  done
done
