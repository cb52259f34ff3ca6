"""left_padding_decode.py LIB.so FULL_EXE TOKENS WORKDIR [--long]: a
left-padded batch through the prefill and decode entries of a compiled
examples/llama.seq or examples/gpt.seq (a shared library, random weights of
seed 5, saved for the executable) against each prompt run alone through the
forward of FULL_EXE (an executable of the same model at -O0, no cache).
TOKENS names the token input (input_ids or tokens). Prints one line per
check:

  prefill + decode   3 prompts of uneven lengths left-padded with random
                     tokens, prefilled at pos = -pad (the pads at negative
                     positions), then 6 tokens per row decoded one per call
                     at pos = the row's length so far: each row's real
                     tokens get the logits of its whole sequence run alone
                     (1e-5 of the largest); the largest error on stderr
  pads finite        the pads' logits (queries that see no key) are finite
  overflow           pos + n > max_len is still refused before the run

--long: prompts of 600, 3 and 37 tokens (for a model compiled with
max_len > 1024), so that the decode steps of the longest row read more than
512 keys: the grouped decode form splits them into chunks.
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

from decode_capi import check, get_output, open_library, set_input, status_text, vp

lib_path, full_exe, tokens_name, work = sys.argv[1:5]
long_prompts = "--long" in sys.argv[5:]
os.makedirs(work, exist_ok=True)
lib = open_library(lib_path)
lib.seqc_model_select_entry.argtypes = [vp, ctypes.c_char_p]
lib.seqc_model_select_entry.restype = vp

model = vp()
check(lib.seqc_model_load(ctypes.byref(model)), "load")
check(lib.seqc_model_random_weights(model, 5), "random weights")
weights = os.path.join(work, "weights.safetensors")
check(lib.seqc_model_save_weights(model, weights.encode()), "save weights")
keep = []


def bind(name, array):
    return set_input(model, name, array, keep)


def run(entry, tokens, pos):
    """Logits of one call of `entry`, or the error text."""
    check(lib.seqc_model_select_entry(model, entry.encode()), entry)
    lib.seqc_model_reset_inputs(model)
    keep.clear()
    error = bind(tokens_name, tokens) or bind("pos", pos) or \
        status_text(lib.seqc_model_run(model))
    if error:
        return error
    return get_output(model, "logits")


def alone(tokens):
    """The executable's logits of one sequence, run alone (b = 1)."""
    path = os.path.join(work, "ids.npy")
    out = os.path.join(work, "logits.npy")
    np.save(path, tokens[None].astype(np.int32))
    subprocess.run([full_exe, "--weights", weights, "--input",
                    f"{tokens_name}={path}", "--output", f"logits={out}"],
                   check=True)
    return np.load(out)[0]


rng = np.random.default_rng(11)
lengths = np.array([600, 3, 37] if long_prompts else [5, 1, 9])
steps = 6
n = int(lengths.max())
pad = n - lengths
seqs = [rng.integers(0, 96, size=length + steps) for length in lengths]
# Left padding: each row's prompt at the end, random pad tokens before it
# (Hugging Face's attention_mask would be 0 on them).
ids = rng.integers(0, 96, size=(len(lengths), n))
for r, length in enumerate(lengths):
    ids[r, pad[r]:] = seqs[r][:length]
logits = run("prefill", ids, -pad)
if isinstance(logits, str):
    sys.exit(f"prefill: {logits}")
got = [np.zeros((length + steps, logits.shape[-1]), np.float32)
       for length in lengths]
for r, length in enumerate(lengths):
    got[r][:length] = logits[r, pad[r]:]
pads_finite = bool(np.isfinite(logits).all())
for step in range(steps):
    at = lengths + step
    tokens = np.array([seqs[r][at[r]] for r in range(len(lengths))])[:, None]
    out = run("decode", tokens, at)
    if isinstance(out, str):
        sys.exit(f"decode: {out}")
    for r in range(len(lengths)):
        got[r][at[r]] = out[r, 0]
err = 0.0
for r in range(len(lengths)):
    want = alone(seqs[r])
    err = max(err, float(np.abs(got[r] - want).max() / np.abs(want).max()))
print(f"{os.path.basename(lib_path)}: largest error {err:.3g}", file=sys.stderr)
print("prefill + decode:", "ok" if err <= 1e-5 else f"error {err:.3g}")
print("pads finite:", pads_finite)

# The cache length still bounds the end of a left-padded row.
max_len = 1100 if long_prompts else 256
print("overflow:", run("prefill", ids, np.array([-pad[0], max_len - n + 1,
                                                 -pad[2]])))
lib.seqc_model_free(model)
