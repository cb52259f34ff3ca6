// RUN: seq-opt %s --seq-plan-memory=remarks -split-input-file -verify-diagnostics | FileCheck %s

// Static sizes: the 128-byte buffer %b goes first, the 64-byte %a that lives
// at the same time above it, and %c, which lives with %b (the copy from %b
// reads one and writes the other) but after %a, reuses the bytes of %a.
// The output is not planned; deallocations go.
// CHECK-LABEL: module attributes {seqc.arena = 64 : i64, seqc.entry = @forward
// CHECK-SAME:    seqc.memory_plan = "memory plan of @forward: 3 buffers in one arena, 1 allocations not planned
// CHECK-SAME:    buffer 0: memref<16xf32> at loc({{.*}}), bytes 64, offset 128, live [5, 8]
// CHECK-SAME:    buffer 1: memref<32xf32> at loc({{.*}}), bytes 128, offset 0, live [7, 10]
// CHECK-SAME:    buffer 2: memref<8xf32> at loc({{.*}}), bytes 64, offset 128, live [10, 11]
// CHECK-SAME:    peak 192 bytes (256 without reuse)
// CHECK-LABEL: func.func @__seqc_arena_bytes(
// CHECK-SAME:    %{{.*}}: memref<4xf32>) -> index attributes {llvm.emit_c_interface}
// CHECK:         return %c192{{.*}} : index
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: memref<4xf32>, %[[ARENA:.*]]: memref<?xi8>) -> memref<8xf32>
// CHECK:         %[[A:.*]] = memref.view %[[ARENA]][%c128{{.*}}][] : memref<?xi8> to memref<16xf32>
// CHECK:         %[[B:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<?xi8> to memref<32xf32>
// CHECK:         %[[C:.*]] = memref.view %[[ARENA]][%c128{{.*}}][] : memref<?xi8> to memref<8xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         return %[[OUT]]
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 0 : i64} {
  // expected-remark @+1 {{memory plan: 3 buffers in one arena of 192 bytes (256 without reuse); 1 allocations stay on the heap}}
  func.func @forward(%x: memref<4xf32>) -> memref<8xf32> {
    %cst = arith.constant 1.0 : f32
    %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
    %c = memref.alloc() : memref<8xf32>
    %out = memref.alloc() : memref<8xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<16xf32>)
    %a4 = memref.subview %a[0] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1]>>
    linalg.fill ins(%cst : f32) outs(%b : memref<32xf32>)
    memref.copy %x, %a4 : memref<4xf32> to memref<4xf32, strided<[1]>>
    %b8 = memref.subview %b[0] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1]>>
    memref.copy %b8, %c : memref<8xf32, strided<[1]>> to memref<8xf32>
    memref.copy %c, %out : memref<8xf32> to memref<8xf32>
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %b : memref<32xf32>
    memref.dealloc %c : memref<8xf32>
    return %out : memref<8xf32>
  }
}

// -----

