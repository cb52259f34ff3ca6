"""casts.py write|check DIR: the checkpoint, inputs and expected outputs of
Inputs/casts.seq (comparisons, casts, a bf16 layer), with numpy only."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_checkpoint import encode, from_bf16_bits, to_bf16_bits, write_safetensors  # noqa: E402

B, N, D = 2, 5, 8


def bf16(x):
    return from_bf16_bits(to_bf16_bits(x))


def write(folder):
    rng = np.random.default_rng(7)
    weight = rng.normal(0, D ** -0.5, (D, D))
    scale = np.linspace(-1, 1, D)                    # exact in f16
    tensors, stored = [], {}
    for name, value, dtype in (("proj.weight", weight, "BF16"),
                               ("scale", scale, "F16")):
        st, data, values = encode(value, dtype)
        tensors.append((name, st, value.shape, data))
        stored[name] = values
    write_safetensors(os.path.join(folder, "w.safetensors"), tensors)
    x = rng.normal(0, 1, (B, N, D)).astype(np.float32)
    x[0, 0, :] = [0.5, 0.0, -0.0, 0.5, -1.25, 1.0, 2.75, -2.75]
    x[1, 1, :] = scale.astype(np.float32)              # equal to scale
    x[1, 2, :3] = [1.00390625, 1.01171875, -3.99]     # bf16 ties, trunc
    mask = np.ones((B, N), np.int32)
    mask[0, 3:] = 0
    mask[1, 0] = 0
    np.save(os.path.join(folder, "x.npy"), x)
    np.save(os.path.join(folder, "mask.npy"), mask)
    np.savez(os.path.join(folder, "stored.npz"), **stored)


def check(folder):
    x = np.load(os.path.join(folder, "x.npy"))
    mask = np.load(os.path.join(folder, "mask.npy"))
    w = dict(np.load(os.path.join(folder, "stored.npz")))
    scale = w["scale"].astype(np.float32)
    f = np.float32
    expected = {
        "bias": (f(1) - mask.astype(f)) * f(-1e9),
        "eq": (x == f(0.5)).astype(f), "ne": (x != f(0.5)).astype(f),
        "lt": (x < 0).astype(f), "le": (x <= 0).astype(f),
        "gt": (x > scale).astype(f), "ge": (x >= scale).astype(f),
        "truncated": np.trunc(x * f(4)).astype(np.int32),
        "rounded": bf16(x), "widened": x.astype(np.float64),
    }
    failed = False
    for name, want in expected.items():
        got = np.load(os.path.join(folder, name + ".npy"))
        if got.dtype != want.dtype or not np.array_equal(got, want):
            print("FAIL: %s: %s %s, expected %s %s" %
                  (name, got.dtype, got.ravel()[:8], want.dtype, want.ravel()[:8]))
            failed = True
    # The bf16 layer: bf16 inputs and weights, a bf16 result.
    xb = bf16(x).astype(np.float64)
    exact = xb @ w["proj.weight"].T
    bound = np.abs(xb) @ np.abs(w["proj.weight"]).T * 2.0 ** -7 + 1e-6
    got = np.load(os.path.join(folder, "projected.npy")).astype(np.float64)
    if not np.all(np.abs(got - exact) <= bound):
        print("FAIL: projected: max err %g" % np.abs(got - exact).max())
        failed = True
    if not np.array_equal(bf16(got.astype(np.float32)), got):
        print("FAIL: projected is not bf16-valued")
        failed = True
    print("FAIL" if failed else "ok")


if __name__ == "__main__":
    (write if sys.argv[1] == "write" else check)(sys.argv[2])
