"""Runs scan_state.seq's executables on a sequence whole and in two pieces.

usage: scan_split.py DIR REF EXE...

For every length L in 1, 2, 7, 37, 64, 65 and 1000 (batch 2, a random
initial state), each executable runs the whole sequence, then its first
L // 2 steps (none when L = 1) from the same initial state and the rest from
the state that piece returned. The pieces must give the whole run's outputs
and final state (to 1e-6 of the largest value: the same code runs the same
steps), the whole run must agree with REF's (1e-5, as compare_npy.py), and
REF with mamba_ssm's selective_scan_ref semantics (its return_last_state),
written as a plain float64 loop in NumPy, to 1e-4. Prints one line per length.
"""
import os
import subprocess
import sys

import numpy as np

from numpy_refs import load_safetensors

CHANNELS, STATE, BATCH = 48, 5, 2
NAMES = ["u", "delta", "B", "C", "z"]


def run(exe, out, inputs, length):
    os.makedirs(out, exist_ok=True)
    args = [exe, "--random-weights", "1", "--dim", "b=%d" % BATCH,
            "--dim", "L=%d" % length]
    for name, value in inputs.items():
        np.save(os.path.join(out, name + ".npy"), value)
        args += ["--input", "%s=%s/%s.npy" % (name, out, name)]
    for name in ("y", "h"):
        args += ["--output", "%s=%s/%s.npy" % (name, out, name)]
    args += ["--save-weights", os.path.join(out, "w.safetensors")]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return (np.load(os.path.join(out, "y.npy")),
            np.load(os.path.join(out, "h.npy")))


def softplus(x):
    return np.logaddexp(0.0, x)


def selective_scan_ref(u, delta, A, B, C, D, z, delta_bias, h0):
    """mamba_ssm's selective_scan_ref in float64, sequence-major ([b, L, *]),
    with an initial state: returns the output and the last state. For each
    step t: h = exp(delta_t A) * h + delta_t B_t u_t, y_t = h C_t + D u_t,
    gated by silu(z_t); delta_t = softplus(delta_t + delta_bias)."""
    u, delta, A, B, C, D, z, delta_bias, h = (
        np.asarray(v, np.float64)
        for v in (u, delta, A, B, C, D, z, delta_bias, h0))
    delta = softplus(delta + delta_bias)
    y = np.zeros_like(u)
    for t in range(u.shape[1]):
        d = delta[:, t, :, None]                               # [b, D, 1]
        h = np.exp(d * A) * h + d * B[:, t, None, :] * u[:, t, :, None]
        y[:, t] = np.einsum("bdn,bn->bd", h, C[:, t])
    silu = z / (1.0 + np.exp(-z))
    return (y + u * D) * silu, h


def close(a, b, tol):
    scale = max(float(np.abs(b).max()) if b.size else 0.0, 1.0)
    return a.shape == b.shape and float(np.abs(a - b).max() if a.size else 0) <= tol * scale


def main():
    out, ref, exes = sys.argv[1], sys.argv[2], sys.argv[2:]
    rng = np.random.default_rng(5)
    for length in (1, 2, 7, 37, 64, 65, 1000):
        shapes = {"u": CHANNELS, "delta": CHANNELS, "B": STATE, "C": STATE,
                  "z": CHANNELS}
        full = {n: rng.standard_normal((BATCH, length, s)).astype(np.float32)
                for n, s in shapes.items()}
        h0 = rng.standard_normal((BATCH, CHANNELS, STATE)).astype(np.float32)
        first = length // 2
        whole = {}
        for exe in exes:
            tag = os.path.basename(exe)
            base = os.path.join(out, "%s-%d" % (tag, length))
            y, h = run(exe, base + "-whole", dict(full, h0=h0), length)
            y1, h1 = run(exe, base + "-a",
                         dict({n: v[:, :first] for n, v in full.items()}, h0=h0),
                         first)
            y2, h2 = run(exe, base + "-b",
                         dict({n: v[:, first:] for n, v in full.items()}, h0=h1),
                         length - first)
            if not (close(np.concatenate([y1, y2], 1), y, 1e-6) and
                    close(h2, h, 1e-6)):
                print("FAILED: %s L=%d in pieces %d + %d" %
                      (tag, length, first, length - first))
                sys.exit(1)
            whole[exe] = (y, h, base + "-whole")
        y0, h0r, base = whole[ref]
        for exe, (y, h, _) in whole.items():
            if not (close(y, y0, 1e-5) and close(h, h0r, 1e-5)):
                print("FAILED: %s L=%d against %s" % (exe, length, ref))
                sys.exit(1)
        w = load_safetensors(os.path.join(base, "w.safetensors"))
        want_y, want_h = selective_scan_ref(
            full["u"], full["delta"], -np.exp(w["A"]), full["B"], full["C"],
            w["D"], full["z"], w["delta_bias"], h0)
        if not (close(y0, want_y, 1e-4) and close(h0r, want_h, 1e-4)):
            print("FAILED: L=%d against selective_scan_ref" % length)
            sys.exit(1)
        print("ok L=%d" % length)


main()