// Dynamic sizes, functions of the input's: rebuilt at the entry, and the
// offsets with them. The longest-lived %b goes first (this placement, with
// the sizes at a proxy dimension, needs less than program order's); %a
// lives with %b, so it goes above it; %c lives with %b only (the view %av
// keeps %a alive until the second copy), so it goes above %b too, into the
// bytes of %a. The bytes function does the same arithmetic.
// CHECK-LABEL: module attributes
// CHECK-SAME:    buffer 0: memref<?xf32> at loc({{.*}}), bytes (dim(%arg0, 0) * 4), offset above buffers 1, live [8, 10]
// CHECK-SAME:    buffer 1: memref<?xf32> at loc({{.*}}), bytes (dim(%arg0, 0) * 4), offset 0, live [9, 12]
// CHECK-SAME:    buffer 2: memref<?x2xf32> at loc({{.*}}), bytes (dim(%arg0, 0) * 8), offset above buffers 1, live [11, 11]
// CHECK-SAME:    peak: dynamic
// CHECK-LABEL: func.func @__seqc_arena_bytes(
// CHECK-SAME:    %[[X:.*]]: memref<?xf32>) -> index
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?xf32>
// CHECK:         %[[RAW_A:.*]] = arith.muli %[[N]], %c4{{.*}} : index
// CHECK:         %[[UP_A:.*]] = arith.addi %[[RAW_A]], %c63{{.*}} : index
// CHECK:         %[[SIZE_A:.*]] = arith.andi %[[UP_A]], %c-64{{.*}} : index
// CHECK:         %[[SIZE_B:.*]] = arith.andi
// CHECK:         %[[SIZE_C:.*]] = arith.andi
// CHECK:         %[[END_A:.*]] = arith.addi %[[SIZE_B]], %[[SIZE_A]] : index
// CHECK:         %[[MAX:.*]] = arith.maxui %[[END_A]], %[[SIZE_B]] : index
// CHECK:         %[[END_C:.*]] = arith.addi %[[SIZE_B]], %[[SIZE_C]] : index
// CHECK:         %[[TOTAL:.*]] = arith.maxui %[[MAX]], %[[END_C]] : index
// CHECK:         return %[[TOTAL]] : index
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: memref<?xf32>, %[[ARENA:.*]]: memref<?xi8>)
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?xf32>
// CHECK:         %[[SIZE_A:.*]] = arith.andi
// CHECK:         %[[SIZE_B:.*]] = arith.andi
// CHECK:         %[[DIM:.*]] = memref.dim %[[X]]
// CHECK:         memref.view %[[ARENA]][%[[SIZE_B]]][%[[DIM]]] : memref<?xi8> to memref<?xf32>
// CHECK:         memref.view %[[ARENA]][%c0{{.*}}][%[[DIM]]] : memref<?xi8> to memref<?xf32>
// CHECK:         memref.view %[[ARENA]][%[[SIZE_B]]][%[[DIM]]] : memref<?xi8> to memref<?x2xf32>
// CHECK-NOT:     memref.dealloc
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 0 : i64} {
  // expected-remark @+1 {{memory plan: 3 buffers in one arena of a size computed from the input sizes at each call; 1 allocations stay on the heap}}
  func.func @forward(%x: memref<?xf32>) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %cst = arith.constant 1.0 : f32
    %n = memref.dim %x, %c0 : memref<?xf32>
    %a = memref.alloc(%n) : memref<?xf32>
    %b = memref.alloc(%n) : memref<?xf32>
    %c = memref.alloc(%n) : memref<?x2xf32>
    %out = memref.alloc(%n) : memref<?xf32>
    %av = memref.cast %a : memref<?xf32> to memref<?xf32>
    memref.copy %x, %a : memref<?xf32> to memref<?xf32>
    memref.copy %x, %b : memref<?xf32> to memref<?xf32>
    memref.copy %av, %out : memref<?xf32> to memref<?xf32>
    linalg.fill ins(%cst : f32) outs(%c : memref<?x2xf32>)
    memref.copy %b, %out : memref<?xf32> to memref<?xf32>
    memref.dealloc %a : memref<?xf32>
    memref.dealloc %b : memref<?xf32>
    memref.dealloc %c : memref<?x2xf32>
    return %out : memref<?xf32>
  }
}

// -----

// Buffers that escape stay allocations: one returned through a view, one
// passed to a call, one whose size is read from memory (it cannot be
// computed at the entry). Nothing is left to plan: no arena.
// CHECK-LABEL: module attributes {seqc.entry = @forward
// CHECK-NOT:     seqc.arena
// CHECK-NOT:     __seqc_arena_bytes
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %{{.*}}: memref<4xf32>, %{{.*}}: memref<index>) -> memref<4x4xf32>
// CHECK-COUNT-3: memref.alloc
// CHECK-NOT:     memref.view
module attributes {seqc.entry = @forward, seqc.num_inputs = 2 : i64,
                   seqc.num_params = 0 : i64} {
  func.func private @sink(memref<8xf32>)
  func.func @forward(%x: memref<4xf32>, %len: memref<index>) -> memref<4x4xf32> {
    %cst = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<16xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<16xf32>)
    %view = memref.expand_shape %a [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
    %b = memref.alloc() : memref<8xf32>
    call @sink(%b) : (memref<8xf32>) -> ()
    %m = memref.load %len[] : memref<index>
    %c = memref.alloc(%m) : memref<?xf32>
    linalg.fill ins(%cst : f32) outs(%c : memref<?xf32>)
    memref.dealloc %b : memref<8xf32>
    memref.dealloc %c : memref<?xf32>
    return %view : memref<4x4xf32>
  }
}

// -----

