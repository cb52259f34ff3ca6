//===- Quantized.cpp - x W^T with W in a block format ----------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// `seq.linear` whose weight is a `seq.dequantize` of GGUF blocks
// (dialect/Seq/IR/Quantization.h) becomes one `linalg.generic` reading the
// blocks where they are: loops (rows, out, block, j) with j the 32 weights
// of a block,
//
//   C[r, n] += x[r, b, j] * w(blocks[n, b, :], j)
//
// on x viewed as [rows, in / 32, 32] (int8: [rows, 1, in], its block being
// the row)
//
// where w(...) is the format's dequantization of weight j from its block's
// bytes: the f16 scale (and q4_1's f16 minimum) assembled from two bytes, or
// int8's f32 scale from four, read at constant offsets, times the quantized
// value at its byte (q8_0, int8) or nibble (q4_0, q4_1): the weight the
// format stores, exactly. The generic carries kQuantizedAttr; it is the
// reference form (linalg-to-loops at -O0), and seq-cpu-vectorize-quantized
// rewrites it into a vector kernel at -O1 and above. No f32 copy of the
// weight is made at any level.
//
// `seq.embedding` whose table is such a `seq.dequantize` (an Embedding with
// a weight_format, and a Linear tied to it) gathers the same way: per
// element (.., c) of the result, the bytes of weight c mod 32 of block
// c / 32 of the id's row are read and dequantized by the same function, so
// only the rows looked up are touched.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "dialect/Seq/IR/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::seq;

/// The f32 value of the f16 whose little-endian bytes are `lo` and `hi`.
static Value halfFromBytes(OpBuilder &b, Location loc, Value lo, Value hi) {
  Type i16 = b.getIntegerType(16);
  Value low = arith::ExtUIOp::create(b, loc, i16, lo);
  Value high = arith::ShLIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, i16, hi),
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(i16, 8)));
  Value bits = arith::OrIOp::create(b, loc, low, high);
  Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), half);
}

/// The f32 value of the float whose little-endian bytes are `bytes`.
static Value floatFromBytes(OpBuilder &b, Location loc, ValueRange bytes) {
  Type i32 = b.getI32Type();
  Value bits;
  for (auto [i, byte] : llvm::enumerate(bytes)) {
    Value wide = arith::ExtUIOp::create(b, loc, i32, byte);
    if (i)
      wide = arith::ShLIOp::create(
          b, loc, wide,
          arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(8 * i)));
    bits = bits ? arith::OrIOp::create(b, loc, bits, wide) : wide;
  }
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// The weights of a block of `format` in blocks of type `blocksType`: 32,
/// or the row for int8.
static int64_t weightsPerBlock(const WeightFormatInfo &format,
                               RankedTensorType blocksType) {
  return format.isPerRow() ? format.rowElements(1, blocksType.getDimSize(2))
                           : format.blockElements;
}

/// The weight j of a block of `format` whose value byte is `value` (the
/// byte holding its nibble for q4) and whose header bytes are `header`: the
/// f16 scale's two (q8_0, q4_0), then q4_1's f16 minimum's two, or int8's
/// four of an f32 scale. `position` builds j (an index in [0, block)), which
/// only the nibble formats read. This is the weight the format stores,
/// exactly.
static Value
dequantizeWeight(OpBuilder &b, Location loc, const WeightFormatInfo &format,
                 int64_t block, Value value, ValueRange header,
                 llvm::function_ref<Value()> position) {
  Type f32 = b.getF32Type();
  bool hasMin = format.format == WeightFormat::Q4_1;
  Value scale = format.format == WeightFormat::Int8
                    ? floatFromBytes(b, loc, header.take_front(4))
                    : halfFromBytes(b, loc, header[0], header[1]);
  Value q;
  if (format.bits == 8) {
    q = arith::SIToFPOp::create(b, loc, f32, value);
  } else {
    // Weights 0..15 are the low nibbles, 16..31 the high ones.
    Type i32 = b.getI32Type();
    Value byte = arith::ExtUIOp::create(b, loc, i32, value);
    Value high = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, position(),
        arith::ConstantIndexOp::create(b, loc, block / 2));
    Value shift = arith::SelectOp::create(
        b, loc, high,
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(4)),
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)));
    Value nibble = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, byte, shift),
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(15)));
    if (!hasMin)
      nibble = arith::SubIOp::create(
          b, loc, nibble,
          arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(8)));
    q = arith::SIToFPOp::create(b, loc, f32, nibble);
  }
  Value w = arith::MulFOp::create(b, loc, q, scale);
  if (hasMin)
    w = arith::AddFOp::create(b, loc, w,
                              halfFromBytes(b, loc, header[2], header[3]));
  return w;
}

