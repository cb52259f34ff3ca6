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

def SeqTensorParallel : Pass<"seq-tensor-parallel", "::mlir::ModuleOp"> {
  let summary = "Partitions a model for Megatron-style tensor parallelism";
  let description = [{
    Rewrites the model function `@forward` (after `seq-decompose`) into the
    program each of `ranks` processes runs, holding 1/`ranks` of the
    weights of the blocks it partitions:

    - attention by heads: the query, key and value projections (and their
      biases) split by rows, each rank's `seq.split_heads`, `seq.rope`,
      KV cache (`seq.cache_write` of a state argument, split along its head
      axis) and `seq.attention` over its `heads / ranks` query heads and
      `kv_heads / ranks` key/value heads (grouped-query attention keeps
      each key/value head with its query heads), the output projection
      split by columns;
    - MLPs column-then-row: the projections feeding elementwise
      activations and products (GELU, SiLU, SwiGLU's product) split by
      rows, the projection reading them by columns.

    Each row-parallel projection (split by columns) computes a partial sum
    of the full output: a `shard.all_reduce` (sum) over the module's
    one-dimensional `shard.grid @tensor_parallel` follows it, then its
    bias, added once. Everything else (embeddings, norms, the LM head, and
    any projection whose input or weight does not fit the patterns) is
    replicated: every rank computes it in full, so every rank ends with
    the same outputs. Split parameters and state take the slice's type and
    the argument attribute `seq.shard_axis`; the module gets
    `seq.tensor_parallel` (docs/abi.md: the manifest's "shard" and
    "tensor_parallel", from which the runtime reads each rank's slice of
    the checkpoint).

    A rank count that does not divide the heads, the key/value heads or a
    projection's width is an error naming both numbers. With `remarks`,
    each partitioned block reports its split parameters and its
    all-reduce, and the model function lists what stays replicated.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "The number of ranks (processes) of the tensor-parallel group">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark per partitioned block and the replicated parameters">,
  ];
  let dependentDialects = ["::mlir::seq::SeqDialect",
                           "::mlir::shard::ShardDialect"];
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

def SeqTileAttention : Pass<"seq-tile-attention"> {
  let summary = "Tiles seq.attention into an online softmax over key tiles";
  let description = [{
    Rewrites `seq.attention` (f32, f16 or bf16, static head counts and head
    sizes) into FlashAttention's loops on tensors: the scale
    folded into Q once, an `scf.forall` over (batch, head, tile of
    `query-block` queries), and in it `scf.for` loops over tiles of
    `key-block` keys whose body is `seq.online_attention` (the running max,
    sum and accumulator of the tile's queries), then
    `seq.attention_finalize` (O / l). Extra memory is O(n), never the
    n_q x n_k scores.

    Each (query tile, key tile) pair is classified from the `#seq.mask` and
    the sizes, symbolically in n: empty tiles (no visible pair) lie outside
    the loops' bounds and are never visited; full tiles (every pair
    visible: below the causal diagonal, inside the window, the global keys)
    form one loop whose tiles carry no mask; only partial tiles (the
    diagonal, the window's edges, the tiles of global queries) carry the
    mask, with their offsets. Key padding lengths end the key range.

    Without a positional mask (decode against a cache, cross-attention),
    when the (batch, head, query tile) units are fewer than `split-units`
    at run time, the keys are split into chunks of whole key tiles, at
    least `split-min-keys` keys each, enough to make `split-units` units;
    each chunk gives a partial state and a second forall merges them
    (`seq.attention_finalize` over the chunks: flash-decoding), so that one
    query against a long cache uses every core. Extra memory: the partial
    states, at most `split-units` rows of d_v per query.

    f16 and bf16 attention is tiled in f32, Q, K and V converted to f32
    copies once per call; with `narrow-in-place` (the CPU), bf16 and f16 Q,
    K and V are read in place by the tiles instead (`seq.online_attention`
    on bf16 or f16 operands with the scale applied to the f32 scores),
    whose products widen (or, bf16, pair) them in registers and accumulate
    in f32.

    A score bias is sliced per tile (`[r, c]`, or `[c]` where every query
    of the tile has the same one) and added in it. It does not fire on a
    bias that is the same for every key (the reference lowering, which
    materializes the scores, applies), other element types or dynamic head
    counts or sizes; with `remarks` it says so, and at every tiled op which
    form, tile sizes and mask classes it chose.
  }];
  let options = [
    Option<"queryBlock", "query-block", "int64_t", /*default=*/"64",
           "Queries per tile">,
    Option<"keyBlock", "key-block", "int64_t", /*default=*/"64",
           "Keys per tile">,
    Option<"splitUnits", "split-units", "int64_t", /*default=*/"8",
           "Parallel units below which the keys of a positionless mask are "
           "split (0 or 1: never)">,
    Option<"splitMinKeys", "split-min-keys", "int64_t", /*default=*/"512",
           "Fewest keys per chunk of the split">,
    Option<"narrowInPlace", "narrow-in-place", "bool", /*default=*/"false",
           "Read bf16 and f16 Q, K and V in place in the tiles (the scale "
           "applied to the f32 scores), instead of converting them to f32 "
           "copies">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "The target multiplies bf16 pairs (vdpbf16ps): for the remark of "
           "bf16 attention read in place">,
    Option<"packKeys", "pack-keys", "bool", /*default=*/"false",
           "Pack f32 keys once per call into [d, key-block] tiles read by "
           "every query tile (`key_transposed`), when n_q exceeds a query "
           "tile">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each attention op: its form, or why it keeps "
           "the reference lowering">,
  ];
  let dependentDialects = ["::mlir::seq::SeqDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
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
