//===- Passes.td - seq dialect transformation passes -------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_PASSES_PASSES_TD
#define SEQC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeqDecompose : Pass<"seq-decompose"> {
  let summary = "Decomposes composite seq ops into primitive seq ops";
  let description = [{
    Rewrites `seq.multi_head_attention` into the projections, head splitting,
    rotary embedding, ALiBi slopes, `seq.attention`, head merging and output
    projection it stands for. Later stages (the target's seq-level
    transforms, convert-seq-to-linalg) work on the primitive ops only.
  }];
  let dependentDialects = ["::mlir::seq::SeqDialect"];
}

def SeqRaiseAttention : Pass<"seq-raise-attention"> {
  let summary = "Raises attention written as matrix products to seq.attention";
  let description = [{
    Rewrites `softmax(q @ k^T * s [masked]) @ v` spelled out with seq ops,

    ```mlir
    %s = seq.matmul %q, %k transpose_rhs : ...
    %t = seq.div %s, %c : ...                // or seq.mul by a constant; optional
    %m = seq.apply_mask %t {mask = ...} : ...  // optional; before or after the scale
    %p = seq.softmax %m axis -1 : ...
    %o = seq.matmul %p, %v : ...
    ```

    into `seq.attention %q, %k, %v {scale = 1/c (or c), mask = ...}` with the
    mask's key lengths, so that the textbook formula (`examples/attention.seq`,
    the multi-head form of `examples/mha.seq`) takes the fused attention of
    its target. Operands are `[b, h, n, d]` (k and v with h heads or one
    shared head) or `[b, n, d]`, viewed as one head. It does not fire when an
    intermediate (the scores, the weights) has another use, when the softmax
    is not over the keys, when the scale is not a positive constant, or when
    the batch sizes of q, k and v may differ (a broadcast). Rows the mask
    hides entirely give zeros either way.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each raised attention">,
  ];
  let dependentDialects = ["::mlir::seq::SeqDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // SEQC_PASSES_PASSES_TD
