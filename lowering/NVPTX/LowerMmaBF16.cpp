//===- LowerMmaBF16.cpp - bf16 warp matrix products to NVVM --------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// nvgpu.mma.sync with bf16 operands becomes nvvm.mma.sync, which
// convert-nvgpu-to-nvvm does not do; see the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/NVPTX/Passes.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXLOWERMMABF16
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// The registers of fragment `fragment` (vector<R x 2 x bf16>), each pair of
/// elements packed into an i32.
static SmallVector<Value> packRegisters(OpBuilder &b, Location loc,
                                        Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  auto word = VectorType::get({1}, b.getI32Type());
  SmallVector<Value> registers;
  for (int64_t r = 0, e = type.getDimSize(0); r < e; ++r) {
    Value elements = vector::ExtractOp::create(b, loc, fragment, r);
    Value packed = vector::BitCastOp::create(b, loc, word, elements);
    registers.push_back(vector::ExtractOp::create(b, loc, packed, 0));
  }
  return registers;
}

namespace {
struct SeqNVPTXLowerMmaBF16Pass
    : public mlir::seq::impl::SeqNVPTXLowerMmaBF16Base<
          SeqNVPTXLowerMmaBF16Pass> {
  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> products;
    getOperation().walk([&](nvgpu::MmaSyncOp mma) {
      auto a = cast<VectorType>(mma.getMatrixA().getType());
      auto c = cast<VectorType>(mma.getMatrixC().getType());
      if (a.getElementType().isBF16() && c.getElementType().isF32())
        products.push_back(mma);
    });
    for (nvgpu::MmaSyncOp mma : products) {
      OpBuilder b(mma);
      Location loc = mma.getLoc();
      auto c = cast<VectorType>(mma.getMatrixC().getType());
      SmallVector<Value> accumulators;
      for (int64_t r = 0; r < c.getDimSize(0); ++r)
        for (int64_t e = 0; e < c.getDimSize(1); ++e)
          accumulators.push_back(vector::ExtractOp::create(
              b, loc, mma.getMatrixC(), ArrayRef<int64_t>{r, e}));
      SmallVector<int64_t> shape = llvm::to_vector(
          llvm::map_range(mma.getMmaShape().getAsValueRange<IntegerAttr>(),
                          [](const APInt &v) { return v.getSExtValue(); }));
      Type f32 = b.getF32Type();
      auto result = LLVM::LLVMStructType::getLiteral(
          b.getContext(), SmallVector<Type>(accumulators.size(), f32));
      auto product = NVVM::MmaOp::create(
          b, loc, result, packRegisters(b, loc, mma.getMatrixA()),
          packRegisters(b, loc, mma.getMatrixB()), accumulators, shape,
          std::nullopt, std::nullopt,
          std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                        NVVM::MMATypes::bf16},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      SmallVector<Value> elements;
      for (int64_t i = 0, e = accumulators.size(); i < e; ++i)
        elements.push_back(LLVM::ExtractValueOp::create(
            b, loc, product.getResult(), ArrayRef<int64_t>{i}));
      mma.replaceAllUsesWith(
          vector::FromElementsOp::create(b, loc, c, elements).getResult());
      mma.erase();
    }
  }
};
} // namespace
