//===- PackWeights.cpp - weights in the broadcast kernel's panel layout ---===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A contraction whose right operand is a 2-D parameter, `x @ W^T` (W
// [n, k], every Linear) or `x @ W` (W [k, n]), reads a copy of W packed into
// column panels, P[n / w, k, w] (zero-padded to whole panels), instead of W:
// the broadcast kernel of seq-cpu-vectorize-contractions then loads each
// step's w columns as consecutive vectors, and its whole k x w panel is one
// contiguous stream. The pack depends on the parameter alone, so
// seq-hoist-preparation moves it into the preparation function: it runs
// once per set of weights, not per call. This is the CPU's data tiling: the
// layout is chosen for the target's register tile, as IREE's CPU encodings
// and BLIS's packed panels are.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/KernelUtils.h"
#include "lowering/CPU/Passes.h"

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/IR/Quantization.h"
#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "seq-cpu-pack-weights"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUPACKWEIGHTS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

struct SeqCPUPackWeightsPass
    : public mlir::seq::impl::SeqCPUPackWeightsBase<SeqCPUPackWeightsPass> {
  using Base::Base;
  void runOnOperation() override;

  /// Rewrites `op` to read W (operand `weight`, a parameter) packed, or
  /// returns failure when the contraction is not one the kernels take.
  LogicalResult pack(linalg::LinalgOp op, OpOperand &weight, int64_t width);

  /// Rewrites the q4_0, q4_1, q8_0 or int8 contraction `op` (a generic
  /// carrying `seq.quantized`) to read its blocks, a parameter, from column
  /// panels of `width` columns, or returns failure when it is not one the
  /// VNNI kernel takes.
  LogicalResult packQuantized(linalg::GenericOp op, int64_t width);

  /// Rewrites the byte reads of `blocks` outside its pack `packed` (the
  /// lookups of an Embedding whose table is tied to a packed head) to read
  /// the same bytes of the panels.
  void readLookupsFromPanels(Value blocks, Value packed,
                             const seq::WeightFormatInfo &format,
                             int64_t width);

  /// One packed copy per parameter and layout (1: W is [n, k]; 2: in k
  /// pairs; 4: quantized panels), built at the top of the model function.
  DenseMap<std::pair<Value, unsigned>, Value> packs;

  /// The blocks, panels and format of `packs`' layout 4, in the order
  /// built.
  struct QuantizedPack {
    Value blocks, packed;
    seq::WeightFormatInfo format;
  };
  SmallVector<QuantizedPack> quantizedPacks;
};

/// A parallel generic producing a fresh tensor of `packedType` whose
/// element `element` computes from its indices (linalg.index 0, 1, ...).
Value buildPackGeneric(
    OpBuilder &b, Location loc, RankedTensorType packedType,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> element) {
  Value empty = tensor::EmptyOp::create(b, loc, packedType.getShape(),
                                        packedType.getElementType());
  unsigned rank = packedType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, packedType, ValueRange(), ValueRange{empty},
      ArrayRef<AffineMap>{identity}, parallel,
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> indices;
        for (unsigned dim = 0; dim < rank; ++dim)
          indices.push_back(linalg::IndexOp::create(nb, nloc, dim));
        linalg::YieldOp::create(nb, nloc, element(nb, nloc, indices));
      });
  return generic.getResult(0);
}

