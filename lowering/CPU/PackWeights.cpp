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

  /// One packed copy per parameter and layout (1: W is [n, k]; 2: in k
  /// pairs), built at the top of the model function.
  DenseMap<std::pair<Value, unsigned>, Value> packs;
};

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
  Value empty = tensor::EmptyOp::create(b, loc, packedType.getShape(),
                                        type.getElementType());
  unsigned rank = shape.size();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, packedType, ValueRange(), ValueRange{empty},
      ArrayRef<AffineMap>{identity}, parallel,
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        auto index = [&](int64_t dim) {
          return linalg::IndexOp::create(nb, nloc, dim).getResult();
        };
        auto constant = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, nloc, v).getResult();
        };
        Value column = arith::AddIOp::create(
            nb, nloc,
            arith::MulIOp::create(nb, nloc, index(0), constant(width)),
            index(2));
        Value inside = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult,
                                             column, constant(n));
        Value clamped =
            arith::MinUIOp::create(nb, nloc, column, constant(n - 1));
        Value step = index(1);
        if (kPairs) {
          step = arith::AddIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, step, constant(2)),
              index(3));
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
        linalg::YieldOp::create(nb, nloc, value);
      });
  return generic.getResult(0);
}

} // namespace

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
  model.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics())
      return;
    for (OpOperand *input : op.getDpsInputOperands())
      if (isParam(input->get()) &&
          cast<RankedTensorType>(input->get().getType()).getRank() == 2) {
        candidates.push_back({op, input->getOperandNumber()});
        return;
      }
  });
  for (auto [op, operand] : candidates)
    (void)pack(op, op->getOpOperand(operand), width);
}
