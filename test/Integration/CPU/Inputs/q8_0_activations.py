"""llama.cpp's quantization of activations to q8_0 blocks, as the
int8-activation kernels of q8_0 and q4_0 weights apply it to x (imported by
check_quantized.py and check_quantized_embedding.py)."""
import numpy as np


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
