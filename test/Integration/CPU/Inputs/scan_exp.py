"""Inputs and check of scan_exp.seq: the fused scan's exp against libm.

`gen DIR` writes the inputs: A holds every value the decay can see, from
-150 (subnormal results, then 0) to 95 (overflow), densely in [-2, 0]
where decays near 1 matter most, and 0, -0, NaN and -3e38 (dt A log2(e)
overflows to -inf, so the polynomial's argument is NaN unless handled). (Step 1 uses
delta = 2^-10 and u = 1024 so that its state is 1 whatever exp(A) is,
short of infinities: inf * 0 would be NaN.) `check DIR [--flush]`
compares y[0, 1, :] with exp(A) in float64 (what libm's expf rounds): a
normal result must be within 2 + 1.25 |A| ulp (the second term is the
rounding of A log2(e) in f32, the same order as the rounding of dt A in
the reference), a
subnormal one as close relatively plus 2^-149 or, with --flush (the
exponent-bits form), 0; beyond f32's range +inf (with --flush also from
2^127.5 on); NaN stays NaN.
"""
import sys

import numpy as np

N = 4096


def inputs():
    rng = np.random.default_rng(11)
    special = np.array([0.0, -0.0, np.nan, 88.7, 88.73, 90.0, -87.33,
                        -87.34, -103.0, -104.0, -150.0, -3e38], np.float32)
    dense = np.linspace(-2.0, 0.0, 1500, dtype=np.float32)
    wide = rng.uniform(-110.0, 95.0, N - len(special) - len(dense) - 100)
    small = rng.uniform(-1e-3, 1e-3, 100)
    a = np.concatenate([special, dense, wide.astype(np.float32),
                        small.astype(np.float32)]).astype(np.float32)
    assert a.size == N
    return a


def main():
    mode, out = sys.argv[1], sys.argv[2]
    a = inputs()
    if mode == "gen":
        u = np.zeros((1, 2, N), np.float32)
        u[0, 0] = 1024
        np.save(out + "/u.npy", u)
        delta = np.ones((1, 2, N), np.float32)
        delta[0, 0] = 2.0**-10
        np.save(out + "/delta.npy", delta)
        np.save(out + "/A.npy", a.reshape(N, 1))
        np.save(out + "/B.npy", np.ones((1, 2, 1), np.float32))
        np.save(out + "/C.npy", np.array([[[0.0], [1.0]]], np.float32))
        return
    flush = "--flush" in sys.argv
    got = np.load(out + "/y.npy")[0, 1].astype(np.float64)
    want = np.exp(a.astype(np.float64))
    top = float(np.finfo(np.float32).max)
    bad = []
    for x, g, w in zip(a, got, want):
        if np.isnan(x):
            ok = np.isnan(g)
        elif w > top:
            ok = np.isinf(g) and g > 0
        elif w < 2.0**-126:
            ok = abs(g - w) <= (2 + 1.25 * abs(float(x))) * 2.0**-23 * w + 2.0**-149
            ok = ok or (flush and g == 0)
        else:
            ulp = float(np.spacing(np.float32(w)))
            ok = abs(g - w) <= (2 + 1.25 * abs(float(x))) * ulp or (
                flush and w > 2.0**127.5 and np.isinf(g))
        if not ok:
            bad.append((float(x), g, w))
    if bad:
        for x, g, w in bad[:10]:
            print("exp(%r): got %r, want %r" % (x, g, w))
        print("FAILED: %d of %d" % (len(bad), N))
        sys.exit(1)
    # The error in ulp on [-1, 1], where it is not dominated by the rounding
    # of the argument.
    near = np.abs(a) <= 1
    ulps = np.abs(got[near] - want[near]) / np.spacing(
        want[near].astype(np.float32))
    print("ok, max %.2f ulp on [-1, 1]" % ulps.max())


main()
