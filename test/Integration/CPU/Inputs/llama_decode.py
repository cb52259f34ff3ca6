"""llama_decode.py LIBDECODE.so FULL_EXE WEIGHTS WORKDIR [TOLERANCE]: incremental
decoding through the C API of examples/llama.seq's modules compiled with a
forward that takes `pos` (Inputs/llama_decode_model.seq, a shared library)
against the full forward of examples/llama.seq (an executable), both
loading the same Hugging Face-named checkpoint. Prints one line per check:

  prefill + decode   prompts of 5, 1 and 12 tokens prefilled right-padded
                     at pos = 0, then one token per call at each row's own
                     position, give llama's logits at every real position
                     (1e-5 of the largest, or TOLERANCE: a KV cache in
                     bf16; then also whether the error is above f32's
                     rounding, as bf16's must be)
  reset              after seqc_model_reset_state, a new sequence again
  overflow           pos + n > max_len is refused before the run
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

from decode_capi import check, get_output, open_library, set_input, status_text, vp

lib_path, full_exe, weights, work = sys.argv[1:5]
tolerance = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-5
os.makedirs(work, exist_ok=True)
lib = open_library(lib_path)
lib.seqc_model_load_weights.argtypes = [vp, ctypes.c_char_p]
lib.seqc_model_load_weights.restype = vp

model = vp()
check(lib.seqc_model_load(ctypes.byref(model)), "load")
check(lib.seqc_model_load_weights(model, weights.encode()), "load weights")
print("state buffers:", lib.seqc_model_num_state(model))
keep = []


def bind(name, array):
    return set_input(model, name, array, keep)


def run(tokens, pos):
    """Logits of one call, or the error text."""
    lib.seqc_model_reset_inputs(model)
    keep.clear()
    error = bind("input_ids", tokens) or bind("pos", pos) or \
        status_text(lib.seqc_model_run(model))
    if error:
        return error
    return get_output(model, "logits")


def full_forward(tokens):
    """llama.seq's logits of the whole sequences, by its executable."""
    path = os.path.join(work, "ids.npy")
    out = os.path.join(work, "logits.npy")
    np.save(path, tokens.astype(np.int32))
    subprocess.run([full_exe, "--weights", weights, "--input",
                    f"input_ids={path}", "--output", f"logits={out}"],
                   check=True)
    return np.load(out)


def report(name, got, want):
    err = np.abs(got - want).max() / np.abs(want).max()
    print(f"{name}: {'ok' if err <= tolerance else f'error {err:.3g}'}")
    if tolerance > 1e-5:
        print(f"{name}: above f32 rounding: {'yes' if err > 1e-5 else 'no'} ({err:.2g})")


rng = np.random.default_rng(3)
vocab, total = 96, 23
seqs = rng.integers(0, vocab, size=(3, total))
lengths = np.array([5, 1, 12])  # uneven prompts

prompt = max(lengths)
padded = np.where(np.arange(prompt)[None, :] < lengths[:, None],
                  seqs[:, :prompt], 0)
got = np.zeros((3, total, vocab), np.float32)
logits = run(padded, np.zeros(3))
for r in range(3):
    got[r, :lengths[r]] = logits[r, :lengths[r]]
pos = lengths.copy()
for step in range(total - lengths.min()):
    tokens = seqs[np.arange(3), np.minimum(pos, total - 1)][:, None]
    logits = run(tokens, pos)
    for r in range(3):
        if pos[r] < total:
            got[r, pos[r]] = logits[r, 0]
    pos = np.minimum(pos + 1, total - 1)
report("prefill + decode", got, full_forward(seqs))

check(lib.seqc_model_reset_state(model), "reset")
seqs2 = rng.integers(0, vocab, size=(3, 11))
got2 = np.zeros((3, 11, vocab), np.float32)
got2[:, :7] = run(seqs2[:, :7], np.zeros(3))
for p in range(7, 11):
    got2[:, p] = run(seqs2[:, p:p + 1], np.full(3, p))[:, 0]
report("reset", got2, full_forward(seqs2))

print("overflow:", run(seqs2[:, :2], np.array([0, 255, 3])))
lib.seqc_model_free(model)
