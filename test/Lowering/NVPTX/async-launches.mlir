// RUN: seq-opt %s --pass-pipeline='builtin.module(func.func(seq-nvptx-async-launches))' --split-input-file | FileCheck %s
// RUN: seq-opt %s --pass-pipeline='builtin.module(func.func(seq-nvptx-async-launches),gpu-to-llvm)' --split-input-file | FileCheck %s --check-prefix=LLVM

// A host function's launches queue on one stream, the token of the
// `gpu.wait async` that opens it; the host waits before it touches memory
// and before it returns. gpu-to-llvm launches each on the stream of its
// dependency: one stream, four launches, one synchronization.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill() kernel { gpu.return }
  }

  // Straight-line launches, a guarded one, a host loop of them, an
  // allocation and a shape check between them: one stream, one wait at the
  // end.
  // CHECK-LABEL: func.func @launches_only
  // CHECK:      %[[S:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.launch_func async [%[[S]]] @k::@fill
  // CHECK:      scf.if
  // CHECK-NEXT:   gpu.launch_func async [%[[S]]] @k::@fill
  // CHECK:      scf.for
  // CHECK-NEXT:   gpu.launch_func async [%[[S]]] @k::@fill
  // CHECK:      memref.alloc
  // CHECK:      cf.assert
  // CHECK-NEXT: gpu.launch_func async [%[[S]]] @k::@fill
  // CHECK-NEXT: gpu.wait [%[[S]]]
  // CHECK-NEXT: return
  // CHECK-NOT:  gpu.wait
  // LLVM-LABEL: llvm.func @launches_only
  // LLVM:       %[[S:.*]] = llvm.call @mgpuStreamCreate()
  // LLVM-COUNT-4: gpu.launch_func <%[[S]] : !llvm.ptr> @k::@fill
  // LLVM-NEXT:  llvm.call @mgpuStreamSynchronize(%[[S]])
  // LLVM-NEXT:  llvm.call @mgpuStreamDestroy(%[[S]])
  // LLVM-NOT:   mgpuEvent
  func.func @launches_only(%m: memref<?xf32>, %c: i1, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    scf.if %c {
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    }
    scf.for %i = %c0 to %n step %c1 {
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    }
    %a = memref.alloc(%n) : memref<?xf32>
    %ok = arith.cmpi sgt, %n, %c0 : index
    cf.assert %ok, "a shape check"
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill() kernel { gpu.return }
  }

  // A host load reads what the kernels wrote, and a deallocation may hand
  // the block to another thread: each waits, and the next launch opens a
  // new stream. The function ends without one open.
  // CHECK-LABEL: func.func @host_reads
  // CHECK:      %[[S0:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.launch_func async [%[[S0]]]
  // CHECK-NEXT: gpu.wait [%[[S0]]]
  // CHECK-NEXT: memref.load
  // CHECK-NEXT: %[[S1:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.launch_func async [%[[S1]]]
  // CHECK-NEXT: gpu.wait [%[[S1]]]
  // CHECK-NEXT: memref.dealloc
  // CHECK-NEXT: return
  func.func @host_reads(%m: memref<?xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    %x = memref.load %m[%c0] : memref<?xf32>
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    memref.dealloc %m : memref<?xf32>
    return %x : f32
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill() kernel { gpu.return }
  }

  // A host loop that stores between its launches: the stream before it is
  // waited for, and its body queues on a stream of its own per iteration.
  // CHECK-LABEL: func.func @host_loop
  // CHECK:      %[[S0:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.launch_func async [%[[S0]]]
  // CHECK-NEXT: gpu.wait [%[[S0]]]
  // CHECK-NEXT: scf.for
  // CHECK-NEXT:   memref.store
  // CHECK-NEXT:   %[[S1:.*]] = gpu.wait async
  // CHECK-NEXT:   gpu.launch_func async [%[[S1]]]
  // CHECK-NEXT:   gpu.wait [%[[S1]]]
  // CHECK-NEXT: }
  // CHECK-NEXT: return
  func.func @host_loop(%m: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f32
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    scf.for %i = %c0 to %n step %c1 {
      memref.store %one, %m[%i] : memref<?xf32>
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    }
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill() kernel { gpu.return }
  }

  // A launch that is asynchronous already runs on a stream of its own: the
  // queued work is waited for before it, and it is left as it is.
  // CHECK-LABEL: func.func @already_async
  // CHECK:      %[[S0:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.launch_func async [%[[S0]]]
  // CHECK-NEXT: gpu.wait [%[[S0]]]
  // CHECK-NEXT: %[[T:.*]] = gpu.wait async
  // CHECK-NEXT: %[[L:.*]] = gpu.launch_func async [%[[T]]]
  // CHECK-NEXT: gpu.wait [%[[L]]]
  // CHECK-NEXT: return
  func.func @already_async(%m: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    %t = gpu.wait async
    %l = gpu.launch_func async [%t] @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.wait [%l]
    return
  }

  // Nothing launched: nothing changes.
  // CHECK-LABEL: func.func @no_launch
  // CHECK-NOT:  gpu.wait
  // CHECK:      return
  func.func @no_launch(%m: memref<?xf32>) {
    return
  }
}
