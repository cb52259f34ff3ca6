#!/usr/bin/env bash
# Decode steps of a SmolLM2-135M-shaped model (examples/gpt_decode.seq: 30
# layers, width 576, 9 heads, 3 KV heads, vocab 49152, f32, random weights)
# against the memory-bandwidth bound: the weight bytes one token streams
# (every parameter but the embedding table: 538.6 MB) over the triad
# bandwidth `seqc-peak` measures in the same run (docs/performance.md,
# "Decode steps").
#
#   bench/decode-steps.sh [--seqc PATH] [--model EXE] [--opt N]
#                         [--contexts "128 1024 4096"] [--batches "1 4"]
#                         [--threads "1 2"] [--runs N] [--out DIR]
#
# One decode step is one call of the model with tokens [b, 1] and each
# row's position (the model binary's `--bench N` with `--input`): row r at
# position context - 1 - 3 r, attending to that many cached keys (the
# cache's contents do not change the time). Per cell: the minimum and the
# median of N runs (wall ms), the CPU ms per step (process CPU time of N +
# 1 runs less that of one run, over N: what a shared host still measures),
# and the bound's time over the minimum (1.0 = at the triad bandwidth).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seqc=$root/build/bin/seqc
peak=$root/build/bin/seqc-peak
model=
opt=2
contexts="128 1024 4096"
batches="1 4"
threads="1 2"
runs=20
out=
while [[ $# -gt 0 ]]; do
  case $1 in
    --seqc) seqc=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    --contexts) contexts=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "decode-steps.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d)}
mkdir -p "$out"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -z $model ]]; then
  model=$out/smollm_decode
  "$seqc" -O"$opt" "$root/examples/gpt_decode.seq" -D vocab=49152 -D dim=576 \
    -D heads=9 -D kv_heads=3 -D depth=30 -D max_len=4200 -o "$model"
fi
# Inputs as .npy (int32): tokens [b, 1], pos [b].
python3 - "$out" "$batches" "$contexts" <<'PY'
import struct, sys
out, batches, contexts = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def write(path, shape, vals):
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    hdr = "{'descr': '<i4', 'fortran_order': False, 'shape': (%s), }" % dims
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%di" % len(vals), *vals))
for b in map(int, batches):
    write(f"{out}/tokens{b}.npy", (b, 1), [7 + i for i in range(b)])
    for c in map(int, contexts):
        write(f"{out}/pos{b}_{c}.npy", (b,), [c - 1 - 3 * i for i in range(b)])
PY
triad=$("$peak" | python3 -c 'import json,sys; f=json.load(sys.stdin); print(f["triad_gbs_1t"], f["triad_gbs_2t"])')
read -r triad1 triad2 <<<"$triad"
echo "triad: $triad1 GB/s (1 thread), $triad2 GB/s (2 threads); weights 538.6 MB per token"
printf '%-6s %-5s %-7s %10s %10s %10s %12s\n' batch ctx threads "min ms" "median ms" "cpu ms" "bound/min"
cputime() { /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'; }
for b in $batches; do
  for c in $contexts; do
    for t in $threads; do
      args=(--random-weights 5 --input "tokens=$out/tokens$b.npy" --input "pos=$out/pos${b}_$c.npy" --threads "$t")
      line=$("$model" "${args[@]}" --bench "$runs" 2>&1 | grep -m1 '^bench:')
      min=$(sed -E 's/.*min ([0-9.]+) ms.*/\1/' <<<"$line")
      med=$(sed -E 's/.*median ([0-9.]+) ms.*/\1/' <<<"$line")
      c1=$(cputime "$model" "${args[@]}" --bench 1)
      cn=$(cputime "$model" "${args[@]}" --bench $((runs + 1)))
      bw=$([[ $t == 1 ]] && echo "$triad1" || echo "$triad2")
      python3 -c "print('%-6s %-5s %-7s %10.1f %10.1f %10.1f %12.2f' % ($b, $c, $t, $min, $med, ($cn - $c1) * 1000 / $runs, 538.6 / $bw / $min))"
    done
  done
done
