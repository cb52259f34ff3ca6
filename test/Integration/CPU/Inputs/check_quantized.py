"""check_quantized.py DIR M...: runs DIR/model (Inputs/quantized.seq or
Inputs/int8.seq) with
random weights on M random rows each and checks every output against
float64 NumPy on the weights the model read (saved dequantized to F32):
each element within 1e-5 of the sum of the magnitudes of its products
(rounding of an f32 sum in any order). Prints "ok m=M" or the error."""
import json
import os
import struct
import subprocess
import sys

import numpy as np


def load_safetensors(path):
    data = open(path, "rb").read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        assert info["dtype"] == "F32", info
        tensors[name] = np.frombuffer(data[8 + size + begin:8 + size + end],
                                      dtype=np.float32).reshape(info["shape"])
    return tensors


directory = sys.argv[1]
outputs = {"y8": ("q8.weight", None), "y40": ("q40.weight", "q40.bias"),
           "y41": ("q41.weight", None), "yp": ("w", None)}
int8_outputs = {"ya": ("a.weight", None), "yb": ("b.weight", "b.bias"),
                "yp": ("w", None)}
for m in map(int, sys.argv[2:]):
    run = f"{directory}/m{m}"
    os.makedirs(run, exist_ok=True)
    args = [f"{directory}/model", "--random-weights", "7",
            "--save-weights", f"{run}/w.safetensors"]
    # A first run saves the weights, whose width is the input's.
    subprocess.run(args + ["--random-inputs", "1", "--dim", f"m={m}"],
                   check=True, capture_output=True)
    weights = load_safetensors(f"{run}/w.safetensors")
    if "a.weight" in weights:
        outputs = int8_outputs
    k = weights["w"].shape[1]
    x = np.random.default_rng(m).standard_normal((m, k)).astype(np.float32)
    np.save(f"{run}/x.npy", x)
    out = [a for name in outputs for a in ("--output", f"{name}={run}/{name}.npy")]
    subprocess.run(args + ["--input", f"x={run}/x.npy"] + out, check=True,
                   capture_output=True)
    for name, (weight, bias) in outputs.items():
        w = weights[weight].astype(np.float64)
        ref = x.astype(np.float64) @ w.T
        bound = np.abs(x.astype(np.float64)) @ np.abs(w).T
        if bias:
            ref += weights[bias]
            bound += np.abs(weights[bias])
        y = np.load(f"{run}/{name}.npy")
        excess = np.abs(y - ref) / (1e-5 * bound + 1e-30)
        if not np.isfinite(y).all() or excess.max() > 1:
            print(f"error m={m} {name}: {np.abs(y - ref).max():.3g}")
            break
    else:
        print(f"ok m={m}")