/// P[p, k, j] = W[p * w + j, k] (or W[k, p * w + j]), 0 past n; in k pairs,
/// P[p, q, j, r] = W[p * w + j, 2 q + r], 0 past n or k.
Value buildPack(OpBuilder &b, Location loc, Value weight, bool nFirst,
                int64_t width, bool kPairs) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t n = type.getDimSize(nFirst ? 0 : 1);
  int64_t k = type.getDimSize(nFirst ? 1 : 0);
  SmallVector<int64_t> shape = {(n + width - 1) / width, k, width};
  if (kPairs) {
    shape[1] = (k + 1) / 2;
    shape.push_back(2);
  }
  auto packedType = RankedTensorType::get(shape, type.getElementType());
  return buildPackGeneric(
      b, loc, packedType,
      [&](OpBuilder &nb, Location nloc, ArrayRef<Value> index) -> Value {
        auto constant = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, nloc, v).getResult();
        };
        Value column = arith::AddIOp::create(
            nb, nloc,
            arith::MulIOp::create(nb, nloc, index[0], constant(width)),
            index[2]);
        Value inside = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult,
                                             column, constant(n));
        Value clamped =
            arith::MinUIOp::create(nb, nloc, column, constant(n - 1));
        Value step = index[1];
        if (kPairs) {
          step = arith::AddIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, step, constant(2)),
              index[3]);
          inside = arith::AndIOp::create(
              nb, nloc, inside,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult, step,
                                    constant(k)));
          step = arith::MinUIOp::create(nb, nloc, step, constant(k - 1));
        }
        SmallVector<Value> at = nFirst ? SmallVector<Value>{clamped, step}
                                       : SmallVector<Value>{step, clamped};
        Value element = tensor::ExtractOp::create(nb, nloc, weight, at);
        Value zero = arith::ConstantOp::create(
            nb, nloc, nb.getZeroAttr(type.getElementType()));
        Value value =
            arith::SelectOp::create(nb, nloc, inside, element, zero);
        return value;
      });
}

/// The signed byte `v` + 128 as an unsigned byte (its sign bit flipped), or
/// back.
Value flipSign(OpBuilder &b, Location loc, Value v) {
  return arith::XOrIOp::create(
      b, loc, v,
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(v.getType(), -128)));
}

/// Index arithmetic on `index` values (unsigned division and remainder by
/// constants), for the byte positions of the quantized panels.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value constant(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value div(Value x, int64_t d) {
    return arith::DivUIOp::create(b, loc, x, constant(d));
  }
  Value rem(Value x, int64_t d) {
    return arith::RemUIOp::create(b, loc, x, constant(d));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t v) {
    return arith::MulIOp::create(b, loc, x, constant(v));
  }
  Value sub(Value x, int64_t v) {
    return arith::SubIOp::create(b, loc, x, constant(v));
  }
  Value ult(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 constant(v));
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};

/// The q4_0, q4_1 or q8_0 blocks `blocks` [n, kb, bytes] (bytes = 18, 20 or
/// 34), or int8's rows [n, 1, 4 + k], in panels of `width` columns,
/// P [ceil(n / w), kb, bytes w] (Passes.td): per panel and block, the
/// header's fields side by side for the w columns (the f16 scales, then
/// q4_1's f16 minimums; int8's f32 scales), then for each group of 4 value
/// bytes the w columns' groups (q8_0's and int8's values + 128, as unsigned
/// bytes); zeros past n.
Value buildQuantizedPack(OpBuilder &b, Location loc, Value blocks,
                         const seq::WeightFormatInfo &format, int64_t width) {
  auto type = cast<RankedTensorType>(blocks.getType());
  int64_t n = type.getDimSize(0), numBlocks = type.getDimSize(1);
  int64_t blockBytes = type.getDimSize(2);
  bool eightBits = format.bits == 8;
  // The bytes before the values: the f16 scale, then q4_1's f16 minimum, or
  // int8's f32 scale, in fields of `field` bytes.
  int64_t header = format.valuesOffset;
  int64_t field = format.headerFieldBytes();
  auto packedType = RankedTensorType::get(
      {(n + width - 1) / width, numBlocks, blockBytes * width},
      type.getElementType());
  return buildPackGeneric(
      b, loc, packedType,
      [&](OpBuilder &nb, Location nloc, ArrayRef<Value> index) -> Value {
        IndexMath m{nb, nloc};
        Value byte = index[2];
        Value isScale = m.ult(byte, header * width);
        // A header byte: field f = byte / (field w), column (byte mod
        // field w) / field, byte field f + byte mod field of its block.
        // A value byte, r = byte - header w: group q = r / 4w, column
        // (r mod 4w) / 4, byte header + 4 q + r mod 4 of its block.
        Value r = m.select(isScale, m.constant(0), m.sub(byte, header * width));
        Value column =
            m.select(isScale, m.div(m.rem(byte, field * width), field),
                     m.div(m.rem(r, 4 * width), 4));
        Value source = m.select(
            isScale,
            m.add(m.mul(m.div(byte, field * width), field), m.rem(byte, field)),
            m.add(m.constant(header),
                  m.add(m.mul(m.div(r, 4 * width), 4), m.rem(r, 4))));
        Value row = m.add(m.mul(index[0], width), column);
        Value inside = m.ult(row, n);
        Value clamped =
            arith::MinUIOp::create(nb, nloc, row, m.constant(n - 1));
        Value element = tensor::ExtractOp::create(
            nb, nloc, blocks, ValueRange{clamped, index[1], source});
        if (eightBits)
          element = m.select(isScale, element, flipSign(nb, nloc, element));
        Value zero = arith::ConstantOp::create(
            nb, nloc, nb.getZeroAttr(type.getElementType()));
        return m.select(inside, element, zero);
      });
}

} // namespace

