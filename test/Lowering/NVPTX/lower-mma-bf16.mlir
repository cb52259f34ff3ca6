// RUN: seq-opt %s --pass-pipeline='builtin.module(gpu.module(seq-nvptx-lower-mma-bf16))' | FileCheck %s
// RUN: seq-opt %s --pass-pipeline='builtin.module(gpu.module(seq-nvptx-lower-mma-bf16,convert-nvgpu-to-nvvm,convert-vector-to-llvm,reconcile-unrealized-casts))' | FileCheck %s --check-prefix=LLVM

// bf16 warp matrix products become NVVM's mma.sync, each register's two
// bf16 elements packed into an i32; f16 products are left to
// convert-nvgpu-to-nvvm.

// CHECK-LABEL: gpu.func @bf16
// CHECK-COUNT-4: vector.extract %{{.*}} : f32 from vector<2x2xf32>
// CHECK: %[[A0:.*]] = vector.extract %{{.*}}[0] : vector<2xbf16> from vector<4x2xbf16>
// CHECK: %[[A0W:.*]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK: vector.extract %[[A0W]][0] : i32 from vector<1xi32>
// CHECK: nvvm.mma.sync A[{{.*}}, {{.*}}, {{.*}}, {{.*}}] B[{{.*}}, {{.*}}] C[{{.*}}, {{.*}}, {{.*}}, {{.*}}]
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-4: llvm.extractvalue
// CHECK: vector.from_elements {{.*}} : vector<2x2xf32>
// CHECK-NOT: nvgpu.mma.sync

// CHECK-LABEL: gpu.func @f16
// CHECK: nvgpu.mma.sync

// LLVM-LABEL: gpu.func @bf16
// LLVM: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32)
// LLVM-LABEL: gpu.func @f16
// LLVM: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)

gpu.module @kernels {
  gpu.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>, %out: memref<2x2xf32>) kernel {
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    %e = vector.extract %d[1, 1] : f32 from vector<2x2xf32>
    memref.store %e, %out[%c0, %c0] : memref<2x2xf32>
    gpu.return
  }
  gpu.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>, %out: memref<2x2xf32>) kernel {
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    %e = vector.extract %d[1, 1] : f32 from vector<2x2xf32>
    memref.store %e, %out[%c0, %c0] : memref<2x2xf32>
    gpu.return
  }
}
