//===- Passes.td - passes of the NVPTX target --------------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_NVPTX_PASSES_TD
#define SEQC_LOWERING_NVPTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeqNVPTXMapToGPU : Pass<"seq-nvptx-map-to-gpu"> {
  let summary = "Turns the outermost parallel loops into GPU kernel launches";
  let description = [{
    Runs on buffers, after linalg became `scf.parallel` nests. Every
    outermost `scf.parallel` (one that no other `scf.parallel` encloses)
    becomes one `gpu.launch`:

    - its iteration space is linearized, innermost dimension fastest, so that
      consecutive threads of a warp touch consecutive elements of row-major
      buffers (coalesced accesses), and cut into blocks of `block-size`
      threads; each thread runs one iteration, guarded against the partial
      last block; a launch whose iteration space is empty is skipped;
    - `scf.parallel` loops nested inside run sequentially in their thread
      (the iterations of fused kernels such as an attention tile);
    - buffers allocated inside the loop body become private (`memref.alloca`)
      to each thread; one of dynamic shape whose sizes have constant upper
      bounds (a tile clipped at an edge, `minui(n - i, 64)`) is a
      `memref.view` of a private byte buffer of its largest size, at most
      64 KiB;
    - constant globals the body reads (`memref.get_global`, and views of
      them) are read inside the kernel, from the copy in the GPU module.

    `memref.copy` becomes an `scf.parallel` of loads and stores first, so
    that copies between buffers run on the GPU too, and adjacent
    `scf.parallel` loops of the same iteration space are fused where the
    second reads what the first wrote only at the same iteration (scf's
    naive fusion; a fresh allocation aliases nothing but its views): one
    kernel instead of two, such as the copy of an initialized buffer and
    the reduction into it.

    What cannot run in a kernel stays on the host, which reads the managed
    buffers directly (docs/runtime.md): loops with results (reductions of
    `scf.parallel`), bodies allocating buffers without a bounded size, and loop
    nests without any parallel loop (a reduction of a whole tensor to one
    value). With `remarks`, each such loop gets a remark at its op's source
    location.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on loops that stay on the host">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def SeqNVPTXTileContractions : Pass<"seq-nvptx-tile-contractions"> {
  let summary = "Register tiles for contractions on the GPU: each thread "
                "computes a tile of outputs";
  let description = [{
    Runs on buffers, before `convert-linalg-to-parallel-loops`. A contraction
    (a linalg op of two inputs with one reduction dimension, at least one
    row (m) and one column (n) dimension and projected-permutation maps:
    `linalg.matmul`, `linalg.batch_matmul`, the generics of `x @ W^T`, with
    mixed-precision bodies such as bf16 inputs accumulated in f32) that is
    not already inside a parallel loop becomes an `scf.parallel` over its
    parallel dimensions, whose innermost m and n dimensions advance by
    `tile-m` and `tile-n`. Each iteration, one GPU thread once
    seq-nvptx-map-to-gpu has run, loads its `tile-m x tile-n` outputs, keeps
    them as loop-carried values of the reduction loop (registers), reads
    `tile-m` elements of the first input and `tile-n` of the second per step
    for `tile-m * tile-n` applications of the op's body, and stores the
    results. The tiles on the edges read clamped rows and columns and store
    only the outputs that exist. The n tiles are the innermost parallel
    dimension, so consecutive threads take consecutive column tiles.

    With `remarks`, every contraction that keeps one thread per output
    element says why.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"4",
           "Output rows per thread">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"4",
           "Output columns per thread">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on contractions that are not tiled">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def SeqNVPTXLaunchToLoops : Pass<"seq-nvptx-launch-to-loops"> {
  let summary = "Runs GPU kernels on the host: each launch becomes loops over "
                "its blocks and threads";
  let description = [{
    The interpreter of the NVPTX target (`seqc --target=nvptx
    --gpu-interpret`), in the spirit of Triton's: every `gpu.launch` becomes
    `scf.for` loops over its grid and its blocks (z, y, x, outermost first),
    whose body is the launch's body with the block and thread ids replaced
    by the induction variables and the dimensions by the launch's operands.
    The threads' private buffers (`memref.alloca` of static shape) are
    allocated once, before the loops, and serve each thread in turn.

    This is exact for the kernels `seq-nvptx-map-to-gpu` builds, whose
    threads never communicate (no barriers, shared memory or shuffles): it
    lets machines without a GPU check the GPU target's strategy and mapping
    numerically against the CPU reference. A launch whose body holds a
    barrier, a shuffle or workgroup memory is an error.
  }];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def SeqNVPTXMergeKernelModules
    : Pass<"seq-nvptx-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Puts every outlined kernel into one gpu.module, each "
                "distinct kernel once";
  let description = [{
    `gpu-kernel-outlining` creates one `gpu.module` per kernel. This pass
    moves them all into one module, `@seqc_kernels`: one PTX module per
    model, compiled and loaded once, with one copy of each constant global
    the kernels read. Each kernel takes the name of the module it came from,
    which is unique, and every `gpu.launch_func` is updated. Kernels that
    are identical but for their names (the same op in every layer of a
    model) are kept once, and their launches launch that one: GPT-2 small's
    12 layers compile their kernels once.
  }];
}

#endif // SEQC_LOWERING_NVPTX_PASSES_TD
