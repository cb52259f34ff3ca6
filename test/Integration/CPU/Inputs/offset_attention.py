"""offset_attention.py DIR EXE... -- [-D k=v ...]: runs every executable (a
compiled Inputs/offset_attention.seq) on random queries at offsets
`pos[b]` against a longer key sequence, for several sizes, and compares
each output with a float64 NumPy reference; prints one `ok` per executable
and size, or the error. The hyperparameters (-D) must be those the
executables were compiled with. Some rows sit at negative offsets (the pads
of a left-padded row before position 0): a causal query there sees no key
and gives zeros, no query before 0 is a global token."""
import os
import subprocess
import sys

import numpy as np

args = sys.argv[1:]
# --long: one query per row against long caches, positions around the
# split-key chunks (512 keys) and the 64-key tiles.
long_cache = "--long" in args
args = [a for a in args if a != "--long"]
split = args.index("--")
out_dir, exes = args[0], args[1:split]
hp = dict(heads=4, kv_heads=2, d=16, causal=True, window=0, global_tokens=0)
for item in args[split + 1:]:
    if item == "-D":
        continue
    key, value = item.split("=")
    hp[key] = value == "True" if value in ("True", "False") else int(value)


def slopes(h):
    p = 1 << (h.bit_length() - 1)
    s = [2.0 ** (-8.0 * i / p) for i in range(1, p + 1)]
    s += [2.0 ** (-8.0 * (2 * k + 1) / (2 * p)) for k in range(h - p)]
    return np.array(s)


def attention(q, k, v, pos, lengths=None, alibi=False):
    b, h, nq, d = q.shape
    g = h // k.shape[1]
    k = np.repeat(k, g, axis=1)
    v = np.repeat(v, g, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    i = pos[:, None, None, None] + np.arange(nq)[None, None, :, None]
    j = np.arange(k.shape[2])[None, None, None, :]
    if alibi:
        s = s - slopes(h)[None, :, None, None] * np.abs(i - j)
    ok = np.ones(s.shape, bool)
    if hp["causal"]:
        ok &= j <= i
    if hp["window"]:
        near = np.abs(i - j) < hp["window"]
        if hp["global_tokens"]:
            # Global tokens are positions 0 .. g - 1 (j is never negative).
            near |= ((i >= 0) & (i < hp["global_tokens"])) | (j < hp["global_tokens"])
        ok &= near
    if lengths is not None:
        ok &= j < lengths[:, None, None, None]
    s = np.where(ok, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.where(ok, np.exp(s - m), 0.0)
    den = p.sum(axis=-1, keepdims=True)
    return np.where(den > 0, (p / np.where(den > 0, den, 1.0)) @ v, 0.0)


def rope(x, pos, theta=500.0):
    b, h, n, d = x.shape
    half = d // 2
    inv = 1.0 / theta ** (np.arange(half) * 2.0 / d)
    angle = (pos[:, None] + np.arange(n)[None, :])[:, None, :, None] * inv
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * np.cos(angle) - x2 * np.sin(angle),
                           x2 * np.cos(angle) + x1 * np.sin(angle)], axis=-1)


rng = np.random.default_rng(7)
h, kvh, d = hp["heads"], hp["kv_heads"], hp["d"]
# (batch, n_q, n_k): one query against caches around the 64-key tiles, a
# chunk of queries straddling tile edges, a prompt at offset 0 (n_q = n_k).
# Negative offsets (left padding): one query at -1; 9 queries of which one
# row's are all before 0 and another's straddle 0; 70 queries whose first
# 64-query tile straddles 0.
sizes = [(1, 1, 1), (2, 1, 63), (2, 1, 65), (3, 7, 70), (2, 33, 129),
         (1, 64, 200), (2, 37, 37), (2, 2, 300), (2, 1, 66), (3, 9, 70),
         (2, 70, 70)]
positions = {(2, 1, 66): [65, -1], (3, 9, 70): [61, -4, -9],
             (2, 70, 70): [0, -6]}
if long_cache:
    sizes = [(1, 1, 1100), (2, 1, 1025), (3, 1, 1537), (1, 1, 2049),
             (2, 1, 1101)]
    positions = {(3, 1, 1537): [1536, 512, 511], (2, 1, 1025): [1023, 64],
                 (1, 1, 2049): [1600], (2, 1, 1101): [1100, -3]}
for b, nq, nk in sizes:
    q = rng.standard_normal((b, h, nq, d)).astype(np.float32)
    k = rng.standard_normal((b, kvh, nk, d)).astype(np.float32)
    v = rng.standard_normal((b, kvh, nk, d)).astype(np.float32)
    # Uneven offsets with pos + n_q <= n_k, the first row at its largest.
    pos = rng.integers(0, nk - nq + 1, size=b).astype(np.int32)
    pos[0] = nk - nq
    if (b, nq, nk) in positions:
        pos = np.array(positions[(b, nq, nk)], np.int32)
    lengths = np.maximum(np.minimum(pos + nq, rng.integers(0, nk + 1, size=b)),
                         0).astype(np.int32)
    lengths[0] = pos[0] + nq
    case = os.path.join(out_dir, f"{b}-{nq}-{nk}")
    os.makedirs(case, exist_ok=True)
    inputs = dict(q=q, k=k, v=v, len=lengths, pos=pos)
    for name, value in inputs.items():
        np.save(os.path.join(case, f"{name}.npy"), value)
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    expected = dict(y=attention(q64, k64, v64, pos),
                    yl=attention(q64, k64, v64, pos, lengths=lengths),
                    ya=attention(q64, k64, v64, pos, alibi=True),
                    r=rope(q64, pos))
    for exe in exes:
        cmd = [exe, "--random-weights", "0"]
        for name in inputs:
            cmd += ["--input", f"{name}={case}/{name}.npy"]
        for name in expected:
            cmd += ["--output", f"{name}={case}/{name}.npy"]
        subprocess.run(cmd, check=True)
        failures = []
        for name, want in expected.items():
            got = np.load(os.path.join(case, f"{name}.npy")).astype(np.float64)
            if got.shape != want.shape or not np.isfinite(got).all():
                failures.append(f"{name}: shape {got.shape} or non-finite")
                continue
            # rope's f32 angle p * inv_freq is rounded to p * 2^-24 (about
            # 2e-5 at p = 300), which every f32 implementation shares.
            tol = 1e-5 if name != "r" else 1e-5 + 1e-7 * (np.abs(pos).max() + nq)
            err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
            if err > tol:
                failures.append(f"{name}: error {err:.3g}")
        print("ok" if not failures else
              f"{os.path.basename(exe)} b={b} nq={nq} nk={nk}: " +
              ", ".join(failures))
