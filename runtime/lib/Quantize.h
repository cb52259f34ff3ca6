//===- Quantize.h - GGUF block formats of weights ---------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The block formats SEQC_DTYPE_Q8_0, Q4_0 and Q4_1 (GGUF's, byte for byte;
// docs/language.md, "Weight formats"): 32 weights of a row per block, along
// the last dimension. Quantizing rounds as llama.cpp's reference quantizers
// (quantize_row_q8_0_ref, q4_0_ref, q4_1_ref) do, so that the blocks are the
// ones llama.cpp writes for the same f32 values.
//
// SEQC_DTYPE_I8_ROWSCALE, symmetric per-output-channel int8, has one block
// per row: {f32 d; int8 qs[n]} with d = max |x| / 127 and
// qs = round-half-to-even(x / d) clamped to [-127, 127], in f32 (PyTorch's
// per-channel symmetric weight quantization); a row of zeros has d = 0 and
// qs = 0.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_QUANTIZE_H
#define SEQC_RUNTIME_QUANTIZE_H

#include "seqc_runtime.h"

#include <cstddef>
#include <cstdint>

namespace seqc {

/// Whether `dtype` is a block format.
bool isBlockDType(seqc_dtype dtype);

/// The bytes of a tensor of `dtype` and `shape`: numel times the element size,
/// or for a block format the number of blocks (the last dimension must be a
/// multiple of the block) times the block's bytes (rows times the last
/// dimension plus 4 for SEQC_DTYPE_I8_ROWSCALE, of rank 1 or more). False
/// on overflow, a negative size, an invalid dtype or a last dimension that
/// is not a multiple of the block.
bool checkedTensorBytes(seqc_dtype dtype, const int64_t *shape, int rank,
                        size_t *out);

/// Quantizes `count` f32 values, rows of `row` values (a multiple of 32 for
/// the GGUF formats), into blocks of `dtype`.
void quantizeRows(seqc_dtype dtype, const float *source, void *blocks,
                  size_t count, size_t row);

/// Dequantizes `count` values, rows of `row` values, of `dtype` blocks to
/// f32.
void dequantizeRows(seqc_dtype dtype, const void *blocks, float *dest,
                    size_t count, size_t row);

} // namespace seqc

#endif // SEQC_RUNTIME_QUANTIZE_H
