"""IREE (iree-base-compiler/-runtime from PyPI) on one work: the same matmul
or attention written in MLIR's linalg on tensors, compiled for IREE's CPU
backend (llvm-cpu, the host's CPU) and run on its local-task driver.

  iree_peer.py --work JSON --size JSON [--threads 2]

Attention is given to IREE as the plain sequence an importer produces from
softmax(Q K^T * s [masked]) V: a contraction, linalg.softmax, a contraction;
IREE fuses and tiles what its pipeline recognizes. (Its own
iree_linalg_ext.attention op would be the direct route, but in IREE 3.13 its
textual form rejects the indexing_maps that older IREE tests spell, so the
harness does not rely on it.)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import parse_args, report, time_runs, unsupported  # noqa: E402

import numpy as np  # noqa: E402

try:
    import iree.compiler as ireec
    import iree.runtime as ireert
except ImportError as e:
    unsupported(f"IREE is not installed: {e}")


def t(shape):
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def matmul_mlir(g, m, n, k):
    """C[g, m, n] = A[g, m, k] B[g, n, k]^T."""
    a, b, c = t([g, m, k]), t([g, n, k]), t([g, m, n])
    return f"""
func.func @main(%a: {a}, %b: {b}) -> {c} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {c}
  %f = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}
  %r = linalg.generic {{
      indexing_maps = [affine_map<(g, m, n, k) -> (g, m, k)>,
                       affine_map<(g, m, n, k) -> (g, n, k)>,
                       affine_map<(g, m, n, k) -> (g, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%a, %b : {a}, {b}) outs(%f : {c}) {{
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  }} -> {c}
  return %r : {c}
}}"""


def attention_plain_mlir(bh, nq, nk, d, scale, causal, window):
    q, k, o, s = t([bh, nq, d]), t([bh, nk, d]), t([bh, nq, d]), t([bh, nq, nk])
    masked = causal or window > 0
    conds = []
    if causal:
        conds.append("%c = arith.cmpi ugt, %j, %i : index\n      %bad0 = arith.ori %c, %false : i1")
    else:
        conds.append("%bad0 = arith.constant false")
    if window > 0:
        conds.append(f"""%dij = arith.subi %i, %j : index
      %dji = arith.subi %j, %i : index
      %ad = arith.maxsi %dij, %dji : index
      %w = arith.constant {window} : index
      %far = arith.cmpi sge, %ad, %w : index
      %bad = arith.ori %bad0, %far : i1""")
    else:
        conds.append("%bad = arith.ori %bad0, %false : i1")
    mask_body = "\n      ".join(conds)
    mask = f"""
  %sm = linalg.generic {{
      indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel"]}}
      outs(%sc : {s}) {{
    ^bb0(%x: f32):
      %false = arith.constant false
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      {mask_body}
      %ninf = arith.constant 0xFF800000 : f32
      %y = arith.select %bad, %ninf, %x : f32
      linalg.yield %y : f32
  }} -> {s}""" if masked else ""
    softmax_in = "%sm" if masked else "%sc"
    return f"""
func.func @main(%q: {q}, %k: {k}, %v: {k}) -> {o} {{
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant {scale!r} : f32
  %es = tensor.empty() : {s}
  %fs = linalg.fill ins(%zero : f32) outs(%es : {s}) -> {s}
  %sc = linalg.generic {{
      indexing_maps = [affine_map<(b, i, j, c) -> (b, i, c)>,
                       affine_map<(b, i, j, c) -> (b, j, c)>,
                       affine_map<(b, i, j, c) -> (b, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%q, %k : {q}, {k}) outs(%fs : {s}) {{
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %ps = arith.mulf %p, %scale : f32
      %r = arith.addf %acc, %ps : f32
      linalg.yield %r : f32
  }} -> {s}
{mask}
  %ep = tensor.empty() : {s}
  %p = linalg.softmax dimension(2) ins({softmax_in} : {s}) outs(%ep : {s}) -> {s}
  %eo = tensor.empty() : {o}
  %fo = linalg.fill ins(%zero : f32) outs(%eo : {o}) -> {o}
  %out = linalg.generic {{
      indexing_maps = [affine_map<(b, i, c, j) -> (b, i, j)>,
                       affine_map<(b, i, c, j) -> (b, j, c)>,
                       affine_map<(b, i, c, j) -> (b, i, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%p, %v : {s}, {k}) outs(%fo : {o}) {{
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  }} -> {o}
  return %out : {o}
}}"""


def compile_mlir(text):
    return ireec.compile_str(text, target_backends=["llvm-cpu"],
                             extra_args=["--iree-llvmcpu-target-cpu=host"])


def main():
    args = parse_args(__doc__)
    work, dims = args.work, args.size["dims"]
    name, h = work["name"], work["hyper"]
    rng = np.random.default_rng(0)
    note = ""
    if name == "linear":
        shapes = [(1, dims["b"] * dims["m"], h["in_features"]), (1, h["out_features"], h["in_features"])]
        vmfb = compile_mlir(matmul_mlir(1, dims["b"] * dims["m"], h["out_features"], h["in_features"]))
    elif name == "bmm":
        shapes = [(dims["g"], dims["m"], h["kdim"]), (dims["g"], dims["n"], h["kdim"])]
        vmfb = compile_mlir(matmul_mlir(dims["g"], dims["m"], dims["n"], h["kdim"]))
    elif name in ("attention_full", "attention_causal", "attention_window", "attention_decode"):
        bh = dims["b"] * h["heads"]
        nq, nk, d = dims.get("nq", dims.get("n")), dims.get("nk", dims.get("n")), h["d"]
        causal, window = h.get("causal", False), h.get("window", 0)
        scale = float(1.0 / np.sqrt(d))
        shapes = [(bh, nq, d), (bh, nk, d), (bh, nk, d)]
        vmfb = compile_mlir(attention_plain_mlir(bh, nq, nk, d, scale, causal, window))
        note = "linalg contraction + softmax + contraction"
    else:
        unsupported(f"no IREE formulation of '{name}' in this harness")

    ireert.flags.parse_flags(f"--task_topology_max_group_count={args.threads}")
    config = ireert.Config("local-task")
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
    fn = ctx.modules.module["main"]
    inputs = [ireert.asdevicearray(config.device, rng.standard_normal(s, dtype=np.float32))
              for s in shapes]
    min_ms, med_ms, runs = time_runs(lambda: fn(*inputs).to_host(), args.min_time)
    try:
        from importlib.metadata import version
        v = version("iree-base-compiler")
    except Exception:
        v = ""
    report(min_ms, med_ms, runs, f"IREE {v}".strip(), note)


if __name__ == "__main__":
    main()
