"""entries.py GPT_EXE WORKDIR: the entries of examples/gpt.seq (forward,
prefill, decode) from Python (seqc.compile, Model.entry) against the model
executable that `seqc -o` made of the same source, on the same random
weights. Prints one line per check:

  entries            Model.entries
  forward            the forward entry on the whole sequences gives the
                     executable's logits (its default entry)
  decode --entry     one decode step on a fresh state gives the logits of
                     the executable's `--entry decode` run
  prefill + decode   the prompts of uneven lengths through prefill, then
                     each further token through decode at its row's own
                     position, give the executable's forward logits at
                     every position (NumPy, 1e-5 of the largest)
  generate           Model.generate's ids, in the executable's format
                     (compared with `gpt generate` by the RUN line)
"""
import os
import subprocess
import sys

import numpy as np

import seqc

exe, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
ROOT = os.environ["SEQC_SRC_ROOT"]
DEFINES = {"vocab": 64, "dim": 32, "max_len": 32}

module = seqc.compile(os.path.join(ROOT, "examples", "gpt.seq"),
                      defines=DEFINES)
model = module.load(random_weights=5)
print("entries:", ", ".join(model.entries))
weights = os.path.join(work, "weights.safetensors")
model.save_weights(weights)


def run_exe(inputs, entry=None):
    """The executable's logits on `inputs` (name -> array)."""
    args = [exe, "--weights", weights, "--output",
            "logits=" + os.path.join(work, "logits.npy")]
    if entry:
        args += ["--entry", entry]
    for name, value in inputs.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, value)
        args += ["--input", "%s=%s" % (name, path)]
    subprocess.run(args, check=True)
    return np.load(os.path.join(work, "logits.npy"))


def report(name, got, want):
    err = np.abs(got - want).max() / np.abs(want).max()
    print("%s: %s" % (name, "ok" if err <= 1e-5 else "error %.3g" % err))


rng = np.random.default_rng(3)
total = 14
seqs = rng.integers(0, 64, (3, total), dtype=np.int32)
lengths = [5, 1, 9]
want = run_exe({"tokens": seqs})
report("forward", model(tokens=seqs).logits, want)

step = seqs[:, :1].copy()
report("decode --entry",
       module.load(random_weights=5).decode(tokens=step,
                                            pos=np.zeros(3, np.int32)).logits,
       run_exe({"tokens": step, "pos": np.zeros(3, np.int32)}, "decode"))

width = max(lengths)
got = np.zeros_like(want)
first = model.prefill(tokens=np.ascontiguousarray(seqs[:, :width]),
                      pos=np.zeros(3, np.int32)).logits
for r, n in enumerate(lengths):
    got[r, :n] = first[r, :n]
decode = model.entry("decode")
pos = np.array(lengths, np.int32)
while (pos < total).any():
    at = np.minimum(pos, total - 1).astype(np.int32)
    logits = decode(tokens=np.ascontiguousarray(seqs[np.arange(3), at][:, None]),
                    pos=at).logits
    for r in range(3):
        if pos[r] < total:
            got[r, pos[r]] = logits[r, 0]
    pos += 1
report("prefill + decode", got, want)

ids = model.generate([[1, 2, 3, 4, 5, 6, 7], [42], [9, 9, 9]],
                     max_new_tokens=12)
assert model.last_generate_stats["cached"] == 1
with open(os.path.join(work, "generate.txt"), "w") as f:
    for row in ids:
        f.write(" ".join(map(str, row)) + "\n")
print("generate: written")
