//===- TileAttention.cpp - seq.attention as tiles of an online softmax ----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The tiling stage of attention (`seq-tile-attention`), FlashAttention's
// algorithm on tensors: `seq.attention` becomes loops over tiles whose body
// is `seq.online_attention` (one key tile's update of the running max, sum
// and accumulator) and `seq.attention_finalize` (O / l), which
// convert-seq-to-linalg lowers to linalg. It never holds more than a tile of
// scores:
//
//   Qs = Q * scale                            (once, before the loops)
//   scf.forall (b, h, block of `Bq` queries):
//     acc = 0, max = -inf, sum = 0
//     for the key tiles of [0, min(g, lo))    global keys: full tiles
//     for the key tiles of [lo, a)            partial: with the mask
//     for the key tiles of [a, f)             full: no mask arithmetic
//     for the key tiles of [f, hi)            partial: with the mask
//     out = seq.attention_finalize(acc, max, sum)
//
// Each (query tile, key tile) pair is classified from the `#seq.mask`, the
// query tile's position and the sizes, symbolically in n: tiles with no
// visible pair lie outside [lo, hi) and are never visited (loop bounds, not
// branches), so causal attention does about half the work of full attention
// and a window of w about 2 w / n of it; tiles all of whose pairs are
// visible (below the causal diagonal, inside the window) form one run of
// key tiles [a, f), whose loop carries no mask; only the tiles around it
// (the diagonal, the window's edges) evaluate the mask. Key padding lengths
// end the key range and never need the predicate.
//
// Decode shapes (few queries against many keys: fewer (batch, head, query
// tile) units than `split-units`) split the key range into chunks computed
// in parallel, each giving a partial state, which a second forall merges
// (flash-decoding): one query against a long cache then uses every core.
// The choice is made at run time (the sizes are symbolic), between the two
// forms of an scf.if.
//
// Query offsets (the queries of batch row b at positions offsets[b] + i, a
// decode step against a KV cache) shift the query tile's positions in the
// classification above, so that a causal query tile's key loops end at its
// last query's absolute position, not at the end of the cache. An offset
// may be negative (a left-padded row of a prefill is placed at -pad, its
// pads before position 0): the positions are compared and clamped as signed
// integers, so that a tile of such queries has no full key tile and a query
// before position 0 sees no key under a causal mask (its output is zero).
//
// A score bias (broadcastable to [b, h, n_q, n_k]) is read by each tile as
// its slice: [rows, cols], or [cols] where the bias is the same for every
// query (BERT's key padding [b, 1, 1, n_k]), added to the tile's scores.
// It may hide keys with -inf; the online softmax keeps a row's state as it
// was through a tile where the row sees no finite score, and finalization
// gives zeros for a row that never saw one, as the reference does. A bias
// that is the same for every key ([.., n_q, 1]) keeps the reference
// lowering: it only shifts a row, or hides it whole.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "passes/Passes.h"
#include "passes/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

#define DEBUG_TYPE "seq-tile-attention"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQTILEATTENTION
#include "passes/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {

/// Index arithmetic and tensor slices at the tiling stage.
class TileBuilder {
public:
  TileBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxUIOp::create(b, loc, x, y); }
  /// Signed, for positions: with query offsets, a query may sit at a
  /// negative position (the pads of a left-padded row).
  Value smin(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value smax(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value slt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value ceilDiv(Value x, Value y) {
    return arith::CeilDivUIOp::create(b, loc, x, y);
  }
  Value floorDiv(Value x, Value y) {
    return arith::DivUIOp::create(b, loc, x, y);
  }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// `x` rounded up to the first `from + k * step` at or above it
  /// (`x >= from`).
  Value alignUp(Value x, Value from, Value step) {
    return add(from, mul(ceilDiv(sub(x, from), step), step));
  }

  /// `x` with its elements converted to `element` (extf or truncf), one
  /// elementwise linalg.generic.
  Value convert(Value x, Type element) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == element)
      return x;
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      sizes.push_back(type.isDynamicDim(i)
                          ? OpFoldResult(tensor::DimOp::create(b, loc, x, i)
                                             .getResult())
                          : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
    Value init = tensor::EmptyOp::create(b, loc, sizes, element);
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    bool widen = element.getIntOrFloatBitWidth() >
                 type.getElementType().getIntOrFloatBitWidth();
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{x}, ValueRange{init},
               ArrayRef<AffineMap>{id, id},
               SmallVector<utils::IteratorType>(type.getRank(),
                                                utils::IteratorType::parallel),
               [&](OpBuilder &gb, Location gl, ValueRange args) {
                 Value c =
                     widen ? arith::ExtFOp::create(gb, gl, element, args[0])
                                 .getResult()
                           : arith::TruncFOp::create(gb, gl, element, args[0])
                                 .getResult();
                 linalg::YieldOp::create(gb, gl, c);
               })
        .getResult(0);
  }

  /// A run-time check that dimension `dim` of `tensor` is `expected`.
  void assertSize(Value tensor, int64_t dim, Value expected,
                  const Twine &message) {
    Value size = tensor::DimOp::create(b, loc, tensor, dim);
    Value same =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, expected);
    cf::AssertOp::create(b, loc, same, b.getStringAttr(message));
  }

  Value filled(ArrayRef<OpFoldResult> sizes, double v) {
    Type f32 = b.getF32Type();
    Value init = tensor::EmptyOp::create(b, loc, sizes, f32);
    Value c = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(v));
    return linalg::FillOp::create(b, loc, ValueRange{c}, ValueRange{init})
        .getResult(0);
  }

  /// The slice of `source` with `sizes`, rank-reduced to its last `keep`
  /// dimensions (the ones before are of size 1: batch, head, tile). Only
  /// those: a head size of 1 stays a dimension of the tile.
  Value slice(Value source, ArrayRef<OpFoldResult> offsets,
              ArrayRef<OpFoldResult> sizes, int64_t keep = 2) {
    SmallVector<int64_t> shape;
    for (OpFoldResult size : sizes.take_back(keep)) {
      std::optional<int64_t> c = getConstantIntValue(size);
      shape.push_back(c ? *c : ShapedType::kDynamic);
    }
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(source.getType()).getElementType());
    return tensor::ExtractSliceOp::create(
        b, loc, type, source, offsets, sizes,
        SmallVector<OpFoldResult>(offsets.size(), b.getIndexAttr(1)));
  }

  void insert(Value source, Value dest, ArrayRef<OpFoldResult> offsets,
              ArrayRef<OpFoldResult> sizes) {
    tensor::ParallelInsertSliceOp::create(
        b, loc, source, dest, offsets, sizes,
        SmallVector<OpFoldResult>(offsets.size(), b.getIndexAttr(1)));
  }

  OpBuilder &b;
  Location loc;
};

/// What one attention op is tiled with.
struct TileOptions {
  int64_t queryBlock;
  int64_t keyBlock;
  int64_t splitUnits;
  int64_t splitMinKeys;
  bool remarks;
  bool narrowInPlace = false;
  bool bf16Dot = false;
  bool packKeys = false;
};

