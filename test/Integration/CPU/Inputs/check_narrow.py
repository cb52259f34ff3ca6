"""check_narrow.py EXE DIMS...: runs EXE (contractions_narrow.seq compiled)
on random weights and inputs for each DIMS (g=..,m=..,r=..) and checks its
bf16 and f16 products against the same products in float64 NumPy on the
values the model read: the weights from --save-weights (safetensors; bf16
decoded by moving its bits into the high half of a float32), the inputs from
the outputs that return them. Each output must agree to its own rounding
(one rounding to bf16 or f16 of an f32 sum), relative to its largest
magnitude."""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

# Half an ulp of the output type, and the f32 sums' error on top.
TOL = {"bf16": 2.0 ** -8 + 1e-5, "f16": 2.0 ** -11 + 1e-5}


def safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        raw = data[8 + size + lo:8 + size + hi]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            value = bits.view(np.float32)
        elif info["dtype"] == "F16":
            value = np.frombuffer(raw, dtype="<f2")
        else:
            sys.exit(f"{name}: unexpected dtype {info['dtype']}")
        out[name] = value.astype(np.float64).reshape(info["shape"])
    return out


exe = sys.argv[1]
outputs = ["lin", "mm", "s", "pv", "linh", "mmh", "sh", "xo", "qo", "vo", "xho", "qho"]
for dims in sys.argv[2:]:
    with tempfile.TemporaryDirectory() as tmp:
        argv = [exe, "--random-weights", "1", "--random-inputs", "2",
                "--save-weights", os.path.join(tmp, "w.safetensors")]
        for d in dims.split(","):
            argv += ["--dim", d]
        for n in outputs:
            argv += ["--output", f"{n}={tmp}/{n}.npy"]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        w = safetensors(os.path.join(tmp, "w.safetensors"))
        o = {n: np.load(f"{tmp}/{n}.npy").astype(np.float64) for n in outputs}
    x, q, v, xh, qh = o["xo"], o["qo"], o["vo"], o["xho"], o["qho"]
    expected = {
        "lin": ("bf16", x @ w["wt"].T),
        "mm": ("bf16", x @ w["w"]),
        "s": ("bf16", x @ q.transpose(0, 2, 1)),
        # s @ v reads s as the model rounded it.
        "pv": ("bf16", o["s"] @ v),
        "linh": ("f16", xh @ w["wth"].T),
        "mmh": ("f16", xh @ w["wh"]),
        "sh": ("f16", xh @ qh.transpose(0, 2, 1)),
    }
    worst = []
    for name, (kind, ref) in expected.items():
        got = o[name]
        if got.shape != ref.shape:
            sys.exit(f"{dims} {name}: shape {got.shape}, expected {ref.shape}")
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(got - ref).max()) / scale
        if not np.isfinite(got).all() or err > TOL[kind]:
            worst.append(f"{name} error {err:.3g}")
    print(f"{dims}: " + (", ".join(worst) if worst else "ok"))
