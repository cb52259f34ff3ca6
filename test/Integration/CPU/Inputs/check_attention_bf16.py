"""check_attention_bf16.py [--tol=T] [--one-query] EXE DIMS...: runs EXE
(attention_bf16.seq compiled, or attention_f16.seq with --one-query) on random inputs for each DIMS (b=..,n=..,nq=..,nk=..) and checks
its bf16 attention outputs (full, causal, queries against a cache) against
the same attention in float64 NumPy on the bf16 values the model read (its
outputs qo, ko, ...; the CLI widens bf16 outputs to f32, exactly). Each
output must agree to T relative to its largest magnitude (default: half an
ulp of bf16, the output's one rounding, and the f32 arithmetic's error on
top). Prints the largest error of each output and `ok`, or `error`."""
import os
import subprocess
import sys
import tempfile

import numpy as np

tol = next((float(a[6:]) for a in sys.argv[1:] if a.startswith("--tol=")),
           2.0 ** -8 + 2e-4)
# --one-query: the model (attention_f16.seq) also has y1, one query q1o
# against the cache.
one_query = "--one-query" in sys.argv[1:]
args = [a for a in sys.argv[1:]
        if not a.startswith("--tol=") and a != "--one-query"]
exe = args[0]
outputs = ["y", "yc", "yd", "qo", "ko", "vo", "qdo", "kdo", "vdo"]
if one_query:
    outputs += ["y1", "q1o"]


def attention(q, k, v, causal):
    heads, kv_heads = q.shape[1], k.shape[1]
    k = np.repeat(k, heads // kv_heads, axis=1)
    v = np.repeat(v, heads // kv_heads, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v


for dims in args[1:]:
    with tempfile.TemporaryDirectory() as tmp:
        argv = [exe, "--random-inputs", "3"]
        for d in dims.split(","):
            argv += ["--dim", d]
        for name in outputs:
            argv += ["--output", f"{name}={tmp}/{name}.npy"]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        o = {n: np.load(f"{tmp}/{n}.npy").astype(np.float64) for n in outputs}
    expected = {
        "y": attention(o["qo"], o["ko"], o["vo"], False),
        "yc": attention(o["qo"], o["ko"], o["vo"], True),
        "yd": attention(o["qdo"], o["kdo"], o["vdo"], False),
    }
    if one_query:
        expected["y1"] = attention(o["q1o"], o["kdo"], o["vdo"], False)
    report = []
    bad = False
    for name, want in expected.items():
        got = o[name]
        if got.shape != want.shape:
            print(f"{dims} {name}: error: shape {got.shape}, expected {want.shape}")
            bad = True
            continue
        scale = max(np.abs(want).max(), 1e-30)
        err = np.abs(got - want).max() / scale
        report.append(f"{name} {err:.2e}")
        if not err <= tol:
            bad = True
    print(f"{dims}: {', '.join(report)}: {'error' if bad else 'ok'}")