class AttentionTiler {
public:
  AttentionTiler(AttentionOp op, const TileOptions &options)
      : op(op), options(options) {}

  /// Why `op` cannot be tiled, or an empty string.
  std::string whyNot() {
    auto qType = op.getQuery().getType();
    auto kType = op.getKey().getType();
    auto vType = op.getValue().getType();
    // f16 and bf16 are tiled in f32: converted on the way in and out.
    Type element = qType.getElementType();
    if (!isa<Float32Type, Float16Type, BFloat16Type>(element) ||
        kType.getElementType() != element ||
        vType.getElementType() != element ||
        op.getType().getElementType() != element)
      return "it is not f32, f16 or bf16 throughout";
    if (qType.isDynamicDim(1) || kType.isDynamicDim(1) ||
        qType.isDynamicDim(3) || vType.isDynamicDim(3))
      return "its head counts or head sizes are not static";
    if (Value bias = op.getBias()) {
      auto biasType = cast<RankedTensorType>(bias.getType());
      if (biasType.getRank() == 0 || (biasType.getShape().back() == 1 &&
                                      op.getKey().getType().getDimSize(2) != 1))
        return "its score bias is the same for every key (broadcast along "
               "the keys)";
    }
    if (op.getQueryOffsets() && op.getAlibi())
      return "it has ALiBi slopes with query offsets";
    return "";
  }

  /// Whether the mask leaves every query every key (lengths aside): the
  /// key range of a tile then needs no predicate and may be split freely.
  bool positionless() {
    MaskAttr mask = op.getMaskAttr();
    return !mask || (!mask.getCausal() && mask.getWindow() == 0);
  }

  /// Where the partial tiles of a positional mask lie: the causal
  /// diagonal, the window's edges, the tiles of global queries.
  SmallVector<StringRef> partialTiles() {
    MaskAttr mask = op.getMaskAttr();
    SmallVector<StringRef> cuts;
    if (mask.getCausal())
      cuts.push_back("the causal diagonal");
    if (mask.getWindow() > 0)
      cuts.push_back("the window's edges");
    if (mask.getGlobalTokens() > 0)
      cuts.push_back("the tiles of global queries");
    return cuts;
  }

  void rewrite(RewriterBase &rewriter);

private:
  /// The state after the key tiles of [from, to) from `state` (acc, max,
  /// sum), each with the mask when `partial`.
  SmallVector<Value> keyLoop(OpBuilder &b, Value from, Value to,
                             ValueRange state, bool partial);
  /// The body of the forall over (b, h, query tile): the key loops of the
  /// tile's classes, or of one chunk [chunkLo, chunkHi) of the keys.
  SmallVector<Value> tileState(OpBuilder &b, Value chunkLo, Value chunkHi);
  /// The tiles of one query tile, its output written to `shared`.
  Value plainForm(OpBuilder &b);
  /// The plain form, with the keys packed once per call into key tiles of
  /// [d, key-block] (`packKeys`) when there are several query tiles.
  Value plainOrPackedForm(OpBuilder &b);
  /// K [b, kv heads, n_k, d] into `into` [b, kv heads, tiles, d, key-block]
  /// (zeros past n_k).
  Value packKeyTiles(OpBuilder &b, Value into);
  /// The split-key form over `splits` chunks of the keys, its partial
  /// states (accumulators, maxima, sums) in `partials` (splitPartials, room
  /// for `splits` chunks or more).
  Value splitForm(OpBuilder &b, Value splits, ValueRange partials);
  /// The split-key form's partial states of [batch, heads, chunks, n_q
  /// (, d_v)], made before the test of whether to split: an allocation
  /// inside a branch would neither get a place in the arena
  /// (seq-plan-memory) nor let the layer run in one thread team.
  SmallVector<Value> splitPartials(OpBuilder &b, Value chunks);
  /// Partial states of shape `outer` (its dynamic sizes `dynamicSizes`)
  /// followed by `inner`: accumulators [outer, inner, d_v], maxima and sums
  /// [outer, inner]. alloc_tensor rather than tensor.empty: CSE would merge
  /// the maxima's and the sums' (same shape), and bufferization would then
  /// copy one of them into a new buffer where it is written, inside a branch.
  SmallVector<Value> partialStates(OpBuilder &b, ArrayRef<int64_t> outer,
                                   ValueRange dynamicSizes,
                                   ArrayRef<int64_t> inner);
  /// Whether the grouped decode form applies: grouped-query attention
  /// whose query heads see the same keys (no ALiBi slope or score bias per
  /// head, no global tokens).
  bool groupedDecode() {
    return group > 1 && !alibi && !biasAlong[1] &&
           (!mask || mask.getGlobalTokens() == 0);
  }
  /// The score bias of the current query tile's rows and the key tile
  /// [k0, k0 + cols): [rows, cols], or [cols] where the bias is the same
  /// for every query of the tile; null without a bias.
  Value biasTile(TileBuilder &tb, Value k0, Value cols);
  /// The form of one query per head (a decode step, n_q = 1) that stacks
  /// the `group` query heads of each key/value head into the rows of one
  /// tile, so that each key and value is read once for all of them, with
  /// the keys each row sees split into chunks across the cores
  /// (flash-decoding, for a causal or windowed mask too: its keys are one
  /// range, [lo, hi), every key of which the query sees). `partials` are
  /// the tensors of groupedPartials, made here when empty.
  Value groupedForm(OpBuilder &b, ValueRange partials = {});
  /// The grouped form's partial states (accumulators, maxima, sums) of
  /// [batch, kv heads, max(split-units, 1), group (, d_v)]: room for the
  /// most chunks `split-units` allows, so that their sizes depend on the
  /// batch alone (the memory plan puts them in the arena, where an
  /// allocation would end a thread team) and they can be made before the
  /// test of n_q, outside its branches.
  SmallVector<Value> groupedPartials(OpBuilder &b);
  /// The forms for any n_q: plain, or split at run time (positionless).
  Value generalForm(OpBuilder &b);
  void setTile(OpBuilder &b, ValueRange ivs);

  AttentionOp op;
  const TileOptions &options;

  // Per op. `scores` is the scale the tiles apply to their f32 scores when
  // Q is read in place (bf16 or f16), else null (Q scaled once before the
  // loops).
  Value qs, k, v, lengths, alibi, positions, queryOffsets, bias;
  // Which of the scores' dimensions (batch, head, query, key) the bias
  // varies along (its others are 1: broadcast), its dimensions aligned to
  // the scores' last.
  bool biasAlong[4] = {false, false, false, false};
  // The packed key tiles while the plain form is built with them, else null.
  Value kPacked;
  // f32 Q and K (not bf16 or f16 read in place): what packKeys applies to.
  bool f32Keys = false;
  // The packed keys' tensor, made before any test of n_q, at the level of
  // the op: an allocation inside a branch would neither get a place in the
  // arena (seq-plan-memory) nor let the layer run in one thread team.
  Value packedKeysInit;
  FloatAttr scores;
  Value batch, nq, nk, qBlocks;
  int64_t heads = 0, group = 1, d = 0, dv = 0;
  MaskAttr mask;

