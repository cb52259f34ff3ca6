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

/// Marks the functions seq-cpu-define-collectives defines.
constexpr llvm::StringLiteral kAllReduceAttr = "seqc.all_reduce";

/// `buffer` viewed as one dimension (identity layout).
Value flatten(OpBuilder &builder, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return memref::CollapseShapeOp::create(builder, loc, buffer,
                                         ArrayRef<ReassociationIndices>{all});
}

/// The declaration of the all-reduce of `element`s, created once.
func::FuncOp getAllReduceFunction(ModuleOp module, Type element) {
  std::string name;
  llvm::raw_string_ostream(name) << "__seqc_all_reduce_" << element;
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto buffer = MemRefType::get({ShapedType::kDynamic}, element);
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name,
      builder.getFunctionType({buffer, buffer}, {}));
  function.setPrivate();
  function->setAttr(kAllReduceAttr, builder.getUnitAttr());
  return function;
}

LogicalResult lowerAllReduce(ModuleOp module, shard::AllReduceOp reduce) {
  auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
  if (!type || reduce.getResult().getType() != type)
    return reduce.emitOpError("is lowered to MPI on a tensor of the result's "
                              "type only");
  if (reduce.getReduction() != shard::ReductionKind::Sum)
    return reduce.emitOpError("is lowered to MPI for sums only");
  func::FuncOp function = getAllReduceFunction(module, type.getElementType());
  OpBuilder builder(reduce);
  Location loc = reduce.getLoc();
  auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
  Value input = bufferization::ToBufferOp::create(
      builder, loc, bufferType, reduce.getInput(), /*read_only=*/true);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(builder, loc, reduce.getInput(), d));
  Value output = memref::AllocOp::create(builder, loc, bufferType, sizes);
  func::CallOp::create(builder, loc, function,
                       ValueRange{flatten(builder, loc, input),
                                  flatten(builder, loc, output)});
  Value result = bufferization::ToTensorOp::create(
      builder, loc, type, output, /*restrict=*/true, /*writable=*/true);
  reduce.getResult().replaceAllUsesWith(result);
  reduce.erase();
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
      if (!function->hasAttr(kAllReduceAttr) || !function.isExternal())
        continue;
      Block *body = function.addEntryBlock();
      OpBuilder builder = OpBuilder::atBlockEnd(body);
      Location loc = function.getLoc();
      Value world =
          mpi::CommWorldOp::create(builder, loc, mpi::CommType::get(context));
      mpi::AllReduceOp::create(builder, loc, TypeRange{}, body->getArgument(0),
                               body->getArgument(1),
                               mpi::MPI_ReductionOpEnum::MPI_SUM, world);
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
