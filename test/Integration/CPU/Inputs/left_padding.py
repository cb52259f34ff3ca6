"""left_padding.py PADDED_EXE FULL_EXE WEIGHTS WORKDIR: a left-padded batch
through a Llama-style model that takes Hugging Face's attention_mask
(Inputs/llama_padded.seq) gives, on each row's real tokens, the logits of
its prompt run alone through examples/llama.seq (same checkpoint), to 1e-5
of the largest; the padded positions' logits are finite."""
import os
import subprocess
import sys

import numpy as np

padded_exe, full_exe, weights, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def run(exe, **inputs):
    args = [exe, "--weights", weights]
    for name, value in inputs.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, value.astype(np.int32))
        args += ["--input", f"{name}={path}"]
    out = os.path.join(work, "logits.npy")
    subprocess.run(args + ["--output", f"logits={out}"], check=True)
    return np.load(out)


rng = np.random.default_rng(7)
lengths = [5, 1, 9, 9]
n = max(lengths)
ids = np.zeros((len(lengths), n), np.int64)
mask = np.zeros((len(lengths), n), np.int64)
prompts = []
for r, length in enumerate(lengths):
    prompt = rng.integers(0, 96, size=length)
    prompts.append(prompt)
    ids[r, n - length:] = prompt
    mask[r, n - length:] = 1
got = run(padded_exe, input_ids=ids, attention_mask=mask)
err = 0.0
for r, prompt in enumerate(prompts):
    want = run(full_exe, input_ids=prompt[None])[0]
    real = got[r, n - len(prompt):]
    err = max(err, np.abs(real - want).max() / np.abs(want).max())
print("left padding:", "ok" if err <= 1e-5 else f"error {err:.3g}")
print("padded positions finite:", bool(np.isfinite(got).all()))
