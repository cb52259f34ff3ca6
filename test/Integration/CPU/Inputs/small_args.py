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

from ulp_check import check

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
    check(name, x, got, want, 4, flush=True)
    print("ok " + name)


if __name__ == "__main__":
    main()
