"""kv_decode.py LIBDECODE.so FULL_EXE WORKDIR [--entries]: incremental
decoding through the C API of a compiled examples/gpt_decode.seq (a shared
library) against the full forward of examples/gpt.seq (an executable) on the
same random weights. With --entries, the library is examples/gpt.seq itself:
its prefill entry takes the calls of several tokens, its decode entry those
of one. Checks, each printing one line:

  prefill + decode   prompts of uneven lengths (right-padded prefill at
                     pos = 0, then one token per call at each row's own
                     position) give gpt's logits at every real position
  reset              after seqc_model_reset_state, a new sequence again
  copy row           a row forked with seqc_model_copy_state_row continues
                     like the row it copied
  overflow           pos + n > max_len is refused before the run, naming
                     the input, the row and max_len; the instance then runs
  bad shape          a pos of the wrong shape is refused
With --entries, then:
  entries            the model's entries
  unknown entry      selecting an entry the model lacks is refused, naming
                     it and the entries; the instance is unchanged (the
                     entry selected before stays selected, and runs)
  forward            the library's forward entry gives the executable's
                     logits
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

from decode_capi import check, get_output, open_library, set_input, status_text, vp

MAX_RANK = 8
lib_path, full_exe, work = sys.argv[1:4]
entries = "--entries" in sys.argv[4:]
os.makedirs(work, exist_ok=True)
lib = open_library(lib_path)

model = vp()
check(lib.seqc_model_load(ctypes.byref(model)), "load")
check(lib.seqc_model_random_weights(model, 5), "random weights")
weights = os.path.join(work, "weights.safetensors")
check(lib.seqc_model_save_weights(model, weights.encode()), "save weights")
print("state buffers:", lib.seqc_model_num_state(model))
lib.seqc_model_entry_name.restype = ctypes.c_char_p
lib.seqc_model_selected_entry.restype = ctypes.c_char_p


def select(name):
    if entries:
        check(lib.seqc_model_select_entry(model, name.encode()), name)

keep = []


def bind(name, array):
    return set_input(model, name, array, keep)


def run(tokens, pos=None):
    """Logits of one call, or the error text. With --entries, a call of
    several tokens goes to the prefill entry, one of one token to decode,
    one without positions to forward."""
    select("forward" if pos is None else
           "decode" if tokens.shape[1] == 1 else "prefill")
    lib.seqc_model_reset_inputs(model)
    keep.clear()
    error = bind("tokens", tokens.astype(np.int32)) or \
        (pos is not None and bind("pos", pos.astype(np.int32))) or \
        status_text(lib.seqc_model_run(model))
    if error:
        return error
    return get_output(model, "logits")


def full_forward(tokens):
    """gpt.seq's logits of the whole sequences, by its executable."""
    path = os.path.join(work, "tokens.npy")
    out = os.path.join(work, "logits.npy")
    np.save(path, tokens.astype(np.int32))
    subprocess.run([full_exe, "--weights", weights, "--input", f"tokens={path}",
                    "--output", f"logits={out}"], check=True)
    return np.load(out)


def report(name, got, want):
    err = np.abs(got - want).max() / np.abs(want).max()
    print(f"{name}: {'ok' if err <= 1e-5 else f'error {err:.3g}'}")


rng = np.random.default_rng(3)
vocab, total = 256, 23
seqs = rng.integers(0, vocab, size=(3, total))
lengths = np.array([5, 1, 12])  # uneven prompts

# Prefill the prompts, right-padded; each row's real positions are < its
# length, and the padding's keys are overwritten by the decode steps.
prompt = max(lengths)
padded = np.where(np.arange(prompt)[None, :] < lengths[:, None],
                  seqs[:, :prompt], 0)
got = np.zeros((3, total, vocab), np.float32)
logits = run(padded, np.zeros(3))
for r in range(3):
    got[r, :lengths[r]] = logits[r, :lengths[r]]
# Then one token per call, each row at its own position.
pos = lengths.copy()
for step in range(total - lengths.min()):
    tokens = seqs[np.arange(3), np.minimum(pos, total - 1)][:, None]
    logits = run(tokens, pos)
    for r in range(3):
        if pos[r] < total:
            got[r, pos[r]] = logits[r, 0]
    pos = np.minimum(pos + 1, total - 1)
want = full_forward(seqs)
report("prefill + decode", got, want)

# A new sequence after a reset: prefill 7 tokens, decode 4.
check(lib.seqc_model_reset_state(model), "reset")
seqs2 = rng.integers(0, vocab, size=(3, 11))
got2 = np.zeros((3, 11, vocab), np.float32)
got2[:, :7] = run(seqs2[:, :7], np.zeros(3))
for p in range(7, 11):
    got2[:, p] = run(seqs2[:, p:p + 1], np.full(3, p))[:, 0]
report("reset", got2, full_forward(seqs2))

# Fork row 0 into row 2, then continue both rows with the same tokens: row
# 2 must give row 0's sequence's logits.
check(lib.seqc_model_copy_state_row(model, 0, 2), "copy row")
fork = seqs2.copy()
fork[2] = fork[0]
ext = rng.integers(0, vocab, size=(3, 2))
ext[2] = ext[0]
tail = np.zeros((3, 2, vocab), np.float32)
for i in range(2):
    tail[:, i] = run(ext[:, i:i + 1], np.full(3, 11 + i))[:, 0]
want3 = full_forward(np.concatenate([fork, ext], axis=1))[:, 11:]
report("copy row", tail, want3)

# pos + n > max_len (256) is refused before the run; the instance stays
# usable.
error = run(seqs2[:, :2], np.array([0, 255, 3]))
print("overflow:", error)
report("after overflow", run(ext[:, :1], np.full(3, 11))[:, 0], tail[:, 0])
print("bad shape:", run(ext[:, :1], np.zeros(2)))

if entries:
    names = [lib.seqc_model_entry_name(model, i).decode()
             for i in range(lib.seqc_model_num_entries(model))]
    print("entries:", ", ".join(names))
    run(ext[:, :1], np.full(3, 11))
    print("unknown entry:",
          status_text(lib.seqc_model_select_entry(model, b"decoder")))
    print("selected:", lib.seqc_model_selected_entry(model).decode())
    check(lib.seqc_model_run(model), "run after the unknown entry")
    report("forward", run(seqs), full_forward(seqs))

# The instance and its state are freed (the sanitizer build checks for leaks).
lib.seqc_model_free(model)
