"""run_all.py [--tol=T] DIR DIMS...: runs DIR/ref, DIR/o2 and DIR/avx2 on
random inputs for each DIMS (g=..,m=..,r=..) and compares o2 and avx2 with
ref (compare_npy.py, relative tolerance T)."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
tol = [a for a in sys.argv[1:] if a.startswith("--tol=")]
sys.argv = [a for a in sys.argv if not a.startswith("--tol=")]
work = sys.argv[1]
names = ["lin", "mm", "s", "pv", "tt"]
for i, dims in enumerate(sys.argv[2:]):
    outs = {}
    for exe in ("ref", "o2", "avx2"):
        out = os.path.join(work, f"{exe}-{i}")
        os.makedirs(out, exist_ok=True)
        argv = [os.path.join(work, exe), "--random-weights", "1", "--random-inputs", "2"]
        for d in dims.split(","):
            argv += ["--dim", d]
        for n in names:
            argv += ["--output", f"{n}={out}/{n}.npy"]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        outs[exe] = out
    for exe in ("o2", "avx2"):
        r = subprocess.run([sys.executable, os.path.join(here, "..", "..", "..", "Inputs", "compare_npy.py"),
                            *tol, outs["ref"], outs[exe]] + names, capture_output=True, text=True)
        print(f"{dims} {exe}: {r.stdout.strip() or r.stderr.strip()}")
