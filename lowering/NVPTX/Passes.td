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
    - buffers of static shape allocated inside the loop body become private
      (`memref.alloca`) per thread;
    - constant globals the body reads (`memref.get_global`, and views of
      them) are read inside the kernel, from the copy in the GPU module.

    `memref.copy` becomes an `scf.parallel` of loads and stores first, so
    that copies between buffers run on the GPU too.

    What cannot run in a kernel stays on the host, which reads the managed
    buffers directly (docs/runtime.md): loops with results (reductions of
    `scf.parallel`), bodies allocating buffers of dynamic shape, and loop
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

def SeqNVPTXMergeKernelModules
    : Pass<"seq-nvptx-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Puts every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` creates one `gpu.module` per kernel. This pass
    moves them all into one module, `@seqc_kernels`: one PTX module per
    model, compiled and loaded once, with one copy of each constant global
    the kernels read. Each kernel takes the name of the module it came from,
    which is unique, and every `gpu.launch_func` is updated.
  }];
}

def SeqNVPTXCheckLowered
    : Pass<"seq-nvptx-check-lowered", "::mlir::ModuleOp"> {
  let summary = "Checks that only LLVM dialect ops and GPU binaries remain";
  let description = [{
    The last pass of the NVPTX pipeline: the host module may only hold LLVM
    dialect ops, the `gpu.binary` of the kernels and `gpu.launch_func` ops on
    LLVM values (the translation to LLVM IR embeds the binary with the code
    that loads it, and turns each launch into calls of the runtime's `mgpu*`
    functions); anything
    else is an error at the op, instead of a translation failure later.
  }];
}

#endif // SEQC_LOWERING_NVPTX_PASSES_TD
