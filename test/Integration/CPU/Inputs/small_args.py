"""Inputs and check of small_args.seq: ELU and softplus against float64.

`gen DIR` writes x: magnitudes from 1e-30 to 100 (log-spaced, both signs)
and 0, -0, +-inf and NaN. `check DIR elu|softplus` compares y with the
function in float64 (expm1 for ELU's negative side, log1p(exp(x)) for
softplus, torch's x above its threshold 20): a normal result within 4 ulp,
a subnormal one within 4 ulp of the smallest normal number or 0 (-O2's
polynomial exp flushes results below 2^-126), an infinite one equal, NaN
only where float64 gives NaN. log(1 + x) for log1p, or exp(x) - 1
for expm1, fails here by far: ELU(-1e-8) would be 0.
"""
import sys

import numpy as np

N = 2048


def inputs():
    mags = np.geomspace(1e-30, 100.0, (N - 6) // 2)
    x = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 20.0], mags,
                        -mags])
    x = np.resize(x, N).astype(np.float32)
    return x


def main():
    mode, out = sys.argv[1], sys.argv[2]
    x = inputs()
    if mode == "gen":
        np.save(out + "/x.npy", x)
        return
    name = sys.argv[3]
    got = np.load(out + "/y.npy").astype(np.float64)
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "elu":
            want = np.where(x64 > 0, x64, np.expm1(x64))
        else:
            want = np.where(x64 > 20, x64, np.log1p(np.exp(x64)))
    top = float(np.finfo(np.float32).max)
    tiny = float(np.finfo(np.float32).tiny)
    bad = []
    for xi, g, w in zip(x, got, want):
        if np.isnan(w):
            ok = np.isnan(g)
        elif abs(w) > top:
            ok = g == w
        elif abs(w) < tiny and g == 0:
            ok = True
        else:
            ulp = float(np.spacing(np.float32(max(abs(w), tiny))))
            ok = abs(g - w) <= 4 * ulp
        if not ok:
            bad.append((float(xi), g, w))
    if bad:
        for xi, g, w in bad[:10]:
            print("%s(%r): got %r, want %r" % (name, xi, g, w))
        print("FAILED: %d of %d" % (len(bad), N))
        sys.exit(1)
    print("ok " + name)


if __name__ == "__main__":
    main()