  // Per query tile: q0 and qLast index the query rows, pos0 and posLast are
  // their absolute positions (q0 and qLast without query offsets).
  // `biasRows` is false where the tile's rows share one row of the bias
  // (the grouped form's stacked heads of one query).
  Value bIdx, h, kvh, q0, rows, qLast, pos0, posLast, length, slope, qTile,
      qPos;
  bool biasRows = true;
};

Value AttentionTiler::biasTile(TileBuilder &tb, Value k0, Value cols) {
  if (!bias)
    return Value();
  auto type = cast<RankedTensorType>(bias.getType());
  OpFoldResult zero = tb.b.getIndexAttr(0), one = tb.b.getIndexAttr(1);
  const bool byRow = biasRows && biasAlong[2];
  OpFoldResult at[4] = {bIdx, h, byRow ? OpFoldResult(q0) : zero, k0};
  OpFoldResult size[4] = {one, one, byRow ? OpFoldResult(rows) : one, cols};
  SmallVector<OpFoldResult> offsets, sizes;
  for (int64_t i = 0, skip = 4 - type.getRank(); i < type.getRank(); ++i) {
    bool along = biasAlong[skip + i];
    offsets.push_back(along ? at[skip + i] : zero);
    sizes.push_back(along ? size[skip + i] : one);
  }
  // [rows, cols] or [cols].
  return tb.slice(bias, offsets, sizes, byRow ? 2 : 1);
}

void AttentionTiler::setTile(OpBuilder &b, ValueRange ivs) {
  TileBuilder tb(b, op.getLoc());
  bIdx = ivs[0];
  h = ivs[1];
  q0 = tb.mul(ivs[2], tb.idx(options.queryBlock));
  rows = tb.min(tb.idx(options.queryBlock), tb.sub(nq, q0));
  qLast = tb.sub(tb.add(q0, rows), tb.idx(1));
  kvh = group == 1 ? h : tb.floorDiv(h, tb.idx(group));
  pos0 = q0;
  posLast = qLast;
  if (queryOffsets) {
    Value o =
        tensor::ExtractOp::create(b, tb.loc, queryOffsets, ValueRange{bIdx});
    o = arith::IndexCastOp::create(b, tb.loc, b.getIndexType(), o);
    pos0 = tb.add(q0, o);
    posLast = tb.add(qLast, o);
  }
  length = Value();
  if (lengths) {
    Value l = tensor::ExtractOp::create(b, tb.loc, lengths, ValueRange{bIdx});
    length = arith::IndexCastOp::create(b, tb.loc, b.getIndexType(), l);
    // A negative length hides every key.
    length = arith::MaxSIOp::create(b, tb.loc, length, tb.idx(0));
  }
  qTile = tb.slice(qs, {bIdx, h, q0, b.getIndexAttr(0)},
                   {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                    b.getIndexAttr(d)});
  biasRows = true;
  slope = qPos = Value();
  if (alibi) {
    slope = tensor::ExtractOp::create(b, tb.loc, alibi, ValueRange{h});
    qPos = tb.slice(positions, {q0}, {rows}, /*keep=*/1);
  }
}

SmallVector<Value> AttentionTiler::keyLoop(OpBuilder &b, Value from, Value to,
                                           ValueRange state, bool partial) {
  Location loc = op.getLoc();
  TileBuilder tb(b, loc);
  Value step = tb.idx(options.keyBlock);
  auto loop = scf::ForOp::create(
      b, loc, from, to, step, state,
      [&](OpBuilder &nb, Location, Value k0, ValueRange carried) {
        TileBuilder kb(nb, loc);
        Value cols = kb.min(step, kb.sub(to, k0));
        // Packed key tiles start on the key-block grid (tileState aligns
        // the key loops' starts when they are packed).
        Value kTile =
            kPacked
                ? kb.slice(kPacked,
                           {bIdx, kvh, kb.floorDiv(k0, step),
                            nb.getIndexAttr(0), nb.getIndexAttr(0)},
                           {nb.getIndexAttr(1), nb.getIndexAttr(1),
                            nb.getIndexAttr(1), nb.getIndexAttr(d), cols})
                : kb.slice(k, {bIdx, kvh, k0, nb.getIndexAttr(0)},
                           {nb.getIndexAttr(1), nb.getIndexAttr(1), cols,
                            nb.getIndexAttr(d)});
        Value vTile = kb.slice(v, {bIdx, kvh, k0, nb.getIndexAttr(0)},
                               {nb.getIndexAttr(1), nb.getIndexAttr(1), cols,
                                nb.getIndexAttr(dv)});
        SmallVector<Value> offsets;
        if (partial)
          offsets = {pos0, k0};
        Value kPos =
            alibi ? kb.slice(positions, {k0}, {cols}, /*keep=*/1) : Value();
        auto tile = OnlineAttentionOp::create(
            nb, loc, qTile, kTile, vTile, carried[0], carried[1], carried[2],
            offsets, slope, qPos, kPos, biasTile(kb, k0, cols),
            partial ? mask : MaskAttr(), scores);
        if (kPacked)
          tile.setKeyTransposed(true);
        scf::YieldOp::create(nb, loc, tile.getResults());
      });
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> AttentionTiler::tileState(OpBuilder &b, Value chunkLo,
                                             Value chunkHi) {
  TileBuilder tb(b, op.getLoc());
  SmallVector<Value> state{
      tb.filled({rows, b.getIndexAttr(dv)}, 0.0),
      tb.filled({rows}, -std::numeric_limits<double>::infinity()),
      tb.filled({rows}, 0.0)};
  if (chunkLo) {
    // A chunk of the keys of a positionless mask: full tiles only.
    Value hi = length ? tb.min(chunkHi, length) : chunkHi;
    Value lo = tb.min(chunkLo, hi);
    return keyLoop(b, lo, hi, state, /*partial=*/false);
  }

  const bool causal = mask && mask.getCausal();
  const int64_t window = mask ? mask.getWindow() : 0;
  const int64_t globalTokens = mask ? mask.getGlobalTokens() : 0;
  // The keys some query of the tile sees: [lo, hi). Signed where the
  // query positions enter (negative with a negative query offset): lo is
  // never negative, hi may be until it is clamped to lo below.
  Value lo = tb.idx(0), hi = nk;
  if (causal)
    hi = tb.smin(hi, tb.add(posLast, tb.idx(1)));
  if (window > 0) {
    Value reach = tb.idx(window - 1);
    lo = tb.sub(tb.smax(pos0, reach), reach);
    // Packed key tiles are read from the key-block grid: the first tile
    // starts at or below the window's first key, the keys before it
    // hidden by the mask of that (partial) tile.
    if (kPacked) {
      Value step = tb.idx(options.keyBlock);
      lo = tb.mul(tb.floorDiv(lo, step), step);
    }
    hi = tb.smin(hi, tb.add(posLast, tb.idx(window)));
  }
  // The keys every query of the tile sees: [fullLo, fullHi).
  Value fullLo = lo, fullHi = hi;
  if (causal)
    fullHi = tb.smin(fullHi, tb.add(pos0, tb.idx(1)));
  if (window > 0) {
    Value w = tb.idx(window);
    Value next = tb.add(posLast, tb.idx(1));
    fullLo = tb.smax(fullLo, tb.sub(tb.smax(next, w), w));
    fullHi = tb.smin(fullHi, tb.add(pos0, w));
  }
  // Global tokens: a tile with a global query sees every key the causal mask
  // leaves, all of it partial; the others also see the global keys [0, g)
  // below the window, which every query of the tile sees (g <= pos0).
  Value globalEnd, globalRows;
  if (globalTokens > 0) {
    Value g = tb.idx(globalTokens);
    // A tile with a query before g (negative ones included: conservative,
    // the mask then decides) takes the global rows' classes.
    globalRows = tb.slt(pos0, g);
    Value allHi = causal ? tb.smin(nk, tb.add(posLast, tb.idx(1))) : nk;
    globalEnd = tb.select(globalRows, tb.idx(0), tb.min(g, lo));
    lo = tb.select(globalRows, tb.idx(0), lo);
    hi = tb.select(globalRows, allHi, hi);
  }
  if (length) {
    hi = tb.smin(hi, length);
    fullHi = tb.smin(fullHi, length);
    if (globalEnd)
      globalEnd = tb.min(globalEnd, length);
  }
  hi = tb.smax(hi, lo);
  Value step = tb.idx(options.keyBlock);
  SmallVector<Value> result = state;
  if (!mask || (!causal && window == 0)) {
    // Every tile of [lo, hi) is full.
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "]   key loop of a query tile: "
                            << "[lo, hi) full\n");
    return keyLoop(b, lo, hi, result, /*partial=*/false);
  }
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "]   key loops of a query tile:";
    if (globalEnd)
      llvm::dbgs() << " [0, min(" << globalTokens
                   << ", lo)) full (the global keys),";
    llvm::dbgs() << " [lo, a) partial, [a, f) full, [f, hi) partial";
    if (causal)
      llvm::dbgs() << "; hi <= the tile's last query + 1 (causal)";
    if (window > 0)
      llvm::dbgs() << "; [lo, hi) within a window of " << window;
    if (globalRows)
      llvm::dbgs() << "; the tiles of the " << globalTokens
                   << " global queries all partial";
    if (length)
      llvm::dbgs() << "; hi <= the key length";
    llvm::dbgs() << "\n";
  });
  // The key tiles start at lo; the full ones are those of [fullLo, fullHi)
  // on that grid: [a, f).
  Value a = tb.min(tb.alignUp(tb.max(fullLo, lo), lo, step), hi);
  Value f = tb.add(
      a, tb.mul(tb.floorDiv(tb.sub(tb.smax(tb.smin(fullHi, hi), a), a), step),
                step));
  if (globalRows) {
    a = tb.select(globalRows, hi, a);
    f = tb.select(globalRows, hi, f);
  }
  if (globalEnd)
    result = keyLoop(b, tb.idx(0), globalEnd, result, /*partial=*/false);
  result = keyLoop(b, lo, a, result, /*partial=*/true);
  result = keyLoop(b, a, f, result, /*partial=*/false);
  return keyLoop(b, f, hi, result, /*partial=*/true);
}

