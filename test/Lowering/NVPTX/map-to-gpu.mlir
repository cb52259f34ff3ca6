// RUN: seq-opt %s --seq-nvptx-map-to-gpu="block-size=128 remarks=true" --canonicalize -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not seq-opt %s --seq-nvptx-map-to-gpu="block-size=2048" -split-input-file 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: seq-nvptx-map-to-gpu: block-size 2048 is not between 1 and 1024 threads

// A 2-D parallel loop: one thread per iteration, the iteration space
// linearized with the innermost dimension fastest, blocks of 128 threads,
// and no launch for an empty iteration space.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[M:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[N:.*]] = memref.dim %[[X]], %[[C1]]
// CHECK: %[[COUNTM:.*]] = arith.maxsi %[[M]], %[[C0]]
// CHECK: %[[COUNTN:.*]] = arith.maxsi %[[N]], %[[C0]]
// CHECK: %[[TOTAL:.*]] = arith.muli %[[COUNTM]], %[[COUNTN]]
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %[[TOTAL]], %[[C128]]
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi sgt, %[[TOTAL]], %[[C0]]
// CHECK: scf.if %[[NONEMPTY]] {
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK: %[[B:.*]] = arith.muli %[[BX]], %[[C128]]
// CHECK: %[[LIN:.*]] = arith.addi %[[B]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[LIN]], %[[TOTAL]]
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[LIN]], %[[COUNTN]]
// CHECK: %[[I:.*]] = arith.divui %[[LIN]], %[[COUNTN]]
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK: %[[E:.*]] = math.exp %[[V]]
// CHECK: memref.store %[[E]], %[[Y]][%[[I]], %[[J]]]
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
func.func @elementwise(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i, %j] : memref<?x?xf32>
  }
  return
}

// -----

// Nested parallel loops run in their thread; static scratch buffers become
// private to it.
// CHECK-LABEL: func.func @nested
// CHECK: gpu.launch
// CHECK: memref.alloca() : memref<64xf32>
// CHECK-NOT: memref.alloc(
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK-NOT: memref.dealloc
// CHECK: gpu.terminator
func.func @nested(%x: memref<8x64xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %t = memref.alloc() : memref<64xf32>
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<8x64xf32>
      memref.store %v, %t[%j] : memref<64xf32>
    }
    %s = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %t[%j] : memref<64xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    memref.store %s, %y[%i] : memref<8xf32>
    memref.dealloc %t : memref<64xf32>
  }
  return
}

// -----

// A buffer clipped at an edge (at most 64 elements) is a view of a private
// buffer of its largest size.
// CHECK-LABEL: func.func @bounded
// CHECK: gpu.launch
// CHECK: %[[LEN:.*]] = arith.minui
// CHECK: %[[BYTES:.*]] = memref.alloca() {alignment = 64 : i64} : memref<256xi8>
// CHECK: memref.view %[[BYTES]][%{{.*}}][%[[LEN]]] : memref<256xi8> to memref<?xf32>
// CHECK-NOT: memref.dealloc
func.func @bounded(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c64) {
    %rest = arith.subi %n, %i : index
    %size = arith.minui %rest, %c64 : index
    %t = memref.alloc(%size) {alignment = 64 : i64} : memref<?xf32>
    scf.for %j = %c0 to %size step %c1 {
      %k = arith.addi %i, %j : index
      %v = memref.load %x[%k] : memref<?xf32>
      memref.store %v, %t[%j] : memref<?xf32>
    }
    memref.dealloc %t : memref<?xf32>
  }
  return
}

// -----

// Adjacent loops of one iteration space, the second reading what the first
// wrote at the same iteration, are one kernel; so is a copy between fresh
// buffers after them.
// CHECK-LABEL: func.func @fused
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT: gpu.launch
func.func @fused(%x: memref<?xf32>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%n) : memref<?xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%i] : memref<?xf32>
  }
  %c = memref.alloc(%n) : memref<?xf32>
  memref.copy %b, %c : memref<?xf32> to memref<?xf32>
  return %c : memref<?xf32>
}

// -----

// A copy runs as a kernel too.
// CHECK-LABEL: func.func @copy
// CHECK-NOT: memref.copy
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<?xf32>
// CHECK: memref.store %{{.*}} : memref<?xf32>
func.func @copy(%x: memref<?xf32>, %y: memref<?xf32>) {
  memref.copy %x, %y : memref<?xf32> to memref<?xf32>
  return
}

// -----

