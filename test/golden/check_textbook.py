#!/usr/bin/python3
"""Asserts the hand-computed values of the textbook example (textbook.seq):
the attention matrix and the first output row, to 4 decimals.

  check_textbook.py Y.npy ATTN.npy
"""

import sys

import numpy as np

EXPECTED_ATTN = np.array([[0.4011, 0.1978, 0.4011],
                          [0.1978, 0.4011, 0.4011],
                          [0.2483, 0.2483, 0.5035]])
EXPECTED_Y0 = np.array([0.8022, 0.5989])


def main():
    y, attn = np.load(sys.argv[1]), np.load(sys.argv[2])
    ok = True
    for what, got, want in (("attention matrix", attn.reshape(3, 3), EXPECTED_ATTN),
                            ("first output row", y.reshape(3, 2)[0], EXPECTED_Y0)):
        rounded = np.round(got.astype(np.float64), 4)
        good = np.array_equal(rounded, want)
        ok &= good
        print("%s %s: %s (rounded %s, expected %s)" % (
            "PASS" if good else "FAIL", what, np.array2string(got, precision=6),
            rounded.tolist(), want.tolist()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
