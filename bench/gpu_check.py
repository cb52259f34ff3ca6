#!/usr/bin/env python3
"""The device check of seqc's nvptx target (scripts/gpu-check.sh).

  gpu_check.py prepare DIR [options]   on the build machine, after `make build`
  gpu_check.py run DIR [options]       on the GPU machine (DIR/run calls this)

`prepare` compiles every example and the GPU benchmark models twice, for
--target=nvptx and for the CPU, runs the CPU builds with fixed seeds and sizes
to write reference outputs, and packs the GPU binaries, the references, the
shared libraries the binaries load that the GPU machine lacks, this script and
a `run` wrapper into DIR (cases.json describes it all).

`run` needs no build and no network: it runs each GPU binary with the same
seeds and sizes, compares its outputs with the references, then times
attention, bf16 and tf32 matmuls, the selective scan and layer norm beside PyTorch on
the same GPU and prints a table (also written to DIR/summary.md). `--cpu-dry-run` runs the
CPU builds instead, at small sizes, so all of this is tested without a GPU.

`run` uses only the standard library and, if importable, torch and numpy.
docs/gpu.md describes both commands.
"""

import argparse
import datetime
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import time

CARRY_LIMIT = 64 << 20  # What the device tool carries, all paths together.

# Tolerances of the comparison, by the output's dtype.
TOLERANCE = {"f32": 1e-3, "f64": 1e-3, "bf16": 2e-2, "f16": 2e-2,
             "i32": 0.0, "i64": 0.0}

# The sizes at which `run` times the kernels on the GPU, and the much
# smaller ones of --cpu-dry-run.
ATTENTION_N = [1024, 2048, 4096, 8192, 16384]
ATTENTION_TOKENS = 16384  # b = TOKENS / n, as FlashAttention's benchmark.
ATTENTION_HIDDEN = 2048   # heads = HIDDEN / d.
DRY_ATTENTION_N = [64, 128]
MATMUL = 4096
DRY_MATMUL = 128  # m = n; the contraction stays 4096 (one binary).
SCAN = {"b": 4, "L": 2048, "channels": 1536, "state": 16}
DRY_SCAN = {"b": 1, "L": 256}
# Layer norm's rows (b = 1, n = rows) over NORM_DIM features: one token (a
# decode step), a prompt, a batch of prompts.
NORM_DIM = 1024
NORM_ROWS = [1, 512, 16384]
DRY_NORM_ROWS = [1, 64]

# Libraries every x86-64 Linux with CUDA and PyTorch has; anything else a
# binary loads is packed into DIR/lib (in practice LLVM's libomp).
BASE_LIBS = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so",
             "libpthread.so", "librt.so", "libstdc++.so", "libgcc_s.so",
             "libcuda.so")


def log(message):
    print(message, flush=True)


# ----------------------------------------------------------------------------
# prepare
# ----------------------------------------------------------------------------

def binary_specs(root):
    """Every binary of the check: (name, source, hyperparameters, compare
    sizes, role). The compare sizes are small: the CPU computes the
    references."""
    specs = []
    for source in sorted(os.listdir(os.path.join(root, "examples"))):
        if source.endswith(".seq"):
            specs.append({"name": "ex_" + source[:-4],
                          "source": "examples/" + source, "hyper": {},
                          "dims": None, "role": "example"})
    for dtype, source in (("bf16", "bench/gpu/attention_bf16.seq"),
                          ("f32", "bench/kernels/attention.seq")):
        for d in (64, 128):
            for causal in (False, True):
                mask = "causal" if causal else "full"
                hyper = {"heads": ATTENTION_HIDDEN // d, "d": d,
                         "causal": "true" if causal else "false"}
                if dtype == "f32":  # Not grouped-query: as many kv heads.
                    hyper["kv_heads"] = hyper["heads"]
                specs.append({
                    "name": "attn_%s_d%d_%s" % (dtype, d, mask),
                    "source": source,
                    "hyper": hyper, "dims": {"b": 1, "n": 200}, "role": "attention",
                    "dtype": dtype, "d": d, "causal": causal})
    specs.append({"name": "matmul_bf16", "source": "bench/gpu/matmul_bf16.seq",
                  "hyper": {"kdim": MATMUL}, "dims": {"m": 96, "n": 80},
                  "role": "matmul", "dtype": "bf16"})
    # f32 on tensor cores as tf32 (--gpu-tf32): the inputs' mantissas cut to
    # 10 bits, errors of about 1e-3.
    specs.append({"name": "matmul_tf32", "source": "bench/gpu/matmul_f32.seq",
                  "hyper": {"kdim": MATMUL}, "dims": {"m": 96, "n": 80},
                  "role": "matmul", "dtype": "f32", "tf32": True,
                  "gpu_flags": ["--gpu-tf32"], "tolerance": 1e-2})
    specs.append({"name": "scan_f32", "source": "bench/kernels/selective_scan.seq",
                  "hyper": {"channels": SCAN["channels"],
                            "state": SCAN["state"]},
                  "dims": {"b": 2, "L": 100}, "role": "scan", "dtype": "f32"})
    specs.append({"name": "layernorm_f32", "source": "bench/kernels/layer_norm.seq",
                  "hyper": {"dim": NORM_DIM}, "dims": {"b": 2, "n": 3},
                  "role": "norm", "dtype": "f32"})
    return specs