Value AttentionTiler::plainForm(OpBuilder &b) {
  Location loc = op.getLoc();
  Value init = tensor::EmptyOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{batch, b.getIndexAttr(heads), nq,
                             b.getIndexAttr(dv)},
      b.getF32Type());
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, b.getIndexAttr(heads), qBlocks},
      ValueRange{init}, std::nullopt,
      [&](OpBuilder &fb, Location, ValueRange args) {
        setTile(fb, args.take_front(3));
        SmallVector<Value> state = tileState(fb, Value(), Value());
        Value out = AttentionFinalizeOp::create(
            fb, loc,
            RankedTensorType::get({ShapedType::kDynamic, dv}, fb.getF32Type()),
            state[0], state[1], state[2]);
        auto inParallel = scf::InParallelOp::create(fb, loc);
        OpBuilder::InsertionGuard guard(fb);
        fb.setInsertionPointToStart(inParallel.getBody());
        TileBuilder(fb, loc).insert(
            out, args[3], {bIdx, h, q0, fb.getIndexAttr(0)},
            {fb.getIndexAttr(1), fb.getIndexAttr(1), rows,
             fb.getIndexAttr(dv)});
      });
  return forall.getResult(0);
}

Value AttentionTiler::packKeyTiles(OpBuilder &b, Value into) {
  Location loc = op.getLoc();
  TileBuilder tb(b, loc);
  const int64_t kb = options.keyBlock;
  int64_t kvHeads = op.getKey().getType().getDimSize(1);
  Value tiles = tb.ceilDiv(nk, tb.idx(kb));
  // One (batch, key/value head, key tile) per iteration, in parallel; each
  // transposes its [c, d] keys into [d, c] (the columns past n_k of the
  // last tile are never read). The copy's loops are nested in the forall,
  // so that they run sequentially in each thread with no index arithmetic
  // per element.
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{batch, b.getIndexAttr(kvHeads), tiles},
      ValueRange{into}, std::nullopt,
      [&](OpBuilder &fb, Location, ValueRange args) {
        TileBuilder f(fb, loc);
        Value k0 = f.mul(args[2], f.idx(kb));
        Value cols = f.min(f.idx(kb), f.sub(nk, k0));
        Value tile = f.slice(k, {args[0], args[1], k0, fb.getIndexAttr(0)},
                             {fb.getIndexAttr(1), fb.getIndexAttr(1), cols,
                              fb.getIndexAttr(d)});
        SmallVector<OpFoldResult> at{args[0], args[1], args[2],
                                     fb.getIndexAttr(0), fb.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes{fb.getIndexAttr(1), fb.getIndexAttr(1),
                                        fb.getIndexAttr(1), fb.getIndexAttr(d),
                                        cols};
        Value dest = f.slice(args[3], at, sizes);
        Value packed =
            linalg::TransposeOp::create(fb, loc, tile, dest,
                                        ArrayRef<int64_t>{1, 0})
                .getResult()[0];
        auto inParallel = scf::InParallelOp::create(fb, loc);
        OpBuilder::InsertionGuard guard(fb);
        fb.setInsertionPointToStart(inParallel.getBody());
        f.insert(packed, args[3], at, sizes);
      });
  return forall.getResult(0);
}

