//===- Passes.td - buffer passes shared by the targets -----*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_COMMON_PASSES_TD
#define SEQC_LOWERING_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeqLowerDynamicExpandShape
    : Pass<"seq-lower-dynamic-expand-shape"> {
  let summary = "Rewrites memref.expand_shape ops that split one dynamic "
                "dimension into several into memref.reinterpret_cast";
  let description = [{
    MLIR 22's `expand-strided-metadata` crashes (a null attribute in
    `memref.reinterpret_cast`'s builder) on an expand_shape whose
    reassociation group has more than one dynamic result dimension, such as
    the `[b * n, d] -> [b, n, d]` reshapes that the seq lowering produces
    around every projection. This pass performs the same expansion for those
    ops: the source's base, offset and strides come from
    `memref.extract_strided_metadata`, the sizes from `output_shape`, and the
    strides inside a group are the source stride times the sizes of the
    dimensions to its right. Static values stay static, so the result type
    (and its layout) are those of the expand_shape. Other expand_shape ops are
    left to `expand-strided-metadata`.

    ```mlir
    %e = memref.expand_shape %x [[0, 1], [2]] output_shape [%b, %n, 64]
        : memref<?x64xf32> into memref<?x?x64xf32>
    ```

    becomes

    ```mlir
    %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %x
    %s0 = arith.muli %n, %c64 : index
    %e = memref.reinterpret_cast %base to offset: [0],
        sizes: [%b, %n, 64], strides: [%s0, 64, 1]
        : memref<f32> to memref<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def SeqCheckLowered : Pass<"seq-check-lowered", "::mlir::ModuleOp"> {
  let summary = "Fails if an op without an LLVM IR translation survives";
  let description = [{
    The last pass of every target's lowering. The conversions to the LLVM
    dialect are partial: an op that no pattern handled stays where it was,
    and would only be reported by the translation to LLVM IR, or not at all
    by `seqc --emit=llvm-mlir`. This pass names the first op that survived,
    with its location, so that a gap in the lowering is an error at the
    point it appears. What the translation accepts: `llvm` and `omp` ops
    (and `builtin.module`), and the NVPTX target's kernels, `gpu.binary`
    (the embedded module, with the code that loads it) and `gpu.launch_func`
    on LLVM values (calls of the runtime's `mgpu*` functions).
  }];
}

#endif // SEQC_LOWERING_COMMON_PASSES_TD