def seqc_command(seqc, spec, root, extra):
    command = [seqc, "-O2"] + extra
    for key, value in sorted(spec["hyper"].items()):
        command += ["-D", "%s=%s" % (key, value)]
    return command + [os.path.join(root, spec["source"])]


def first_error_line(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()
    lines = text.strip().splitlines()
    return lines[0].strip() if lines else "(no output)"


def run_args(spec):
    args = ["--random-weights", "1", "--random-inputs", "2"]
    for name, size in spec["dims"].items():
        args += ["--dim", "%s=%d" % (name, size)]
    return args


def shared_libraries(binary):
    """The (soname, path) pairs of `ldd binary` outside BASE_LIBS."""
    result = subprocess.run(["ldd", binary], capture_output=True, text=True)
    libs = []
    for line in result.stdout.splitlines():
        match = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
        if not match:
            continue
        soname, path = match.groups()
        if path == "not" or any(soname.startswith(b) for b in BASE_LIBS):
            continue
        libs.append((soname, path))
    return libs


def directory_size(path):
    total = 0
    for parent, _, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(parent, name))
    return total


def prepare(options):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seqc = os.path.join(options.build_dir or os.path.join(root, "build"),
                        "bin", "seqc")
    if not os.access(seqc, os.X_OK):
        sys.exit("gpu-check: %s not found; build seqc first (make build)" % seqc)
    out = os.path.abspath(options.dir)
    if os.path.exists(out):
        if not os.path.exists(os.path.join(out, "cases.json")) and os.listdir(out):
            sys.exit("gpu-check: %s exists and is not a gpu-check folder; "
                     "not overwriting it" % out)
        shutil.rmtree(out)
    for sub in ("cpu", "gpu", "ref", "lib"):
        os.makedirs(os.path.join(out, sub))

    specs = [s for s in binary_specs(root)
             if not options.only or re.search(options.only, s["name"])]
    if not specs:
        sys.exit("gpu-check: --only '%s' matches no binary" % options.only)
    gpu_flags = ["--target=nvptx", "--gpu-arch=" + options.gpu_arch]
    if options.gpu_binary:
        gpu_flags.append("--gpu-binary=" + options.gpu_binary)
    failures = []
    start = time.time()
    for spec in specs:
        name = spec["name"]
        manifest = subprocess.run(
            seqc_command(seqc, spec, root, ["--emit=manifest"]),
            capture_output=True, text=True)
        if manifest.returncode != 0:
            sys.exit("gpu-check: %s: %s" % (spec["source"],
                                             first_error_line(manifest.stderr)))
        info = json.loads(manifest.stdout)
        spec["outputs"] = [{"name": o["name"], "dtype": o["dtype"]}
                           for o in info["outputs"]]
        if spec["dims"] is None:  # An example: b = 2, other sizes 64.
            names = []
            for value in info["inputs"]:
                for dim in value["shape"]:
                    if isinstance(dim, str) and dim not in names:
                        names.append(dim)
            spec["dims"] = {d: (2 if d == "b" else 64) for d in names}
        spec["args"] = run_args(spec)

        cpu = os.path.join(out, "cpu", name)
        build = subprocess.run(seqc_command(seqc, spec, root, ["-o", cpu]),
                               capture_output=True, text=True)
        if build.returncode != 0:
            sys.exit("gpu-check: the CPU build of %s failed: %s" %
                     (name, first_error_line(build.stderr)))
        outputs = []
        for output in spec["outputs"]:
            output["ref"] = "ref/%s.%s.npy" % (name, output["name"])
            outputs += ["--output", "%s=%s" % (output["name"],
                                               os.path.join(out, output["ref"]))]
        ref = subprocess.run([cpu] + spec["args"] + outputs,
                             capture_output=True, text=True, timeout=300)
        if ref.returncode != 0:
            sys.exit("gpu-check: the CPU run of %s failed: %s" %
                     (name, first_error_line(ref.stderr)))

        spec["gpu_error"] = None
        if options.cpu_only:
            spec["gpu_error"] = "not built (prepare --cpu-only)"
        else:
            gpu = os.path.join(out, "gpu", name)
            build = subprocess.run(
                seqc_command(seqc, spec, root,
                             gpu_flags + spec.get("gpu_flags", []) +
                             ["-o", gpu]),
                capture_output=True, text=True)
            if build.returncode != 0:
                spec["gpu_error"] = first_error_line(build.stderr)
                failures.append(name)
        log("  %-24s %s" % (name, "cpu + ref" + (
            "" if options.cpu_only else
            ", GPU build FAILED: " + spec["gpu_error"] if spec["gpu_error"]
            else " + gpu")))

    # The timed attention runs in bf16 when all four bf16 GPU builds exist.
    bf16 = [s for s in specs if s["role"] == "attention" and s["dtype"] == "bf16"]
    f32 = [s for s in specs if s["role"] == "attention" and s["dtype"] == "f32"]
    timed_dtype = "bf16"
    if options.cpu_only or not f32 or (bf16 and all(not s["gpu_error"] for s in bf16)):
        timed_dtype = "bf16" if bf16 else "f32"
    else:
        timed_dtype = "f32"
    for spec in specs:
        spec["timed"] = spec["role"] in ("matmul", "scan", "norm") or (
            spec["role"] == "attention" and spec["dtype"] == timed_dtype)

    packed = {}
    for folder in ("gpu", "cpu"):
        for name in os.listdir(os.path.join(out, folder)):
            for soname, path in shared_libraries(os.path.join(out, folder, name)):
                if soname not in packed:
                    shutil.copy(os.path.realpath(path),
                                os.path.join(out, "lib", soname))
                    packed[soname] = path
    shutil.copy(os.path.abspath(__file__), os.path.join(out, "check.py"))
    with open(os.path.join(out, "run"), "w") as f:
        f.write(RUN_WRAPPER)
    os.chmod(os.path.join(out, "run"), 0o755)
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"seqc_commit": commit or "unknown",
                   "gpu_arch": options.gpu_arch,
                   "created": datetime.datetime.now(datetime.timezone.utc)
                   .strftime("%Y-%m-%d %H:%M UTC"),
                   "cpu_only": options.cpu_only,
                   "timed_attention_dtype": timed_dtype,
                   "libs": sorted(packed), "binaries": specs}, f, indent=1)

    size = directory_size(out)
    log("gpu-check: packed %d binaries (%d GPU builds failed), libs: %s" %
        (len(specs), len(failures), ", ".join(sorted(packed)) or "none"))
    log("gpu-check: %s is %.1f MiB (the device tool carries at most %d MiB), "
        "prepared in %.0f s" % (out, size / 2**20, CARRY_LIMIT >> 20,
                                time.time() - start))
    if size > CARRY_LIMIT:
        sys.exit("gpu-check: %s is over the %d MiB limit" %
                 (out, CARRY_LIMIT >> 20))
    if failures:
        sys.exit("gpu-check: the GPU build of %s failed (the rest is packed)" %
                 ", ".join(failures))