LogicalResult SeqCPUPackWeightsPass::packQuantized(linalg::GenericOp op,
                                                   int64_t width) {
  auto notPacked = [&](StringRef why) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] blocks not packed: "
                            << why << ": " << op.getLoc() << "\n");
    return failure();
  };
  // convert-seq-to-linalg's quantized generic (buildQuantizedLinear):
  // loops (r, n, kb, j), inputs x [r, kb, j] and the blocks once per byte
  // it reads (the value byte, the scale's two bytes, q4_1's minimum's two,
  // int8's scale's four), output [r, n].
  StringRef format = op->getAttrOfType<StringAttr>(seq::cpu::kQuantizedAttr)
                         .getValue();
  seq::WeightFormatInfo info = *seq::getWeightFormat(format);
  int64_t header = info.valuesOffset;
  int64_t field = info.headerFieldBytes();
  if (op.getNumDpsInputs() != 2 + header || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 4)
    return notPacked("not convert-seq-to-linalg's generic");
  Value blocks = op.getDpsInputs()[1];
  auto type = dyn_cast<RankedTensorType>(blocks.getType());
  if (!llvm::all_of(ArrayRef<Value>(op.getDpsInputs()).drop_front(),
                    [&](Value v) { return v == blocks; }) ||
      !type || type.getRank() != 3 || !type.hasStaticShape() ||
      (!info.isPerRow() && type.getDimSize(2) != info.blockBytes))
    return notPacked("the blocks are not one static [n, k / 32, bytes] "
                     "tensor");
  // The kernel multiplies int8's rows in the activations' blocks of 32.
  if (info.isPerRow() &&
      (type.getDimSize(2) - header) % seq::cpu::kActivationBlock)
    return notPacked("int8 rows that are not whole blocks of 32");
  if (type.getDimSize(0) < width)
    return notPacked("fewer columns than one panel");

  OpBuilder b(op);
  Value &packed = packs[{blocks, 4u}];
  if (!packed) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(cast<BlockArgument>(blocks).getOwner());
    packed = buildQuantizedPack(b, blocks.getLoc(), blocks, info, width);
    quantizedPacks.push_back({blocks, packed, info});
  }
  MLIRContext *ctx = op.getContext();
  AffineExpr n = getAffineDimExpr(1, ctx), kb = getAffineDimExpr(2, ctx),
             j = getAffineDimExpr(3, ctx);
  auto map = [&](AffineExpr byte) {
    return AffineMap::get(4, 0, {n.floorDiv(width), kb, byte}, ctx);
  };
  AffineExpr c = n % width;
  // Weight j of the block is in byte j (q8_0, int8) or j mod 16 (q4's
  // nibbles) of the values, in group (byte / 4); header byte h of column c
  // at field w (h / field) + field c + h mod field.
  AffineExpr valueByte = info.bits == 8 ? j : j % 16;
  SmallVector<AffineMap> maps = {
      op.getIndexingMapsArray()[0],
      map(header * width + 4 * width * valueByte.floorDiv(4) + 4 * c + j % 4)};
  for (int64_t h = 0; h < header; ++h)
    maps.push_back(map(field * width * (h / field) + field * c + h % field));
  maps.push_back(op.getIndexingMapsArray().back());
  SmallVector<Value> inputs = {op.getDpsInputs()[0]};
  inputs.append(1 + header, packed);
  auto generic = linalg::GenericOp::create(b, op.getLoc(), op->getResultTypes(),
                                           inputs, op.getDpsInits(), maps,
                                           op.getIteratorTypesArray());
  IRMapping mapping;
  op->getRegion(0).cloneInto(&generic.getRegion(), mapping);
  if (info.bits == 8) {
    // The body reads q8_0's or int8's signed value: flip the stored byte
    // back.
    Block &body = generic.getRegion().front();
    BlockArgument value = body.getArgument(1);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&body);
    Value original = flipSign(b, op.getLoc(), value);
    value.replaceAllUsesExcept(original, original.getDefiningOp());
  }
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  generic->setAttr(seq::cpu::kQuantizedPanelAttr, b.getI64IntegerAttr(width));
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << format << " blocks (argument "
                          << cast<BlockArgument>(blocks).getArgNumber()
                          << ", " << type << ") read from "
                          << packed.getType() << ": " << op.getLoc() << "\n");
  op->replaceAllUsesWith(generic->getResults());
  op->erase();
  if (remarks)
    generic.emitRemark() << format << (info.isPerRow() ? " rows" : " blocks")
                         << " (a parameter) packed into "
                         << cast<RankedTensorType>(packed.getType())
                         << " panels of " << width
                         << " columns for the int8-activation kernel "
                            "(vpdpbusd, one i32 lane per column)";
  return success();
}