Value AttentionTiler::plainOrPackedForm(OpBuilder &b) {
  if (!options.packKeys || !f32Keys)
    return plainForm(b);
  // (packedKeysInit is null when n_q is at most one query tile statically.)
  // Q K^T of a tile reads K^T in rows of the key tile: the contraction
  // kernels pack each tile's K^T for the broadcast kernel, once per (query
  // tile, key tile) pair, and that copy (a transpose, gathers) took 15% of
  // full attention's time on Zen 5 at n = 1024. Packed once per call into
  // [d, key-block] tiles instead, each query tile reads them as they are;
  // with at most one query tile the copy is not shared and costs the same
  // or more (a decode step would transpose its whole cache), so the plain
  // form stays, behind a test of n_q when it is symbolic.
  Location loc = op.getLoc();
  TileBuilder tb(b, loc);
  int64_t staticNq = op.getQuery().getType().getDimSize(2);
  if (!packedKeysInit)
    return plainForm(b);
  Value into = packedKeysInit;
  auto packedForm = [&](OpBuilder &pb) {
    kPacked = packKeyTiles(pb, into);
    Value result = plainForm(pb);
    kPacked = Value();
    return result;
  };
  if (!ShapedType::isDynamic(staticNq))
    return packedForm(b);
  Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, nq,
                                        tb.idx(options.queryBlock));
  Type type = RankedTensorType::get(
      {ShapedType::kDynamic, heads, ShapedType::kDynamic, dv}, b.getF32Type());
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, several,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value packed = packedForm(b);
  scf::YieldOp::create(
      b, loc, tensor::CastOp::create(b, loc, type, packed).getResult());
  b.setInsertionPointToStart(ifOp.elseBlock());
  Value plain = plainForm(b);
  scf::YieldOp::create(b, loc,
                       tensor::CastOp::create(b, loc, type, plain).getResult());
  return ifOp.getResult(0);
}

SmallVector<Value> AttentionTiler::partialStates(OpBuilder &b,
                                                 ArrayRef<int64_t> outer,
                                                 ValueRange dynamicSizes,
                                                 ArrayRef<int64_t> inner) {
  auto make = [&](std::optional<int64_t> last) -> Value {
    SmallVector<int64_t> shape(outer);
    shape.append(inner.begin(), inner.end());
    if (last)
      shape.push_back(*last);
    auto type = RankedTensorType::get(shape, b.getF32Type());
    return bufferization::AllocTensorOp::create(b, op.getLoc(), type,
                                                dynamicSizes);
  };
  return {make(dv), make(std::nullopt), make(std::nullopt)};
}

SmallVector<Value> AttentionTiler::splitPartials(OpBuilder &b, Value chunks) {
  int64_t dynamic = ShapedType::kDynamic;
  return partialStates(b, {dynamic, heads, dynamic, dynamic},
                       ValueRange{batch, chunks, nq}, {});
}

Value AttentionTiler::splitForm(OpBuilder &b, Value splits, ValueRange states) {
  Location loc = op.getLoc();
  TileBuilder tb(b, loc);
  Value step = tb.idx(options.keyBlock);
  // Chunks of whole key tiles.
  Value chunk = tb.mul(tb.ceilDiv(tb.ceilDiv(nk, splits), step), step);
  OpFoldResult H = b.getIndexAttr(heads), Dv = b.getIndexAttr(dv);
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  Type f32 = b.getF32Type();
  auto partials = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, H, qBlocks, splits}, states,
      std::nullopt, [&](OpBuilder &fb, Location, ValueRange args) {
        setTile(fb, args.take_front(3));
        TileBuilder cb(fb, loc);
        Value c0 = cb.mul(args[3], chunk);
        Value c1 = cb.min(nk, cb.add(c0, chunk));
        SmallVector<Value> state = tileState(fb, c0, c1);
        auto inParallel = scf::InParallelOp::create(fb, loc);
        OpBuilder::InsertionGuard guard(fb);
        fb.setInsertionPointToStart(inParallel.getBody());
        TileBuilder ib(fb, loc);
        ib.insert(state[0], args[4], {bIdx, h, args[3], q0, zero},
                  {one, one, one, rows, Dv});
        ib.insert(state[1], args[5], {bIdx, h, args[3], q0},
                  {one, one, one, rows});
        ib.insert(state[2], args[6], {bIdx, h, args[3], q0},
                  {one, one, one, rows});
      });
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, H, nq, Dv}, f32);
  auto merged = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, H, qBlocks}, ValueRange{init},
      std::nullopt, [&](OpBuilder &fb, Location, ValueRange args) {
        TileBuilder mb(fb, loc);
        Value bi = args[0], hi = args[1];
        Value start = mb.mul(args[2], mb.idx(options.queryBlock));
        Value n = mb.min(mb.idx(options.queryBlock), mb.sub(nq, start));
        // [splits, rows, d_v] and [splits, rows]: keep the split dimension
        // even when it is 1.
        auto slice = [&](Value source, ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes,
                         ArrayRef<int64_t> shape) {
          return tensor::ExtractSliceOp::create(
              fb, loc, RankedTensorType::get(shape, f32), source, offsets,
              sizes, SmallVector<OpFoldResult>(offsets.size(), one));
        };
        int64_t dyn = ShapedType::kDynamic;
        Value acc = slice(partials.getResult(0), {bi, hi, zero, start, zero},
                          {one, one, splits, n, Dv}, {dyn, dyn, dv});
        Value m = slice(partials.getResult(1), {bi, hi, zero, start},
                        {one, one, splits, n}, {dyn, dyn});
        Value l = slice(partials.getResult(2), {bi, hi, zero, start},
                        {one, one, splits, n}, {dyn, dyn});
        Value out = AttentionFinalizeOp::create(
            fb, loc, RankedTensorType::get({dyn, dv}, f32), acc, m, l);
        auto inParallel = scf::InParallelOp::create(fb, loc);
        OpBuilder::InsertionGuard guard(fb);
        fb.setInsertionPointToStart(inParallel.getBody());
        TileBuilder(fb, loc).insert(out, args[3], {bi, hi, start, zero},
                                    {one, one, n, Dv});
      });
  return merged.getResult(0);
}

SmallVector<Value> AttentionTiler::groupedPartials(OpBuilder &b) {
  int64_t most = std::max<int64_t>(options.splitUnits, 1);
  return partialStates(b, {ShapedType::kDynamic, heads / group, most},
                       ValueRange{batch}, {group});
}