// A call of an outlined kernel (`seqc.kernel`, seq-cpu-outline-kernels) uses
// its buffers only while it runs: %a, written by one kernel call and read by
// the next, is planned like a buffer used in place, and %b, whose life starts
// after the last use of %a, reuses its bytes.
// CHECK-LABEL: module attributes {seqc.arena = 64 : i64, seqc.entry = @forward
// CHECK-SAME:    buffer 0: memref<16xf32> at loc({{.*}}), bytes 64, offset 0, live [1, 3]
// CHECK-SAME:    buffer 1: memref<16xf32> at loc({{.*}}), bytes 64, offset 0, live [5, 6]
// CHECK-LABEL: func.func @forward(
// CHECK-NOT:     memref.alloc()
// CHECK:         memref.view
// CHECK:         call @kernel
// CHECK:         call @kernel
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 0 : i64} {
  func.func private @kernel(%in: memref<16xf32>, %out: memref<16xf32>) attributes {seqc.kernel} {
    memref.copy %in, %out : memref<16xf32> to memref<16xf32>
    return
  }
  // expected-remark @+1 {{memory plan: 2 buffers in one arena of 64 bytes (128 without reuse); 1 allocations stay on the heap}}
  func.func @forward(%x: memref<16xf32>) -> memref<16xf32> {
    %a = memref.alloc() : memref<16xf32>
    call @kernel(%x, %a) : (memref<16xf32>, memref<16xf32>) -> ()
    %out = memref.alloc() : memref<16xf32>
    call @kernel(%a, %out) : (memref<16xf32>, memref<16xf32>) -> ()
    %b = memref.alloc() : memref<16xf32>
    call @kernel(%out, %b) : (memref<16xf32>, memref<16xf32>) -> ()
    call @kernel(%b, %out) : (memref<16xf32>, memref<16xf32>) -> ()
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %b : memref<16xf32>
    return %out : memref<16xf32>
  }
}

// -----

// A buffer whose address is only compared (a contraction kernel's test that
// its output is aligned for non-temporal stores) is planned: %a. One whose
// address is stored (%b) escapes.
// CHECK-LABEL: module attributes {seqc.arena = 64 : i64, seqc.entry = @forward
// CHECK-SAME:    buffer 0: memref<16xf32> at loc({{.*}}), bytes 64, offset 0
// CHECK-LABEL: func.func @forward(
// CHECK:         %[[A:.*]] = memref.view
// CHECK:         memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK:         memref.extract_aligned_pointer_as_index %[[B]]
module attributes {seqc.entry = @forward, seqc.num_inputs = 2 : i64,
                   seqc.num_params = 0 : i64} {
  // expected-remark @+1 {{memory plan: 1 buffers in one arena of 64 bytes (64 without reuse); 2 allocations stay on the heap}}
  func.func @forward(%x: memref<16xf32>, %where: memref<index>) -> memref<16xf32> {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %a = memref.alloc() : memref<16xf32>
    %pa = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index
    %rem = arith.remui %pa, %c64 : index
    %aligned = arith.cmpi eq, %rem, %c0 : index
    scf.if %aligned {
      memref.copy %x, %a : memref<16xf32> to memref<16xf32>
    } else {
      linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
    }
    %b = memref.alloc() : memref<16xf32>
    %pb = memref.extract_aligned_pointer_as_index %b : memref<16xf32> -> index
    memref.store %pb, %where[] : memref<index>
    memref.copy %a, %b : memref<16xf32> to memref<16xf32>
    %out = memref.alloc() : memref<16xf32>
    memref.copy %b, %out : memref<16xf32> to memref<16xf32>
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %b : memref<16xf32>
    return %out : memref<16xf32>
  }
}

// -----

// Without the entry attributes the pass does nothing.
// CHECK-LABEL: func.func @library(
// CHECK:         memref.alloc
// CHECK:         memref.dealloc
func.func @library(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A chain of buffers of one size, each written from the one before (the
// residual stream of a model whose layers each have their own buffer): %x2
// is dead while %x0 lives and takes its place, instead of stacking above
// %x1. Two places for three buffers.
// CHECK-LABEL: module attributes
// CHECK-SAME:    buffer 0: memref<?xf32> at loc({{.*}}), bytes (dim(%arg0, 0) * 4), offset 0, live [6, 7]
// CHECK-SAME:    buffer 1: memref<?xf32> at loc({{.*}}), bytes (dim(%arg0, 0) * 4), offset above buffers 0, live [7, 8]
// CHECK-SAME:    buffer 2: memref<?xf32> at loc({{.*}}), bytes (dim(%arg0, 0) * 4), offset 0, live [8, 9]
// CHECK-SAME:    peak: dynamic
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 0 : i64} {
  // expected-remark @+1 {{memory plan: 3 buffers in one arena of a size computed from the input sizes at each call; 1 allocations stay on the heap}}
  func.func @forward(%x: memref<?xf32>) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %x0 = memref.alloc(%n) : memref<?xf32>
    %x1 = memref.alloc(%n) : memref<?xf32>
    %x2 = memref.alloc(%n) : memref<?xf32>
    %out = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %x0 : memref<?xf32> to memref<?xf32>
    memref.copy %x0, %x1 : memref<?xf32> to memref<?xf32>
    memref.copy %x1, %x2 : memref<?xf32> to memref<?xf32>
    memref.copy %x2, %out : memref<?xf32> to memref<?xf32>
    memref.dealloc %x0 : memref<?xf32>
    memref.dealloc %x1 : memref<?xf32>
    memref.dealloc %x2 : memref<?xf32>
    return %out : memref<?xf32>
  }
}
