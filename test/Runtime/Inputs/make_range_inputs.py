"""Writes the .npy inputs of input-range.test into the directory argv[1]."""

import os
import sys

import numpy as np

out = sys.argv[1]
arrays = {
    "t300": [[1, 2, 300, 4]],
    "tneg": [[1, 2, 3], [4, -2, 0]],
    "tbig": [[2000000000]],
    "tok": [[0, 255, 3, 4, 5]],
    "len99": [99],
    "lenm5": [-5],
    "len5": [5],
}
for name, values in arrays.items():
    np.save(os.path.join(out, name + ".npy"), np.array(values, dtype=np.int32))
