#!/usr/bin/env bash
# Decode's matrix-vector product x @ W^T with W in q8_0 (or q4_0, q4_1) blocks
# or int8 rows:
# the f32-activation kernel (the weights dequantized to f32 in registers)
# against the int8-activation kernel of --int8-activations (x quantized per
# block of 32 to int8 once per row, blocks multiplied with VNNI's vpdpbusd),
# in the same run, rounds alternating (docs/performance.md, "Quantized
# weights with int8 activations").
#
#   bench/matvec-int8.sh [--seqc PATH] [--formats "q8_0 q4_0"]
#                        [--shapes "4096x4096 1536x576"] [--rows "1 4"]
#                        [--rounds 7] [--runs 50] [--threads 1] [--opt 3]
#                        [--out DIR]
#
# Each model is bench/kernels/matvec.seq compiled by `seqc -O<opt>` with
# --int8-activations (the default) and with --int8-activations=false; each
# round runs the binary's
# `--bench <runs> --threads <threads>` (one warm-up, then <runs> timed
# calls) once per kernel. Per (format, shape, rows) it prints each round's
# minimum (ms), then the minimum and the median of the rounds' minimums of
# both kernels, their ratio (f32 activations / int8 activations, > 1: int8
# is faster) and the GB/s of the weight's bytes at the best round. The host
# (CPU model and the VNNI flags) is named in the first lines. Without VNNI
# the int8 models keep the f32 kernels (--remarks says so) and the ratio is
# about 1.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seqc=$root/build/bin/seqc
formats="q8_0"
shapes="4096x4096 1536x576"
rows="1 4"
rounds=7
runs=50
threads=1
opt=3
out=
while [[ $# -gt 0 ]]; do
  case $1 in
    --seqc) seqc=$2; shift 2 ;;
    --formats) formats=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "matvec-int8.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -z $out ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')," \
  "$(nproc) cores"
echo "vnni flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(avx_vnni|avx512_vnni|avx512vl)$' | tr '\n' ' ')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "seqc -O$opt, --bench $runs --threads $threads, $rounds rounds"

# min and median of the numbers on stdin.
stats() {
  sort -g | awk '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%s %s\n", v[1], m }'
}

for format in $formats; do
  for shape in $shapes; do
    n=${shape%x*}
    k=${shape#*x}
    for kind in f32act int8act; do
      flag=--int8-activations=false
      [[ $kind == int8act ]] && flag=--int8-activations
      "$seqc" -O"$opt" $flag "$root/bench/kernels/matvec.seq" \
        -D out_features="$n" -D in_features="$k" -D weight_format="$format" \
        -o "$out/$format-$shape-$kind"
    done
    # The weight's bytes: blocks of 32 (q8_0 34, q4_0 18, q4_1 20 bytes),
    # or int8's rows of k values and an f32 scale.
    bytes=$(awk -v n="$n" -v k="$k" -v f="$format" 'BEGIN {
      if (f == "int8") { printf "%d", n * (k + 4); exit }
      b = f == "q8_0" ? 34 : f == "q4_0" ? 18 : 20
      printf "%d", n * k / 32 * b }')
    for m in $rows; do
      declare -A mins=()
      for ((r = 0; r < rounds; ++r)); do
        for kind in f32act int8act; do
          line=$("$out/$format-$shape-$kind" --random-weights 0 \
                   --random-inputs 0 --dim m="$m" --bench "$runs" \
                   --threads "$threads")
          ms=$(sed -n 's/.*min \([0-9.]*\) ms.*/\1/p' <<<"$line")
          mins[$kind]+="$ms "
        done
      done
      read -r f32min f32med < <(tr ' ' '\n' <<<"${mins[f32act]}" | grep . | stats)
      read -r i8min i8med < <(tr ' ' '\n' <<<"${mins[int8act]}" | grep . | stats)
      echo "$format W ${n}x${k} m=$m"
      echo "  f32 activations  rounds (ms): ${mins[f32act]}"
      echo "  int8 activations rounds (ms): ${mins[int8act]}"
      awk -v a="$f32min" -v am="$f32med" -v b="$i8min" -v bm="$i8med" \
        -v bytes="$bytes" 'BEGIN {
        printf "  min: f32 %.4f ms (%.1f GB/s), int8 %.4f ms (%.1f GB/s): %.2fx\n",
          a, bytes / a / 1e6, b, bytes / b / 1e6, a / b
        printf "  median of the rounds: f32 %.4f ms, int8 %.4f ms: %.2fx\n",
          am, bm, am / bm }'
      unset mins
    done
  done
done
