#!/usr/bin/env bash
# The seqc demo (`make demo`): compiles examples/gpt.seq, a small decoder-only
# language model, to a native executable and runs it on deterministic random
# weights and tokens.
#
#   scripts/demo.sh [BUILD_DIR]      (default: build)
#
# What it shows, in order: the model's parameters, the compilation (seq ->
# linalg -> LLVM -> object -> link with the runtime) and its time, then the
# executable's run: five timed runs after a warm-up, and what it computed;
# then the executable generating tokens, greedy and sampled, with its
# prefill and decode speeds (its prefill entry over the prompt, then its
# decode entry over a KV cache, one token per call); last, its forward
# entry alone (--entry forward) generating the same tokens from the same
# weights by running the whole prefix again for every token.
# Everything is written under a temporary directory that is removed on exit.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
case "$build" in
  /*) ;;
  *) build="$PWD/$build" ;;
esac
seqc="$build/bin/seqc"
if [[ ! -x "$seqc" ]]; then
  echo "demo.sh: $seqc not found; build seqc first (make build)" >&2
  exit 1
fi

model="$root/examples/gpt.seq"
work=$(mktemp -d "${TMPDIR:-/tmp}/seqc-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Sizes of the run: one sequence of 64 tokens.
dims=(--dim b=1 --dim n=64)

section() { printf '\n== %s\n' "$1"; }

section "model: examples/gpt.seq"
sed -n '/^model /,/{$/p' "$model"
nparams=$("$seqc" --list-params "$model" | wc -l)
echo "$nparams parameter tensors:"
"$seqc" --list-params "$model" | head -n 6
echo "..."

section "compile: seqc -O2 examples/gpt.seq -o gpt"
start=$(date +%s%N)
"$seqc" -O2 "$model" -o "$work/gpt"
end=$(date +%s%N)
echo "compiled in $(( (end - start) / 1000000 )) ms:" \
  "a $(stat -c %s "$work/gpt")-byte executable"

section "run: ./gpt --random-weights 1 --random-inputs 2 ${dims[*]} --bench 5"
echo "(logits of every position over the 256-symbol vocabulary;" \
  "$(nproc) core(s), OpenMP)"
"$work/gpt" --random-weights 1 --random-inputs 2 "${dims[@]}" --bench 5

prompt=1,2,3,4,5,6,7,8
section "generate: ./gpt generate --random-weights 1 --prompt-ids $prompt --max-new-tokens 32"
echo "(greedy decoding; the weights are random, so the ids mean nothing)"
"$work/gpt" generate --random-weights 1 --prompt-ids "$prompt" \
  --max-new-tokens 32

sampling=(--temperature 0.8 --top-k 40 --top-p 0.95 --seed 7)
section "generate: a batch of two prompts, sampled (${sampling[*]})"
"$work/gpt" generate --random-weights 1 --prompt-ids "$prompt" \
  --prompt-ids 42,7 --max-new-tokens 32 "${sampling[@]}"

section "generate without a cache: seqc -O2 --entry forward examples/gpt.seq -o gpt_forward"
echo "(the same weights and prompt: the same tokens, each step the whole prefix)"
"$seqc" -O2 --entry forward "$model" -o "$work/gpt_forward"
"$work/gpt_forward" generate --random-weights 1 --prompt-ids "$prompt" \
  --max-new-tokens 32