Value AttentionTiler::groupedForm(OpBuilder &b, ValueRange initial) {
  Location loc = op.getLoc();
  TileBuilder tb(b, loc);
  Value step = tb.idx(options.keyBlock);
  int64_t kvHeads = heads / group;
  OpFoldResult G = b.getIndexAttr(group), KV = b.getIndexAttr(kvHeads),
               Dv = b.getIndexAttr(dv), D = b.getIndexAttr(d);
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  Type f32 = b.getF32Type();
  // Enough chunks to make `split-units` (batch, key/value head, chunk)
  // units, each of at least `split-min-keys` keys of the cache.
  Value splits = tb.idx(1);
  if (options.splitUnits > 1) {
    Value units = tb.mul(batch, tb.idx(kvHeads));
    Value wanted =
        tb.ceilDiv(tb.idx(options.splitUnits), tb.max(units, tb.idx(1)));
    Value most = tb.max(tb.floorDiv(nk, tb.idx(options.splitMinKeys)),
                        tb.idx(1));
    splits = tb.min(wanted, most);
  }
  Value minChunk = tb.idx(llvm::alignTo(options.splitMinKeys,
                                        options.keyBlock));
  SmallVector<Value> states(initial);
  if (states.empty())
    states = groupedPartials(b);
  Value accs = states[0], maxs = states[1], sums = states[2];
  const bool causal = mask && mask.getCausal();
  const int64_t window = mask ? mask.getWindow() : 0;
  auto partials = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, KV, splits},
      ValueRange{accs, maxs, sums}, std::nullopt,
      [&](OpBuilder &fb, Location, ValueRange args) {
        TileBuilder cb(fb, loc);
        bIdx = args[0];
        kvh = args[1];
        h = cb.mul(kvh, cb.idx(group));
        pos0 = cb.idx(0);
        if (queryOffsets) {
          Value o = tensor::ExtractOp::create(fb, loc, queryOffsets,
                                              ValueRange{bIdx});
          pos0 = arith::IndexCastOp::create(fb, loc, fb.getIndexType(), o);
        }
        posLast = pos0;
        // The bias of the one query, the same for the group's heads
        // (groupedDecode).
        biasRows = false;
        // The query heads h .. h + group of the one query: [group, d].
        qTile = tensor::ExtractSliceOp::create(
            fb, loc,
            RankedTensorType::get(
                {group, d}, cast<RankedTensorType>(qs.getType()).getElementType()),
            qs,
            ArrayRef<OpFoldResult>{bIdx, h, zero, zero},
            ArrayRef<OpFoldResult>{one, G, one, D},
            ArrayRef<OpFoldResult>{one, one, one, one});
        slope = qPos = Value();
        // The keys the query sees: [lo, hi), every one of them; none for
        // a causal query before position 0 (a pad of a left-padded row).
        // Signed until hi is clamped to lo.
        Value lo = cb.idx(0), hi = nk;
        if (causal)
          hi = cb.smin(hi, cb.add(pos0, cb.idx(1)));
        if (window > 0) {
          Value reach = cb.idx(window - 1);
          lo = cb.sub(cb.smax(pos0, reach), reach);
          hi = cb.smin(hi, cb.add(pos0, cb.idx(window)));
        }
        if (lengths) {
          Value l = tensor::ExtractOp::create(fb, loc, lengths,
                                              ValueRange{bIdx});
          l = arith::IndexCastOp::create(fb, loc, fb.getIndexType(), l);
          hi = cb.smin(hi, arith::MaxSIOp::create(fb, loc, l, cb.idx(0)));
        }
        hi = cb.smax(hi, lo);
        // This unit's chunk of [lo, hi): whole key tiles, at least
        // `split-min-keys` keys (the later chunks of a short range empty).
        Value chunk = cb.max(
            cb.mul(cb.ceilDiv(cb.ceilDiv(cb.sub(hi, lo), splits), step), step),
            minChunk);
        Value c0 = cb.min(cb.add(lo, cb.mul(args[2], chunk)), hi);
        Value c1 = cb.min(cb.add(c0, chunk), hi);
        SmallVector<Value> state{
            cb.filled({G, Dv}, 0.0),
            cb.filled({G}, -std::numeric_limits<double>::infinity()),
            cb.filled({G}, 0.0)};
        state = keyLoop(fb, c0, c1, state, /*partial=*/false);
        auto inParallel = scf::InParallelOp::create(fb, loc);
        OpBuilder::InsertionGuard guard(fb);
        fb.setInsertionPointToStart(inParallel.getBody());
        TileBuilder ib(fb, loc);
        ib.insert(state[0], args[3], {bIdx, kvh, args[2], zero, zero},
                  {one, one, one, G, Dv});
        ib.insert(state[1], args[4], {bIdx, kvh, args[2], zero},
                  {one, one, one, G});
        ib.insert(state[2], args[5], {bIdx, kvh, args[2], zero},
                  {one, one, one, G});
      });
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, b.getIndexAttr(heads), nq, Dv},
      f32);
  auto merged = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, KV}, ValueRange{init},
      std::nullopt, [&](OpBuilder &fb, Location, ValueRange args) {
        int64_t dyn = ShapedType::kDynamic;
        auto slice = [&](Value source, ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes,
                         ArrayRef<int64_t> shape) {
          return tensor::ExtractSliceOp::create(
              fb, loc, RankedTensorType::get(shape, f32), source, offsets,
              sizes, SmallVector<OpFoldResult>(offsets.size(), one));
        };
        Value acc = slice(partials.getResult(0),
                          {args[0], args[1], zero, zero, zero},
                          {one, one, splits, G, Dv}, {dyn, group, dv});
        Value m = slice(partials.getResult(1), {args[0], args[1], zero, zero},
                        {one, one, splits, G}, {dyn, group});
        Value l = slice(partials.getResult(2), {args[0], args[1], zero, zero},
                        {one, one, splits, G}, {dyn, group});
        Value out = AttentionFinalizeOp::create(
            fb, loc, RankedTensorType::get({group, dv}, f32), acc, m, l);
        TileBuilder mb(fb, loc);
        Value firstHead = mb.mul(args[1], mb.idx(group));
        auto inParallel = scf::InParallelOp::create(fb, loc);
        OpBuilder::InsertionGuard guard(fb);
        fb.setInsertionPointToStart(inParallel.getBody());
        mb.insert(out, args[2], {args[0], firstHead, zero, zero},
                  {one, G, one, Dv});
      });
  return merged.getResult(0);
}

Value AttentionTiler::generalForm(OpBuilder &b) {
  Location loc = op.getLoc();
  TileBuilder tb(b, loc);
  if (!positionless() || options.splitUnits <= 1)
    return plainOrPackedForm(b);
  // Split the keys when the (batch, head, query tile) units are fewer
  // than `split-units`: into enough chunks to make that many units, of at
  // least `split-min-keys` keys each.
  // That is, when there are fewer units than `split-units` and at least
  // two chunks' worth of keys.
  Value units =
      tb.max(tb.mul(tb.mul(batch, tb.idx(heads)), qBlocks), tb.idx(1));
  Value split = arith::AndIOp::create(
      b, loc, tb.ult(units, tb.idx(options.splitUnits)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, nk,
                            tb.idx(2 * options.splitMinKeys)));
  // The partial states have room for the most chunks (`split-units`), and
  // none where the keys are not split: their size then has no division by
  // a run-time value, which the memory plan could not compute at the
  // function's entry, before the checks that guard it.
  SmallVector<Value> partials =
      splitPartials(b, tb.select(split, tb.idx(options.splitUnits), tb.idx(0)));
  Type type = RankedTensorType::get(
      {ShapedType::kDynamic, heads, ShapedType::kDynamic, dv}, b.getF32Type());
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, split,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value wanted = tb.ceilDiv(tb.idx(options.splitUnits), units);
  Value most = tb.floorDiv(nk, tb.idx(options.splitMinKeys));
  Value s = splitForm(b, tb.min(wanted, most), partials);
  scf::YieldOp::create(b, loc,
                       tensor::CastOp::create(b, loc, type, s).getResult());
  b.setInsertionPointToStart(ifOp.elseBlock());
  Value p = plainOrPackedForm(b);
  scf::YieldOp::create(b, loc,
                       tensor::CastOp::create(b, loc, type, p).getResult());
  return ifOp.getResult(0);
}

