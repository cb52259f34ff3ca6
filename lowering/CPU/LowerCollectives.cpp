//===- LowerCollectives.cpp - shard collectives to MPI calls -------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The all-reduces of a tensor-parallel model (seq-tensor-parallel) as calls
// of functions that run mpi.allreduce on the world communicator, out of
// place: seq-cpu-lower-collectives on tensors, seq-cpu-define-collectives
// after bufferization. See the pass descriptions in Passes.td for why this
// is not upstream's convert-shard-to-mpi.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPULOWERCOLLECTIVES
#define GEN_PASS_DEF_SEQCPUDEFINECOLLECTIVES
#define GEN_PASS_DEF_SEQCPUOPENMPIHANDLES
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

/// Marks the functions seq-cpu-define-collectives defines, with the
/// collective's kind.
constexpr llvm::StringLiteral kCollectiveAttr = "seqc.collective";

/// `buffer` viewed as one dimension (identity layout).
Value flatten(OpBuilder &builder, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return memref::CollapseShapeOp::create(builder, loc, buffer,
                                         ArrayRef<ReassociationIndices>{all});
}

/// The declaration of the collective `kind` ("all_reduce", "all_gather")
/// of `element`s, created once.
func::FuncOp getCollectiveFunction(ModuleOp module, StringRef kind,
                                   Type element) {
  std::string name;
  llvm::raw_string_ostream(name) << "__seqc_" << kind << "_" << element;
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto buffer = MemRefType::get({ShapedType::kDynamic}, element);
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name,
      builder.getFunctionType({buffer, buffer}, {}));
  function.setPrivate();
  function->setAttr(kCollectiveAttr, builder.getStringAttr(kind));
  return function;
}

/// The buffer of `tensor` (read only, identity layout).
Value toBuffer(OpBuilder &builder, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      builder, loc, MemRefType::get(type.getShape(), type.getElementType()),
      tensor, /*read_only=*/true);
}

/// A new buffer of `tensor`'s shape, with a leading dimension of `leading`
/// when given.
Value allocLike(OpBuilder &builder, Location loc, Value tensor,
                std::optional<int64_t> leading) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (leading)
    shape.insert(shape.begin(), *leading);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(builder, loc, tensor, d));
  return memref::AllocOp::create(
      builder, loc, MemRefType::get(shape, type.getElementType()), sizes);
}

LogicalResult lowerAllReduce(ModuleOp module, shard::AllReduceOp reduce) {
  auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
  if (!type || reduce.getResult().getType() != type)
    return reduce.emitOpError("is lowered to MPI on a tensor of the result's "
                              "type only");
  if (reduce.getReduction() != shard::ReductionKind::Sum)
    return reduce.emitOpError("is lowered to MPI for sums only");
  func::FuncOp function =
      getCollectiveFunction(module, "all_reduce", type.getElementType());
  OpBuilder builder(reduce);
  Location loc = reduce.getLoc();
  Value input = toBuffer(builder, loc, reduce.getInput());
  Value output = allocLike(builder, loc, reduce.getInput(), std::nullopt);
  func::CallOp::create(builder, loc, function,
                       ValueRange{flatten(builder, loc, input),
                                  flatten(builder, loc, output)});
  Value result = bufferization::ToTensorOp::create(
      builder, loc, type, output, /*restrict=*/true, /*writable=*/true);
  reduce.getResult().replaceAllUsesWith(result);
  reduce.erase();
  return success();
}

/// The all-gather of `ranks` slices along `gather_axis`: the ranks' buffers
/// gathered rank after rank into [ranks, ...], then that axis moved next
/// to the gathered one and merged with it.
LogicalResult lowerAllGather(ModuleOp module, shard::AllGatherOp gather,
                             int64_t ranks) {
  auto type = dyn_cast<RankedTensorType>(gather.getInput().getType());
  auto resultType = dyn_cast<RankedTensorType>(gather.getResult().getType());
  if (!type || !resultType)
    return gather.emitOpError("is lowered to MPI on tensors only");
  int64_t axis = gather.getGatherAxis().getSExtValue();
  func::FuncOp function =
      getCollectiveFunction(module, "all_gather", type.getElementType());
  OpBuilder builder(gather);
  Location loc = gather.getLoc();
  Value input = toBuffer(builder, loc, gather.getInput());
  Value output = allocLike(builder, loc, gather.getInput(), ranks);
  func::CallOp::create(builder, loc, function,
                       ValueRange{flatten(builder, loc, input),
                                  flatten(builder, loc, output)});
  auto stackedType = RankedTensorType::get(
      cast<MemRefType>(output.getType()).getShape(), type.getElementType());
  Value stacked = bufferization::ToTensorOp::create(
      builder, loc, stackedType, output, /*restrict=*/true, /*writable=*/true);
  // [ranks, d0, .., d_axis, ..] -> [d0, .., ranks, d_axis, ..].
  SmallVector<int64_t> permutation;
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == axis) {
      permutation.push_back(0);
      sizes.push_back(builder.getIndexAttr(ranks));
    }
    permutation.push_back(d + 1);
    sizes.push_back(tensor::getMixedSize(builder, loc, gather.getInput(), d));
  }
  Value init = tensor::EmptyOp::create(builder, loc, sizes,
                                       type.getElementType());
  Value moved = linalg::TransposeOp::create(builder, loc, stacked, init,
                                            permutation)
                    ->getResult(0);
  SmallVector<ReassociationIndices> merge;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t at = d < axis ? d : d + 1;
    if (d == axis)
      merge.push_back({axis, axis + 1});
    else
      merge.push_back({at});
  }
  Value result =
      tensor::CollapseShapeOp::create(builder, loc, resultType, moved, merge);
  gather.getResult().replaceAllUsesWith(result);
  gather.erase();
  return success();
}

