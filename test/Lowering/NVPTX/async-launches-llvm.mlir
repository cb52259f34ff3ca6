// RUN: seq-opt %s --pass-pipeline='builtin.module(func.func(seq-nvptx-async-launches),gpu-to-llvm)' | FileCheck %s

// gpu-to-llvm launches each queued launch on the stream of its dependency:
// one stream for the function's four launches (a guarded one and a host loop
// of them among them), one synchronization, no events.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill() kernel { gpu.return }
  }

  // CHECK-LABEL: llvm.func @launches
  // CHECK:       %[[S:.*]] = llvm.call @mgpuStreamCreate()
  // CHECK-COUNT-4: gpu.launch_func <%[[S]] : !llvm.ptr> @k::@fill
  // CHECK-NEXT:  llvm.call @mgpuStreamSynchronize(%[[S]])
  // CHECK-NEXT:  llvm.call @mgpuStreamDestroy(%[[S]])
  // CHECK-NOT:   llvm.call @mgpuEvent
  // CHECK-NOT:   llvm.call @mgpuStreamCreate
  func.func @launches(%c: i1, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    scf.if %c {
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    }
    scf.for %i = %c0 to %n step %c1 {
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    }
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
