//===- SeqOps.td - seq dialect operations ------------------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQ_OPS_TD
#define SEQ_OPS_TD

include "dialect/Seq/IR/SeqBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Integer operands (token ids, targets, padding lengths). Ranked, like every
// other operand: the verifiers check their shapes against the float operands.
defvar IntTensor = RankedTensorOf<[AnySignlessInteger]>;

//===----------------------------------------------------------------------===//
// Elementwise arithmetic with NumPy broadcasting
//===----------------------------------------------------------------------===//

class Seq_BinaryOp<string mnemonic, string what>
    : Seq_Op<mnemonic, [Pure]> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = [{
    Computes `lhs }] # what # [{ rhs` elementwise. Shapes broadcast as in
    NumPy and PyTorch: trailing dimensions are aligned and each pair must be
    equal or one of them 1. A rank-0 operand is a scalar. Both operands and
    the result have the same element type, and the result has the broadcast
    shape (a dynamic size against a static size other than 1 broadcasts to
    the static size).

    ```mlir
    %0 = seq.}] # mnemonic # [{ %a, %b : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$lhs,
                       RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$rhs);
  let results = (outs RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_AddOp : Seq_BinaryOp<"add", "+">;
def Seq_SubOp : Seq_BinaryOp<"sub", "-">;
def Seq_MulOp : Seq_BinaryOp<"mul", "*">;
def Seq_DivOp : Seq_BinaryOp<"div", "/">;
def Seq_MaxOp : Seq_BinaryOp<"max", "max">;
def Seq_MinOp : Seq_BinaryOp<"min", "min">;

def Seq_CompareOp : Seq_Op<"compare", [Pure]> {
  let summary = "elementwise comparison with broadcasting, as 1 or 0";
  let description = [{
    Compares `lhs` and `rhs` elementwise with `predicate` (`eq`, `ne`, `lt`,
    `le`, `gt`, `ge`; signed for integers) and gives 1 where it holds and 0
    elsewhere, in the operands' element type: `torch.lt(a, b).to(a.dtype)`.
    A comparison with NaN holds only for `ne`, as in IEEE 754 and PyTorch.
    Shapes broadcast as in the arithmetic ops.

    ```mlir
    %0 = seq.compare eq, %mask, %zero : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
    ```
  }];
  let arguments = (ins Seq_ComparePredicate:$predicate,
                       RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$lhs,
                       RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$rhs);
  let results = (outs RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_CastOp : Seq_Op<"cast", [Pure]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts every element to the result's element type, as PyTorch's
    `x.to(dtype)`: floats round to nearest even when narrowing (exact when
    widening), integers convert to floats as signed values, floats convert
    to integers truncating toward zero (NaN and values out of range are
    undefined), integers sign-extend or truncate. The shape is unchanged.

    ```mlir
    %0 = seq.cast %mask : tensor<?x?xi32> to tensor<?x?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$input);
  let results = (outs RankedTensorOf<[AnyFloat, AnySignlessInteger]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary math and activations
//===----------------------------------------------------------------------===//

class Seq_UnaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : Seq_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # formula;
  let description = [{
    Applies `}] # formula # [{` to every element.

    ```mlir
    %0 = seq.}] # mnemonic # [{ %x : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Seq_ExpOp : Seq_UnaryOp<"exp", "exp(x)">;
def Seq_LogOp : Seq_UnaryOp<"log", "log(x)">;
def Seq_SqrtOp : Seq_UnaryOp<"sqrt", "sqrt(x)">;
def Seq_RsqrtOp : Seq_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def Seq_NegOp : Seq_UnaryOp<"neg", "-x">;
def Seq_AbsOp : Seq_UnaryOp<"abs", "|x|">;
def Seq_TanhOp : Seq_UnaryOp<"tanh", "tanh(x)">;
def Seq_SigmoidOp : Seq_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Seq_ReluOp : Seq_UnaryOp<"relu", "max(x, 0)">;
def Seq_SiluOp : Seq_UnaryOp<"silu", "x * sigmoid(x)">;

def Seq_GeluOp : Seq_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none` computes the exact `x * Phi(x) = 0.5 x (1 + erf(x /
    sqrt(2)))`; `approximate = tanh` computes `0.5 x (1 + tanh(sqrt(2/pi) (x +
    0.044715 x^3)))`, as `torch.nn.functional.gelu` does.

    ```mlir
    %0 = seq.gelu %x : tensor<?x256xf32>
    %1 = seq.gelu %x approximate tanh : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
      DefaultValuedAttr<Seq_GeluApproximation,
                        "::mlir::seq::GeluApproximation::none">:$approximate);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input (`approximate` $approximate^)? attr-dict `:` type($input)
  }];
}

def Seq_EluOp : Seq_Op<"elu", [Pure, SameOperandsAndResultType]> {
  let summary = "exponential linear unit";
  let description = [{
    `x` for `x > 0`, `alpha * (exp(x) - 1)` otherwise.

    ```mlir
    %0 = seq.elu %x {alpha = 1.0 : f64} : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Seq_SoftplusOp : Seq_Op<"softplus", [Pure, SameOperandsAndResultType]> {
  let summary = "smooth approximation of relu";
  let description = [{
    `log(1 + exp(beta * x)) / beta`, and `x` where `beta * x > threshold`
    (for numerical stability), as `torch.nn.functional.softplus`. `beta` is
    positive.

    ```mlir
    %0 = seq.softplus %x : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       DefaultValuedAttr<F64Attr, "20.0">:$threshold);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Seq_DropoutOp : Seq_Op<"dropout", [Pure, SameOperandsAndResultType]> {
  let summary = "dropout (the identity at inference)";
  let description = [{
    Zeroes elements with probability `rate` (in `[0, 1)`) during training and
    rescales the rest by `1 / (1 - rate)`. seqc compiles inference, where dropout is the
    identity; the op keeps the rate so that the model text states it, and
    canonicalization removes it.

    ```mlir
    %0 = seq.dropout %x {rate = 1.000000e-01 : f64} : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input, F64Attr:$rate);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Seq_TransposeOp : Seq_Op<"transpose", [Pure]> {
  let summary = "permutes dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %0 = seq.transpose %x [0, 2, 1] : tensor<?x?x64xf32> -> tensor<?x64x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_ReshapeOp : Seq_Op<"reshape", [Pure]> {
  let summary = "reinterprets the elements with another shape";
  let description = [{
    Row-major reshape. Each dynamic dimension of the result takes its size
    from one `index` operand, in order. When both shapes are static their
    element counts must agree; otherwise the count is checked at run time by
    the lowering.

    ```mlir
    %0 = seq.reshape %x [%n] : tensor<?x64xf32> -> tensor<?x4x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Variadic<Index>:$dynamic_sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`[` $dynamic_sizes^ `]`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_SplitHeadsOp : Seq_Op<"split_heads", [Pure]> {
  let summary = "[b, n, h*d] -> [b, h, n, d]";
  let description = [{
    Splits the feature dimension of `[batch, length, heads * head_dim]` into
    heads and moves the head dimension before the sequence dimension. `heads`
    is positive and divides the feature dimension when it is static.

    ```mlir
    %0 = seq.split_heads %x {heads = 8 : i64} : tensor<?x?x512xf32> -> tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$heads);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Seq_MergeHeadsOp : Seq_Op<"merge_heads", [Pure]> {
  let summary = "[b, h, n, d] -> [b, n, h*d]";
  let description = [{
    Inverse of `seq.split_heads`.

    ```mlir
    %0 = seq.merge_heads %x : tensor<?x8x?x64xf32> -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Seq_SliceOp : Seq_Op<"slice", [Pure]> {
  let summary = "contiguous range along one axis";
  let description = [{
    Takes elements `[start, end)` of dimension `axis`; the other dimensions
    are kept whole. The bounds are `index` values; the lowering checks
    `0 <= start <= end <= size` at run time, and that `end - start` is the
    result's size along `axis`, which may be static (at most the input's
    size) or dynamic.

    ```mlir
    %0 = seq.slice %table[%c0 : %n] axis 0 : tensor<512x64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Index:$start, Index:$end,
                       I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `[` $start `:` $end `]` `axis` $axis attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_ConcatOp : Seq_Op<"concat", [Pure]> {
  let summary = "concatenation along one axis";
  let description = [{
    Concatenates one or more tensors of the same rank and element type along
    `axis`; all other dimensions agree.

    ```mlir
    %0 = seq.concat %a, %b axis 1 : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $inputs `axis` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_ReduceOp : Seq_Op<"reduce", [Pure]> {
  let summary = "sum, mean, max or min over axes";
  let description = [{
    Reduces `axes` (sorted, unique, in range) with the given combiner. With
    `keepdim` the reduced dimensions stay with size 1.

    ```mlir
    %0 = seq.reduce mean %x axes [1] : tensor<?x64xf32> -> tensor<?xf32>
    %1 = seq.reduce max %x axes [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input, Seq_ReduceKind:$kind,
                       DenseI64ArrayAttr:$axes, UnitAttr:$keepdim);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $kind $input `axes` $axes (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_ArangeOp : Seq_Op<"arange", [Pure]> {
  let summary = "positions 0, 1, ..., n - 1";
  let description = [{
    Produces the positions of a sequence of length `n`, for learned absolute
    position embeddings.

    ```mlir
    %0 = seq.arange %n : tensor<?xi32>
    ```
  }];
  let arguments = (ins Index:$length);
  let results = (outs RankedTensorOf<[AnySignlessInteger]>:$result);
  let assemblyFormat = "$length attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense layers and normalization
//===----------------------------------------------------------------------===//

def Seq_MatmulOp : Seq_Op<"matmul", [Pure]> {
  let summary = "batched matrix product";
  let description = [{
    `[..., m, k] x [..., k, n] -> [..., m, n]`, with `transpose_rhs` reading
    `rhs` as `[..., n, k]`. Batch dimensions broadcast as in NumPy; a rank-2
    operand is shared by every batch.

    ```mlir
    %s = seq.matmul %q, %k transpose_rhs : tensor<?x?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$lhs,
                       RankedTensorOf<[AnyFloat]>:$rhs, UnitAttr:$transpose_rhs);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_LinearOp : Seq_Op<"linear", [Pure]> {
  let summary = "affine projection y = x W^T + b";
  let description = [{
    `input` is `[..., in]`, `weight` is `[out, in]` (PyTorch's `nn.Linear`
    layout), the optional `bias` is `[out]`; the result is `[..., out]`.

    ```mlir
    %y = seq.linear %x, %w, %b : tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       RankedTensorOf<[AnyFloat]>:$weight,
                       Optional<RankedTensorOf<[AnyFloat]>>:$bias);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_LayerNormOp : Seq_Op<"layer_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + eps) * gamma + beta` over the last dimension,
    with the biased variance, as `torch.nn.LayerNorm`. `gamma` and `beta`
    (each `[d]`) are optional (no elementwise affine, or `bias=False`);
    `beta` requires `gamma`. `eps` is non-negative.

    ```mlir
    %0 = seq.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       Optional<RankedTensorOf<[AnyFloat]>>:$gamma,
                       Optional<RankedTensorOf<[AnyFloat]>>:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input (`,` $gamma^)? (`,` $beta^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Seq_RMSNormOp : Seq_Op<"rms_norm", [Pure]> {
  let summary = "root-mean-square normalization over the last dimension";
  let description = [{
    `x / sqrt(mean(x^2) + eps) * gamma` over the last dimension `d`, with an
    optional `gamma` of `[d]` and a non-negative `eps`.

    ```mlir
    %0 = seq.rms_norm %x, %g {eps = 1.0e-06 : f64} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       Optional<RankedTensorOf<[AnyFloat]>>:$gamma,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$eps);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input (`,` $gamma^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Seq_SoftmaxOp : Seq_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "numerically safe softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (negative counts from the
    end). Rows of only `-inf` give zeros, not NaN.

    ```mlir
    %0 = seq.softmax %s axis -1 : tensor<?x?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Seq_EmbeddingOp : Seq_Op<"embedding", [Pure]> {
  let summary = "table lookup";
  let description = [{
    `table` is `[vocab, dim]`, `indices` any shape of integers; the result is
    `indices.shape + [dim]`. Indices outside `[0, vocab)` are clamped by the
    lowering (and rejected by the runtime when they come from an input).

    ```mlir
    %0 = seq.embedding %table, %ids : tensor<1000x64xf32>, tensor<?x?xi32> -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$table, IntTensor:$indices);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Seq_ApplyMaskOp : Seq_Op<"apply_mask", [Pure]> {
  let summary = "sets masked attention scores to -inf";
  let description = [{
    `scores` is `[..., n_q, n_k]`; entries the `mask` forbids become `-inf`,
    so that a following `seq.softmax` gives them zero weight. The optional
    `lengths` (`[batch]`, integers) are key padding lengths for the leading
    (batch) dimension, which `scores` must then have (rank 3 or more). A
    causal or windowed mask compares query and key positions, so it needs
    `n_q = n_k`. This is the explicit form of what `seq.attention` does
    internally.

    ```mlir
    %0 = seq.apply_mask %s {mask = #seq.mask<causal = true>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$scores,
                       Optional<IntTensor>:$lengths, Seq_MaskAttr:$mask);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $scores (`lengths` `(` $lengths^ `:` type($lengths) `)`)? attr-dict `:` type($scores) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_AttentionOp : Seq_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `softmax(q k^T * scale + bias + alibi, masked) v` on
    `q: [batch, heads, n_q, d]`, `k: [batch, kv_heads, n_k, d]`,
    `v: [batch, kv_heads, n_k, d_v]`, giving `[batch, heads, n_q, d_v]`.
    `heads` must be a multiple of `kv_heads` (grouped-query attention; query
    head `h` reads kv head `h / (heads / kv_heads)`).

    - `scale` (positive) defaults to `1 / sqrt(d)`, which needs a static `d`.
    - `mask` (a `#seq.mask`) restricts which keys each query sees; absent, all
      keys are visible. Fully masked rows give zeros. A causal or windowed
      mask compares query and key positions, so without `query_offsets` it
      needs `n_q = n_k`.
    - `lengths` (`[batch]` integers) are key padding lengths.
    - `bias` is an additive score bias broadcastable to
      `[batch, heads, n_q, n_k]`.
    - `alibi` holds per-head ALiBi slopes `[heads]`: the score of query `i`
      and key `j` gets `-slope * |i - j|`.
    - `query_offsets` (`[batch]` integers) place the queries of batch row
      `r` at the absolute positions `query_offsets[r] + i`, with the keys at
      `0 .. n_k - 1`: the queries of a decode step against a KV cache. The
      mask and the ALiBi distance compare absolute positions, as signed
      integers; `n_q` and `n_k` may then differ under any mask. An offset
      may be negative: a left-padded row of a prefill is placed at `-pad`,
      so that its pads sit before position 0, where a causal query sees no
      key (its output row is zero) and no query is a global token.

    The op is the unit the fusion passes work on: `seq-tile-attention`
    stages it into loops over query and key tiles of `seq.online_attention`
    and `seq.attention_finalize` (FlashAttention's online softmax, and
    flash-decoding's split of the keys), which never materialize the
    `n_q x n_k` scores.

    ```mlir
    %o = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
        : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$query,
                       RankedTensorOf<[AnyFloat]>:$key,
                       RankedTensorOf<[AnyFloat]>:$value,
                       Optional<IntTensor>:$lengths,
                       Optional<RankedTensorOf<[AnyFloat]>>:$bias,
                       Optional<RankedTensorOf<[AnyFloat]>>:$alibi,
                       Optional<IntTensor>:$query_offsets,
                       OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<Seq_MaskAttr>:$mask);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`lengths` `(` $lengths^ `:` type($lengths) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`alibi` `(` $alibi^ `:` type($alibi) `)`)?
    (`query_offsets` `(` $query_offsets^ `:` type($query_offsets) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The score scale: the `scale` attribute, or 1/sqrt(head_dim).
    double getEffectiveScale();
  }];
}

def Seq_OnlineAttentionOp : Seq_Op<"online_attention",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["acc", "new_acc"]>,
     AllTypesMatch<["max", "new_max"]>, AllTypesMatch<["sum", "new_sum"]>]> {
  let summary = "one key tile of an online softmax over the keys";
  let description = [{
    The tile-level step of tiled attention (`seq-tile-attention`): a block
    of `r` queries `query: [r, d]`, already multiplied by the score scale,
    sees a block of `c` keys `key: [c, d]` with their values
    `value: [c, d_v]`, and updates the running state of the online softmax
    over the keys seen so far: `acc: [r, d_v]` (the unnormalized output),
    `max: [r]` (the running row maximum, `-inf` before any key) and
    `sum: [r]` (the running sum of `exp(s - max)`):

    ```
    s    = query key^T                      [r, c]
    s    = s + bias                         with `bias`
    s    = s - slope |pq[row] - pk[col]|    with `alibi`
    s    = -inf where `mask` hides (i, j)   with `mask`
    max' = max(max, rowmax(s))
    p    = exp(s - max')                    (0 where max' = -inf)
    sum' = sum exp(max - max') + rowsum(p)
    acc' = acc exp(max - max') + p value
    ```

    `mask` is present only on a tile the mask cuts (a partial tile), with
    `offsets(query_offset, key_offset)`, the absolute positions of the
    tile's first query and key (`i = query_offset + row`,
    `j = key_offset + col`); a tile all of whose pairs are visible carries
    no mask and no mask arithmetic, and a tile with no visible pair is not
    visited at all. Key padding lengths are not part of the tile: the tiling
    ends the key range at the length. `alibi(slope, pq, pk)` adds ALiBi's
    bias from the head's slope and the positions of the tile's queries
    `pq: [r]` and keys `pk: [c]` as floats (slices of one table, so that
    the bias is float arithmetic only). `bias` is the tile's slice of an
    additive score bias (`seq.attention`'s): `[r, c]`, or `[c]` when every
    query of the tile has the same one (a key-padding bias); f32, or bf16 or
    f16 widened where it is added. A bias may hide keys with `-inf`: a row
    of a tile that sees no finite score leaves the state as it was, and a
    row that never sees one gives zeros.

    `query`, `key` and `value` are f32, or bf16 or f16 read in place (the
    tiling of bf16 and f16 attention on the CPU): the products widen (or
    pair) them and accumulate in f32, and the softmax state is f32.
    `scale`, when present, multiplies the scores in f32 before the bias and
    the mask (`s = scale query key^T`), for a query that is not scaled
    beforehand (a bf16 or f16 query read in place).

    With `key_transposed`, `key` is `[d, c]`: the tile's slice of keys
    packed once per call by `seq-tile-attention` (on the CPU), so that
    `query key` is a plain product whose right operand every query tile
    reads as it is, instead of packing `key^T` for each (query tile, key
    tile) pair.

    `seq.attention_finalize` turns the state into the output.

    ```mlir
    %acc1, %m1, %l1 = seq.online_attention %q, %k, %v, %acc, %m, %l
        offsets(%i0, %j0) {mask = #seq.mask<causal = true>}
        : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>,
          tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, BF16, F16]>:$query,
                       RankedTensorOf<[F32, BF16, F16]>:$key,
                       RankedTensorOf<[F32, BF16, F16]>:$value,
                       RankedTensorOf<[F32]>:$acc,
                       RankedTensorOf<[F32]>:$max,
                       RankedTensorOf<[F32]>:$sum,
                       Variadic<Index>:$offsets,
                       Optional<F32>:$slope,
                       Optional<RankedTensorOf<[F32]>>:$query_positions,
                       Optional<RankedTensorOf<[F32]>>:$key_positions,
                       Optional<RankedTensorOf<[F32, BF16, F16]>>:$bias,
                       OptionalAttr<Seq_MaskAttr>:$mask,
                       OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$key_transposed);
  let results = (outs RankedTensorOf<[F32]>:$new_acc,
                      RankedTensorOf<[F32]>:$new_max,
                      RankedTensorOf<[F32]>:$new_sum);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $acc `,` $max `,` $sum
    (`offsets` `(` $offsets^ `)`)?
    (`alibi` `(` $slope^ `,` $query_positions `,` $key_positions `:`
       type($query_positions) `,` type($key_positions) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($acc) `,` type($max) `,` type($sum)
  }];
  let hasVerifier = 1;
}

def Seq_AttentionFinalizeOp : Seq_Op<"attention_finalize", [Pure]> {
  let summary = "normalizes (and merges) online softmax states";
  let description = [{
    The output of an online softmax from its state (see
    `seq.online_attention`): with `acc: [r, d_v]`, `max: [r]`,
    `sum: [r]`, the result is `acc / sum`, and 0 on rows that saw no key
    (`sum = 0`).

    With a leading dimension of `p` partial states, `acc: [p, r, d_v]`,
    `max: [p, r]`, `sum: [p, r]`, each computed over a disjoint range of
    keys (flash-decoding splits the keys of few queries across cores), the
    states are merged first:

    ```
    M = max_k max[k]
    w[k] = exp(max[k] - M)                (0 where max[k] = -inf)
    result = (sum_k w[k] acc[k]) / (sum_k w[k] sum[k])
    ```

    ```mlir
    %o = seq.attention_finalize %acc, %m, %l
        : tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$acc, RankedTensorOf<[F32]>:$max,
                       RankedTensorOf<[F32]>:$sum);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum attr-dict `:` type($acc) `,` type($max) `,`
    type($sum) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_MultiHeadAttentionOp : Seq_Op<"multi_head_attention",
                                      [Pure, AttrSizedOperandSegments]> {
  let summary = "projections, attention and output projection";
  let description = [{
    Multi-head self-attention (without `kv`) or cross-attention (keys and
    values from `kv`). With `x: [batch, n, model_dim]`:

    ```
    q = split_heads(linear(x, wq, bq), heads)          wq: [heads*d, model_dim]
    k = split_heads(linear(kv, wk, bk), kv_heads)      wk: [kv_heads*d, kv_dim]
    v = split_heads(linear(kv, wv, bv), kv_heads)      wv: [kv_heads*d, kv_dim]
    q, k = rope(q), rope(k)                            when rope_theta is set
    o = attention(q, k, v, mask, lengths, alibi)       alibi slopes when `alibi`
    y = linear(merge_heads(o), wo, bo)                 wo: [model_dim, heads*d]
    ```
    `biases` are either absent or all four of `bq, bk, bv, bo`
    (`[heads*d]`, `[kv_heads*d]`, `[kv_heads*d]`, `[model_dim]`). `heads` is a
    positive multiple of the positive `kv_heads`; without `kv`, `kv_dim` is
    `model_dim`. `rope_theta` needs an even `d`; a causal or windowed mask in
    cross-attention needs `n = n_kv`.

    ```mlir
    %y = seq.multi_head_attention %x weights(%wq, %wk, %wv, %wo : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
        {heads = 4 : i64, kv_heads = 4 : i64, mask = #seq.mask<causal = true>, rope_theta = 1.0e4 : f64}
        : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       Optional<RankedTensorOf<[AnyFloat]>>:$kv,
                       RankedTensorOf<[AnyFloat]>:$wq,
                       RankedTensorOf<[AnyFloat]>:$wk,
                       RankedTensorOf<[AnyFloat]>:$wv,
                       RankedTensorOf<[AnyFloat]>:$wo,
                       Variadic<RankedTensorOf<[AnyFloat]>>:$biases,
                       Optional<IntTensor>:$lengths,
                       I64Attr:$heads, I64Attr:$kv_heads,
                       OptionalAttr<Seq_MaskAttr>:$mask,
                       OptionalAttr<F64Attr>:$rope_theta,
                       UnitAttr:$alibi);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input (`kv` `(` $kv^ `:` type($kv) `)`)?
    `weights` `(` $wq `,` $wk `,` $wv `,` $wo `:` type($wq) `,` type($wk) `,` type($wv) `,` type($wo) `)`
    (`biases` `(` $biases^ `:` type($biases) `)`)?
    (`lengths` `(` $lengths^ `:` type($lengths) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_CacheWriteOp : Seq_Op<"cache_write",
    [Pure, AllTypesMatch<["cache", "result"]>]> {
  let summary = "writes new rows into a KV cache at each batch row's position";
  let description = [{
    With `cache: [batch, heads, max_len, d]`, `values: [batch, heads, n, d]`
    and the integer `positions: [batch]`, the result is `cache` with
    `result[r, h, positions[r] + i, :] = values[r, h, i, :]` for `i < n`
    and `positions[r] + i >= 0`, every other element unchanged: the rows at
    negative positions (the pads of a left-padded row placed at `-pad`) are
    not stored. `positions[r] + n` must be at most `max_len` (checked at run
    time). The lowering writes the rows into the cache's buffer in place, so
    that a cache held in a state argument of the model function
    (docs/abi.md) is updated without a copy.

    ```mlir
    %kc1 = seq.cache_write %kc, %k, %pos
        : tensor<?x2x128x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$cache,
                       RankedTensorOf<[AnyFloat]>:$values,
                       IntTensor:$positions);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $cache `,` $values `,` $positions attr-dict `:` type($cache) `,`
    type($values) `,` type($positions)
  }];
  let hasVerifier = 1;
}

def Seq_StateStoreOp : Seq_Op<"state_store",
    [MemoryEffects<[MemWrite]>, AllTypesMatch<["value", "state"]>]> {
  let summary = "stores a recurrent state into a state argument of the model";
  let description = [{
    Writes `value` into the buffer of `state`, a state argument of the model
    function (an argument carrying `seq.state`, docs/abi.md), so that the
    next call of the model reads it: the conv window and SSM state of a
    Mamba mixer, the sums `(S, z)` of causal linear attention. Uses of
    `state` before the store read the state of the previous call; none may
    follow it. The lowering copies `value` into the argument's buffer
    (`memref.copy` after bufferization), as Mamba's `step()`
    copies its new state into `conv_state` and `ssm_state`.

    ```mlir
    seq.state_store %h into %ssm_state : tensor<?x128x16xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$value,
                       RankedTensorOf<[AnyFloat]>:$state);
  let assemblyFormat = "$value `into` $state attr-dict `:` type($state)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Position encodings
//===----------------------------------------------------------------------===//

def Seq_SinusoidalPEOp : Seq_Op<"sinusoidal_pe", [Pure]> {
  let summary = "sinusoidal position encodings of Vaswani et al.";
  let description = [{
    Produces `[length, d]` with `pe[p, 2i] = sin(p / 10000^(2i/d))` and
    `pe[p, 2i+1] = cos(p / 10000^(2i/d))`, with 10000 the positive `base`;
    `d` is the static, even last dimension of the result.

    ```mlir
    %pe = seq.sinusoidal_pe %n : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Index:$length, DefaultValuedAttr<F64Attr, "10000.0">:$base);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$length attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Seq_RopeOp : Seq_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding";
  let description = [{
    Rotates pairs of features of `x: [batch, heads, n, d]` by an angle
    proportional to the position: for `i < rotary_dims / 2`, features `i` and
    `i + rotary_dims / 2` (the "rotate half" convention of GPT-NeoX and
    LLaMA) at position `p` are rotated by `p * theta^(-2i / rotary_dims)`.
    Features at or above `rotary_dims` pass through. `rotary_dims` defaults to
    `d`; it must be even and at most `d` (and `d` even when it is absent).
    The position of row `i` is `i`, or `offsets[b] + i` with the optional
    `offsets: [batch]` (integers, non-negative): the absolute positions of
    the tokens of a decode step.

    ```mlir
    %0 = seq.rope %q {theta = 1.0e4 : f64} : tensor<?x8x?x64xf32>
    %1 = seq.rope %k offsets(%pos : tensor<?xi32>) : tensor<?x2x?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       Optional<IntTensor>:$offsets,
                       DefaultValuedAttr<F64Attr, "10000.0">:$theta,
                       OptionalAttr<I64Attr>:$rotary_dims);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input (`offsets` `(` $offsets^ `:` type($offsets) `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

// Not ConstantLike: the canonicalizer keeps ConstantLike ops as they are (they
// are the constants), while a plain op with a folder becomes an
// arith.constant that every later pass understands.
def Seq_AlibiOp : Seq_Op<"alibi", [Pure]> {
  let summary = "per-head ALiBi slopes";
  let description = [{
    The head-specific slopes of Press et al. (ALiBi): for `h` heads with `h` a
    power of two, `2^(-8 i / h)` for `i = 1..h`; otherwise the slopes of the
    closest smaller power of two followed by every other slope of twice that
    number. The result is a static `[heads]`. Folds to an `arith.constant`.

    ```mlir
    %s = seq.alibi : tensor<8xf32>
    ```
  }];
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The slopes for `heads` heads.
    static ::llvm::SmallVector<double> computeSlopes(int64_t heads);
  }];
}

//===----------------------------------------------------------------------===//
// Linear attention
//===----------------------------------------------------------------------===//

def Seq_LinearAttentionOp : Seq_Op<"linear_attention",
                                  [Pure, AttrSizedOperandSegments,
                                   AttrSizedResultSegments]> {
  let summary = "kernelized attention in linear time";
  let description = [{
    With a feature map `phi` applied to `q, k: [batch, heads, n, d]` and
    `v: [batch, heads, n, d_v]`:

    - non-causal: `out_i = phi(q_i)^T S / (phi(q_i)^T z + eps)` with
      `S = sum_j phi(k_j) v_j^T` and `z = sum_j phi(k_j)`;
    - causal: the same with the sums running over `j <= i`, the recurrent
      form `S_i = S_{i-1} + phi(k_i) v_i^T` of Katharopoulos et al.

    `eps` is non-negative. Queries and keys have the same heads (there is no
    grouped-query form) and the same length `n`.

    The causal form carries a state across calls, so that a long sequence can
    be processed in pieces: `state(S0, z0)` starts the sums from
    `S0: [batch, heads, d, d_v]` and `z0: [batch, heads, d]` instead of 0,
    and the optional results `S: [batch, heads, d, d_v]` and
    `z: [batch, heads, d]` are the sums after the last token. The initial
    state and the final state each come as a pair; the non-causal form has
    neither.

    ```mlir
    %o = seq.linear_attention %q, %k, %v feature_map elu_plus_one causal
        : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
    %o2, %s, %z = seq.linear_attention %q, %k, %v state(%s0, %z0 : tensor<?x4x32x32xf32>, tensor<?x4x32xf32>)
        feature_map elu_plus_one causal
        : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>
        -> tensor<?x4x?x32xf32>, tensor<?x4x32x32xf32>, tensor<?x4x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$query,
                       RankedTensorOf<[AnyFloat]>:$key,
                       RankedTensorOf<[AnyFloat]>:$value,
                       Optional<RankedTensorOf<[AnyFloat]>>:$initial_state,
                       Optional<RankedTensorOf<[AnyFloat]>>:$initial_normalizer,
                       DefaultValuedAttr<Seq_FeatureMap,
                           "::mlir::seq::FeatureMap::elu_plus_one">:$feature_map,
                       UnitAttr:$causal,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$eps);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result,
                      Optional<RankedTensorOf<[AnyFloat]>>:$final_state,
                      Optional<RankedTensorOf<[AnyFloat]>>:$final_normalizer);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`state` `(` $initial_state^ `,` $initial_normalizer `:` type($initial_state) `,` type($initial_normalizer) `)`)?
    `feature_map` $feature_map (`causal` $causal^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($result)
    (`,` type($final_state)^ `,` type($final_normalizer))?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// State-space models
//===----------------------------------------------------------------------===//

// Not ConstantLike, which requires a single result; see Seq_AlibiOp.
def Seq_HippoOp : Seq_Op<"hippo", [Pure]> {
  let summary = "HiPPO-LegS state matrices";
  let description = [{
    The continuous-time HiPPO-LegS operator of Gu et al. for state size `N`:
    `A[n, k] = -sqrt(2n+1) sqrt(2k+1)` for `n > k`, `-(n+1)` for `n = k`, 0
    above the diagonal; `B[n] = sqrt(2n+1)`. Projecting the history onto
    Legendre polynomials with these matrices compresses it optimally under a
    uniform measure. Both results are static. Folds to two `arith.constant`s.

    ```mlir
    %A, %B = seq.hippo : tensor<16x16xf32>, tensor<16xf32>
    ```
  }];
  let results = (outs RankedTensorOf<[AnyFloat]>:$a, RankedTensorOf<[AnyFloat]>:$b);
  let assemblyFormat = "attr-dict `:` type($a) `,` type($b)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Seq_SSMOp : Seq_Op<"ssm", [Pure]> {
  let summary = "linear time-invariant state-space layer (S4)";
  let description = [{
    Discretizes `x'(t) = A x(t) + B u(t)`, `y(t) = C x(t) + D u(t)` with a
    positive step `step` and runs it over the sequence, one single-input single-output
    system per channel sharing the state matrix:
    `u: [batch, L, H]`, `A: [N, N]`, `B: [H, N]`, `C: [H, N]`, `D: [H]`,
    result `[batch, L, H]`. For channel `h`,
    `x_t = Ab x_{t-1} + Bb_h u_{t,h}`, `y_{t,h} = C_h . x_t + D_h u_{t,h}`,
    with `x_{-1} = 0` and

    - `zoh`: `Ab = exp(step A)`, `Bb = A^-1 (exp(step A) - I) B` (computed
      without inverting `A`);
    - `bilinear`: `Ab = (I - step/2 A)^-1 (I + step/2 A)`,
      `Bb = (I - step/2 A)^-1 step B`.

    ```mlir
    %y = seq.ssm %u, %A, %B, %C, %D discretization zoh {step = 1.0e-2 : f64}
        : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       RankedTensorOf<[AnyFloat]>:$a,
                       RankedTensorOf<[AnyFloat]>:$b,
                       RankedTensorOf<[AnyFloat]>:$c,
                       RankedTensorOf<[AnyFloat]>:$d,
                       F64Attr:$step,
                       DefaultValuedAttr<Seq_Discretization,
                           "::mlir::seq::Discretization::zoh">:$discretization);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $a `,` $b `,` $c `,` $d `discretization` $discretization attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Seq_SelectiveScanOp : Seq_Op<"selective_scan",
                                 [Pure, AttrSizedOperandSegments]> {
  let summary = "Mamba's selective scan";
  let description = [{
    The input-dependent (selective) state-space recurrence of Mamba (Gu and
    Dao), in sequence-major layout. With `u, delta: [batch, L, D]`,
    `A: [D, N]`, `B, C: [batch, L, N]`, optional `D: [D]`,
    `z: [batch, L, D]`, `delta_bias: [D]` and `initial_state: [batch, D, N]`:

    ```
    x[-1]    = initial_state, or zeros without it
    dt[t,d]  = delta[t,d] + delta_bias[d], then softplus if delta_softplus
    x[t,d,:] = exp(dt[t,d] A[d,:]) * x[t-1,d,:] + dt[t,d] B[t,:] u[t,d]
    y[t,d]   = C[t,:] . x[t,d,:] + D[d] u[t,d]
    y[t,d]  *= silu(z[t,d])                        when z is given
    ```
    The result is `[batch, L, D]`. A, B and C are real. With a second
    result type, the op also returns the final state `x[L-1]`
    (`initial_state` when L is 0), `[batch, D, N]`, as `mamba_ssm`'s
    `selective_scan_ref(..., return_last_state=True)` (whose state is
    `[batch, D, N]` too): a sequence processed in pieces, each piece's
    final state the next one's initial state, gives the outputs of one scan
    over the whole sequence.

    ```mlir
    %y = seq.selective_scan %u, %dt, %A, %B, %C D(%D : tensor<64xf32>) {delta_softplus}
        : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
    %y2, %h = seq.selective_scan %u, %dt, %A, %B, %C initial_state(%h0 : tensor<?x64x16xf32>)
        : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>, tensor<?x64x16xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       RankedTensorOf<[AnyFloat]>:$delta,
                       RankedTensorOf<[AnyFloat]>:$a,
                       RankedTensorOf<[AnyFloat]>:$b,
                       RankedTensorOf<[AnyFloat]>:$c,
                       Optional<RankedTensorOf<[AnyFloat]>>:$d,
                       Optional<RankedTensorOf<[AnyFloat]>>:$z,
                       Optional<RankedTensorOf<[AnyFloat]>>:$delta_bias,
                       Optional<RankedTensorOf<[AnyFloat]>>:$initial_state,
                       UnitAttr:$delta_softplus);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result,
                      Optional<RankedTensorOf<[AnyFloat]>>:$final_state);
  let assemblyFormat = [{
    $input `,` $delta `,` $a `,` $b `,` $c
    (`D` `(` $d^ `:` type($d) `)`)?
    (`z` `(` $z^ `:` type($z) `)`)?
    (`delta_bias` `(` $delta_bias^ `:` type($delta_bias) `)`)?
    (`initial_state` `(` $initial_state^ `:` type($initial_state) `)`)?
    attr-dict `:` type($input) `,` type($delta) `,` type($a) `,` type($b) `,` type($c) `->` type($result) (`,` type($final_state)^)?
  }];
  let hasVerifier = 1;
}

def Seq_Conv1dOp : Seq_Op<"conv1d", [Pure]> {
  let summary = "depthwise causal 1-D convolution";
  let description = [{
    `x: [batch, L, C]`, `weight: [C, K]`, optional `bias: [C]`:
    `y[t, c] = bias[c] + sum_{j<K} weight[c, j] * x[t - K + 1 + j, c]` with
    zeros before the start (left padding of `K - 1`), as Mamba's short
    convolution (`nn.Conv1d(groups=C, padding=K-1)` truncated to `L`).

    ```mlir
    %y = seq.conv1d %x, %w, %b : tensor<?x?x64xf32>, tensor<64x4xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       RankedTensorOf<[AnyFloat]>:$weight,
                       Optional<RankedTensorOf<[AnyFloat]>>:$bias);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Seq_CrossEntropyOp : Seq_Op<"cross_entropy", [Pure]> {
  let summary = "mean cross-entropy with label smoothing";
  let description = [{
    `logits: [..., C]` and integer `targets` of the leading shape. With
    smoothing `eps`, the target distribution puts `1 - eps + eps / C` on the
    target class and `eps / C` on each other class, so the per-position loss
    is `(1 - eps) * nll + eps * mean_c(-log_softmax(logits)_c)`, as
    `torch.nn.functional.cross_entropy(label_smoothing=eps)`, with `eps` in
    `[0, 1]`. Positions whose
    target equals `ignore_index` are skipped; the result is the mean over the
    rest (0 when none remain).

    ```mlir
    %l = seq.cross_entropy %logits, %t {label_smoothing = 1.0e-1 : f64}
        : tensor<?x?x1000xf32>, tensor<?x?xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$logits, IntTensor:$targets,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` type($logits) `,` type($targets) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Seq_DequantizeOp : Seq_Op<"dequantize", [Pure]> {
  let summary = "a contraction weight stored in a block format";
  let description = [{
    `blocks` is the i8 tensor `[out, in / 32, bytes per block]` of a weight
    stored in one of GGUF's block formats (`format`: "q8_0", "q4_0" or
    "q4_1", dialect/Seq/IR/Quantization.h); the result is the weight
    `[out, in]` in f32. Its only users are the `weight` operands of
    `seq.linear` and the `table` operands of `seq.embedding`, which read
    the blocks directly (the weight is never dequantized into a buffer of
    its own; a lookup dequantizes the rows it reads).

    ```mlir
    %w = seq.dequantize %blocks {format = "q4_0"} : tensor<256x2x18xi8> -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins TensorOf<[I8]>:$blocks, StrAttr:$format);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $blocks attr-dict `:` type($blocks) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // SEQ_OPS_TD
