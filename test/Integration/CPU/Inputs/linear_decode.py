"""linear_decode.py LIBDECODE.so FULL_EXE WORKDIR: causal linear attention
decoded incrementally through the C API (Inputs/linear_attention_decode.seq,
whose sums S and z are instance state) against the `causal` output of the
full forward of examples/linear_attention.seq on the same random weights:
uneven rows prefilled right-padded with random vectors (pos = 0, lengths =
each row's length), then one position per call; again after
seqc_model_reset_state from pos > 0; across seqc_model_copy_state_row.
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

from decode_capi import check, get_output, open_library, set_input, vp

lib_path, full_exe, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
lib = open_library(lib_path)

model = vp()
check(lib.seqc_model_load(ctypes.byref(model)), "load")
check(lib.seqc_model_random_weights(model, 5), "random weights")
weights = os.path.join(work, "weights.safetensors")
check(lib.seqc_model_save_weights(model, weights.encode()), "save weights")
print("state buffers:", lib.seqc_model_num_state(model))
keep = []


def bind(name, array, dtype):
    check(set_input(model, name, array, keep, dtype), name)


def run(x, pos, lengths=None):
    lib.seqc_model_reset_inputs(model)
    keep.clear()
    bind("x", x, np.float32)
    bind("pos", pos, np.int32)
    bind("lengths", np.full(x.shape[0], x.shape[1]) if lengths is None else lengths, np.int32)
    check(lib.seqc_model_run(model), "run")
    return get_output(model, "causal")


def full_forward(x):
    path = os.path.join(work, "x.npy")
    out = os.path.join(work, "causal.npy")
    np.save(path, x.astype(np.float32))
    subprocess.run([full_exe, "--weights", weights, "--input", f"x={path}",
                    "--output", f"causal={out}"], check=True)
    return np.load(out)


def report(name, got, want):
    err = np.abs(got - want).max() / np.abs(want).max()
    print(f"{name}: {'ok' if err <= 1e-5 else f'error {err:.3g}'}")


rng = np.random.default_rng(3)
dim, total = 64, 17
xs = rng.standard_normal((3, total, dim)).astype(np.float32)
lengths = np.array([5, 1, 9])
prompt = max(lengths)
padded = np.where((np.arange(prompt)[None, :] < lengths[:, None])[:, :, None],
                  xs[:, :prompt], rng.standard_normal((3, prompt, dim)))
got = np.zeros((3, total, dim), np.float32)
out = run(padded, np.zeros(3), lengths)
for r in range(3):
    got[r, :lengths[r]] = out[r, :lengths[r]]
pos = lengths.copy()
while (pos < total).any():
    active = pos < total
    step = xs[np.arange(3), np.minimum(pos, total - 1)][:, None]
    out = run(step, pos, active.astype(np.int32))
    for r in range(3):
        if active[r]:
            got[r, pos[r]] = out[r, 0]
    pos = np.where(active, pos + 1, pos)
report("prefill + decode", got, full_forward(xs))

check(lib.seqc_model_reset_state(model), "reset")
report("reset", run(xs[:, 4:9], np.full(3, 4)), full_forward(xs[:, 4:9]))

run(xs[:, :6], np.zeros(3))
check(lib.seqc_model_copy_state_row(model, 0, 2), "copy row")
fork = xs[:, :6].copy()
fork[2] = fork[0]
ext = rng.standard_normal((3, 2, dim)).astype(np.float32)
ext[2] = ext[0]
tail = np.stack([run(ext[:, i:i + 1], np.full(3, 6 + i))[:, 0] for i in range(2)], axis=1)
report("copy row", tail, full_forward(np.concatenate([fork, ext], axis=1))[:, 6:])
lib.seqc_model_free(model)