void SeqCPUPackWeightsPass::readLookupsFromPanels(
    Value blocks, Value packed, const seq::WeightFormatInfo &format,
    int64_t width) {
  Operation *pack = packed.getDefiningOp();
  SmallVector<tensor::ExtractOp> reads;
  for (Operation *user : blocks.getUsers())
    if (auto read = dyn_cast<tensor::ExtractOp>(user);
        read && !pack->isAncestor(read))
      reads.push_back(read);
  if (reads.empty())
    return;
  if (remarks) {
    Operation *lookup = reads.front();
    if (auto generic = lookup->getParentOfType<linalg::GenericOp>())
      lookup = generic;
    lookup->emitRemark()
        << "the lookups of this table read the panels of the Linear tied to "
           "it: only the preparation reads its blocks, which are held once";
  }
  bool eightBits = format.bits == 8;
  int64_t header = format.valuesOffset;
  int64_t field = format.headerFieldBytes();
  for (tensor::ExtractOp read : reads) {
    OpBuilder b(read);
    Location loc = read.getLoc();
    IndexMath m{b, loc};
    // Byte `byte` of block kb of row n: column c = n mod w of panel n / w;
    // a header byte h (below `header`) at field w (h / field) + field c +
    // h mod field, value byte v = byte - header at header w + 4w (v / 4) +
    // 4c + v mod 4 (buildQuantizedPack's layout).
    Value row = read.getIndices()[0], kb = read.getIndices()[1],
          byte = read.getIndices()[2];
    Value c = m.rem(row, width);
    Value isScale = m.ult(byte, header);
    Value v = m.select(isScale, m.constant(0), m.sub(byte, header));
    Value at = m.select(isScale,
                        m.add(m.mul(m.div(byte, field), field * width),
                              m.add(m.mul(c, field), m.rem(byte, field))),
                        m.add(m.constant(header * width),
                              m.add(m.mul(m.div(v, 4), 4 * width),
                                    m.add(m.mul(c, 4), m.rem(v, 4)))));
    Value element = tensor::ExtractOp::create(
        b, loc, packed, ValueRange{m.div(row, width), kb, at});
    if (eightBits)
      element = m.select(isScale, element, flipSign(b, loc, element));
    read.replaceAllUsesWith(element);
    read.erase();
  }
}