struct SeqCPULowerCollectivesPass
    : public seq::impl::SeqCPULowerCollectivesBase<
          SeqCPULowerCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<shard::GridOp> grids(module.getOps<shard::GridOp>());
    for (shard::GridOp grid : grids)
      if (grid.getRank() != 1) {
        grid.emitOpError("is lowered to MPI with one axis only");
        return signalPassFailure();
      }
    WalkResult walk = module.walk([&](Operation *op) {
      if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
        return failed(lowerAllReduce(module, reduce)) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
      if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
        auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
            gather, gather.getGridAttr());
        if (!grid || grid.getShape().size() != 1 || grid.getShape()[0] <= 0)
          return gather.emitOpError("needs a one-axis grid of static size"),
                 WalkResult::interrupt();
        return failed(lowerAllGather(module, gather, grid.getShape()[0]))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      }
      if (op->getDialect() && op->getDialect()->getNamespace() == "shard" &&
          !isa<shard::GridOp>(op)) {
        op->emitOpError("is not lowered to MPI by seqc");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (shard::GridOp grid : grids)
      grid.erase();
  }
};

struct SeqCPUDefineCollectivesPass
    : public seq::impl::SeqCPUDefineCollectivesBase<
          SeqCPUDefineCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    bool defined = false;
    for (auto function : module.getOps<func::FuncOp>()) {
      auto kind = function->getAttrOfType<StringAttr>(kCollectiveAttr);
      if (!kind || !function.isExternal())
        continue;
      Block *body = function.addEntryBlock();
      OpBuilder builder = OpBuilder::atBlockEnd(body);
      Location loc = function.getLoc();
      Value input = body->getArgument(0), output = body->getArgument(1);
      Value world =
          mpi::CommWorldOp::create(builder, loc, mpi::CommType::get(context));
      if (kind.getValue() == "all_gather") {
        // LLVM 22's mpi dialect has no allgather: each rank places its
        // slice at its offset in a zeroed buffer, and the sum over the
        // ranks of those buffers is the gathered one (x + 0 = x exactly).
        // Twice the bytes of MPI_Allgather on a ring: the logits of one
        // step, once per call.
        auto rank = mpi::CommRankOp::create(builder, loc, Type(),
                                            builder.getI32Type(), world);
        Value index = arith::IndexCastOp::create(
            builder, loc, builder.getIndexType(), rank.getRank());
        Value count = memref::DimOp::create(builder, loc, input, 0);
        Value total = memref::DimOp::create(builder, loc, output, 0);
        auto type = cast<MemRefType>(output.getType());
        Value padded =
            memref::AllocOp::create(builder, loc, type, ValueRange{total});
        Value zero = arith::ConstantOp::create(
            builder, loc, builder.getZeroAttr(type.getElementType()));
        linalg::FillOp::create(builder, loc, zero, padded);
        Value offset = arith::MulIOp::create(builder, loc, index, count);
        Value slot = memref::SubViewOp::create(
            builder, loc, padded, ArrayRef<OpFoldResult>{offset},
            ArrayRef<OpFoldResult>{count},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
        memref::CopyOp::create(builder, loc, input, slot);
        input = padded;
        mpi::AllReduceOp::create(builder, loc, TypeRange{}, input, output,
                                 mpi::MPI_ReductionOpEnum::MPI_SUM, world);
        memref::DeallocOp::create(builder, loc, padded);
      } else {
        mpi::AllReduceOp::create(builder, loc, TypeRange{}, input, output,
                                 mpi::MPI_ReductionOpEnum::MPI_SUM, world);
      }
      func::ReturnOp::create(builder, loc);
      defined = true;
    }
    if (!defined)
      return;
    module->setAttr(
        "dlti.map",
        MapAttr::get(context,
                     {DataLayoutEntryAttr::get(
                         StringAttr::get(context, "MPI:Implementation"),
                         StringAttr::get(context, "OpenMPI"))}));
  }
};

struct SeqCPUOpenMPIHandlesPass
    : public seq::impl::SeqCPUOpenMPIHandlesBase<SeqCPUOpenMPIHandlesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto global :
         llvm::make_early_inc_range(module.getOps<LLVM::GlobalOp>())) {
      StringRef name = global.getSymName();
      static constexpr llvm::StringLiteral kOps[] = {
          "sum", "max", "min", "prod", "land", "band",
          "lor", "bor", "lxor", "bxor", "minloc", "maxloc", "replace"};
      if (!name.consume_front("ompi_mpi_") || !llvm::is_contained(kOps, name))
        continue;
      auto renamed = StringAttr::get(&getContext(), "ompi_mpi_op_" + name);
      if (module.lookupSymbol(renamed)) {
        global.emitOpError("and its Open MPI name '")
            << renamed.getValue() << "' are both defined";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(global, renamed, module)))
        return signalPassFailure();
      global.setSymName(renamed);
    }
  }
};

} // namespace
