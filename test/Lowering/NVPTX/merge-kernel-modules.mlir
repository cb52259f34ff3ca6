// RUN: seq-opt %s --seq-nvptx-merge-kernel-modules -split-input-file -verify-diagnostics | FileCheck %s

// The outlining's modules, whose kernels share a name, become one module in
// which each kernel is named after the module it came from; the constant
// global both read is kept once.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.launch_func @seqc_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @seqc_kernels::@f_kernel_0 blocks
// CHECK: gpu.module @seqc_kernels {
// CHECK-COUNT-1: memref.global "private" constant @table
// CHECK-DAG: gpu.func @f_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK-DAG: gpu.func @f_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<4xf32> = dense<1.0>
  func.func @f(%y: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4xf32>)
    return
  }
  gpu.module @f_kernel {
    memref.global "private" constant @table : memref<4xf32> = dense<1.0>
    gpu.func @f_kernel(%y: memref<4xf32>) kernel {
      %g = memref.get_global @table : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    memref.global "private" constant @table : memref<4xf32> = dense<1.0>
    gpu.func @f_kernel(%y: memref<4xf32>) kernel {
      %g = memref.get_global @table : memref<4xf32>
      %c0 = arith.constant 0 : index
      %v = memref.load %g[%c0] : memref<4xf32>
      memref.store %v, %y[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// Kernels identical but for their names (one op in every layer) are kept
// once; every launch of a copy launches the first.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.launch_func @seqc_kernels::@layer_kernel blocks
// CHECK: gpu.launch_func @seqc_kernels::@layer_kernel blocks
// CHECK: gpu.launch_func @seqc_kernels::@other_kernel blocks
// CHECK: gpu.module @seqc_kernels {
// CHECK-COUNT-2: gpu.func
// CHECK-NOT: gpu.func
module attributes {gpu.container_module} {
  func.func @f(%y: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @layer_kernel::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4xf32>)
    gpu.launch_func @layer_kernel_0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4xf32>)
    gpu.launch_func @other_kernel::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4xf32>)
    return
  }
  gpu.module @layer_kernel {
    gpu.func @k(%y: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %y[%c0] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %y[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @layer_kernel_0 {
    gpu.func @k(%y: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %y[%c0] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %y[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @other_kernel {
    gpu.func @k(%y: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %y[%c0] : memref<4xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %y[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// expected-error @below {{the symbol 'seqc_kernels' is reserved for the model's GPU kernels}}
module attributes {gpu.container_module} {
  func.func private @seqc_kernels()
  gpu.module @f_kernel {
  }
}
