#!/usr/bin/env bash
# Compile time, peak compiler memory and library size of examples/gpt.seq at
# GPT-2 width (dim 768, 12 heads, vocab 50257) against its depth: how the
# compiler scales with the number of layers (docs/performance.md,
# "Compile time against depth").
#
#   bench/compile-depth.sh [--seqc PATH] [--depths "1 12 48"] [--opt N]
#                          [--functions DEPTH] [--out DIR] [--jobs N]
#
# --seqc       the compiler (default build/bin/seqc of this tree)
# --depths     the depths to compile (default "1 12 48"; 96 takes minutes)
# --opt        the optimization level (default 3)
# --functions  also print the LLVM IR line counts of the largest functions of
#              the model at this depth (`--emit=llvm-ir`, after LLVM's -O)
# --out        where the libraries and IR go (default a temporary directory)
# --jobs       seqc's --jobs: entries compiled at once (default seqc's own,
#              one per core; 1 compiles gpt's three entries one at a time)
#
# Each depth is compiled once by `seqc -O<opt> -o gpt_d<depth>.so` under
# /usr/bin/time -v: wall and CPU (user + system) seconds, the compiler's
# maximum resident set size, and the shared library's size. The host is
# named in the first lines, since the times depend on it and on its load.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seqc=$root/build/bin/seqc
depths="1 12 48"
opt=3
functions=
out=
jobs=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --seqc) seqc=$2; shift 2 ;;
    --depths) depths=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    --functions) functions=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --jobs) jobs=(--jobs="$2"); shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "compile-depth.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -z $out ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
width=(-D dim=768 -D heads=12 -D kv_heads=12 -D vocab=50257)
model=$root/examples/gpt.seq

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "host: $(hostname), $cpu, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "seqc: $seqc, -O$opt ${jobs[*]}, examples/gpt.seq ${width[*]}"
echo
echo "| depth | wall | CPU (user + sys) | peak memory | library |"
echo "|---|---|---|---|---|"
for depth in $depths; do
  lib=$out/gpt_d$depth.so
  log=$out/gpt_d$depth.time
  /usr/bin/time -v "$seqc" -O"$opt" "${jobs[@]}" "${width[@]}" \
    -D depth="$depth" "$model" -o "$lib" 2> "$log"
  awk -v depth="$depth" -v bytes="$(stat -c %s "$lib")" '
    /Elapsed \(wall clock\)/ {
      n = split($NF, t, ":"); wall = 0
      for (i = 1; i <= n; i++) wall = wall * 60 + t[i]
    }
    /User time/ { user = $NF }
    /System time/ { sys = $NF }
    /Maximum resident set size/ { rss = $NF }
    END {
      printf "| %d | %.1f s | %.1f s | %.0f MB | %.2f MB |\n", depth, wall,
             user + sys, rss / 1024, bytes / 1e6
    }' "$log"
done

if [[ -n $functions ]]; then
  ll=$out/gpt_d$functions.ll
  "$seqc" -O"$opt" "${width[@]}" -D depth="$functions" "$model" \
    --emit=llvm-ir -o "$ll"
  echo
  echo "LLVM IR lines of the largest functions at depth $functions (-O$opt):"
  awk '
    /^define/ {
      match($0, /@[^(]+/); name = substr($0, RSTART + 1, RLENGTH - 1)
      n = 0; inside = 1; next
    }
    inside && /^}/ { print n, name; inside = 0; next }
    inside { n++ }' "$ll" | sort -rn | head -12
fi
