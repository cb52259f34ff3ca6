#!/usr/bin/env bash
# Tensor parallelism on this machine (docs/distributed.md, "What it costs";
# docs/performance.md): examples/gpt.seq at GPT-2 small's shape (vocabulary
# padded to 50304, which 2 divides) compiled for one process and with
# --tensor-parallel=2, then
#
#   - parameter bytes per rank, from the two manifests;
#   - peak resident memory of each process (/usr/bin/time);
#   - prefill (a prompt of --prompt tokens) and decode (--tokens new tokens)
#     speed of `generate`: 1 process x 2 threads against 2 ranks x 1 thread,
#     --rounds alternating rounds, min and median;
#   - the tokens of both (must be identical);
#   - the bytes all-reduced per decoded token, counted by a PMPI shim
#     (count-collectives.c, LD_PRELOAD) from the difference of two runs
#     that decode --tokens and 2 x --tokens tokens, against the analytic
#     count: 2 all-reduces of dim floats per layer, plus the logits'
#     all-gather, reduced as vocab floats (docs/distributed.md).
#
#   bench/distributed/tensor-parallel.sh [--seqc PATH] [--rounds N]
#       [--prompt N] [--tokens N] [--depth N] [--out DIR]
#
# Needs Open MPI (mpirun, mpicc: the default bootstrap installs them). As
# root it sets OMPI_ALLOW_RUN_AS_ROOT{,_CONFIRM}.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seqc=$root/build/bin/seqc
rounds=3
prompt=128
tokens=64
depth=12
out=
while [[ $# -gt 0 ]]; do
  case $1 in
    --seqc) seqc=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --prompt) prompt=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --depth) depth=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "tensor-parallel.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d)}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --oversubscribe --bind-to none)

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
dims=(-D dim=768 -D heads=12 -D kv_heads=12 -D vocab=50304 -D depth="$depth" -D max_len=1024)
"$seqc" "$root/examples/gpt.seq" "${dims[@]}" -o "$out/gpt1"
"$seqc" "$root/examples/gpt.seq" "${dims[@]}" --tensor-parallel=2 -o "$out/gpt2"
"$seqc" "$root/examples/gpt.seq" "${dims[@]}" --emit=manifest > "$out/one.json"
"$seqc" "$root/examples/gpt.seq" "${dims[@]}" --tensor-parallel=2 --emit=manifest > "$out/two.json"
[[ -f $out/w.safetensors ]] || "$out/gpt1" --random-weights 1 --save-weights "$out/w.safetensors"
mpicc -O2 -shared -fPIC -o "$out/count-collectives.so" "$root/bench/distributed/count-collectives.c"

python3 - "$out" <<'PY'
import json, math, sys
out = sys.argv[1]
for name, label in (("one", "1 process"), ("two", "each of 2 ranks")):
    m = json.load(open(f"{out}/{name}.json"))
    total = split = 0
    for p in m["params"]:
        n = math.prod(p["shape"]) * 4
        total += n
        split += n if "shard" in p else 0
    print(f"parameter bytes, {label}: {total / 1e6:.1f} MB"
          f" ({split / 1e6:.1f} MB split, {(total - split) / 1e6:.1f} MB replicated)")
PY

ids=$(python3 -c "print(','.join(str((i * 37) % 50000) for i in range($prompt)))")
gen=(generate --weights "$out/w.safetensors" --prompt-ids "$ids" --max-new-tokens "$tokens")
for r in $(seq "$rounds"); do
  /usr/bin/time -f "one maxrss_kb %M" "$out/gpt1" "${gen[@]}" --threads 2 \
    > "$out/one.txt" 2> "$out/one.$r.err"
  OMP_NUM_THREADS=1 "${mpirun[@]}" -np 2 /usr/bin/time -f "rank maxrss_kb %M" \
    "$out/gpt2" "${gen[@]}" --threads 1 > "$out/two.txt" 2> "$out/two.$r.err"
done
cmp -s "$out/one.txt" "$out/two.txt" && echo "tokens: identical" || echo "tokens: DIFFER"
python3 - "$out" "$rounds" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rates(tag):
    pre, dec, rss = [], [], []
    for r in range(1, rounds + 1):
        text = open(f"{out}/{tag}.{r}.err").read()
        pre.append(float(re.search(r"prefill: .*\(([0-9.]+) tokens/s\)", text).group(1)))
        dec.append(float(re.search(r"decode: .*\(([0-9.]+) tokens/s\)", text).group(1)))
        rss += [int(x) for x in re.findall(r"maxrss_kb (\d+)", text)]
    return pre, dec, rss
p1, d1, m1 = rates("one")
p2, d2, m2 = rates("two")
f = lambda v: f"max {max(v):.1f} median {statistics.median(v):.1f}"
print(f"prefill tok/s: 1x2 threads {f(p1)}; 2 ranks x 1 {f(p2)}; ratio of medians {statistics.median(p2) / statistics.median(p1):.2f}")
print(f"decode tok/s:  1x2 threads {f(d1)}; 2 ranks x 1 {f(d2)}; ratio of medians {statistics.median(d2) / statistics.median(d1):.2f}")
print(f"peak RSS: 1 process {max(m1) / 1024:.0f} MiB; per rank {max(m2) / 1024:.0f} MiB")
PY

count() {
  OMP_NUM_THREADS=1 "${mpirun[@]}" -np 2 -x LD_PRELOAD="$out/count-collectives.so" \
    "$out/gpt2" generate --weights "$out/w.safetensors" --prompt-ids "$ids" \
    --max-new-tokens "$1" --threads 1 2>&1 >/dev/null | grep -m1 "^rank 0:"
}
short=$(count "$tokens")
long=$(count $((2 * tokens)))
python3 - "$short" "$long" "$tokens" "$depth" <<'PY'
import re, sys
short, long, tokens, depth = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c1, b1 = map(int, re.search(r"(\d+) all-reduces of (\d+) bytes", short).groups())
c2, b2 = map(int, re.search(r"(\d+) all-reduces of (\d+) bytes", long).groups())
calls, bytes_ = (c2 - c1) / tokens, (b2 - b1) / tokens
analytic = 2 * depth * 768 * 4 + 50304 * 4
print(f"per decoded token (rank 0): {calls:.1f} all-reduces, {bytes_:.0f} bytes reduced;"
      f" analytic {2 * depth + 1} and {analytic} bytes"
      f" (per layer {2 * 768 * 4} bytes, the logits {50304 * 4})")
PY