void AttentionTiler::rewrite(RewriterBase &rewriter) {
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  TileBuilder tb(b, loc);
  auto qType = op.getQuery().getType();
  heads = qType.getDimSize(1);
  group = heads / op.getKey().getType().getDimSize(1);
  d = qType.getDimSize(3);
  dv = op.getValue().getType().getDimSize(3);
  mask = op.getMaskAttr();
  // The tiles compute in f32: without `narrow-in-place`, bf16 and f16
  // inputs are converted here; with it, they are read in place by the
  // tiles' products. f16 only for one tile of queries known at compile
  // time (decode) or queries at offsets into a cache: with several query
  // tiles, each would widen every key tile again, and the f32 copy with
  // its keys packed once per call was faster when every key is attended
  // (Zen 5, 1024 queries and keys: 0.93x in place), while a decode step
  // spends 40 times longer converting the cache than attending to it, and
  // a prefill converted the whole cache (max_len keys) to attend to the
  // few its positions reach (a 128-token prompt into a cache of 4104
  // positions: 0.53x of the bf16 cache's prefill).
  Type f32 = b.getF32Type();
  Type elementType = qType.getElementType();
  const bool oneQueryTile = !qType.isDynamicDim(2) &&
                            qType.getDimSize(2) <= options.queryBlock;
  const bool inPlace =
      options.narrowInPlace &&
      (elementType.isBF16() ||
       (elementType.isF16() && (oneQueryTile || op.getQueryOffsets())));
  k = inPlace ? op.getKey() : tb.convert(op.getKey(), f32);
  v = inPlace ? op.getValue() : tb.convert(op.getValue(), f32);
  Value query = inPlace ? op.getQuery() : tb.convert(op.getQuery(), f32);
  f32Keys = !inPlace;
  lengths = op.getLengths();
  alibi = op.getAlibi();
  bias = op.getBias();
  queryOffsets = op.getQueryOffsets();
  if (queryOffsets &&
      cast<RankedTensorType>(queryOffsets.getType()).isDynamicDim(0)) {
    tb.assertSize(queryOffsets, 0,
                  tensor::DimOp::create(b, loc, op.getQuery(), 0),
                  "seq.attention: query_offsets size differs from the batch");
  }
  batch = tensor::DimOp::create(b, loc, op.getQuery(), 0);
  nq = tensor::DimOp::create(b, loc, op.getQuery(), 2);
  nk = tensor::DimOp::create(b, loc, op.getKey(), 2);
  qBlocks = tb.ceilDiv(nq, tb.idx(options.queryBlock));
  if (bias) {
    // The dimensions the bias varies along; where its size or the scores'
    // is dynamic, the two must agree at run time (a dynamic dimension never
    // broadcasts), as in the reference lowering.
    auto biasType = cast<RankedTensorType>(bias.getType());
    Value scoreSizes[4] = {batch, tb.idx(heads), nq, nk};
    int64_t staticScores[4] = {qType.getDimSize(0), heads, qType.getDimSize(2),
                               op.getKey().getType().getDimSize(2)};
    for (int64_t i = 0, skip = 4 - biasType.getRank(); i < biasType.getRank();
         ++i) {
      // The key dimension is 1 only where n_k is (whyNot): a slice along
      // it all the same, so that the tile's bias is [.., c].
      biasAlong[skip + i] = biasType.getDimSize(i) != 1 || skip + i == 3;
      if (!biasAlong[skip + i] ||
          (biasType.getDimSize(i) == staticScores[skip + i] &&
           !biasType.isDynamicDim(i)))
        continue;
      tb.assertSize(bias, i, scoreSizes[skip + i],
                    "seq.attention: dimension " + Twine(i) +
                        " of the score bias differs from the scores'");
    }
  }

  // The scale folded into Q once, instead of into every tile of scores; a
  // bf16 or f16 Q read in place stays as it is (a scaled copy would round
  // again), and the tiles scale their f32 scores.
  scores = FloatAttr();
  if (inPlace) {
    qs = query;
    scores = b.getF32FloatAttr(static_cast<float>(op.getEffectiveScale()));
  } else {
    auto scaleType = RankedTensorType::get({}, b.getF32Type());
    Value scale = arith::ConstantOp::create(
        b, loc, scaleType,
        DenseElementsAttr::get(
            scaleType, static_cast<float>(op.getEffectiveScale())));
    qs = MulOp::create(b, loc, query.getType(), query, scale);
  }

  packedKeysInit = Value();
  int64_t staticQueries = qType.getDimSize(2);
  if (options.packKeys && f32Keys &&
      (ShapedType::isDynamic(staticQueries) ||
       staticQueries > options.queryBlock)) {
    Value tiles = tb.ceilDiv(nk, tb.idx(options.keyBlock));
    packedKeysInit = tensor::EmptyOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{batch, b.getIndexAttr(heads / group), tiles,
                               b.getIndexAttr(d),
                               b.getIndexAttr(options.keyBlock)},
        b.getF32Type());
  }

  if (alibi) {
    if (cast<RankedTensorType>(alibi.getType()).isDynamicDim(0)) {
      tb.assertSize(alibi, 0, tb.idx(heads),
                    "seq.attention: alibi size differs from the heads");
    }
    // Positions 0, 1, ..., max(n_q, n_k) - 1 as f32, once per call; the
    // tiles' positions are slices of it.
    Value n = tb.max(nq, nk);
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{n},
                                         b.getF32Type());
    positions =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{}, ValueRange{init},
            ArrayRef<AffineMap>{b.getMultiDimIdentityMap(1)},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
            [](OpBuilder &gb, Location gl, ValueRange) {
              Value i = linalg::IndexOp::create(gb, gl, 0);
              Value i64 = arith::IndexCastUIOp::create(gb, gl,
                                                       gb.getI64Type(), i);
              Value f = arith::UIToFPOp::create(gb, gl, gb.getF32Type(), i64);
              linalg::YieldOp::create(gb, gl, f);
            })
            .getResult(0);
  }

  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] tiling at " << loc << ": "
                 << qType.getElementType() << ", " << heads << " head(s) ("
                 << group << " per key/value head), d = " << d
                 << ", d_v = " << dv << ", " << options.queryBlock << "x"
                 << options.keyBlock << " (query x key) tiles";
    if (positionless())
      llvm::dbgs() << ", no positional mask: every tile full";
    else
      llvm::dbgs() << ", mask " << mask << ": partial tiles at "
                   << llvm::join(partialTiles(), ", ");
    if (positionless() && options.splitUnits > 1)
      llvm::dbgs() << "; split-key form (flash-decoding) when fewer than "
                   << options.splitUnits << " units at run time, chunks of "
                   << options.splitMinKeys << "+ keys";
    else
      llvm::dbgs() << "; no split-key form ("
                   << (positionless() ? "split-units <= 1" : "positional mask")
                   << ")";
    llvm::dbgs() << (lengths ? "; key lengths" : "") << (alibi ? "; ALiBi" : "")
                 << (bias ? "; score bias" : "")
                 << (queryOffsets ? "; query offsets" : "") << "\n";
  });
  // The grouped form where n_q may be 1: behind a test of it when n_q is
  // symbolic.
  int64_t staticNq = qType.getDimSize(2);
  bool grouped = groupedDecode() && (ShapedType::isDynamic(staticNq) ||
                                     staticNq == 1);
  LLVM_DEBUG({
    if (grouped)
      llvm::dbgs() << "[" DEBUG_TYPE "]   grouped decode form"
                   << (staticNq == 1 ? "" : " when n_q = 1 at run time")
                   << ": the " << group
                   << " query heads of a key/value head in one tile, the "
                      "keys each query sees split across the cores "
                      "(chunks of "
                   << options.splitMinKeys << "+ keys, up to "
                   << options.splitUnits << " units)\n";
    else if (group > 1)
      llvm::dbgs() << "[" DEBUG_TYPE "]   no grouped decode form: "
                   << (alibi              ? "ALiBi slopes per head"
                       : biasAlong[1]     ? "a score bias per head"
                       : !groupedDecode() ? "global tokens"
                                          : "n_q is not 1")
                   << "\n";
  });
  Value result;
  if (grouped && staticNq == 1) {
    result = groupedForm(b);
  } else if (grouped) {
    // One query per head (a decode step) at run time: the grouped form,
    // whose partial states are made before the test (no allocation inside
    // its branch).
    SmallVector<Value> partials = groupedPartials(b);
    Value single = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, nq,
                                         tb.idx(1));
    Type type = RankedTensorType::get(
        {ShapedType::kDynamic, heads, ShapedType::kDynamic, dv},
        b.getF32Type());
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, single,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value g = groupedForm(b, partials);
      scf::YieldOp::create(b, loc, tensor::CastOp::create(b, loc, type, g)
                                       .getResult());
      b.setInsertionPointToStart(ifOp.elseBlock());
      Value p = generalForm(b);
      scf::YieldOp::create(b, loc, tensor::CastOp::create(b, loc, type, p)
                                       .getResult());
    }
    result = ifOp.getResult(0);
  } else {
    result = generalForm(b);
  }
  result = tb.convert(result, op.getType().getElementType());
  if (result.getType() != op.getType())
    result = tensor::CastOp::create(b, loc, op.getType(), result);

  if (options.remarks) {
    InFlightDiagnostic remark = op.emitRemark();
    remark << "attention tiled: online softmax over " << options.queryBlock
           << "x" << options.keyBlock
           << " (query x key) tiles, the (batch, head, query tile) units in "
              "parallel, ";
    if (inPlace)
      remark << (elementType.isBF16() ? "bf16" : "f16")
             << " Q, K and V read in place (no f32 copy), Q K^T "
             << (options.bf16Dot && elementType.isBF16()
                     ? "in bf16 pairs by vdpbf16ps"
                     : "with Q and K widened to f32 in registers")
             << ", P kept in f32 times V widened in registers, f32 "
                "accumulators, the scale applied to the f32 scores";
    else if (!qType.getElementType().isF32())
      remark << (elementType.isBF16() ? "bf16" : "f16")
             << " Q, K and V converted to f32 copies once per call, the "
                "scale folded into Q"
             << (options.narrowInPlace && elementType.isF16()
                     ? " (f16 is read in place for one query tile of a "
                       "static size or queries at offsets into a cache only)"
                     : "");
    else
      remark << "the scale folded into Q";
    if (!positionless()) {
      remark << "; mask " << mask
             << ": empty tiles skipped by the loop bounds, full tiles "
                "unmasked, partial tiles ("
             << llvm::join(partialTiles(), ", ") << ") masked";
    } else {
      remark << "; no positional mask: every tile full";
      if (options.splitUnits > 1)
        remark << "; with fewer than " << options.splitUnits
               << " units at run time, the keys split into chunks of at "
                  "least "
               << options.splitMinKeys
               << " keys across the cores, their partial states merged "
                  "(flash-decoding)";
    }
    if (lengths)
      remark << "; the key range ends at the lengths";
    if (alibi)
      remark << "; ALiBi in the tile";
    if (bias)
      remark << "; the score bias added in the tile"
             << (biasAlong[2] ? "" : " (one row of it per query tile)");
    if (queryOffsets)
      remark << "; queries at their rows' offsets"
             << (positionless() ? ""
                                : ", the key loops ending at each query "
                                  "tile's last absolute position");
    if (grouped)
      remark << "; with one query per head"
             << (staticNq == 1 ? "" : " (a decode step, at run time)")
             << ", the " << group
             << " query heads of each key/value head stacked in one tile "
                "(each key and value read once for them) and the keys the "
                "query sees split into chunks of at least "
             << options.splitMinKeys << " keys across the cores, their "
                "partial states merged (flash-decoding)";
  }
  rewriter.replaceOp(op, result);
}

