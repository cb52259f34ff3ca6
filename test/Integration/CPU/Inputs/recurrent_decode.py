"""recurrent_decode.py LIBDECODE.so FULL_EXE WORKDIR [--entries]: incremental
decoding through the C API of a compiled examples/mamba_decode.seq (a shared
library whose conv windows and SSM states are instance state) against the
full forward of examples/mamba.seq (an executable) on the same random
weights. With --entries, the library is examples/mamba.seq itself: its
prefill entry takes the calls of several tokens, its decode entry those of
one. Checks, each printing one line:

  prefill + decode   prompts of uneven lengths (right-padded with random ids
                     at pos = 0, lengths = the prompts' lengths, then one
                     token per call at each row's own position, lengths = 1,
                     and 0 for a row that has ended) give mamba's logits at
                     every real position
  restart            a prefill at pos = 0 restarts every row without a reset
  reset              after seqc_model_reset_state, a call at pos > 0 starts
                     from the zero state
  copy row           a row forked with seqc_model_copy_state_row continues
                     like the row it copied
  bad lengths        lengths above n, or of the wrong shape, are refused
                     before the run; the instance then runs
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

keep = []


def bind(name, array):
    return set_input(model, name, array, keep)


def run(tokens, pos, lengths=None):
    """Logits of one call, or the error text."""
    if lengths is None:
        lengths = np.full(tokens.shape[0], tokens.shape[1])
    if entries:
        name = b"decode" if tokens.shape[1] == 1 else b"prefill"
        check(lib.seqc_model_select_entry(model, name), "select")
    lib.seqc_model_reset_inputs(model)
    keep.clear()
    error = bind("tokens", tokens.astype(np.int32)) or \
        bind("pos", pos.astype(np.int32)) or \
        bind("lengths", lengths.astype(np.int32)) or \
        status_text(lib.seqc_model_run(model))
    if error:
        return error
    return get_output(model, "logits")


def full_forward(tokens):
    """mamba.seq's logits of the whole sequences, by its executable."""
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

# Prefill the prompts, right-padded with random ids: the state of each row
# is taken after its own last prompt token.
prompt = max(lengths)
padded = np.where(np.arange(prompt)[None, :] < lengths[:, None],
                  seqs[:, :prompt], rng.integers(0, vocab, size=(3, prompt)))
got = np.zeros((3, total, vocab), np.float32)
logits = run(padded, np.zeros(3), lengths)
for r in range(3):
    got[r, :lengths[r]] = logits[r, :lengths[r]]
# Then one token per call, each row at its own position; a row that has
# reached the end passes lengths = 0 and keeps its state.
pos = lengths.copy()
for step in range(total - lengths.min()):
    active = pos < total
    tokens = seqs[np.arange(3), np.minimum(pos, total - 1)][:, None]
    logits = run(tokens, pos, active.astype(np.int32))
    for r in range(3):
        if active[r]:
            got[r, pos[r]] = logits[r, 0]
    pos = np.where(active, pos + 1, pos)
want = full_forward(seqs)
report("prefill + decode", got, want)

# A prefill at pos = 0 restarts the rows: 7 tokens, then 4 steps.
seqs2 = rng.integers(0, vocab, size=(3, 11))
got2 = np.zeros((3, 11, vocab), np.float32)
got2[:, :7] = run(seqs2[:, :7], np.zeros(3))
for p in range(7, 11):
    got2[:, p] = run(seqs2[:, p:p + 1], np.full(3, p))[:, 0]
report("restart", got2, full_forward(seqs2))

# After a reset, a call at pos = 4 starts from zeros: the logits of its
# tokens as a sequence of their own.
check(lib.seqc_model_reset_state(model), "reset")
report("reset", run(seqs2[:, 4:9], np.full(3, 4)), full_forward(seqs2[:, 4:9]))

# Fork row 0 into row 2, then continue both rows with the same tokens: row
# 2 must give row 0's sequence's logits.
run(seqs2, np.zeros(3))
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

# lengths outside [0, n] and of the wrong shape are refused before the run.
print("lengths above n:", run(ext[:, :1], np.full(3, 13), np.array([1, 2, 1])))
print("bad shape:", run(ext[:, :1], np.full(3, 13), np.ones(2)))
report("after errors", run(ext[:, :1], np.full(3, 13))[:, 0],
       full_forward(np.concatenate([fork, ext, ext[:, :1]], axis=1))[:, 13])

lib.seqc_model_free(model)
