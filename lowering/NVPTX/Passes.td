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

    A loop whose body reduces rows into memory (a top-level `scf.for` that
    accumulates into one element with an f32 add, mul, min or max, reading
    only rows, indexed by every induction variable: layer norm, RMSNorm,
    softmax, not contractions; rows of 32 elements or more) runs one block
    of `block-size` threads per iteration instead (`row-reductions`, mapRowsToBlocks in Transforms.h):
    each reduction strided over the threads and combined by
    `gpu.all_reduce`, the body's other side effects in thread 0 between
    barriers.

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
    Option<"rowReductions", "row-reductions", "bool", /*default=*/"true",
           "A block per iteration of loops whose body reduces rows into "
           "memory (mapRowsToBlocks)">,
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

    With `tensor-cores`, a contraction of bf16 or f16 inputs accumulated in
    f32 (body `out + extf(a) * extf(b)`) becomes instead a kernel of
    warp-level matrix products (`nvgpu.mma.sync` m16n8k16): a block of 128
    threads per 64 x 64 output tile, the inputs' 64 x 32 and 32 x 64 tiles
    staged in workgroup memory between barriers and read into fragments by
    `nvgpu.ldmatrix`, each warp accumulating 32 x 32 outputs in registers.
    With `tf32`, f32 contractions (body `out + a * b`) take the same form
    with tf32 m16n8k8 products, their fragments read element by element.

    With `remarks`, every contraction that keeps one thread per output
    element says why.
  }];
  let options = [
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "bf16 and f16 contractions accumulated in f32 on tensor cores "
           "(nvgpu.mma.sync, sm_80 and later)">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "With tensor-cores: f32 contractions too, as tf32 products (the "
           "inputs' mantissas cut to 10 bits)">,
    Option<"tileM", "tile-m", "int64_t", /*default=*/"4",
           "Output rows per thread">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"4",
           "Output columns per thread">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on contractions that are not tiled">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def SeqNVPTXLaunchToLoops : Pass<"seq-nvptx-launch-to-loops"> {
  let summary = "Runs GPU kernels on the host: each launch becomes loops over "
                "its blocks and threads";
  let description = [{
    The interpreter of the NVPTX target (`seqc --target=nvptx
    --gpu-interpret`), in the spirit of Triton's: every `gpu.launch` becomes
    `scf.for` loops over its grid (z, y, x, outermost first) and, inside,
    over the threads of a block, with the block and thread ids replaced by
    the induction variables and the dimensions by the launch's operands.

    A kernel whose threads never communicate (the kernels
    `seq-nvptx-map-to-gpu` builds) runs its threads one after the other,
    each running the whole body; their private buffers (`memref.alloca` of
    static shape) are allocated once, before the loops, and serve each
    thread in turn.

    A kernel whose threads communicate runs them together: its body is cut
    into phases at each `gpu.barrier`, `gpu.shuffle`, `gpu.subgroup_reduce`
    and `gpu.all_reduce` (an operation attribute, not a region), and each
    phase is a loop over the block's threads, so that every thread ends a
    phase before any starts the next.
    - A value defined in one phase and used in another is computed again
      there if its op is pure, else kept in a buffer with one element per
      thread; private buffers get a slot per thread.
    - Workgroup attributions are one buffer, which each block in turn uses.
    - A shuffle reads the source lane's value with PTX's `shfl.sync`
      semantics (the clamp that `convert-gpu-to-nvvm` passes: an invalid or
      missing source lane gives the thread its own value and `false`); a
      subgroup reduction combines its warp's 32 lanes, an all-reduce the
      block's threads, in lane order.
    - An `scf.for` or `scf.if` that holds such ops runs once for the block:
      its bounds or condition are thread 0's, and a check that every thread
      of the block computes the same ends the program otherwise (a barrier
      under divergent control flow), with a message on standard error.
    - `nvgpu.device_async_copy` (cp.async) into a workgroup attribution
      copies its elements at once (zeros past `srcElements`);
      `nvgpu.device_async_create_group` and `nvgpu.device_async_wait` count
      each thread's groups and those complete, for the checks below.
    - Other ops holding them (`scf.while`, `scf.parallel`), values that
      cannot be kept per thread (a memref from a load), and ops of the gpu,
      nvgpu and nvvm dialects the interpreter does not emulate are errors.

    Two checks expose a missing barrier or wait:
    - `check-races` (on by default) keeps, for each element of workgroup
      memory, the last thread that wrote it and the threads that read it
      since the block's last barrier (warp-level ops do not end that
      stretch); a thread that reads what another wrote, or writes what
      another read or wrote, since their last barrier ends the program
      with a message on standard error naming the access's location. It
      checks `memref.load`, `memref.store`, `nvgpu.ldmatrix` and the
      emulated copies on the attributions themselves, not accesses through
      views or vector loads. It also keeps each element's last asynchronous
      copy: an access before the issuing thread's wait covers its group
      ends the program too.
    - `reverse-threads` runs each phase's threads from the last to the
      first: a kernel missing a barrier reads another thread's data before
      or after it is written, depending on the order.

    It lets machines without a GPU check the GPU target's kernels
    numerically against the CPU reference. What it cannot check is the code
    after the mapping: NVVM, libdevice, ptxas and the driver.
  }];
  let options = [
    Option<"reverseThreads", "reverse-threads", "bool", /*default=*/"false",
           "Run each phase's threads from the last to the first">,
    Option<"checkRaces", "check-races", "bool", /*default=*/"true",
           "Abort when two threads of a block access an element of "
           "workgroup memory between the same barriers, one of them writing">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def SeqNVPTXLowerMmaBF16
    : Pass<"seq-nvptx-lower-mma-bf16", "::mlir::gpu::GPUModuleOp"> {
  let summary = "bf16 warp-level matrix products as NVVM's mma.sync";
  let description = [{
    Runs on the outlined kernels, before `convert-nvgpu-to-nvvm`, which
    lowers f16 and tf32 `nvgpu.mma.sync` but not bf16: each bf16 m16n8k16 or
    m16n8k8 product with f32 accumulators becomes `nvvm.mma.sync` (PTX
    `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`), each pair of bf16
    elements of a fragment register packed into an i32.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def SeqNVPTXLowerAllReduce
    : Pass<"seq-nvptx-lower-all-reduce", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Block-wide reductions of the kernels as warp shuffles and "
                "workgroup memory";
  let description = [{
    Runs on the outlined kernels, before `convert-gpu-to-nvvm`: every
    `gpu.all_reduce` (`seq-nvptx-map-to-gpu`'s rows per block) becomes MLIR's
    all-reduce rewrite (`populateGpuAllReducePatterns`): a butterfly of
    `gpu.shuffle`s within each warp, each warp's value through a workgroup
    buffer added to the kernel, a barrier, and a second butterfly in the
    first warp, whose result every thread reads after a second barrier. An
    all-reduce it cannot rewrite is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::memref::MemRefDialect",
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

def SeqNVPTXAsyncLaunches
    : Pass<"seq-nvptx-async-launches", "::mlir::func::FuncOp"> {
  let summary = "Queues a host function's kernel launches on one stream and "
                "waits for them only where the host needs their results";
  let description = [{
    Runs on the host functions after `gpu-kernel-outlining`, right before the
    host's conversion to LLVM. A synchronous `gpu.launch_func` lowers to a
    stream of its own and a wait for it; this pass makes the launches
    asynchronous instead, on one stream: the token of a `gpu.wait async`
    opened before the first of them, which every launch of the stream takes
    as its dependency (`gpu-to-llvm` launches an async `gpu.launch_func` on
    the stream of its dependency, so they run in program order). The host
    waits for the stream (`gpu.wait`, which also releases it) only:

    - before host code that reads a buffer a kernel of the function writes
      (read from the kernel's body), or writes or frees one a kernel uses
      (the runtime's cache may give a freed block to another thread at
      once). Buffers are told apart by their roots through view-like ops:
      the function's arguments (distinct buffers: the runtime's copies of
      the inputs, the weights, the caches, the arena) and allocations; an
      access to anything else, a call or an op of unknown effects waits.
      Allocations and `cf.assert` do not wait;
    - before the terminator of the block that opened it (the function's
      return).

    Ops that hold launches and no such host code (`scf.if` guards of
    launches that may be empty, host loops of launches) queue theirs on the
    same stream. One that holds both waits first, and each of its blocks
    queues on a stream of its own.

    The tokens of the launches are not threaded through `scf.if` results or
    loop arguments: `gpu-to-llvm` takes a token that reaches a `gpu.wait`
    through a block argument for an event, not a stream. Upstream's
    `gpu-async-region` waits at the end of every region that launches,
    which leaves every guarded launch synchronous.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // SEQC_LOWERING_NVPTX_PASSES_TD
