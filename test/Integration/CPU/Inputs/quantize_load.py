"""quantize_load.py LIB WORK [int8]: quantize-on-load against llama.cpp's
reference rounding (quantize_row_q8_0_ref, q4_0_ref, q4_1_ref) written in
NumPy, or with `int8`, against per-output-channel int8 (PyTorch's symmetric
per-channel scheme: d = max|w| / 127, q = round-half-even(w / d) in f32).

Writes a safetensors file for Inputs/quantized.seq (compiled to LIB) with
the q8_0 weight in F32, the q4_0 one in BF16 and the q4_1 one in F16, the
rows chosen to hit the roundings' edges (a zero block, ties of the scaled
values, a block whose largest magnitude is negative, constant blocks), or
for Inputs/int8.seq (k = 37) its int8 weights in F32, BF16 and F16 with rows
of the same kinds (a zero row, exact .5 ties, a negative largest value),
loads it, and compares the blocks seqc_model_get_param returns with the
NumPy ones byte for byte. Prints "<param> <dtype> blocks identical" each."""
import ctypes
import json
import os
import sys

import numpy as np

MAX_RANK = 8
lib_path, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
lib = ctypes.CDLL(lib_path)
vp, cp = ctypes.c_void_p, ctypes.c_char_p


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK), ("data", ctypes.c_void_p)]


lib.seqc_model_load.argtypes = [ctypes.POINTER(vp)]
lib.seqc_model_load_weights.argtypes = [vp, cp]
lib.seqc_model_get_param.argtypes = [vp, cp, ctypes.POINTER(Tensor)]
lib.seqc_status_message.argtypes = [vp]
lib.seqc_status_message.restype = cp
lib.seqc_status_free.argtypes = [vp]
lib.seqc_status_free.restype = None
lib.seqc_model_free.argtypes = [vp]
lib.seqc_model_free.restype = None


def check(status, what):
    if status:
        text = lib.seqc_status_message(status).decode()
        lib.seqc_status_free(status)
        sys.exit(f"{what}: {text}")


f32 = np.float32


def half_bytes(values):
    return np.asarray(values, dtype=f32).astype(np.float16).view(np.uint8)


