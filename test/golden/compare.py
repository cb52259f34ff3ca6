#!/usr/bin/python3
"""Compares an output .npy with the expected one (numpy only).

  compare.py ACTUAL.npy EXPECTED.npy [--abs 1e-4] [--rel 1e-3]

Passes when
  - the shapes and the dtypes are equal;
  - every element the expected array has as NaN/+Inf/-Inf is the same
    non-finite value in the actual array, and there is no other NaN/Inf;
  - over the finite elements,
        max abs err = max |a - e|                      <= 1e-4
        max rel err = max |a - e| / max(|e|, floor)    <= 1e-3
    with floor = 1e-2: an element's error is relative to its own magnitude,
    and elements smaller than 1e-2 in magnitude are held to an absolute error
    of 1e-5 (1e-3 of the floor) so that a value that should be about zero
    neither divides by ~0 nor escapes the relative check. Exact zeros (e.g.
    the rows of a fully masked attention) are thus held to 1e-5.

Prints one line with both errors (and where the worst ones are) and exits 0
on a pass, 1 on a failure. Importable: compare(actual, expected) -> Result.
"""

import argparse
import sys

import numpy as np

ABS_TOL = 1e-4
REL_TOL = 1e-3
REL_FLOOR = 1e-2


class Result:
    def __init__(self, ok, message, max_abs=float("nan"), max_rel=float("nan")):
        self.ok, self.message, self.max_abs, self.max_rel = ok, message, max_abs, max_rel


def compare(actual, expected, abs_tol=ABS_TOL, rel_tol=REL_TOL, rel_floor=REL_FLOOR):
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return Result(False, "shape %s, expected %s" % (actual.shape, expected.shape))
    if actual.dtype != expected.dtype:
        return Result(False, "dtype %s, expected %s" % (actual.dtype, expected.dtype))
    if actual.dtype.kind not in "fc":
        bad = np.flatnonzero(actual != expected)
        if bad.size:
            i = np.unravel_index(bad[0], actual.shape)
            return Result(False, "%d elements differ, first at %s: %s vs %s"
                          % (bad.size, i, actual[i], expected[i]), 1.0, 1.0)
        return Result(True, "exact", 0.0, 0.0)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    fin_e, fin_a = np.isfinite(e), np.isfinite(a)
    # Non-finite expected values must be reproduced exactly (NaN as NaN,
    # +Inf as +Inf); no other element may be non-finite.
    same_nan = np.isnan(a) & np.isnan(e)
    same_inf = np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e))
    bad = (~fin_e & ~(same_nan | same_inf)) | (fin_e & ~fin_a)
    if bad.any():
        idx = np.argwhere(bad)
        i = tuple(idx[0])
        return Result(False, "%d unexpected non-finite values (NaN %d, Inf %d), first at %s: "
                      "%r, expected %r" % (len(idx), int(np.isnan(a[bad]).sum()),
                                           int(np.isinf(a[bad]).sum()), i, a[i], e[i]))
    if not fin_e.any():
        return Result(True, "max abs err 0 max rel err 0 (no finite elements)", 0.0, 0.0)
    diff = np.where(fin_e, np.abs(a - e), 0.0)
    relerr = diff / np.maximum(np.abs(e), rel_floor)
    ia = np.unravel_index(np.argmax(diff), diff.shape)
    ir = np.unravel_index(np.argmax(relerr), relerr.shape)
    max_abs, max_rel = float(diff[ia]), float(relerr[ir])
    ok = max_abs <= abs_tol and max_rel <= rel_tol
    msg = ("max abs err %.3e at %s (%.7g vs %.7g), max rel err %.3e at %s (%.7g vs %.7g)"
           % (max_abs, tuple(int(x) for x in ia), a[ia], e[ia],
              max_rel, tuple(int(x) for x in ir), a[ir], e[ir]))
    if not ok:
        msg += "; tolerance abs %g rel %g (floor %g)" % (abs_tol, rel_tol, rel_floor)
    return Result(ok, msg, max_abs, max_rel)


def main():
    ap = argparse.ArgumentParser(description="Compare a .npy output with the expected one.")
    ap.add_argument("actual")
    ap.add_argument("expected")
    ap.add_argument("--abs", type=float, default=ABS_TOL, help="max abs err (default 1e-4)")
    ap.add_argument("--rel", type=float, default=REL_TOL, help="max rel err (default 1e-3)")
    ap.add_argument("--floor", type=float, default=REL_FLOOR,
                    help="magnitude floor of the rel err denominator (default 1e-2)")
    args = ap.parse_args()
    try:
        actual, expected = np.load(args.actual), np.load(args.expected)
    except (OSError, ValueError) as err:
        print("FAIL %s: %s" % (args.actual, err))
        return 1
    res = compare(actual, expected, args.abs, args.rel, args.floor)
    print("%s %s: %s" % ("PASS" if res.ok else "FAIL", args.actual, res.message))
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
