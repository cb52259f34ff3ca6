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
/// multiple of the block) times the block's bytes. False on overflow, a
/// negative size, an invalid dtype or a last dimension that is not a
/// multiple of the block.
bool checkedTensorBytes(seqc_dtype dtype, const int64_t *shape, int rank,
                        size_t *out);

/// Quantizes `count` f32 values (a multiple of 32) into blocks of `dtype`.
void quantizeRow(seqc_dtype dtype, const float *source, void *blocks,
                 size_t count);

/// Dequantizes `count` values (a multiple of 32) of `dtype` blocks to f32.
void dequantizeRow(seqc_dtype dtype, const void *blocks, float *dest,
                   size_t count);

} // namespace seqc

#endif // SEQC_RUNTIME_QUANTIZE_H
