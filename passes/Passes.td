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

def SeqReassociateLinearAttention
    : Pass<"seq-reassociate-linear-attention"> {
  let summary = "Chooses the association of linear attention by its cost";
  let description = [{
    Linear attention written with its n x m score matrix,

    ```
    S = phi(Q) @ phi(K)^T            // [..., n, m], O(n m d)
    y = (S @ V) / (sum(S, -1) + eps) // O(n m e) and O(n m)
    ```

    is rewritten into `phi(Q) @ (phi(K)^T @ V)` and
    `phi(Q) @ sum(phi(K), -2)^T`, O((n + m) d e), when that costs fewer
    multiply-adds: every `S = A @ B^T` (batched, static feature sizes) whose
    uses are all products `S @ V` and row sums of S (keepdim) is a candidate.
    With static n and m the cheaper form is chosen at compile time; with a
    symbolic n or m both are emitted, in the branches of an `scf.if` on the
    costs evaluated at run time. With `remarks`, each candidate says which
    form was chosen and the costs compared. It does not fire when S has any
    other use (a softmax: that is softmax attention).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark with the form chosen at each candidate">,
  ];
  let dependentDialects = ["::mlir::seq::SeqDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // SEQC_PASSES_PASSES_TD
