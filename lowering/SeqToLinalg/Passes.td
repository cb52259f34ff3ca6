//===- Passes.td - seq to linalg conversion pass -----------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_SEQTOLINALG_PASSES_TD
#define SEQC_LOWERING_SEQTOLINALG_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSeqToLinalg : Pass<"convert-seq-to-linalg"> {
  let summary = "Lowers seq ops to linalg, tensor, arith, math and scf";
  let description = [{
    Replaces every `seq` op by its meaning on tensors: structured linalg ops
    (generic, matmul, reductions), tensor reshapes and slices, and scf loops
    for the recurrences (state-space scans, causal linear attention). Composite
    ops must have been decomposed first (`seq-decompose`). Fails if any `seq`
    op survives.

    With `scan-vector-lanes` above 1 (the CPU target at -O2 and above sets it
    to its vector width in f32 lanes), `seq.selective_scan` on f32 with a
    static state size and channels in whole vectors becomes one fused loop
    over the sequence per block of channels, its state in vector registers
    (FusedScan.cpp), instead of the step-by-step reference form. So does
    `seq.ssm` (S4) on f32 with a static state size of at most 64 and static
    channels (the last block of channels masked when they are not whole
    vectors): per step, `Ab x` for a block of channels as N^2 vector FMAs
    with broadcast entries of Ab, the `D u` skip in the same loop. The
    selective scan's `exp(dt A)` is a dedicated 2^y form (a degree-6
    polynomial, at most about 1 ulp beyond the rounding of `dt A log2(e)`),
    scaled with `llvm.intr.ldexp` under `scan-scalef` (the CPU target sets it
    with AVX-512, where that is one `vscalefps`) or through exponent bits.

    With `row-forms` (the CPU target at -O2 and above), two ops whose
    reference form has no contiguous innermost loop take row forms: `seq.rope` computes its cos and sin once per
    position and frequency into [n, d/2] tables and rotates each half of the
    features with an elementwise generic (PositionEncoding.cpp), and
    `seq.conv1d` with a static kernel of at most 16 taps becomes one
    elementwise generic along the channels, its taps unrolled (Conv1d.cpp).
    It also gives f32 `seq.softmax` over the last axis, `seq.layer_norm`
    and `seq.rms_norm` row-blocked forms: an `scf.forall` over blocks of 1
    to 16 rows (16 KiB of input), each block's reductions and elementwise
    passes on its slices, so that the block's rows are read from memory once
    (Normalization.cpp); other element types and axes keep the reference
    form, with a remark under `remarks`.

    `seq.attention` takes the reference form, which materializes the
    scores; with `row-forms`, f32 attention (what seq-tile-attention left:
    a score bias, as BERT's padding mask) takes the exps of its scores and
    their row sums as one reduction with two outputs and divides the rows
    of `exps V` by the sums, rather than materializing the probabilities,
    whose generic elementwise fusion would recompute (exp and division) for
    each of the d_v columns of the `P V` contraction (Attention.cpp). The
    tiled form is seq-tile-attention's (passes/), whose tile
    ops `seq.online_attention` and `seq.attention_finalize` become
    contractions and generics on the tile's small tensors
    (FusedAttention.cpp).

    With `linear-attention-chunk` above 0 (the CPU target at -O2 and above
    sets it to 64), causal `seq.linear_attention` on f32 takes the chunked
    form instead of the token-by-token recurrence: an `scf.for` over chunks
    of that many tokens carrying the prefix state `S = phi(K)^T V` and
    `z = sum phi(k)` as iter_args, each chunk computing its output from
    batched linalg contractions (`phi(Q_c) phi(K_c)^T` masked causally within
    the chunk, times `V_c`, plus `phi(Q_c) S`; the normalizer likewise) and
    then adding `phi(K_c)^T V_c` to the state (LinearAttention.cpp). The last
    chunk may be partial. With `linear-attention-per-head` (the CPU), an
    `scf.forall` over (batch, heads) holds the loop over chunks, each pair's
    state of d x d_v staying in its core's cache and the pairs running in
    parallel; without it (the GPU), the loop over chunks is outermost and
    its contractions are batched over the pairs, each a kernel. The chunks'
    feature maps are computed per chunk (elu + 1 with the short exp).

    With both options, non-causal `seq.linear_attention` on f32 is chunked
    per pair too: a loop over chunks sums S and z from zeros, a second
    computes each chunk's rows `phi(Q_c) S / (phi(Q_c) z + eps)`, instead of
    the reassociated form's whole-sequence contractions.
  }];
  let options = [
    Option<"scanVectorLanes", "scan-vector-lanes", "int64_t",
           /*default=*/"0",
           "Vector lanes of the fused selective and S4 scans (0 or 1: the "
           "reference lowering)">,
    Option<"scanScalef", "scan-scalef", "bool", /*default=*/"false",
           "With 16 lanes, scale the fused scan's exp by 2^k with AVX-512's "
           "vscalefps instead of building the exponent bits">,
    Option<"rowForms", "row-forms", "bool", /*default=*/"false",
           "The row forms of rope (tabulated cos/sin), conv1d (unrolled "
           "taps along the channels) and the row ops (softmax, layer and RMS "
           "norm by blocks of rows)">,
    Option<"linearAttentionChunk", "linear-attention-chunk", "int64_t",
           /*default=*/"0",
           "Tokens per chunk of the chunked linear attention (0: the "
           "reference lowerings, the recurrence and the reassociated "
           "form)">,
    Option<"linearAttentionPerHead", "linear-attention-per-head", "bool",
           /*default=*/"false",
           "Run the chunked linear attention's chunks per (batch, head) "
           "pair, in a parallel loop over the pairs (else the loop over "
           "chunks is outermost, its contractions batched over the pairs, "
           "and the non-causal form is not chunked)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on every op a fused form was asked for but does not "
           "apply to, saying why">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::math::MathDialect",
    "::mlir::x86vector::X86VectorDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // SEQC_LOWERING_SEQTOLINALG_PASSES_TD
