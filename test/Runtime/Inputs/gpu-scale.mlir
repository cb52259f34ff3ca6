// The host function and kernel of gpu-mgpu-abi.test: scale(buf, f) sets
// buf[i] *= f with one gpu.launch_func, lowered by MLIR's own GPU path
// (gpu-module-to-binary, gpu-to-llvm) so that the test sees the mgpu* calls
// exactly as MLIR 22 emits them.
module attributes {gpu.container_module} {
  func.func @scale(%buf: memref<?xf32>, %f: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %n = memref.dim %buf, %c0 : memref<?xf32>
    %blocks = arith.ceildivui %n, %c128 : index
    gpu.launch_func @kernels::@scale_kernel
        blocks in (%blocks, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%buf : memref<?xf32>, %f : f32, %n : index)
    return
  }
  gpu.module @kernels {
    gpu.func @scale_kernel(%buf: memref<?xf32>, %f: f32, %n: index) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %first = arith.muli %bid, %bdim : index
      %i = arith.addi %first, %tid : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %v = memref.load %buf[%i] : memref<?xf32>
        %w = arith.mulf %v, %f : f32
        memref.store %w, %buf[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