RUN_WRAPPER = """#!/usr/bin/env bash
# Written by scripts/gpu-check.sh prepare: runs the device check of this folder.
#   ./run [--cpu-dry-run] [--budget SECONDS] [--only REGEX] ...
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "${PYTHON:-python3}" "$here/check.py" run "$here" "$@"
"""


# ----------------------------------------------------------------------------
# run: .npy files and errors
# ----------------------------------------------------------------------------

try:
    import numpy
except ImportError:  # torch wheels do not need numpy.
    numpy = None

NPY_CODES = {"<f4": ("f", 4), "<f8": ("d", 8), "<f2": ("e", 2),
             "<i4": ("i", 4), "<i8": ("q", 8)}


def read_npy(path):
    """Returns (shape, flat list or numpy array) of a little-endian,
    C-ordered .npy of f16/f32/f64/i32/i64."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s is not a .npy file" % path)
    if data[6] == 1:
        length, offset = struct.unpack_from("<H", data, 8)[0], 10
    else:
        length, offset = struct.unpack_from("<I", data, 8)[0], 12
    header = data[offset:offset + length].decode("latin1")
    descr = re.search(r"'descr':\s*'([^']+)'", header).group(1)
    shape = tuple(int(x) for x in re.search(
        r"'shape':\s*\(([^)]*)\)", header).group(1).replace(",", " ").split())
    if "'fortran_order': True" in header or descr not in NPY_CODES:
        raise ValueError("%s: unsupported layout %s" % (path, header.strip()))
    code, size = NPY_CODES[descr]
    count = 1
    for dim in shape:
        count *= dim
    body = data[offset + length:offset + length + count * size]
    if numpy is not None:
        return shape, numpy.frombuffer(body, dtype=descr).astype(numpy.float64)
    return shape, struct.unpack("<%d%s" % (count, code), body)


def relative_error(actual, reference):
    """max|a - r| / max(max|r|, tiny); inf when a non-finite value of `actual`
    is not one of `reference`."""
    if numpy is not None:
        a, r = numpy.asarray(actual), numpy.asarray(reference)
        finite = numpy.isfinite(r)
        if not numpy.array_equal(numpy.isfinite(a), finite):
            return math.inf
        diff = numpy.abs(a[finite] - r[finite])
        scale = numpy.abs(r[finite]).max() if finite.any() else 0.0
        diff = diff.max() if diff.size else 0.0
        return float(diff) / max(float(scale), 1e-30)
    diff = scale = 0.0
    for a, r in zip(actual, reference):
        if not math.isfinite(r):
            if math.isfinite(a):
                return math.inf
            continue
        if not math.isfinite(a):
            return math.inf
        diff = max(diff, abs(a - r))
        scale = max(scale, abs(r))
    return diff / max(scale, 1e-30)


# ----------------------------------------------------------------------------
# run: binaries
# ----------------------------------------------------------------------------

BENCH_LINE = re.compile(r"bench: (\d+) runs after 1 warm-up: "
                        r"min ([0-9.]+) ms, median ([0-9.]+) ms")


class Clock:
    """The run's overall budget: every child gets at most what is left."""

    def __init__(self, budget):
        self.start = time.time()
        self.budget = budget

    def left(self):
        return self.budget - (time.time() - self.start)

    def elapsed(self):
        return time.time() - self.start