struct SeqTileAttentionPass
    : public mlir::seq::impl::SeqTileAttentionBase<SeqTileAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    if (queryBlock <= 0 || keyBlock <= 0) {
      getOperation()->emitError()
          << "seq-tile-attention: expected positive query-block and "
             "key-block, got "
          << static_cast<int64_t>(queryBlock) << " and "
          << static_cast<int64_t>(keyBlock);
      return signalPassFailure();
    }
    TileOptions options{queryBlock, keyBlock, splitUnits,
                        std::max<int64_t>(splitMinKeys, 1), remarks,
                        narrowInPlace, bf16Dot, packKeys};
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] query-block " << options.queryBlock
               << ", key-block " << options.keyBlock << ", split-units "
               << options.splitUnits << ", split-min-keys "
               << options.splitMinKeys << "\n");
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      (void)tileAttention(rewriter, op, options.queryBlock, options.keyBlock,
                          options.splitUnits, options.splitMinKeys,
                          options.remarks, options.narrowInPlace,
                          options.bf16Dot, options.packKeys);
  }
};

} // namespace

LogicalResult mlir::seq::tileAttention(RewriterBase &rewriter, AttentionOp op,
                                       int64_t queryBlock, int64_t keyBlock,
                                       int64_t splitUnits,
                                       int64_t splitMinKeys, bool remarks,
                                       bool narrowInPlace, bool bf16Dot,
                                       bool packKeys) {
  TileOptions options{queryBlock, keyBlock,    splitUnits, splitMinKeys,
                      remarks,    narrowInPlace, bf16Dot,    packKeys};
  AttentionTiler tiler(op, options);
  std::string why = tiler.whyNot();
  if (!why.empty()) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] reference lowering at "
                            << op.getLoc() << ": " << why << "\n");
    if (remarks)
      op.emitRemark("attention takes the reference lowering, which "
                    "materializes the scores: ")
          << why;
    return failure();
  }
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  tiler.rewrite(rewriter);
  return success();
}