def round_away(v):
    """C's roundf on f32 values, exactly (in float64)."""
    v = v.astype(np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def q8_0(x):
    blocks = x.reshape(-1, 32)
    d = (np.abs(blocks).max(axis=1) / f32(127)).astype(f32)
    inv = np.where(d != 0, f32(1) / np.where(d != 0, d, f32(1)), f32(0))
    q = round_away((blocks * inv[:, None]).astype(f32)).astype(np.int8)
    return np.concatenate([half_bytes(d).reshape(-1, 2), q.view(np.uint8)],
                          axis=1)


def q4_0(x):
    blocks = x.reshape(-1, 32)
    at = np.abs(blocks).argmax(axis=1)  # the first of equal magnitudes
    top = blocks[np.arange(len(blocks)), at]
    d = (top / f32(-8)).astype(f32)
    inv = np.where(d != 0, f32(1) / np.where(d != 0, d, f32(1)), f32(0))
    scaled = (blocks * inv[:, None]).astype(f32)
    q = np.minimum(15, np.trunc((scaled + f32(8.5)).astype(f32))).astype(
        np.uint8)
    packed = q[:, :16] | (q[:, 16:] << 4)
    return np.concatenate([half_bytes(d).reshape(-1, 2), packed], axis=1)


def q4_1(x):
    blocks = x.reshape(-1, 32)
    lo, hi = blocks.min(axis=1), blocks.max(axis=1)
    d = ((hi - lo) / f32(15)).astype(f32)
    inv = np.where(d != 0, f32(1) / np.where(d != 0, d, f32(1)), f32(0))
    scaled = ((blocks - lo[:, None]).astype(f32) * inv[:, None]).astype(f32)
    q = np.minimum(15, np.trunc((scaled + f32(0.5)).astype(f32))).astype(
        np.uint8)
    packed = q[:, :16] | (q[:, 16:] << 4)
    return np.concatenate([half_bytes(d).reshape(-1, 2),
                           half_bytes(lo).reshape(-1, 2), packed], axis=1)


def int8(x):
    """Per row: the f32 scale's bytes, then the int8 values."""
    d = (np.abs(x).max(axis=1) / f32(127)).astype(f32)
    safe = np.where(d != 0, d, f32(1))[:, None]
    q = np.where(d[:, None] != 0, np.rint((x / safe).astype(f32)), 0)
    q = np.clip(q, -127, 127).astype(np.int8)
    return np.concatenate([d.astype("<f4").view(np.uint8).reshape(-1, 4),
                           q.view(np.uint8)], axis=1)


def int8_edge_rows(n, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(f32)
    x[0] = 0                                        # a zero row: d = 0
    x[1] = f32(0.25)                                # a constant row
    x[2] = np.arange(k, dtype=f32) - f32(17.5)      # exact .5 ties once
    x[2, 0] = 127                                   # d = 1 makes x / d = x
    x[3, 7] = -40                                   # largest magnitude < 0
    x[4] = -np.arange(k, dtype=f32)                 # all non-positive
    x[5] = np.linspace(-127, 127, k).astype(f32)    # d = 1: exact values
    x[6, :] = f32(1e-30)                            # tiny (denormal d)
    x[6, 3] = f32(-3e-30)
    return x


def edge_rows(n, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(f32)
    x[0, :32] = 0                                   # a zero block
    x[1, :32] = f32(0.25)                           # a constant block
    x[2, :32] = np.arange(32, dtype=f32) - 16       # exact .5 ties for q4
    x[3, :32] = np.linspace(-127, 127, 32).astype(f32) / 100  # q8 ties
    x[4, 5] = -40                                   # largest magnitude < 0
    x[5, :32] = -np.arange(32, dtype=f32)           # all non-positive
    return x


def to_bf16(x):
    bits = x.view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


model = vp()
check(lib.seqc_model_load(ctypes.byref(model)), "load")
if sys.argv[3:] == ["int8"]:
    n, k = 33, 37
    values = {"a.weight": ("F32", int8_edge_rows(n, k, 1), int8, 9),
              "b.weight": ("BF16", int8_edge_rows(n, k, 2), int8, 9),
              "w": ("F16", int8_edge_rows(n, k, 3), int8, 9)}
    bias_name = "b.bias"
else:
    n, k = 33, 64
    values = {"q8.weight": ("F32", edge_rows(n, k, 1), q8_0, 6),
              "q40.weight": ("BF16", edge_rows(n, k, 2), q4_0, 7),
              "q41.weight": ("F16", edge_rows(n, k, 3), q4_1, 8),
              "w": ("F32", edge_rows(n, k, 4), q8_0, 6)}
    bias_name = "q40.bias"
header, chunks, offset = {}, [], 0
for name, (dtype, x, _, _) in values.items():
    if dtype == "BF16":
        data = to_bf16(x)
        values[name] = (dtype, (data.astype(np.uint32) << 16).view(f32),
                        *values[name][2:])
    elif dtype == "F16":
        data = x.astype(np.float16)
        values[name] = (dtype, data.astype(f32), *values[name][2:])
    else:
        data = x
    raw = data.tobytes()
    header[name] = {"dtype": dtype, "shape": [n, k],
                    "data_offsets": [offset, offset + len(raw)]}
    chunks.append(raw)
    offset += len(raw)
bias = np.zeros(n, dtype=f32).tobytes()
header[bias_name] = {"dtype": "F32", "shape": [n],
                      "data_offsets": [offset, offset + len(bias)]}
chunks.append(bias)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
path = os.path.join(work, "weights.safetensors")
with open(path, "wb") as f:
    f.write(len(text).to_bytes(8, "little") + text + b"".join(chunks))
check(lib.seqc_model_load_weights(model, path.encode()), "load weights")

for name, (dtype, x, quantize, code) in values.items():
    tensor = Tensor()
    check(lib.seqc_model_get_param(model, name.encode(), ctypes.byref(tensor)),
          name)
    expected = quantize(x).reshape(-1)
    got = np.ctypeslib.as_array(ctypes.cast(tensor.data, ctypes.POINTER(
        ctypes.c_uint8)), shape=(expected.size,))
    same = tensor.dtype == code and np.array_equal(got, expected)
    if not same:
        bad = np.flatnonzero(got != expected)[:4]
        print(f"{name} {dtype} blocks differ at bytes {bad}: "
              f"{got[bad]} vs {expected[bad]}")
    else:
        print(f"{name} {dtype} blocks identical")
lib.seqc_model_free(model)
