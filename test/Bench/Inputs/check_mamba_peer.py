"""check_mamba_peer.py WEIGHTS TOKENS LOGITS KEY=VALUE...: runs the eager
PyTorch peer of the mamba_block work (bench/peers/torch_peer.py's
mamba_forward) on the parameters seqc saved (safetensors), the same tokens,
and compares with seqc's logits: prints "ok" when the largest difference is
within 1e-4 of the largest logit, else the error, and exits 1."""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench", "peers"))
from torch_peer import mamba_forward  # noqa: E402


def load_safetensors(path):
    """The f32 tensors of a safetensors file, by name."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            sys.exit(f"{name}: expected F32, got {info['dtype']}")
        lo, hi = info["data_offsets"]
        array = np.frombuffer(data[base + lo:base + hi], dtype="<f4")
        out[name] = torch.from_numpy(array.reshape(info["shape"]).copy())
    return out


params = load_safetensors(sys.argv[1])
tokens = torch.from_numpy(np.load(sys.argv[2]))
expected = np.load(sys.argv[3])
h = {k: int(v) for k, v in (a.split("=") for a in sys.argv[4:])}
with torch.inference_mode():
    got = mamba_forward(h, params, tokens).numpy()
if got.shape != expected.shape:
    sys.exit(f"shapes {got.shape} and {expected.shape} differ")
err = float(np.abs(got - expected).max()) / max(float(np.abs(expected).max()), 1e-30)
print("ok" if err <= 1e-4 else f"error {err:.3g}")
sys.exit(0 if err <= 1e-4 else 1)
