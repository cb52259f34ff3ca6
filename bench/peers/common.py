"""Shared by the peer scripts: argument parsing and timing.

A peer script runs one work at one size in a fresh process and prints one
JSON object on stdout: {"min_ms", "median_ms", "runs", "version", "note"}, or
{"error": "..."} with exit status 3 when it cannot run that work (the report
shows the reason).
"""

import argparse
import json
import statistics
import sys
import time


# The works each peer of the PyPI venv has a formulation of (bench/compare runs
# them on these only; on any other the peer script reports unsupported).
ONNX_WORKS = frozenset({
    "linear", "bmm", "attention_full", "attention_causal", "attention_window", "attention_gqa",
    "attention_decode", "attention_decode_h1", "layer_norm", "softmax", "rope", "conv1d",
    "linear_attention", "linear_attention_quadratic", "encoder", "gpt2_small", "bert_encoder"})
XLA_WORKS = ONNX_WORKS | {"linear_bf16", "linear_f16", "selective_scan", "s4"}


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--work", required=True, help="work entry of seqc-bench --list-works (JSON)")
    p.add_argument("--size", required=True, help="size entry of that work (JSON)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--mode", default="eager")
    p.add_argument("--min-time", type=float, default=0.3,
                   help="seconds of timed runs after the warm-up (at least 3 runs)")
    args = p.parse_args()
    args.work = json.loads(args.work)
    args.size = json.loads(args.size)
    return args


def time_runs(fn, min_time, warmup=2, min_runs=3, max_runs=1000):
    """Times fn() after `warmup` calls; returns (min_ms, median_ms, runs)."""
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or (time.perf_counter() - start < min_time and len(times) < max_runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3, statistics.median(times) * 1e3, len(times)


def report(min_ms, median_ms, runs, version, note=""):
    print(json.dumps({"min_ms": min_ms, "median_ms": median_ms, "runs": runs,
                      "version": version, "note": note}))


def unsupported(reason):
    print(json.dumps({"error": reason}))
    sys.exit(3)
