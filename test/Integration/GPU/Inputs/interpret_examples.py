"""interpret_examples.py EXAMPLES WORK: for each example, builds the CPU
reference (-O0) and the NVPTX target's interpreted builds (-O2 and -O0,
--gpu-interpret), runs them on random weights and inputs at each size below
and compares every output (run_all.py). Prints one line per build and size:
'<example> <dims> <build>: ok' or the mismatch."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
run_all = os.path.join(here, "..", "..", "CPU", "Inputs", "run_all.py")
examples, work = sys.argv[1], sys.argv[2]

# example: (outputs, sizes). Sizes straddle the 64-key tiles; attention at
# n = 1100 and gpt at n = 600 have fewer (batch, head, query) units than
# the split threshold, so their keys are split into 512-key chunks.
cases = {
    "alibi": ("logits", ["b=1,n=5", "b=2,n=67"]),
    "attention": ("y", ["b=1,n=1", "b=2,n=65", "b=1,n=1100"]),
    "bert": ("sentence_embedding", ["b=1,n=5", "b=2,n=67"]),
    "encoder_decoder": ("logits", ["b=1,s=5,t=3", "b=2,s=67,t=65"]),
    "gpt": ("logits", ["b=1,n=5", "b=2,n=67", "b=1,n=600"]),
    "learned_pos": ("logits", ["b=1,n=5", "b=2,n=67"]),
    "llama": ("logits", ["b=1,n=5", "b=2,n=67"]),
    "linear_attention": ("causal,full", ["b=1,n=5", "b=2,n=67", "b=1,n=130"]),
    "longformer": ("logits", ["b=1,n=5", "b=1,n=67", "b=1,n=300"]),
    "mamba": ("logits", ["b=1,n=5", "b=2,n=67"]),
    "mha": ("y", ["b=1,n=5", "b=2,n=67"]),
    "post_ln_block": ("y", ["b=1,n=5", "b=2,n=67"]),
    "pre_ln_block": ("y", ["b=1,n=5", "b=2,n=67"]),
    "s4": ("y", ["b=1,n=5", "b=2,n=67"]),
}
# The runtime keeps state buffers (KV caches) for CPU models only.
cpu_only = {"gpt_decode", "mamba_decode"}
listed = sorted(f[:-4] for f in os.listdir(examples)
                if f.endswith(".seq") and f[:-4] not in cpu_only)
if listed != sorted(cases):
    print(f"FAIL: the examples are {listed}, the cases {sorted(cases)}")
    sys.exit(1)

for name, (outputs, sizes) in cases.items():
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(examples, name + ".seq")
    builds = {
        "ref": ["-O0"],
        "gpu": ["-O2", "--target=nvptx", "--gpu-interpret"],
        "gpu0": ["-O0", "--target=nvptx", "--gpu-interpret"],
    }
    for exe, flags in builds.items():
        subprocess.run(["seqc", *flags, src, "-o", os.path.join(d, exe)], check=True)
    r = subprocess.run([sys.executable, run_all, "--tol=1e-4", f"--outputs={outputs}",
                        "--exes=gpu,gpu0", d, *sizes], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        print(name, line)
    if r.returncode != 0:
        print(f"FAIL: {name}: {r.stderr.strip()}")