LogicalResult SeqCPUPackWeightsPass::pack(linalg::LinalgOp op,
                                          OpOperand &weight, int64_t width) {
  auto notPacked = [&](StringRef why) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not packed: " << why << ": "
                            << op->getName() << " at " << op.getLoc() << "\n");
    return failure();
  };
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || !seq::cpu::isMulAddBody(op) ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return notPacked("not a binary multiply-add contraction over loop "
                     "indices");
  OpOperand *init = op.getDpsInitOperand(0);
  OpOperand *other = op.getDpsInputOperand(
      weight.getOperandNumber() == op.getDpsInputOperand(0)->getOperandNumber()
          ? 1
          : 0);
  AffineMap mapW = op.getMatchingIndexingMap(&weight);
  AffineMap mapA = op.getMatchingIndexingMap(other);
  AffineMap mapC = op.getMatchingIndexingMap(init);
  if (mapW.getNumResults() != 2 || mapC.getNumResults() < 2)
    return notPacked("the output has fewer than two dimensions");
  unsigned k = 0;
  for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    if (iterator == utils::IteratorType::reduction)
      k = loop;
  unsigned n = cast<AffineDimExpr>(mapC.getResults().back()).getPosition();
  unsigned m = cast<AffineDimExpr>(mapC.getResults().end()[-2]).getPosition();
  unsigned w0 = cast<AffineDimExpr>(mapW.getResult(0)).getPosition();
  unsigned w1 = cast<AffineDimExpr>(mapW.getResult(1)).getPosition();
  // W is the operand of the output's columns and the reduction; A of the
  // rows and the reduction, not of the columns.
  if (!((w0 == n && w1 == k) || (w0 == k && w1 == n)) ||
      mapA.isFunctionOfDim(n) || !mapA.isFunctionOfDim(k) ||
      !mapA.isFunctionOfDim(m))
    return notPacked("the weight is not indexed by the output's columns and "
                     "the reduction, or the other input not by the rows and "
                     "the reduction alone");
  auto inputType = dyn_cast<RankedTensorType>(other->get().getType());
  if (!inputType || !seq::cpu::isKernelElementType(inputType.getElementType()))
    return notPacked("the other input is not an f32, bf16 or f16 tensor");
  // Narrower than one panel, the weight would only be padded: the kernels
  // read it as it is.
  auto weightType = cast<RankedTensorType>(weight.get().getType());
  if (weightType.getDimSize(w0 == n ? 0 : 1) < width)
    return notPacked("the weight is narrower than one panel");

  // Both operands bf16 on a target with vdpbf16ps: k-pair panels, the
  // instruction's operand layout.
  bool kPairs = bf16Dot && vectorBits == 512 &&
                weightType.getElementType().isBF16() &&
                inputType.getElementType().isBF16();

  OpBuilder b(op);
  Location loc = op.getLoc();
  Value &packed = packs[{weight.get(), (w0 == n ? 1u : 0u) | (kPairs ? 2u : 0u)}];
  if (!packed) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(
        cast<BlockArgument>(weight.get()).getOwner());
    packed = buildPack(b, weight.get().getLoc(), weight.get(),
                       /*nFirst=*/w0 == n, width, kPairs);
  }
  MLIRContext *ctx = op.getContext();
  AffineExpr column = getAffineDimExpr(n, ctx);
  AffineExpr step = getAffineDimExpr(k, ctx);
  SmallVector<AffineExpr> panelExprs = {column.floorDiv(width), step,
                                        column % width};
  if (kPairs)
    panelExprs = {column.floorDiv(width), step.floorDiv(2), column % width,
                  step % 2};
  AffineMap panelMap = AffineMap::get(op.getNumLoops(), 0, panelExprs, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    bool isWeight = input == &weight;
    inputs.push_back(isWeight ? packed : input->get());
    maps.push_back(isWeight ? panelMap : op.getMatchingIndexingMap(input));
  }
  maps.push_back(mapC);
  auto generic = linalg::GenericOp::create(
      b, loc, op->getResultTypes(), inputs, ValueRange{init->get()}, maps,
      op.getIteratorTypesArray());
  IRMapping mapping;
  op->getRegion(0).cloneInto(&generic.getRegion(), mapping);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] weight (argument "
                          << cast<BlockArgument>(weight.get()).getArgNumber()
                          << ", " << weight.get().getType() << ", "
                          << (w0 == n ? "[n, k]" : "[k, n]") << ") read from "
                          << packed.getType() << ": " << op->getName() << " at "
                          << op.getLoc() << "\n");
  op->replaceAllUsesWith(generic->getResults());
  op->erase();
  if (remarks)
    generic.emitRemark() << "right operand (a parameter) packed into "
                         << cast<RankedTensorType>(packed.getType())
                         << " panels of " << width
                         << (kPairs ? " columns in k pairs for vdpbf16ps"
                                    : " columns for the broadcast kernel");
  return success();
}