def run_binary(binary, args, timeout, clock):
    """Runs a model binary; returns (ok, stdout, message, seconds)."""
    limit = min(timeout, clock.left())
    if limit < 1:
        return False, "", "skipped: the run's time budget is spent", 0.0
    if os.path.exists(binary) and not os.access(binary, os.X_OK):
        os.chmod(binary, 0o755)  # A copy that lost its mode bits.
    start = time.time()
    try:
        result = subprocess.run([binary] + args, capture_output=True,
                                text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return False, "", "timed out after %.0f s" % limit, time.time() - start
    seconds = time.time() - start
    if result.returncode != 0:
        return (False, result.stdout,
                "exit %d: %s" % (result.returncode,
                                 first_error_line(result.stderr + result.stdout)),
                seconds)
    return True, result.stdout, "", seconds


def tolerance(spec, dtype):
    """The comparison's tolerance for an output of `dtype` of `spec`."""
    return spec.get("tolerance", TOLERANCE[dtype])


def compare_case(spec, binary, folder, scratch, options, clock):
    """Rows (case, output, dtype, error, tolerance, status) of one binary."""
    rows = []
    args = list(spec["args"])
    produced = {}
    for output in spec["outputs"]:
        produced[output["name"]] = os.path.join(
            scratch, "%s.%s.npy" % (spec["name"], output["name"]))
        args += ["--output", "%s=%s" % (output["name"],
                                        produced[output["name"]])]
    ok, _, message, _ = run_binary(binary, args, options.timeout, clock)
    for output in spec["outputs"]:
        tol = tolerance(spec, output["dtype"])
        row = [spec["name"], output["name"], output["dtype"], "-", "%.0e" % tol]
        if not ok:
            rows.append(row + ["FAIL (%s)" % message])
            continue
        try:
            shape, actual = read_npy(produced[output["name"]])
            ref_shape, reference = read_npy(os.path.join(folder, output["ref"]))
        except (OSError, ValueError) as error:
            rows.append(row + ["FAIL (%s)" % error])
            continue
        if shape != ref_shape:
            rows.append(row + ["FAIL (shape %s, reference %s)" %
                               (list(shape), list(ref_shape))])
            continue
        error = relative_error(actual, reference)
        row[3] = "%.2e" % error
        rows.append(row + ["ok" if error <= tol else "FAIL (over tolerance)"])
    return rows


# ----------------------------------------------------------------------------
# run: timing
# ----------------------------------------------------------------------------

def timing_cases(specs, dry):
    """The timed cases in the order they run: size by size over all series,
    so a spent budget cuts the largest sizes rather than a whole kernel."""
    cases = []
    for spec in specs:
        if not spec.get("timed"):
            continue
        if spec["role"] == "attention":
            heads, d = spec["hyper"]["heads"], spec["d"]
            for step, n in enumerate(DRY_ATTENTION_N if dry else ATTENTION_N):
                b = 1 if dry else max(1, ATTENTION_TOKENS // n)
                flops = 4.0 * b * heads * n * n * d / (2 if spec["causal"] else 1)
                cases.append({
                    "spec": spec, "step": step, "series": spec["name"],
                    "kernel": "attention d=%d %s" % (
                        d, "causal" if spec["causal"] else "full"),
                    "shape": "b=%d h=%d n=%d" % (b, heads, n),
                    "dims": {"b": b, "n": n}, "flops": flops, "bytes": None,
                    "peer": {"kind": "sdpa", "b": b, "h": heads, "n": n, "d": d,
                             "causal": spec["causal"], "dtype": spec["dtype"]}})
        elif spec["role"] == "matmul":
            k = spec["hyper"]["kdim"]
            m = DRY_MATMUL if dry else MATMUL
            cases.append({
                "spec": spec, "step": 0, "series": spec["name"],
                "kernel": "matmul tf32" if spec.get("tf32") else "matmul",
                "shape": "%dx%dx%d" % (m, m, k),
                "dims": {"m": m, "n": m}, "flops": 2.0 * m * m * k,
                "bytes": None,
                "peer": {"kind": "matmul", "m": m, "n": m, "k": k,
                         "dtype": spec["dtype"],
                         "tf32": spec.get("tf32", False)}})
        elif spec["role"] == "scan":
            b = DRY_SCAN["b"] if dry else SCAN["b"]
            length = DRY_SCAN["L"] if dry else SCAN["L"]
            channels, state = spec["hyper"]["channels"], spec["hyper"]["state"]
            # What the scan must read and write: u, delta, z, y [b, L, D],
            # B, C [b, L, N], A [D, N], D and the delta bias.
            values = (4 * b * length * channels + 2 * b * length * state +
                      channels * state + 2 * channels)
            cases.append({
                "spec": spec, "step": 0, "series": spec["name"],
                "kernel": "selective scan",
                "shape": "b=%d L=%d D=%d N=%d" % (b, length, channels, state),
                "dims": {"b": b, "L": length}, "flops": None,
                "bytes": 4.0 * values,
                "peer": {"kind": "scan", "b": b, "L": length, "D": channels,
                         "N": state}})
        elif spec["role"] == "norm":
            dim = spec["hyper"]["dim"]
            for step, rows in enumerate(DRY_NORM_ROWS if dry else NORM_ROWS):
                cases.append({
                    "spec": spec, "step": step, "series": spec["name"],
                    "kernel": "layer norm", "shape": "rows=%d dim=%d" % (rows, dim),
                    "dims": {"b": 1, "n": rows}, "flops": None,
                    # x and y, the weight and the bias, once.
                    "bytes": 4.0 * (2 * rows * dim + 2 * dim),
                    "peer": {"kind": "layer_norm", "rows": rows, "dim": dim}})
    cases.sort(key=lambda c: c["step"])
    return cases


def bench_binary(binary, dims, options, clock):
    """Times a binary with its --bench: one probe run, then enough runs for
    about --bench-seconds. Returns (median ms, runs, message)."""
    args = ["--random-weights", "1", "--random-inputs", "2", "--bench", "1"]
    for name, size in dims.items():
        args += ["--dim", "%s=%d" % (name, size)]
    ok, stdout, message, _ = run_binary(binary, args, options.timeout, clock)
    match = BENCH_LINE.search(stdout) if ok else None
    if not match:
        return None, 0, message or "no 'bench:' line in the output"
    probe = float(match.group(3))
    runs = int(min(1000, max(1, options.bench_seconds * 1000 / max(probe, 1e-3))))
    if runs < 3 or probe * (runs + 1) / 1000 > options.timeout / 2:
        return probe, 1, ""
    args[args.index("--bench") + 1] = str(runs)
    ok, stdout, message, _ = run_binary(binary, args, options.timeout, clock)
    match = BENCH_LINE.search(stdout) if ok else None
    if not match:  # The probe stands.
        return probe, 1, ""
    return float(match.group(3)), int(match.group(1)), ""


class Peers:
    """PyTorch's versions of the timed kernels, on the GPU (or on the CPU with
    --cpu-peers); `unavailable` says why there are none."""

    def __init__(self, options):
        self.unavailable = None
        self.torch = None
        try:
            import torch
        except ImportError:
            self.unavailable = "torch is not importable"
            return
        self.torch = torch
        if torch.cuda.is_available() and not options.cpu_dry_run:
            self.device = "cuda"
            self.name = "%s, torch %s, CUDA %s" % (
                torch.cuda.get_device_name(0), torch.__version__,
                torch.version.cuda)
        elif options.cpu_peers:
            self.device = "cpu"
            self.name = "CPU, torch %s" % torch.__version__
        else:
            self.unavailable = ("no CUDA device" if not options.cpu_dry_run
                                else "--cpu-dry-run (add --cpu-peers)")
        self.seconds = options.bench_seconds

    def time(self, function):
        """Median ms of `function()` over about self.seconds."""
        torch = self.torch
        cuda = self.device == "cuda"

        def once():
            if cuda:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                function()
                end.record()
                end.synchronize()
                return start.elapsed_time(end)
            start = time.perf_counter()
            function()
            return (time.perf_counter() - start) * 1000

        once()  # Warm-up (kernel selection, caches).
        probe = once()
        runs = int(min(200, max(3, self.seconds * 1000 / max(probe, 1e-3))))
        times = sorted(once() for _ in range(runs))
        return times[len(times) // 2]

    def run(self, peer):
        """Returns (median ms, label) or (None, reason)."""
        if self.unavailable:
            return None, self.unavailable
        torch = self.torch
        dtypes = {"bf16": torch.bfloat16, "f16": torch.float16,
                  "f32": torch.float32}
        try:
            with torch.no_grad():
                if peer["kind"] == "sdpa":
                    return self._sdpa(peer, dtypes[peer["dtype"]])
                if peer["kind"] == "matmul":
                    dtype = dtypes[peer["dtype"]]
                    a = torch.randn(peer["m"], peer["k"], device=self.device,
                                    dtype=dtype)
                    b = torch.randn(peer["k"], peer["n"], device=self.device,
                                    dtype=dtype)
                    if not peer.get("tf32"):
                        return (self.time(lambda: torch.matmul(a, b)),
                                "torch.matmul")
                    cuda = torch.backends.cuda.matmul
                    allowed = cuda.allow_tf32
                    cuda.allow_tf32 = True
                    try:
                        return (self.time(lambda: torch.matmul(a, b)),
                                "torch.matmul (allow_tf32)")
                    finally:
                        cuda.allow_tf32 = allowed
                if peer["kind"] == "scan":
                    return self._scan(peer)
                if peer["kind"] == "layer_norm":
                    x = torch.randn(peer["rows"], peer["dim"], device=self.device)
                    w = torch.randn(peer["dim"], device=self.device)
                    b = torch.randn(peer["dim"], device=self.device)
                    layer_norm = torch.nn.functional.layer_norm
                    return (self.time(lambda: layer_norm(x, (peer["dim"],), w, b)),
                            "F.layer_norm")
        except Exception as error:  # Keep going: report it in the table.
            return None, "%s: %s" % (type(error).__name__,
                                     str(error).splitlines()[0][:80])
        finally:
            if self.device == "cuda":
                torch.cuda.empty_cache()
        return None, "unknown peer"

    def _sdpa(self, peer, dtype):
        torch = self.torch
        functional = torch.nn.functional
        if not hasattr(functional, "scaled_dot_product_attention"):
            return None, "torch %s has no SDPA" % torch.__version__
        shape = (peer["b"], peer["h"], peer["n"], peer["d"])
        q, k, v = (torch.randn(shape, device=self.device, dtype=dtype)
                   for _ in range(3))
        context, label = None, "sdpa"
        if self.device == "cuda" and dtype != torch.float32:
            try:  # torch >= 2.3
                from torch.nn.attention import SDPBackend, sdpa_kernel
                context = sdpa_kernel(SDPBackend.FLASH_ATTENTION)
            except ImportError:
                context = torch.backends.cuda.sdp_kernel(
                    enable_flash=True, enable_math=False,
                    enable_mem_efficient=False)
            label = "sdpa flash"

        def call():
            functional.scaled_dot_product_attention(q, k, v,
                                                    is_causal=peer["causal"])
        if context is None:
            return self.time(call), label
        with context:
            return self.time(call), label

    def _scan(self, peer):
        """Mamba's reference selective scan, eagerly: the discretized A and
        B u for all steps at once, then one step of the recurrence per
        position (what mamba_ssm's selective_scan_ref does)."""
        torch = self.torch
        b, length, channels, state = peer["b"], peer["L"], peer["D"], peer["N"]
        device = self.device
        u, delta, z = (torch.randn(b, length, channels, device=device)
                       for _ in range(3))
        B, C = (torch.randn(b, length, state, device=device) for _ in range(2))
        A = -torch.rand(channels, state, device=device)
        D, bias = (torch.randn(channels, device=device) for _ in range(2))

        return (self.time(lambda: torch_scan(torch, u, delta, A, B, C, D, z,
                                             bias)),
                "torch eager loop")


def torch_scan(torch, u, delta, A, B, C, D, z, delta_bias):
    """bench/kernels/selective_scan.seq in eager torch (A is already -exp of
    the parameter): y = (scan(u, softplus(delta + bias), A, B, C) + u D)
    silu(z)."""
    batch, length, channels = u.shape
    dt = torch.nn.functional.softplus(delta + delta_bias)   # [b, L, D]
    dA = torch.exp(dt.unsqueeze(-1) * A)                    # [b, L, D, N]
    dBu = (dt * u).unsqueeze(-1) * B.unsqueeze(2)           # [b, L, D, N]
    h = torch.zeros(batch, channels, A.shape[1], device=u.device,
                    dtype=u.dtype)
    ys = []
    for t in range(length):
        h = dA[:, t] * h + dBu[:, t]
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
    y = torch.stack(ys, dim=1) + u * D
    return y * torch.nn.functional.silu(z)


# ----------------------------------------------------------------------------
# run: the report
# ----------------------------------------------------------------------------

def format_table(headers, rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(headers) + " |",
                 "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(r[i])) for r in [headers] + rows)
              for i in range(len(headers))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(headers, widths))
             .rstrip()]
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths))
                     .rstrip())
    return "\n".join(lines)


