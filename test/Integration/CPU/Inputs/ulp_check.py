"""The element-wise check of scan_gates.py and small_args.py: f32 results
against a float64 reference.

check(name, x, got, want, bound, flush, zero) passes when every result is
right: NaN exactly where the reference is NaN, an infinite reference
matched exactly, 0 where `zero` is true, a subnormal reference within
`bound` ulp of the smallest normal number (or 0 with `flush`), and a normal
one within `bound` ulp. It prints the first failures and exits 1, or
returns the largest error in ulp over the normal results.
"""
import sys

import numpy as np


def check(name, x, got, want, bound, flush=False, zero=None):
    top = float(np.finfo(np.float32).max)
    tiny = float(np.finfo(np.float32).tiny)
    bad = []
    ulps = [0.0]
    for i, (xi, g, w) in enumerate(zip(x, got, want)):
        if np.isnan(w):
            ok = np.isnan(g)
        elif abs(w) > top:
            ok = g == w
        elif zero is not None and zero[i]:
            ok = g == 0
        elif abs(w) < tiny:
            ok = abs(g - w) <= bound * float(np.spacing(np.float32(tiny))) or (
                flush and g == 0)
        else:
            ulp = float(np.spacing(np.float32(abs(w))))
            ok = abs(g - w) <= bound * ulp
            ulps.append(abs(g - w) / ulp)
        if not ok:
            bad.append((float(xi), g, w))
    if bad:
        for xi, g, w in bad[:10]:
            print("%s(%r): got %r, want %r" % (name, xi, g, w))
        print("FAILED: %d of %d" % (len(bad), len(x)))
        sys.exit(1)
    return max(ulps)