void SeqCPUPackWeightsPass::runOnOperation() {
  ModuleOp module = getOperation();
  // A pass instance may run on several modules: no pack outlives its own.
  packs.clear();
  quantizedPacks.clear();
  auto entry = module->getAttrOfType<FlatSymbolRefAttr>(seq::kEntryAttrName);
  std::optional<std::pair<unsigned, unsigned>> params =
      seq::getParamArgumentRange(module);
  if (!entry || !params)
    return;
  auto model = module.lookupSymbol<func::FuncOp>(entry.getValue());
  if (!model || model.isExternal())
    return;
  int64_t width = seq::cpu::panelWidth(vectorBits, vectorRegisters);
  auto isParam = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &model.getBody().front() &&
           arg.getArgNumber() >= params->first &&
           arg.getArgNumber() < params->second;
  };
  SmallVector<std::pair<linalg::LinalgOp, unsigned>> candidates;
  SmallVector<linalg::GenericOp> quantized;
  bool packPanels = int8Activations && vnniBits >= 256;
  model.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics())
      return;
    if (auto format = op->getAttrOfType<StringAttr>(seq::cpu::kQuantizedAttr)) {
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (packPanels && generic && seq::getWeightFormat(format.getValue()) &&
          op.getNumDpsInputs() > 1 && isParam(op.getDpsInputs()[1]))
        quantized.push_back(generic);
      return;
    }
    for (OpOperand *input : op.getDpsInputOperands())
      if (isParam(input->get()) &&
          cast<RankedTensorType>(input->get().getType()).getRank() == 2) {
        candidates.push_back({op, input->getOperandNumber()});
        return;
      }
  });
  for (auto [op, operand] : candidates)
    (void)pack(op, op->getOpOperand(operand), width);
  int64_t quantizedWidth =
      seq::cpu::quantizedPanelWidth(vnniBits, vectorBits);
  for (linalg::GenericOp op : quantized)
    (void)packQuantized(op, quantizedWidth);
  for (const QuantizedPack &pack : quantizedPacks)
    readLookupsFromPanels(pack.blocks, pack.packed, pack.format,
                          quantizedWidth);
}