Value mlir::seq::buildQuantizedLinear(OpBuilder &b, Location loc, Value rows,
                                      Value blocks, StringRef formatName,
                                      Value acc) {
  MLIRContext *ctx = b.getContext();
  WeightFormatInfo format = *getWeightFormat(formatName);
  auto blocksType = cast<RankedTensorType>(blocks.getType());
  int64_t block = weightsPerBlock(format, blocksType);
  AffineExpr r = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             kb = getAffineDimExpr(2, ctx), j = getAffineDimExpr(3, ctx);
  auto map = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(4, 0, exprs, ctx);
  };
  auto byteAt = [&](int64_t offset) {
    return map({n, kb, getAffineConstantExpr(offset, ctx)});
  };
  // The byte of weight j: j itself for 8 bits, j mod 16 for nibbles.
  AffineExpr valueByte =
      format.bits == 8 ? j : j % (block / 2);
  // x as [rows, in / 32, 32] (a view): every loop is a dimension of some
  // operand, as linalg requires.
  auto rowsType = cast<RankedTensorType>(rows.getType());
  int64_t numBlocks = blocksType.getDimSize(1);
  Value blockedRows = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({rowsType.getDimSize(0), numBlocks, block},
                            rowsType.getElementType()),
      rows, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  SmallVector<Value> inputs = {blockedRows, blocks, blocks, blocks};
  SmallVector<AffineMap> maps = {map({r, kb, j}),
                                 map({n, kb, valueByte + format.valuesOffset}),
                                 byteAt(0), byteAt(1)};
  bool hasMin = format.format == WeightFormat::Q4_1;
  bool floatScale = format.format == WeightFormat::Int8;
  if (hasMin || floatScale) {
    inputs.append({blocks, blocks});
    maps.append({byteAt(2), byteAt(3)});
  }
  maps.push_back(map({r, n}));
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), inputs, acc, maps,
      getIteratorTypes(4, {2, 3}),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value w = dequantizeWeight(
            nb, nloc, format, block, args[1], args.slice(2, args.size() - 3),
            [&] { return linalg::IndexOp::create(nb, nloc, 3); });
        Value product = arith::MulFOp::create(nb, nloc, args[0], w);
        Value sum = arith::AddFOp::create(nb, nloc, args.back(), product);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  generic->setAttr(kQuantizedAttr, b.getStringAttr(formatName));
  return generic.getResult(0);
}

Value mlir::seq::extractQuantizedElement(OpBuilder &b, Location loc,
                                         Value blocks, StringRef formatName,
                                         Value row, Value column) {
  WeightFormatInfo format = *getWeightFormat(formatName);
  int64_t block =
      weightsPerBlock(format, cast<RankedTensorType>(blocks.getType()));
  Value blockSize = arith::ConstantIndexOp::create(b, loc, block);
  Value kb = arith::DivUIOp::create(b, loc, column, blockSize);
  Value j = arith::RemUIOp::create(b, loc, column, blockSize);
  auto byteAt = [&](Value offset) {
    return tensor::ExtractOp::create(b, loc, blocks, ValueRange{row, kb, offset});
  };
  // The header (scale, q4_1's minimum) fills the bytes before the values.
  SmallVector<Value> header;
  for (int64_t i = 0; i < format.valuesOffset; ++i)
    header.push_back(byteAt(arith::ConstantIndexOp::create(b, loc, i)));
  Value valueByte =
      format.bits == 8
          ? j
          : arith::RemUIOp::create(
                b, loc, j, arith::ConstantIndexOp::create(b, loc, block / 2));
  valueByte = arith::AddIOp::create(
      b, loc, valueByte,
      arith::ConstantIndexOp::create(b, loc, format.valuesOffset));
  return dequantizeWeight(b, loc, format, block, byteAt(valueByte), header,
                          [&] { return j; });
}
