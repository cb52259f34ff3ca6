#!/usr/bin/python3
"""Runs a compiled model on every golden case of one example and compares
each output with the expected one (compare.py's tolerance).

  run_golden.py --exe MODEL --example gpt --workdir DIR
      runs `MODEL --weights W --input NAME=FILE ... --output NAME=FILE ...`
      (docs/runtime.md) once per case of cases.json;
  run_golden.py --shared LIBMODEL.so --example mha --workdir DIR
      loads the shared library with ctypes and runs every case twice: through
      the runtime's C API (seqc_runtime.h), when the library exports it, and
      through the bare ABI of docs/abi.md (seqc_manifest, seqc_prepare, seqc_invoke with
      memref descriptors built here).

Prints one line per output and exits 1 if any case fails (after running all).
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import compare  # noqa: E402


def load_cases(example, manifest):
    with open(manifest) as f:
        cases = [c for c in json.load(f)["cases"] if c["example"] == example]
    if not cases:
        sys.exit("run_golden.py: no case for example '%s' in %s" % (example, manifest))
    return cases


def path(p):
    return os.path.join(ROOT, p)


def out_file(workdir, case, name):
    return os.path.join(workdir, "%s.out.%s.npy" % (case["name"].replace("/", "_"), name))


def check_outputs(case, got, label):
    """got: {name: ndarray or file path}. Returns the number of failures."""
    failures = 0
    for name, expected_path in case["outputs"].items():
        expected = np.load(path(expected_path))
        actual = got.get(name)
        if actual is None:
            print("FAIL %s%s %s: no output" % (case["name"], label, name))
            failures += 1
            continue
        if isinstance(actual, str):
            try:
                actual = np.load(actual)
            except (OSError, ValueError) as err:
                print("FAIL %s%s %s: %s" % (case["name"], label, name, err))
                failures += 1
                continue
        res = compare.compare(actual, expected)
        print("%s %s%s %s: %s" % ("PASS" if res.ok else "FAIL", case["name"], label, name,
                                  res.message))
        failures += not res.ok
    return failures


def run_exe(exe, cases, workdir, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    failures = 0
    for case in cases:
        cmd = [exe, "--weights", path(case["weights"])]
        for name, p in case["inputs"].items():
            cmd += ["--input", "%s=%s" % (name, path(p))]
        outs = {name: out_file(workdir, case, name) for name in case["outputs"]}
        for name, p in outs.items():
            cmd += ["--output", "%s=%s" % (name, p)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as err:
            print("FAIL %s: %s" % (case["name"], err))
            failures += 1
            continue
        if r.returncode != 0:
            print("FAIL %s: exit %d: %s\n  command: %s" % (case["name"], r.returncode,
                                                        r.stderr.strip(), " ".join(cmd)))
            failures += 1
            continue
        failures += check_outputs(case, outs, "")
    return failures


#===----------------------------------------------------------------------===#
# The shared library through the C API
#===----------------------------------------------------------------------===#

MAX_RANK = 8
DTYPES = {"f32": (0, np.float32), "f64": (1, np.float64), "f16": (2, np.float16),
          "i32": (4, np.int32), "i64": (5, np.int64)}
CODE_TO_NP = {code: t for code, t in DTYPES.values()}
NP_TO_CODE = {np.dtype(t): code for code, t in DTYPES.values()}


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK), ("data", ctypes.c_void_p)]


def c_api(lib):
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    sigs = {
        "seqc_model_load": [ctypes.POINTER(vp)],
        "seqc_model_load_weights": [vp, cp],
        "seqc_model_set_input": [vp, cp, ctypes.POINTER(Tensor)],
        "seqc_model_run": [vp],
        "seqc_model_get_output": [vp, cp, ctypes.POINTER(Tensor)],
        "seqc_model_reset_inputs": [vp],
        "seqc_model_free": [vp],
        "seqc_status_message": [vp],
        "seqc_status_free": [vp],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = vp
    lib.seqc_status_message.restype = cp
    lib.seqc_model_reset_inputs.restype = None
    lib.seqc_model_free.restype = None
    lib.seqc_status_free.restype = None
    return lib


def check_status(lib, status, what):
    if status:
        msg = lib.seqc_status_message(status).decode()
        lib.seqc_status_free(status)
        raise RuntimeError("%s: %s" % (what, msg))


def run_c_api(lib, cases):
    lib = c_api(lib)
    model = ctypes.c_void_p()
    check_status(lib, lib.seqc_model_load(ctypes.byref(model)), "seqc_model_load")
    failures = 0
    try:
        check_status(lib, lib.seqc_model_load_weights(model, path(cases[0]["weights"]).encode()),
                     "seqc_model_load_weights")
        for case in cases:
            try:
                lib.seqc_model_reset_inputs(model)
                keep = []
                for name, p in case["inputs"].items():
                    a = np.ascontiguousarray(np.load(path(p)))
                    keep.append(a)
                    t = Tensor(NP_TO_CODE[a.dtype], a.ndim)
                    for i, s in enumerate(a.shape):
                        t.shape[i] = s
                    t.data = a.ctypes.data
                    check_status(lib, lib.seqc_model_set_input(model, name.encode(),
                                                               ctypes.byref(t)),
                                 "seqc_model_set_input(%s)" % name)
                check_status(lib, lib.seqc_model_run(model), "seqc_model_run")
                got = {}
                for name in case["outputs"]:
                    t = Tensor()
                    check_status(lib, lib.seqc_model_get_output(model, name.encode(),
                                                                ctypes.byref(t)),
                                 "seqc_model_get_output(%s)" % name)
                    shape = tuple(t.shape[i] for i in range(t.rank))
                    dt = np.dtype(CODE_TO_NP[t.dtype])
                    n = int(np.prod(shape)) if shape else 1
                    buf = (ctypes.c_char * (n * dt.itemsize)).from_address(t.data) if n else b""
                    got[name] = np.frombuffer(bytes(buf), dtype=dt).reshape(shape)
                failures += check_outputs(case, got, " [C API]")
            except RuntimeError as err:
                print("FAIL %s [C API]: %s" % (case["name"], err))
                failures += 1
    finally:
        lib.seqc_model_free(model)
    return failures


#===----------------------------------------------------------------------===#
# The shared library through the bare ABI (docs/abi.md)
#===----------------------------------------------------------------------===#

def read_safetensors(p):
    import struct
    with open(p, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    types = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64,
             "F16": np.float16}
    out = {}
    for name, info in header.items():
        if name != "__metadata__":
            lo, hi = info["data_offsets"]
            out[name] = np.frombuffer(raw[8 + n + lo:8 + n + hi],
                                      dtype=types[info["dtype"]]).reshape(info["shape"]).copy()
    return out


def descriptor(a):
    """A memref descriptor {allocated, aligned, offset, sizes[r], strides[r]}."""
    r = a.ndim
    buf = (ctypes.c_int64 * (3 + 2 * r))()
    buf[0], buf[1] = a.ctypes.data, a.ctypes.data
    buf[2] = 0
    for i in range(r):
        buf[3 + i] = a.shape[i]
        buf[3 + r + i] = a.strides[i] // a.itemsize
    return buf


def run_abi(lib, cases):
    # seqc_manifest is a char array: its address is the string.
    text = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(lib, "seqc_manifest")))
    manifest = json.loads(text.decode())
    invoke = lib.seqc_invoke
    invoke.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    invoke.restype = None
    # Outputs come from the runtime's allocator (docs/abi.md), which the
    # shared library exports with the rest of the runtime.
    release = lib._mlir_memref_to_llvm_free
    release.argtypes = [ctypes.c_void_p]
    release.restype = None
    weights = read_safetensors(path(cases[0]["weights"]))
    params = [np.ascontiguousarray(weights[p["name"]]) for p in manifest["params"]]
    # What the model derives from its weights alone, computed once; the
    # first case passes no state instead, so that seqc_invoke prepares for
    # that call by itself.
    prepare, free_state = lib.seqc_prepare, lib.seqc_release
    prepare.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    prepare.restype = ctypes.c_void_p
    free_state.argtypes = [ctypes.c_void_p]
    free_state.restype = None
    param_descs = [descriptor(a) for a in params]
    param_argv = (ctypes.c_void_p * max(1, len(params)))()
    for i, d in enumerate(param_descs):
        param_argv[i] = ctypes.addressof(d)
    state = prepare(param_argv)
    failures = 0
    for index, case in enumerate(cases):
        inputs = [np.ascontiguousarray(np.load(path(case["inputs"][i["name"]])))
                  for i in manifest["inputs"]]
        args = inputs + params
        descs = [descriptor(a) for a in args]
        owned = {a.ctypes.data for a in args}
        ranks = [len(o["shape"]) for o in manifest["outputs"]]
        result = (ctypes.c_int64 * sum(3 + 2 * r for r in ranks))()
        # After the arguments: the prepared block, then (ABI version 2,
        # docs/abi.md) the arena's record, null here: each call uses an
        # arena of its own.
        argv = (ctypes.c_void_p * (3 + len(descs)))()
        argv[0] = ctypes.addressof(result)
        for i, d in enumerate(descs):
            argv[1 + i] = ctypes.addressof(d)
        argv[1 + len(descs)] = state if index else None
        invoke(argv)
        got, pos, freed = {}, 0, set()
        for o, r in zip(manifest["outputs"], ranks):
            allocated, aligned, offset = result[pos], result[pos + 1], result[pos + 2]
            sizes = [result[pos + 3 + i] for i in range(r)]
            strides = [result[pos + 3 + r + i] for i in range(r)]
            pos += 3 + 2 * r
            dt = np.dtype(DTYPES[o["dtype"]][1])
            n = int(np.prod(sizes)) if sizes else 1
            a = np.empty(sizes, dtype=dt)
            if n:
                span = sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
                base = (ctypes.c_char * (span * dt.itemsize)).from_address(
                    (aligned or 0) + offset * dt.itemsize)
                flat = np.frombuffer(bytes(base), dtype=dt)
                a[...] = np.lib.stride_tricks.as_strided(
                    flat, shape=sizes, strides=[st * dt.itemsize for st in strides])
            got[o["name"]] = a
            if allocated and allocated not in owned and allocated not in freed:
                release(allocated)
                freed.add(allocated)
        failures += check_outputs(case, got, " [ABI]")
    free_state(state)
    return failures


def run_shared(lib_path, cases):
    lib = ctypes.CDLL(os.path.abspath(lib_path))
    failures = 0
    ran = False
    if hasattr(lib, "seqc_model_load"):
        failures += run_c_api(lib, cases)
        ran = True
    if hasattr(lib, "seqc_invoke") and hasattr(lib, "seqc_manifest"):
        failures += run_abi(lib, cases)
        ran = True
    if not ran:
        print("FAIL %s exports neither seqc_model_load nor seqc_invoke/seqc_manifest" % lib_path)
        failures += 1
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--exe", help="a model executable compiled by seqc")
    what.add_argument("--shared", help="a model shared library compiled by seqc")
    ap.add_argument("--example", required=True, help="the example's name in cases.json")
    ap.add_argument("--workdir", required=True, help="where the outputs are written")
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.json"))
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of the runs")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    cases = load_cases(args.example, args.cases)
    if args.exe:
        failures = run_exe(args.exe, cases, args.workdir, args.threads)
    else:
        os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
        failures = run_shared(args.shared, cases)
    print("%s: %d cases, %d failures" % (args.example, len(cases), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
