"""Inputs and check of scan_gates.seq: the fused scan's softplus and silu
against float64.

`gen DIR` writes the inputs: x covers the whole f32 range the gates see,
densely in [-30, 30] and sparsely out to -1e30 and 1e30, with 0, -0, the
softplus threshold 20 and its neighbours, the points where e^x underflows or
overflows, +-inf and NaN; u = 1, B = 1, C = 1, A = -1, and delta = x (the
softplus entry) or 1 with z = x (the silu entry).

`check DIR softplus|silu [--flush]` compares y with the function in
float64: torch's softplus (x above 20, log1p(exp(x)) otherwise) and x / (1 +
exp(-x)). A normal result must be within 3 ulp for softplus, 4 for silu (its
three roundings in f32 arithmetic alone reach 3.3), a subnormal one within as
many ulp of the smallest normal number (or 0 with --flush, for the
exponent-bits form), an infinite one equal; NaN only where float64 gives
NaN. Where exp(-x) overflows f32 (x below -88.72), silu is -0, as x / (1 +
exp(-x)) is in f32 arithmetic whatever the exp. The largest error in ulp over
the normal results is printed.
"""
import sys

import numpy as np

from ulp_check import check

N = 4096


def inputs():
    rng = np.random.default_rng(5)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 20.0,
                        np.nextafter(np.float32(20), np.float32(0)),
                        np.nextafter(np.float32(20), np.float32(30)),
                        -87.33, -87.34, -88.73, -103.0, -104.0, -105.0,
                        88.72, 88.73, 89.0, 1e-30, -1e-30, 1e30, -1e30,
                        3e38, -3e38], np.float32)
    dense = rng.uniform(-30.0, 30.0, 3000)
    near = rng.uniform(-1.0, 1.0, 500)
    wide = np.sign(rng.uniform(-1, 1, N - len(special) - 3500)) * \
        np.exp(rng.uniform(-60, 60, N - len(special) - 3500))
    x = np.concatenate([special, dense, near, wide]).astype(np.float32)
    assert x.size == N
    return x


def reference(name, x):
    x = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "softplus":
            return np.where(x > 20, x, np.log1p(np.exp(x)))
        return x / (1 + np.exp(-x))


def main():
    mode, out = sys.argv[1], sys.argv[2]
    x = inputs()
    if mode == "gen":
        ones = np.ones((1, 1, N), np.float32)
        np.save(out + "/u.npy", ones)
        np.save(out + "/x.npy", x.reshape(1, 1, N))
        np.save(out + "/one.npy", ones)
        np.save(out + "/A.npy", -np.ones((N, 1), np.float32))
        np.save(out + "/B.npy", np.ones((1, 1, 1), np.float32))
        np.save(out + "/C.npy", np.ones((1, 1, 1), np.float32))
        return
    name = sys.argv[3]
    flush = "--flush" in sys.argv
    got = np.load(out + "/y.npy")[0, 0].astype(np.float64)
    want = reference(name, x)
    # Where exp(-x) overflows f32, x / (1 + exp(-x)) is -0 in f32.
    zero = (name == "silu") & (-x.astype(np.float64) > np.log(
        float(np.finfo(np.float32).max)))
    worst = check(name, x, got, want, 3 if name == "softplus" else 4,
                  flush, zero)
    print("ok %s, max %.2f ulp" % (name, worst))


if __name__ == "__main__":
    main()
