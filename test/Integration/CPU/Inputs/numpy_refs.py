"""What the checkers of this directory share (check_quantized.py,
check_quantized_embedding.py, scan_split.py): the F32 tensors of a
safetensors file, and llama.cpp's quantization of activations to q8_0
blocks, as the int8-activation kernels of q8_0 and q4_0 weights apply it to
x."""
import json
import struct

import numpy as np


def load_safetensors(path):
    """The tensors of the safetensors file at `path`, all F32, by name."""
    with open(path, "rb") as f:
        data = f.read()
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


def quantize_q8_0(x):
    """x [m, k] f32 (k a multiple of 32) as llama.cpp's quantize_row_q8_0
    (x86) gives it back: q * d per block, in float64."""
    m, k = x.shape
    blocks = x.reshape(m, k // 32, 32)
    amax = np.abs(blocks).max(axis=2, keepdims=True)
    d = (amax / np.float32(127)).astype(np.float32)
    d16 = d.astype(np.float16).astype(np.float64)
    with np.errstate(divide="ignore"):
        inverse = np.where(amax != 0, np.float32(127) / amax,
                           np.float32(0)).astype(np.float32)
    q = np.rint(blocks * inverse).astype(np.float64)
    assert np.abs(q).max() <= 127
    return (q * d16).reshape(m, k)
