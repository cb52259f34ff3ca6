// RUN: seq-opt %s --pass-pipeline='builtin.module(func.func(seq-nvptx-async-launches))' --split-input-file | FileCheck %s

// A host function's launches queue on one stream, the token of the
// `gpu.wait async` that opens it; the host waits before it reads a buffer
// that a kernel writes, writes or frees one that a kernel uses, and before
// it returns. async-launches-llvm.mlir lowers the queue with gpu-to-llvm.

module attributes {gpu.container_module} {
  gpu.module @k {
    // Writes its argument.
    gpu.func @fill(%m: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %m[%c0] : memref<?xf32>
      gpu.return
    }
    // Reads its first argument, writes its second.
    gpu.func @copy(%in: memref<?xi32>, %out: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%c0] : memref<?xi32>
      %f = arith.sitofp %x : i32 to f32
      memref.store %f, %out[%c0] : memref<?xf32>
      gpu.return
    }
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
  func.func @launches_only(%m: memref<?xf32>, %c: i1, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    scf.if %c {
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    }
    scf.for %i = %c0 to %n step %c1 {
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    }
    %a = memref.alloc(%n) : memref<?xf32>
    %ok = arith.cmpi sgt, %n, %c0 : index
    cf.assert %ok, "a shape check"
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    return
  }

  // The host reads a buffer that kernels only read (a decode step's
  // positions): no wait; one that a kernel writes, through a view: a wait,
  // and the next launch opens a new stream. Freeing a buffer a kernel uses
  // waits (the runtime's cache may hand it to another thread); the function
  // ends without a stream open.
  // CHECK-LABEL: func.func @host_reads
  // CHECK:      %[[S0:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.launch_func async [%[[S0]]] @k::@copy
  // CHECK-NEXT: memref.load %{{.*}} : memref<?xi32>
  // CHECK-NEXT: gpu.launch_func async [%[[S0]]] @k::@copy
  // CHECK-NEXT: memref.subview
  // CHECK-NEXT: gpu.wait [%[[S0]]]
  // CHECK-NEXT: memref.load %{{.*}} : memref<2xf32, strided<[1], offset: 1>>
  // CHECK-NEXT: %[[S1:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.launch_func async [%[[S1]]] @k::@fill
  // CHECK-NEXT: gpu.wait [%[[S1]]]
  // CHECK-NEXT: memref.dealloc
  // CHECK-NEXT: return
  func.func @host_reads(%pos: memref<?xi32>, %out: memref<4xf32>, %m: memref<?xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cast = memref.cast %out : memref<4xf32> to memref<?xf32>
    gpu.launch_func @k::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%pos : memref<?xi32>, %cast : memref<?xf32>)
    %p = memref.load %pos[%c0] : memref<?xi32>
    gpu.launch_func @k::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%pos : memref<?xi32>, %cast : memref<?xf32>)
    %view = memref.subview %out[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
    %x = memref.load %view[%c0] : memref<2xf32, strided<[1], offset: 1>>
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    memref.dealloc %m : memref<?xf32>
    return %x : f32
  }

  // A host loop that stores into a buffer a kernel uses between its
  // launches: the stream before it is waited for, and its body queues on a
  // stream of its own per iteration.
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
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    scf.for %i = %c0 to %n step %c1 {
      memref.store %one, %m[%i] : memref<?xf32>
      gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    }
    return
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
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    %t = gpu.wait async
    %l = gpu.launch_func async [%t] @k::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
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

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    // Reads its first argument and writes through a memref of unknown
    // origin, which may be any argument's.
    gpu.func @opaque(%in: memref<?xi32>, %p: index) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%c0] : memref<?xi32>
      %u = builtin.unrealized_conversion_cast %p : index to memref<1xi32>
      memref.store %x, %u[%c0] : memref<1xi32>
      gpu.return
    }
  }

  // CHECK-LABEL: func.func @opaque_writes
  // CHECK:      gpu.launch_func async
  // CHECK-NEXT: gpu.wait
  // CHECK-NEXT: memref.load
  func.func @opaque_writes(%pos: memref<?xi32>) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@opaque blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%pos : memref<?xi32>, %c1 : index)
    %p = memref.load %pos[%c0] : memref<?xi32>
    return %p : i32
  }
}
