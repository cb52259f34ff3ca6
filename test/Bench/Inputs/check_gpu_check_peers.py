"""Checks that the eager peers of bench/gpu_check.py compute what seqc
compiles: torch_scan against bench/kernels/selective_scan.seq, and, on
the same inputs, the attention the SDPA peer computes (softmax(q k^T /
sqrt(d)) v, causal = top-left aligned) against bench/kernels/attention.seq.

  check_gpu_check_peers.py SRC_ROOT PACK WORK

PACK is a `gpu_check.py prepare --cpu-only` folder holding the CPU builds
scan_f32 and attn_f32_d64_{full,causal}. Prints one "ok" line per check."""

import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

root, pack, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(root, "bench"))
import gpu_check  # noqa: E402

rng = np.random.default_rng(0)


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        blob = array.astype(np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run(binary, inputs, extra):
    args = [os.path.join(pack, "cpu", binary)] + extra
    for name, array in inputs.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, array)
        args += ["--input", "%s=%s" % (name, path)]
    out = os.path.join(work, binary + ".y.npy")
    subprocess.run(args + ["--output", "y=" + out], check=True)
    return np.load(out).astype(np.float64)


def check(what, actual, expected):
    error = gpu_check.relative_error(actual.astype(np.float64), expected)
    print("%s: %s (max rel err %.2e)" % (what, "ok" if error < 1e-5 else
                                         "MISMATCH", error))


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# The selective scan at b = 2, L = 37 on parameters of our own.
channels, state = 1536, 16
inputs = {"u": normal(2, 37, channels), "delta": normal(2, 37, channels),
          "B": normal(2, 37, state), "C": normal(2, 37, state),
          "z": normal(2, 37, channels)}
weights = {"A": 0.5 * normal(channels, state), "D": normal(channels),
           "delta_bias": normal(channels)}
save_safetensors(os.path.join(work, "scan.safetensors"), weights)
y = run("scan_f32", inputs,
        ["--weights", os.path.join(work, "scan.safetensors")])
t = {k: torch.from_numpy(v) for k, v in {**inputs, **weights}.items()}
peer = gpu_check.torch_scan(torch, t["u"], t["delta"], -torch.exp(t["A"]),
                            t["B"], t["C"], t["D"], t["z"], t["delta_bias"])
check("selective scan", peer.numpy(), y)

# Attention at n = 45, 32 heads of 64.
inputs = {"q": normal(1, 32, 45, 64), "k": normal(1, 32, 45, 64),
          "v": normal(1, 32, 45, 64)}
q, k, v = (torch.from_numpy(inputs[n]) for n in "qkv")
for mask in ("full", "causal"):
    y = run("attn_f32_d64_" + mask, inputs, [])
    scores = q @ k.transpose(-1, -2) / 8.0
    if mask == "causal":
        scores = scores.masked_fill(torch.ones(45, 45).triu(1).bool(),
                                    float("-inf"))
    check("attention " + mask, (torch.softmax(scores, -1) @ v).numpy(), y)
