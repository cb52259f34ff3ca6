#!/usr/bin/env bash
# Installs the benchmark peers that come from PyPI (PyTorch 2.x, IREE's
# compiler and runtime) into a virtual environment outside the source tree.
# Idempotent and cached: a second run with the same requirements returns at
# once. Nothing in `make test` or in seqc itself needs what this installs.
#
#   bench/setup-peers.sh            prints the venv's python on success
#
# SEQC_PEERS_VENV   where the venv lives (default ~/.cache/seqc/bench-venv)
#
# A peer that fails to install is reported (peers.json beside the venv's
# python records what installed) and the others still install: bench/compare
# says which peer is missing and why.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${SEQC_PEERS_VENV:-$HOME/.cache/seqc/bench-venv}
case "$venv" in
  "$root"/*) echo "setup-peers.sh: the venv must live outside the source tree ($venv)" >&2; exit 2 ;;
esac

# Debian's packages the peers need (venv, BLAS/BLIS, tcmalloc, matplotlib).
bash "$root/scripts/bootstrap.sh" --bench || exit 1

# One requirement per line: name, then the import that proves it works.
requirements=(
  "torch torch"
  "numpy numpy"
  "iree-base-compiler iree.compiler"
  "iree-base-runtime iree.runtime"
)
stamp="$venv/.seqc-peers"
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

status="{"
sep=""
for req in "${requirements[@]}"; do
  read -r name module <<<"$req"
  if "$py" -c "import $module" 2>/dev/null || "$py" -m pip install -q "$name" >&2 && "$py" -c "import $module" 2>/dev/null; then
    status+="$sep\"$name\": \"ok\""
  else
    echo "setup-peers.sh: $name did not install; its peer will be skipped" >&2
    status+="$sep\"$name\": \"failed to install\""
    failed=1
  fi
  sep=", "
done
status+="}"
echo "$status" > "$venv/peers.json"
# Only a complete install is cached; a partial one is retried next time.
if [[ -z "${failed:-}" ]]; then
  echo "$want" > "$stamp"
fi
echo "$py"