// Constant globals are read from the kernel module's copy: the view is
// rebuilt inside the kernel.
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
// CHECK-LABEL: func.func @global
// CHECK: gpu.launch
// CHECK: %[[G:.*]] = memref.get_global @table : memref<4xf32>
// CHECK: memref.load %[[G]]
func.func @global(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.get_global @table : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %g[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// What cannot be a kernel stays on the host, with a remark.
// CHECK-LABEL: func.func @host
// CHECK-NOT: gpu.launch
func.func @host(%x: memref<?xf32>, %y: memref<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{runs on the host, not on the GPU: it is a parallel reduction}}
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  // expected-remark @below {{runs on the host, not on the GPU: its body allocates a buffer whose size has no constant bound within 64 KiB of private memory}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %t : memref<?xf32>
  }
  %stack = memref.alloca() : memref<4xf32>
  // expected-remark @below {{runs on the host, not on the GPU: its body reads a buffer on the host's stack}}
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %stack[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<?xf32>
  }
  // expected-remark @below {{runs on the host, not on the GPU: a loop nest without parallel iterations}}
  %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  %both = arith.addf %total, %sum : f32
  memref.store %both, %y[] : memref<f32>
  return
}

// -----

// An unranked copy has no shape to iterate over: it stays a memref.copy, on
// the host.
// CHECK-LABEL: func.func @unranked_copy
// CHECK-NOT: gpu.launch
// CHECK: memref.copy
func.func @unranked_copy(%x: memref<*xf32>, %y: memref<*xf32>) {
  memref.copy %x, %y : memref<*xf32> to memref<*xf32>
  return
}

// -----

// Rows reduced into memory (the mean of layer norm, the sum of softmax): a
// block of 128 threads per row. The stores of the body run in thread 0
// between barriers; the reduction is strided over the threads from the
// identity, combined by gpu.all_reduce, and added into the element by
// thread 0, in the original operand order; the division reads the sum in
// every thread.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:.*]]: memref<?x256xf32>, %[[N:.*]]: index)
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = memref.alloc(%[[N]])
// CHECK: %[[ROWS:.*]] = arith.maxsi %[[N]]
// CHECK: gpu.launch blocks(%[[ROW:[^,]*]], %{{.*}}, %{{.*}}) in (%{{[^ ]*}} = %[[ROWS]], {{.*}} threads(%[[T:[^,]*]], %{{.*}}, %{{.*}}) in (%{{[^ ]*}} = %[[C128]],
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %[[ZERO]], %[[ACC]][%[[ROW]]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: %[[PART:.*]] = scf.for %[[K:.*]] = %[[T]] to %c256 step %[[C128]] iter_args(%[[P:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[K]]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[V]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %[[P]]
// CHECK-NEXT: scf.yield %[[S]]
// CHECK: %[[TOTAL:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[ACC]][%[[ROW]]]
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[TOTAL]], %[[OLD]]
// CHECK-NEXT: memref.store %[[NEW]], %[[ACC]][%[[ROW]]]
// CHECK: gpu.barrier
// CHECK: %[[SUM:.*]] = memref.load %[[ACC]][%[[ROW]]]
// CHECK: arith.divf %{{.*}}, %[[SUM]]
// CHECK: gpu.terminator
func.func @rows(%x: memref<?x256xf32>, %n: index) -> memref<?xf32> {
  %acc = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %acc[%i] : memref<?xf32>
    scf.for %k = %c0 to %c256 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x256xf32>
      %e = math.exp %v : f32
      %a = memref.load %acc[%i] : memref<?xf32>
      %s = arith.addf %e, %a : f32
      memref.store %s, %acc[%i] : memref<?xf32>
    }
    %sum = memref.load %acc[%i] : memref<?xf32>
    %inv = arith.divf %one, %sum : f32
    memref.store %inv, %acc[%i] : memref<?xf32>
  }
  return %acc : memref<?xf32>
}

// -----

// A maximum starts from -inf.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NEG]])
// CHECK: arith.maximumf
// CHECK: gpu.all_reduce maximumf
func.func @row_max(%x: memref<?x256xf32>, %n: index) -> memref<?xf32> {
  %acc = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c256 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x256xf32>
      %a = memref.load %acc[%i] : memref<?xf32>
      %m = arith.maximumf %a, %v : f32
      memref.store %m, %acc[%i] : memref<?xf32>
    }
  }
  return %acc : memref<?xf32>
}

// -----

// A loop that also reads its accumulator's buffer elsewhere is not a row
// reduction: one thread per row, as before.
// CHECK-LABEL: func.func @not_rows
// CHECK: gpu.launch
// CHECK-NOT: gpu.all_reduce
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1
func.func @not_rows(%x: memref<?x256xf32>, %n: index) -> memref<?xf32> {
  %acc = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c256 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x256xf32>
      %a = memref.load %acc[%i] : memref<?xf32>
      %b = memref.load %acc[%k] : memref<?xf32>
      %w = arith.mulf %v, %b : f32
      %s = arith.addf %a, %w : f32
      memref.store %s, %acc[%i] : memref<?xf32>
    }
  }
  return %acc : memref<?xf32>
}

// -----

// Rows shorter than a warp keep a thread each.
// CHECK-LABEL: func.func @short_rows
// CHECK: gpu.launch
// CHECK-NOT: gpu.all_reduce
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1
func.func @short_rows(%x: memref<?x16xf32>, %n: index) -> memref<?xf32> {
  %acc = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x16xf32>
      %a = memref.load %acc[%i] : memref<?xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%i] : memref<?xf32>
    }
  }
  return %acc : memref<?xf32>
}
