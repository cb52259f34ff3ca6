"""run_all.py [--tol=T] [--outputs=A,B,...] [--exes=X,Y,...] DIR DIMS...: runs
DIR/ref and DIR/X for each X (default o2 and avx2) on random inputs for each
DIMS (g=..,m=..,r=..) and compares the named outputs (default: those of
contractions.seq) of each X with ref (compare_npy.py, relative tolerance T)."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
tol = [a for a in sys.argv[1:] if a.startswith("--tol=")]
names = next((a[10:].split(",") for a in sys.argv[1:] if a.startswith("--outputs=")),
             ["lin", "mm", "s", "pv", "tt"])
exes = next((a[7:].split(",") for a in sys.argv[1:] if a.startswith("--exes=")),
            ["o2", "avx2"])
sys.argv = [a for a in sys.argv if not a.startswith(("--tol=", "--outputs=", "--exes="))]
work = sys.argv[1]
for i, dims in enumerate(sys.argv[2:]):
    outs = {}
    for exe in ["ref"] + exes:
        out = os.path.join(work, f"{exe}-{i}")
        os.makedirs(out, exist_ok=True)
        argv = [os.path.join(work, exe), "--random-weights", "1", "--random-inputs", "2"]
        for d in dims.split(","):
            argv += ["--dim", d]
        for n in names:
            argv += ["--output", f"{n}={out}/{n}.npy"]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        outs[exe] = out
    for exe in exes:
        r = subprocess.run([sys.executable, os.path.join(here, "..", "..", "..", "Inputs", "compare_npy.py"),
                            *tol, outs["ref"], outs[exe]] + names, capture_output=True, text=True)
        print(f"{dims} {exe}: {r.stdout.strip() or r.stderr.strip()}")
