//===- Patterns.h - seq to linalg lowering patterns -------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// One pattern set per op family, each defined in the file of that family.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_SEQTOLINALG_PATTERNS_H
#define SEQC_LOWERING_SEQTOLINALG_PATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace seq {

/// Binary and unary elementwise ops, activations, dropout (Elementwise.cpp).
void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns);
/// Transpose, reshape, head split/merge, slice, concat, reduce, arange
/// (Shape.cpp).
void populateShapeToLinalgPatterns(RewritePatternSet &patterns);
/// Matmul, linear, embedding (Linear.cpp).
void populateLinearToLinalgPatterns(RewritePatternSet &patterns);
/// `rows @ W^T` accumulated onto `acc` ([rows, out] f32), with W [out, in]
/// stored as `blocks` ([out, in / 32, bytes]) in the weight format
/// `format`: a linalg.generic carrying kQuantizedAttr that dequantizes each
/// weight where it is read (Quantized.cpp).
Value buildQuantizedLinear(OpBuilder &b, Location loc, Value rows,
                           Value blocks, StringRef format, Value acc);
/// Element (`row`, `column`) of the f32 table [num, dim] stored as `blocks`
/// in the weight format `format`: its block's header and value bytes read
/// and dequantized, as the Linear's generic does (Quantized.cpp). An
/// embedding's gather reads a table in a block format this way.
Value extractQuantizedElement(OpBuilder &b, Location loc, Value blocks,
                              StringRef format, Value row, Value column);
/// The attribute naming the weight format of such a generic.
constexpr llvm::StringLiteral kQuantizedAttr = "seq.quantized";
/// Layer norm, RMS norm, softmax (Normalization.cpp).
void populateNormalizationToLinalgPatterns(RewritePatternSet &patterns);
/// apply_mask and attention (Attention.cpp).
void populateAttentionToLinalgPatterns(RewritePatternSet &patterns);
/// Sinusoidal encodings, rotary embeddings, ALiBi slopes
/// (PositionEncoding.cpp).
void populatePositionEncodingToLinalgPatterns(RewritePatternSet &patterns);
/// Cross-entropy (Loss.cpp).
void populateLossToLinalgPatterns(RewritePatternSet &patterns);
/// Linear attention (LinearAttention.cpp).
void populateLinearAttentionToLinalgPatterns(RewritePatternSet &patterns);
/// HiPPO, LTI SSM (discretized by Discretization.cpp), selective scan
/// (StateSpace.cpp).
void populateStateSpaceToLinalgPatterns(RewritePatternSet &patterns);

/// seq.selective_scan as one fused loop over the sequence per block of
/// `lanes` channels, the state in vector registers (FusedScan.cpp); preferred
/// over the reference lowering where it applies. Nothing when lanes <= 1.
/// With `scalef` and 16 lanes, the decay's 2^k scaling is AVX-512's
/// vscalefps, else built from exponent bits.
/// With `remarks`, an op the fused form does not apply to gets a remark
/// saying why (it takes the reference lowering).
void populateFusedScanToLinalgPatterns(RewritePatternSet &patterns,
                                       int64_t lanes, bool scalef = false,
                                       bool remarks = false);

/// The tile-level attention ops of seq-tile-attention,
/// seq.online_attention and seq.attention_finalize (FusedAttention.cpp).
void populateTiledAttentionToLinalgPatterns(RewritePatternSet &patterns);
/// Causal seq.linear_attention on f32 by chunks of `chunk` tokens, batched
/// contractions per chunk and the prefix state carried between chunks
/// (LinearAttention.cpp); preferred over the recurrent reference lowering.
/// Nothing when chunk is 0. With `perHead`, each (batch, head) pair runs its
/// chunks in a parallel loop over the pairs, else the loop over chunks is
/// outermost. With `remarks`, a causal op it does not apply to gets a remark
/// saying why.
void populateChunkedLinearAttentionToLinalgPatterns(RewritePatternSet &patterns,
                                                    int64_t chunk,
                                                    bool perHead = false,
                                                    bool remarks = false);
/// Causal depthwise conv1d (Conv1d.cpp).
void populateConv1dToLinalgPatterns(RewritePatternSet &patterns);

/// seq.rope with its cos and sin tabulated once per (position, pair) and
/// applied by elementwise generics along the features (PositionEncoding.cpp);
/// preferred over the reference lowering. Applies to every rope.
void populateTabulatedRopeToLinalgPatterns(RewritePatternSet &patterns);

/// seq.conv1d with a static kernel of at most 16 taps as one elementwise
/// generic along the channels, the taps unrolled (Conv1d.cpp); preferred
/// over the reference lowering where it applies. With `remarks`, an op it
/// does not apply to gets a remark saying why.
void populateConv1dTapsToLinalgPatterns(RewritePatternSet &patterns,
                                        bool remarks = false);

/// f32 seq.layer_norm, seq.rms_norm and last-axis seq.softmax as an
/// scf.forall over blocks of rows, each block's passes on its slices
/// (Normalization.cpp); preferred over the reference lowerings where they
/// apply. With `remarks`, an op they do not apply to gets a remark saying
/// why.
void populateRowBlockNormalizationToLinalgPatterns(RewritePatternSet &patterns,
                                                   bool remarks = false);
/// The reference attention's CPU form (with row-forms): f32 attention with
/// a score bias that seq-tile-attention left (one the same for every key,
/// or with dynamic head counts) takes its exps and their row sums
/// as one reduction and divides its output rows by the sums, instead of
/// materializing the probabilities (Attention.cpp).
void populateRowFormAttentionToLinalgPatterns(RewritePatternSet &patterns);

/// All of the above.
void populateSeqToLinalgPatterns(RewritePatternSet &patterns);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_SEQTOLINALG_PATTERNS_H
