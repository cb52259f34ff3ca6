// RUN: seq-opt %s --seq-nvptx-tile-contractions="tensor-cores=true remarks=true" -split-input-file -verify-diagnostics | FileCheck %s

// bf16 and f16 contractions accumulated in f32 on tensor cores
// (seq-nvptx-tile-contractions with tensor-cores); the numerics are checked
// by test/Lowering/run/tensor-core-contractions.mlir.

// One block of 128 threads per 64 x 64 output tile (n tiles fastest), the
// operands' tiles in padded workgroup buffers, two of each. Where the inputs
// are aligned (tested on the host), each step copies the next step's tiles
// with cp.async (8 elements per copy) into the other buffer, waits for its
// own, and reads its fragments by ldmatrix between two barriers: 2 x 4
// products per warp per 16-wide step. Elsewhere, element copies into one
// buffer. The results are added to the output where it exists.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<?x?xbf16>, %[[B:.*]]: memref<?x?xbf16>, %[[C:.*]]: memref<?x?xf32>)
// CHECK: %[[TILES:.*]] = arith.muli
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi sgt, %[[TILES]]
// CHECK: scf.if %[[NONEMPTY]]
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: arith.andi
// CHECK-NEXT: %[[ALIGNED:.*]] = arith.andi
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[TILES]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[SA:.*]] : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<2x32x72xbf16, #gpu.address_space<workgroup>>)
// CHECK: scf.if %[[ALIGNED]] -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK-COUNT-2: nvgpu.device_async_copy %[[A]][{{.*}}], %[[SA]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK-COUNT-2: nvgpu.device_async_copy %[[B]][{{.*}}], %[[SB]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK: scf.for
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK: gpu.barrier
// CHECK-COUNT-2: nvgpu.ldmatrix %[[SA]]{{.*}} {numTiles = 4 : i32, transpose = false} : memref<2x64x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-COUNT-4: nvgpu.ldmatrix %[[SB]]{{.*}} {numTiles = 2 : i32, transpose = true} : memref<2x32x72xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK-COUNT-2: nvgpu.ldmatrix %[[SA]]
// CHECK-COUNT-4: nvgpu.ldmatrix %[[SB]]
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK: gpu.barrier
// CHECK: } else {
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %[[TX]] to %c2048{{.*}} step %c128
// CHECK: memref.load %[[A]]
// CHECK: memref.store %{{.*}}, %[[SA]]
// CHECK: scf.for %{{.*}} = %[[TX]] to %c2048{{.*}} step %c128
// CHECK: memref.load %[[B]]
// CHECK: memref.store %{{.*}}, %[[SB]]
// CHECK: gpu.barrier
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK: gpu.barrier
// CHECK-COUNT-32: memref.load %[[C]]
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xf32>)
  return
}

// -----

// A linear layer (the second operand [n, k]) whose rows of 67 elements
// cannot be copied 16 bytes at a time: the test folds, one buffer per tile
// and element copies; the second operand's tile is stored [n][k] and read
// by ldmatrix without transposition.
// CHECK-LABEL: func.func @linear_unaligned
// CHECK-NOT: extract_aligned_pointer
// CHECK: gpu.launch {{.*}} workgroup(%[[SX:.*]] : memref<1x64x40xf16, #gpu.address_space<workgroup>>, %[[SW:.*]] : memref<1x64x40xf16, #gpu.address_space<workgroup>>)
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix %[[SX]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[SW]]{{.*}} {numTiles = 2 : i32, transpose = false}
func.func @linear_unaligned(%x: memref<?x67xf16>, %w: memref<96x67xf16>, %y: memref<?x96xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                   affine_map<(i, j, k) -> (j, k)>,
                                   affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x67xf16>, memref<96x67xf16>) outs(%y : memref<?x96xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batch dimension innermost in the first operand: its tile's columns (k)
// are not contiguous, so the copies are element by element, whatever the
// strides.
// CHECK-LABEL: func.func @batch_innermost
// CHECK-NOT: extract_aligned_pointer
// CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<1x64x40xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<1x32x72xbf16, #gpu.address_space<workgroup>>)
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvgpu.mma.sync
func.func @batch_innermost(%x: memref<?x?x?xbf16>, %w: memref<?x?xbf16>, %y: memref<?x?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (i, k, b)>,
                                   affine_map<(b, i, j, k) -> (k, j)>,
                                   affine_map<(b, i, j, k) -> (b, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x?xbf16>, memref<?x?xbf16>) outs(%y : memref<?x?x?xf32>) {
  ^bb0(%a: bf16, %c: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ce = arith.extf %c : bf16 to f32
    %p = arith.mulf %ae, %ce : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Contractions of 16-bit floats the tensor-core kernel does not take stay
// register-tiled, and say why.
// CHECK-LABEL: func.func @not_on_tensor_cores
// CHECK-NOT: nvgpu.mma.sync
// CHECK: return
func.func @not_on_tensor_cores(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>,
                               %h: memref<?x?xf16>, %c: memref<?x?xbf16>,
                               %d: memref<?x?xf32>) {
  // expected-remark @below {{contraction of 'bf16' inputs on the CUDA cores (register tiles), not on tensor cores: its inputs are not both bf16 or both f16 accumulated in f32}}
  linalg.matmul ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xbf16>)
  // expected-remark @below {{contraction of 'bf16' inputs on the CUDA cores (register tiles), not on tensor cores: its inputs are not both bf16 or both f16 accumulated in f32}}
  linalg.matmul ins(%a, %h : memref<?x?xbf16>, memref<?x?xf16>) outs(%d : memref<?x?xf32>)
  // expected-remark @below {{contraction of 'bf16' inputs on the CUDA cores (register tiles), not on tensor cores: its body is not a sum of products of its inputs (widened to f32)}}
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                   affine_map<(i, j, k) -> (k, j)>,
                                   affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%d : memref<?x?xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %p = arith.mulf %x, %y : bf16
    %pe = arith.extf %p : bf16 to f32
    %s = arith.addf %acc, %pe : f32
    linalg.yield %s : f32
  }
  return
}

// -----

memref.global "private" constant @w : memref<8x8xbf16> = dense<1.0>

// CHECK-LABEL: func.func @constant_operand
// CHECK-NOT: nvgpu.mma.sync
// CHECK: return
func.func @constant_operand(%a: memref<?x8xbf16>, %d: memref<?x8xf32>) {
  %w = memref.get_global @w : memref<8x8xbf16>
  // expected-remark @below {{contraction of 'bf16' inputs on the CUDA cores (register tiles), not on tensor cores: an operand is a constant global, which the kernel cannot read}}
  linalg.matmul ins(%a, %w : memref<?x8xbf16>, memref<8x8xbf16>) outs(%d : memref<?x8xf32>)
  return
}
