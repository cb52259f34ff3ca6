"""check_quantized_embedding.py [--int8-activations] DIR: runs DIR/model
(Inputs/quantized_embedding.seq) with random weights, saved dequantized to
F32, and checks that each lookup of a table in a weight format is the
saved table's rows exactly (the first, the last and every row between, in
a batch of two rows of ids), and that the Linears tied to the tables agree with float64 NumPy on those tables to the rounding of an f32
sum (each element within 1e-5 of the sum of the magnitudes of its
products), their x quantized as llama.cpp's q8_0 with --int8-activations
(Inputs/numpy_refs.py). Prints "ok NAME" per output or the error."""
import subprocess
import sys

import numpy as np

from numpy_refs import load_safetensors, quantize_q8_0


args = sys.argv[1:]
int8_activations = args[0] == "--int8-activations"
d = args[-1]
model = [f"{d}/model", "--random-weights", "3", "--save-weights", f"{d}/w.safetensors"]
weights_only = subprocess.run(model + ["--random-inputs", "1", "--dim", "b=1", "--dim", "n=1",
                                       "--dim", "m=1"], capture_output=True, text=True)
if weights_only.returncode:
    sys.exit(weights_only.stderr)
w = load_safetensors(f"{d}/w.safetensors")
num, dim = w["e8.weight"].shape
ids = np.concatenate([np.arange(num), np.arange(num)[::-1], [0, num - 1, 5, 6]])
ids = ids.astype(np.int32).reshape(2, -1)
x = np.random.default_rng(0).standard_normal((5, dim)).astype(np.float32)
np.save(f"{d}/ids.npy", ids)
np.save(f"{d}/x.npy", x)
names = ["y8", "y40", "y41", "yi8", "logits", "logits4", "logits41", "logitsi8"]
out = [a for name in names for a in ("--output", f"{name}={d}/{name}.npy")]
run = subprocess.run(model + ["--input", f"ids={d}/ids.npy", "--input", f"x={d}/x.npy"] + out,
                     capture_output=True, text=True)
if run.returncode:
    sys.exit(run.stderr)
for name, table in (("y8", "e8"), ("y40", "e40"), ("y41", "e41"), ("yi8", "ei8")):
    y = np.load(f"{d}/{name}.npy")
    want = w[table + ".weight"][ids]
    if y.shape != want.shape or not np.array_equal(y, want):
        print(f"error {name}: max difference {np.abs(y - want).max():.3g}")
    else:
        print(f"ok {name}")
xr = quantize_q8_0(x) if int8_activations else x.astype(np.float64)
for name, table in (("logits", "e8"), ("logits4", "e40"), ("logits41", "e41"),
                    ("logitsi8", "ei8")):
    t = w[table + ".weight"].astype(np.float64)
    ref = xr @ t.T
    bound = np.abs(xr) @ np.abs(t).T
    y = np.load(f"{d}/{name}.npy")
    excess = np.abs(y - ref) / (1e-5 * bound + 1e-30)
    print(f"ok {name}" if np.isfinite(y).all() and excess.max() <= 1
          else f"error {name}: {np.abs(y - ref).max():.3g}")
