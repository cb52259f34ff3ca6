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

def SeqExpandFastMinMax : Pass<"seq-expand-fast-min-max"> {
  let summary = "Rewrites the floating-point minima and maxima whose "
                "fast-math flags waive NaNs and signed zeros into a compare "
                "and a select";
  let description = [{
    Runs right before `arith-expand`, which rewrites every `arith.maximumf`,
    `minimumf`, `maxnumf` and `minnumf` into the form that propagates NaNs
    and orders the zeros (two compares and two selects) whatever their
    fast-math flags say: x86 then spends four instructions where one
    `vmaxps` would do. An op whose flags allow it becomes
    `select(cmpf ogt/olt (lhs, rhs), lhs, rhs)`, the compare carrying the
    op's flags, which x86's instruction selection takes as one
    `vmaxps`/`vminps` (their exact semantics) and other targets as a compare
    and a select:

    - `maximumf`/`minimumf` with `nnan` and `nsz` (their result on a NaN or
      on zeros of both signs is the only difference);
    - `maxnumf`/`minnumf` with `nnan` (they may return either zero).

    Attention's row maximum (`nnan nsz`: the maximum only shifts the exps,
    and a NaN score still reaches its row through its own exp) is the op
    this is for. Ops without these flags are left to `arith-expand`.

    ```mlir
    %m = arith.maximumf %a, %b fastmath<nnan,nsz> : vector<16xf32>
    ```

    becomes

    ```mlir
    %c = arith.cmpf ogt, %a, %b fastmath<nnan,nsz> : vector<16xf32>
    %m = arith.select %c, %a, %b : vector<16xi1>, vector<16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def SeqVerify : Pass<"seq-verify"> {
  let summary = "Verifies the IR: seqc's check at the end of each stage of "
                "its pipeline";
  let description = [{
    Runs the verifier of every op it holds and fails if one does not verify.
    `seqc` verifies the IR at the end of each stage of its pipeline (the seq
    ops lowered to linalg, the tensor transforms, bufferization, the buffer
    transforms and memory plan, the conversion to the LLVM dialect) with
    this pass, and after every pass only with `--verify-each` (as `seq-opt`
    always does): the verifier walked the whole unrolled model after each of
    the passes before layer folding, 39 to 46% of the MLIR stages' time. IR
    that does not verify is a bug of seqc; the error names the stage after
    which it was found, and `--verify-each` the pass.
  }];
  let options = [
    Option<"stage", "stage", "std::string", /*default=*/"\"\"",
           "The stage that ends here, named in the error">,
  ];
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

def SeqSplitEmptyTensors : Pass<"seq-split-empty-tensors"> {
  let summary = "Gives each layer that uses a tensor.empty its own "
                "tensor.empty, and each writer of a shared fill its own fill";
  let description = [{
    Runs right before bufferization. `tensor.empty` is pure, so CSE merges
    the empty tensors of equal shapes into one value; in a model of L
    layers, each such value is the destination of ops in every layer, the
    residual stream's among them. One-Shot Bufferize's analysis (and
    `eliminate-empty-tensors`, which runs it too) checks each in-place
    write against the reads and writes of every value aliasing it, and all
    the ops writing into one shared `tensor.empty` alias it: the analysis
    grows with the square of the depth. An empty tensor has no contents, so
    a copy per layer means the same thing and leaves each write with the
    values of its own layer.

    The layer of a use is the outermost module instance named in its op's
    location (as `seq-fold-layers` reads it; ops that name none form one
    group). The uses of one layer keep sharing one empty tensor (the ops
    that write it in turn share one buffer, and their number does not grow
    with the depth); each other layer gets a clone, put next to the
    original rather than next to its uses, so that an empty tensor defined
    outside a loop is not allocated in every iteration.

    ```mlir
    %e = tensor.empty(%n) : tensor<?x768xf32>
    %a = linalg.fill ins(%c0 : f32) outs(%e : tensor<?x768xf32>) -> ... loc("layers.0")
    %b = linalg.fill ins(%c1 : f32) outs(%e : tensor<?x768xf32>) -> ... loc("layers.1")
    ```

    becomes two `tensor.empty(%n)`, one for each layer's fill.

    CSE also merges equal fills: the zero fills of a layer's Q, K and V
    projections become one `linalg.fill` that all three contractions write
    into. One-Shot Bufferize then fills one buffer and copies it into the
    buffer of each writer but the last, and the contraction kernels, which
    fold a fill of their output into their accumulators, read those zeros
    from memory. So, first, each op that writes into a shared fill of a
    `tensor.empty` (its destination, not an input) gets its own fill of its
    own empty tensor, next to the original; the first writer keeps the
    original.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def SeqSplitDeallocs : Pass<"seq-split-deallocs"> {
  let summary = "Splits a bufferization.dealloc of distinct allocations into "
                "one dealloc per allocation";
  let description = [{
    Runs between `ownership-based-buffer-deallocation`, which frees the
    buffers of a block in one `bufferization.dealloc` at its end, and
    `buffer-deallocation-simplification`. In a model of L layers that op
    lists every intermediate buffer of the model function, and the
    simplification compares each of its memrefs with every other one to
    find those that alias nothing: a time quadratic in the depth.

    When every memref of a dealloc is the result of its own `memref.alloc`,
    no two of them alias (both are live at the dealloc), so the op is
    rewritten, as its documentation allows, into one dealloc per memref with
    the same condition and the same retained values; each retained value's
    updated ownership is the `arith.ori` of the ones the new ops return.

    ```mlir
    %o = bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>)
        if (%true, %c) retain (%r : memref<?xf32>)
    ```

    becomes

    ```mlir
    %o0 = bufferization.dealloc (%a : memref<4xf32>) if (%true)
        retain (%r : memref<?xf32>)
    %o1 = bufferization.dealloc (%b : memref<8xf32>) if (%c)
        retain (%r : memref<?xf32>)
    %o = arith.ori %o0, %o1 : i1
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

#endif // SEQC_LOWERING_COMMON_PASSES_TD
