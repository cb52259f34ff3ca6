"""check_quantized.py DIR M...: runs DIR/model (Inputs/quantized.seq or
Inputs/int8.seq) with
random weights on M random rows each and checks every output against
float64 NumPy on the weights the model read (saved dequantized to F32):
each element within 1e-5 of the sum of the magnitudes of its products
(rounding of an f32 sum in any order). Prints "ok m=M" or the error.

check_quantized.py --int8-activations DIR M...: DIR/model was compiled with
--int8-activations: every output (of q8_0, q4_0, q4_1 or int8 weights) takes
x quantized as llama.cpp's q8_0 (per block of 32: d = max |x| / 127 rounded
to f16, q = round-half-even(x * 127 / max |x|)) as its reference's x, q * d."""
import os
import subprocess
import sys

import numpy as np

from numpy_refs import load_safetensors, quantize_q8_0


args = sys.argv[1:]
int8_activations = args[0] == "--int8-activations"
if int8_activations:
    args = args[1:]
directory = args[0]
outputs = {"y8": ("q8.weight", None), "y40": ("q40.weight", "q40.bias"),
           "y41": ("q41.weight", None), "yp": ("w", None)}
# The outputs whose weights are in the formats with an int8-activation
# kernel (q8_0, q4_0, q4_1).
int8_names = {"y8", "y40", "y41", "yp"}
int8_outputs = {"ya": ("a.weight", None), "yb": ("b.weight", "b.bias"),
                "yp": ("w", None)}
def run_model(argv):
    """Runs a model; on failure, shows what it printed (a sanitizer's
    report, the runtime's error) before failing."""
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        sys.exit("%s exited with %d" % (" ".join(argv), result.returncode))


for m in map(int, args[1:]):
    run = f"{directory}/m{m}"
    os.makedirs(run, exist_ok=True)
    args = [f"{directory}/model", "--random-weights", "7",
            "--save-weights", f"{run}/w.safetensors"]
    # A first run saves the weights, whose width is the input's.
    run_model(args + ["--random-inputs", "1", "--dim", f"m={m}"])
    weights = load_safetensors(f"{run}/w.safetensors")
    if "a.weight" in weights:
        outputs = int8_outputs
        int8_names = set(int8_outputs)
    k = weights["w"].shape[1]
    x = np.random.default_rng(m).standard_normal((m, k)).astype(np.float32)
    np.save(f"{run}/x.npy", x)
    out = [a for name in outputs for a in ("--output", f"{name}={run}/{name}.npy")]
    run_model(args + ["--input", f"x={run}/x.npy"] + out)
    for name, (weight, bias) in outputs.items():
        w = weights[weight].astype(np.float64)
        xr = x.astype(np.float64)
        if int8_activations and name in int8_names:
            xr = quantize_q8_0(x)
        ref = xr @ w.T
        bound = np.abs(xr) @ np.abs(w).T
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
