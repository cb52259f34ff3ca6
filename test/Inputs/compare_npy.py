"""compare_npy.py [--tol=T] DIR_A DIR_B NAME...: the largest error of B
against A over the named outputs, relative to A's largest magnitude; exit 1
above T (default 1e-5)."""
import sys

import numpy as np

args = [a for a in sys.argv[1:] if not a.startswith("--tol=")]
tol = next((float(a[6:]) for a in sys.argv[1:] if a.startswith("--tol=")), 1e-5)
sys.argv = [sys.argv[0]] + args
worst = 0.0
for name in sys.argv[3:]:
    a = np.load(f"{sys.argv[1]}/{name}.npy")
    b = np.load(f"{sys.argv[2]}/{name}.npy")
    if a.shape != b.shape:
        sys.exit(f"{name}: shapes {a.shape} and {b.shape} differ")
    scale = max(float(np.abs(a).max()), 1e-30) if a.size else 1.0
    err = float(np.abs(a - b).max()) / scale if a.size else 0.0
    worst = max(worst, err)
    if not np.isfinite(b).all():
        sys.exit(f"{name}: non-finite values")
print("ok" if worst <= tol else f"error {worst:.3g}")
sys.exit(0 if worst <= tol else 1)
