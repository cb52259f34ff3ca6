"""ONNX Runtime or OpenVINO on one work: torch_peer.py's eager formulation
exported to ONNX (torch.onnx.export, the TorchScript-based exporter,
dynamo=False), then run by the chosen runtime on the CPU.

  onnx_peer.py --work JSON --size JSON [--threads 2] --mode onnxruntime|openvino

The activations are the graph's inputs and the weights its initializers, so
that neither runtime can fold the computation away. The exported file is
checked against eager PyTorch on the same inputs once before timing.

onnxruntime: an InferenceSession on the CPU execution provider with all its
             graph optimizations (ORT_ENABLE_ALL), sequential execution,
             intra_op_num_threads = --threads, inter_op_num_threads = 1.
openvino:    the same ONNX file read by OpenVINO and compiled for its CPU
             plugin with INFERENCE_NUM_THREADS = --threads, one stream, the
             LATENCY hint, and INFERENCE_PRECISION_HINT = f32 (on a CPU with
             AVX512_BF16 or AMX OpenVINO would otherwise compute these f32
             works in bf16).

--threads 0 leaves each runtime's own default thread count.

The exported files are cached under $SEQC_ONNX_CACHE (default
~/.cache/seqc/onnx), keyed by the work, the size, torch's version and this
script, so that each fresh process does not export GPT-2 again (an export
replaces the older ones of its work and size).
"""

import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ONNX_WORKS, parse_args, report, time_runs, unsupported  # noqa: E402

import numpy as np  # noqa: E402

try:
    import torch
except ImportError as e:
    unsupported(f"torch is not installed (it exports the ONNX file): {e}")
import torch_peer  # noqa: E402

LOOPS = {"selective_scan", "s4", "linear_attention_causal", "mamba_block"}


def applies(name):
    if name in ONNX_WORKS:
        return None
    if name in LOOPS:
        return (f"torch_peer.py's '{name}' is a Python loop over time steps; exported, it "
                f"would be one unrolled node chain per step, not a formulation anyone deploys")
    if name in ("linear_bf16", "linear_f16"):
        return ("this harness exports the f32 works only (ONNX Runtime's CPU provider has no "
                "bf16 MatMul kernel)")
    if name.startswith("matvec_"):
        return "the quantized weight formats (q8_0, q4_0, int8 blocks) have no ONNX formulation here"
    return f"no ONNX export of '{name}' in this harness"


def closure_modules(obj, found, seen):
    """The nn.Modules that obj (a function, list or dict) reaches through its
    closure cells, so that their weights export as parameters."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.nn.Module):
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            closure_modules(x, found, seen)
    elif isinstance(obj, dict):
        for x in obj.values():
            closure_modules(x, found, seen)
    elif callable(obj) and getattr(obj, "__closure__", None):
        for cell in obj.__closure__:
            try:
                closure_modules(cell.cell_contents, found, seen)
            except ValueError:  # an empty cell
                pass


class Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        found = []
        closure_modules(fn, found, set())
        self.held = torch.nn.ModuleList(found)

    def forward(self, *xs):
        return self.fn(*xs)


def export(work, size, fn, inputs):
    cache = os.environ.get("SEQC_ONNX_CACHE", os.path.expanduser("~/.cache/seqc/onnx"))
    me = os.path.abspath(__file__)
    key = json.dumps([work, size, torch.__version__, open(me).read(),
                      open(torch_peer.__file__).read()], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    path = os.path.join(cache, f"{work['name']}-{size['label'].replace('=', '')}-{digest}.onnx")
    if os.path.exists(path):
        return path
    os.makedirs(cache, exist_ok=True)
    tmp = path + f".{os.getpid()}.tmp"
    kwargs = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    names = [f"in{i}" for i in range(len(inputs))]
    torch.onnx.export(Wrap(fn), tuple(inputs), tmp, input_names=names, output_names=["out"],
                      opset_version=17, do_constant_folding=True, **kwargs)
    os.replace(tmp, path)
    # Exports of this (work, size) from an older torch or harness are stale.
    prefix = os.path.basename(path)[:-len(f"-{digest}.onnx")] + "-"
    for old in os.listdir(cache):
        if old.startswith(prefix) and old.endswith(".onnx") and old != os.path.basename(path):
            os.remove(os.path.join(cache, old))
    return path


def onnxruntime_runner(path, threads, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if threads > 0:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return (lambda: sess.run(None, feeds)[0]), f"onnxruntime {ort.__version__}"


def openvino_runner(path, threads, feeds):
    import openvino as ov
    core = ov.Core()
    config = {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1",
              "INFERENCE_PRECISION_HINT": "f32"}
    if threads > 0:
        config["INFERENCE_NUM_THREADS"] = str(threads)
    compiled = core.compile_model(core.read_model(path), "CPU", config)
    req = compiled.create_infer_request()
    inputs = list(feeds.values())

    def run():
        req.infer(inputs, share_inputs=True)
        return req.get_output_tensor(0).data
    return run, f"openvino {ov.get_version().split('-')[0]}"


def main():
    args = parse_args(__doc__)
    if args.mode not in ("onnxruntime", "openvino"):
        unsupported(f"mode '{args.mode}': onnxruntime or openvino")
    try:
        __import__(args.mode)
    except ImportError as e:
        unsupported(f"{args.mode} is not installed: {e}")
    work, size = args.work, args.size
    reason = applies(work["name"])
    if reason:
        unsupported(reason)
    torch.manual_seed(0)
    fn = torch_peer.make(work, size["dims"], "eager")
    inputs = list(fn.__defaults__ or ())
    if not inputs:
        unsupported(f"torch_peer.py's '{work['name']}' takes no inputs to export")
    try:
        path = export(work, size, fn, inputs)
    except Exception as e:
        unsupported(f"torch.onnx.export failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    feeds = {f"in{i}": x.numpy() for i, x in enumerate(inputs)}
    run, version = (onnxruntime_runner if args.mode == "onnxruntime" else openvino_runner)(
        path, args.threads, feeds)
    # The exported graph computes what eager PyTorch computes.
    with torch.inference_mode():
        want = fn().numpy()
    got = np.asarray(run())
    scale = max(float(np.abs(want).max()), 1.0)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-3 * scale):
        err = float(np.abs(got - want).max()) if got.shape == want.shape else float("nan")
        unsupported(f"{args.mode}'s result differs from eager PyTorch (shape {got.shape} vs "
                    f"{want.shape}, max abs error {err:.3g})")
    min_ms, med_ms, runs = time_runs(run, args.min_time)
    report(min_ms, med_ms, runs, version, "torch.onnx.export of torch_peer.py's eager form")


if __name__ == "__main__":
    main()