def rate(case, ms):
    if ms is None:
        return "-"
    if case["flops"] is not None:
        return "%.3g TFLOP/s" % (case["flops"] / (ms * 1e-3) / 1e12)
    return "%.3g GB/s" % (case["bytes"] / (ms * 1e-3) / 1e9)


def nvidia_smi():
    """The GPU's name and driver as nvidia-smi reports them, or None."""
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version",
             "--format=csv,noheader"], capture_output=True, text=True,
            timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        return None
    return "%s (driver %s)" % tuple(
        (lines[0].split(", ") + ["?"])[:2])


def shorten(text, limit=100):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def run(options):
    folder = os.path.abspath(options.dir)
    try:
        with open(os.path.join(folder, "cases.json")) as f:
            pack = json.load(f)
    except OSError:
        sys.exit("gpu-check: %s/cases.json not found; run "
                 "`scripts/gpu-check.sh prepare` first" % folder)
    clock = Clock(options.budget)
    dry = options.cpu_dry_run
    specs = [s for s in pack["binaries"]
             if not options.only or re.search(options.only, s["name"])]
    scratch = os.path.join(folder, "out")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    mode = ("--cpu-dry-run: the CPU builds, at small timing sizes" if dry
            else "the GPU builds (--gpu-arch=%s)" % pack["gpu_arch"])
    log("gpu-check run: seqc %s, prepared %s; %s" %
        (pack["seqc_commit"], pack["created"], mode))
    if not dry:
        log("GPU: %s" % (nvidia_smi() or "nvidia-smi reports none"))
    if not dry and pack.get("cpu_only"):
        log("note: prepared with --cpu-only: there are no GPU builds "
            "(use --cpu-dry-run)")

    def binary(spec):
        return os.path.join(folder, "cpu" if dry else "gpu", spec["name"])

    def gpu_missing(spec):
        return None if dry else spec.get("gpu_error")

    # Libraries the binaries cannot find here.
    missing = set()
    for spec in specs:
        if gpu_missing(spec) or not os.path.exists(binary(spec)):
            continue
        result = subprocess.run(["ldd", binary(spec)], capture_output=True,
                                text=True)
        missing.update(re.findall(r"(\S+) => not found", result.stdout))
    if missing:
        log("warning: libraries not found: %s" % ", ".join(sorted(missing)))

    log("\n== correctness: %s vs the CPU references" %
        ("the CPU builds" if dry else "the GPU builds"))
    compare_rows = []
    # The comparisons get at most 40% of the budget unless nothing is timed,
    # so that slow kernels leave time to time them.
    compare_clock = Clock(options.budget * (1.0 if options.no_timing else 0.4))
    for spec in specs:
        if gpu_missing(spec):
            rows = [[spec["name"], o["name"], o["dtype"], "-",
                     "%.0e" % tolerance(spec, o["dtype"]),
                     "FAIL (no GPU build: %s)" % gpu_missing(spec)]
                    for o in spec["outputs"]]
        else:
            try:
                rows = compare_case(spec, binary(spec), folder, scratch,
                                    options, compare_clock)
            except Exception as error:  # Keep going: report it.
                rows = [[spec["name"], o["name"], o["dtype"], "-",
                         "%.0e" % tolerance(spec, o["dtype"]),
                         "FAIL (gpu-check error: %r)" % error]
                        for o in spec["outputs"]]
        for row in rows:
            log("  %-24s %-8s %s" % (row[0], row[1], " ".join(row[3:])))
        compare_rows += rows
    compare_headers = ["binary", "output", "dtype", "max rel err", "tol",
                       "status"]

    peers = Peers(options)
    log("\n== timing (seqc: the median of --bench; peer: %s)" %
        (peers.unavailable and "none, " + peers.unavailable or peers.name))
    timing_rows = []
    dead = {}  # series -> why its larger sizes are skipped
    for case in [] if options.no_timing else timing_cases(specs, dry):
        spec = case["spec"]
        row = [case["kernel"], case["shape"], spec["dtype"]]
        if gpu_missing(spec):
            ms, note = None, "no GPU build"
        elif case["series"] in dead:
            ms, note = None, dead[case["series"]]
        else:
            before = time.time()
            try:
                ms, runs, note = bench_binary(binary(spec), case["dims"],
                                              options, clock)
            except Exception as error:  # Keep going: report it.
                ms, runs, note = None, 0, "gpu-check error: %r" % error
            took = time.time() - before
            if ms is None:
                dead[case["series"]] = "skipped (%s failed)" % case["shape"]
                note = shorten(note)
            elif took > options.slow or ms / 1000 > options.slow / 4:
                dead[case["series"]] = "skipped (%s took %.0f s)" % (
                    case["shape"], took)
            if ms is not None:
                note = "%d run%s" % (runs, "" if runs == 1 else "s")
        peer_ms, label = (None, "budget spent") if clock.left() < 5 else \
            peers.run(case["peer"])
        ratio = "-"
        if ms is not None and peer_ms is not None:
            ratio = "%.2fx" % (ms / peer_ms)
        row += ["%.3f" % ms if ms is not None else "-", rate(case, ms),
                "%.3f" % peer_ms if peer_ms is not None else "-",
                rate(case, peer_ms), label, ratio, note or "-"]
        log("  %-22s %-22s %-5s %10s %16s %10s %16s  %s  %s  %s" %
            tuple(row))
        timing_rows.append((case["kernel"], case["step"], row))
    timing_headers = ["kernel", "shape", "dtype", "seqc ms", "seqc rate",
                      "peer ms", "peer rate", "peer", "seqc/peer time", "note"]

    # The tables list each kernel's sizes together, in the order of the run.
    order = {}
    for kernel, _, _ in timing_rows:
        order.setdefault(kernel, len(order))
    timing_rows = [row for _, _, row in
                   sorted(timing_rows, key=lambda r: (order[r[0]], r[1]))]
    failed = sum(1 for r in compare_rows if r[-1] != "ok")
    log("\n" + format_table(compare_headers, compare_rows, False))
    log("\n" + format_table(timing_headers, timing_rows, False))
    verdict = "%d of %d outputs match their reference" % (
        len(compare_rows) - failed, len(compare_rows))
    log("\ngpu-check: %s; finished in %.0f s" % (verdict, clock.elapsed()))

    device = peers.name if not peers.unavailable else (
        "CPU (dry run)" if dry else nvidia_smi() or "an unknown GPU")
    with open(os.path.join(folder, "summary.md"), "w") as f:
        f.write("## Device check (`scripts/gpu-check.sh run%s`)\n\n" %
                (" --cpu-dry-run" if dry else ""))
        timed = pack["timed_attention_dtype"]
        f.write(
            "seqc %s (--gpu-arch=%s) on %s, %s. Attention is timed in %s%s. "
            "seqc's times are the median of the binary's `--bench` runs, "
            "each the wall time of one `seqc_model_run` (with whatever it "
            "copies between host and device); the peers' are the median of "
            "one call between CUDA events (the CPU clock without CUDA). "
            "Attention FLOPs: 4 b h n^2 d, half that for causal; the scan's "
            "and layer norm's GB/s count each input and output once. "
            "`seqc/peer time` above "
            "1 means seqc is slower.\n\n" %
            (pack["seqc_commit"], pack["gpu_arch"], device,
             datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
             timed, "" if timed == "bf16" or pack["cpu_only"]
             else " (the bf16 GPU builds failed)"))
        f.write(format_table(compare_headers, compare_rows, True) + "\n\n")
        f.write(format_table(timing_headers, timing_rows, True) + "\n\n")
        f.write(verdict + ".\n")
    log("gpu-check: wrote %s" % os.path.join(folder, "summary.md"))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="compile, write references, pack")
    p.add_argument("dir")
    p.add_argument("--build-dir",
                   help="the build whose bin/seqc compiles (default build/)")
    p.add_argument("--gpu-arch", default="sm_90",
                   help="--gpu-arch of the GPU builds (default sm_90, H100/H200)")
    p.add_argument("--gpu-binary", choices=["fatbin", "cubin", "ptx"],
                   help="seqc's --gpu-binary for the GPU builds (default: "
                        "seqc's, a fatbin)")
    p.add_argument("--only", help="only the binaries whose name matches REGEX")
    p.add_argument("--cpu-only", action="store_true",
                   help="no GPU builds (for --cpu-dry-run)")
    r = sub.add_parser("run", help="compare and time")
    r.add_argument("dir")
    r.add_argument("--cpu-dry-run", action="store_true",
                   help="run the CPU builds at small sizes")
    r.add_argument("--cpu-peers", action="store_true",
                   help="with --cpu-dry-run, time the torch peers on the CPU")
    r.add_argument("--only", help="only the binaries whose name matches REGEX")
    r.add_argument("--no-timing", action="store_true",
                   help="only compare the outputs")
    r.add_argument("--budget", type=float, default=480,
                   help="seconds for the whole run (default 480)")
    r.add_argument("--timeout", type=float, default=60,
                   help="seconds for one binary's run (default 60)")
    r.add_argument("--bench-seconds", type=float, default=1.0,
                   help="time each kernel for about this long (default 1)")
    r.add_argument("--slow", type=float, default=20,
                   help="skip a kernel's larger sizes once a size takes this "
                        "many seconds (default 20)")
    options = parser.parse_args()
    if options.command == "prepare":
        prepare(options)
        return 0
    return run(options)


if __name__ == "__main__":
    sys.exit(main())
