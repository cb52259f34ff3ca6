"""tensor_parallel_examples.py SEQC MPIRUN WORKDIR EXAMPLE...: compiles each
examples/EXAMPLE.seq (its forward entry where it has several) for one
process and with --tensor-parallel=2, runs both on the same random weights
and inputs (symbolic sizes 8, batch 2), the second under MPIRUN -np 2, and
prints the largest error of each example's outputs relative to the largest
one-process value; exits 1 above 1e-5 or when a step fails."""
import json
import os
import shlex
import subprocess
import sys

import numpy as np

seqc, mpirun, work = sys.argv[1], shlex.split(sys.argv[2]), sys.argv[3]
root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
failed = False


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"{shlex.join(cmd)} failed:\n{result.stderr[-2000:]}")
    return result.stdout


for name in sys.argv[4:]:
    source = os.path.join(root, name + ".seq")
    entry = ["--entry", "forward"]
    manifest = subprocess.run([seqc, source, *entry, "--emit=manifest"],
                              capture_output=True, text=True)
    if manifest.returncode:
        entry = []
        manifest = subprocess.run([seqc, source, "--emit=manifest"],
                                  capture_output=True, text=True, check=True)
    spec = json.loads(manifest.stdout)
    dims = sorted({d for value in spec["inputs"]
                   for d in value["shape"] + value.get("range", [])
                   if isinstance(d, str)})
    args = ["--random-weights", "1", "--random-inputs", "2"]
    for d in dims:
        args += ["--dim", f"{d}={2 if d == 'b' else 8}"]
    outputs = [value["name"] for value in spec["outputs"]]
    for tag, extra, launch in (("one", [], []),
                               ("two", ["--tensor-parallel=2"],
                                mpirun + ["-np", "2"])):
        binary = os.path.join(work, f"{name}_{tag}")
        run([seqc, source, *entry, *extra, "-o", binary])
        files = []
        for out in outputs:
            files += ["--output", f"{out}={binary}_{out}.npy"]
        run(launch + [binary] + args + files)
    worst = 0.0
    for out in outputs:
        one = np.load(os.path.join(work, f"{name}_one_{out}.npy"))
        two = np.load(os.path.join(work, f"{name}_two_{out}.npy"))
        if one.shape != two.shape or not np.isfinite(two).all():
            sys.exit(f"{name}: '{out}' has shape {two.shape} against "
                     f"{one.shape}, or non-finite values")
        scale = max(float(np.abs(one).max()), 1e-30)
        worst = max(worst, float(np.abs(one.astype(np.float64) - two).max())
                    / scale)
    ok = worst <= 1e-5
    failed |= not ok
    print(f"{name}: {'ok' if ok else 'error'} {worst:.1e}")
sys.exit(1 if failed else 0)
