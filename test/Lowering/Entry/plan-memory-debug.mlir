// RUN: seq-opt %s --seq-plan-memory -debug-only=seq-plan-memory -o /dev/null 2>&1 | FileCheck %s

// The trace of seq-plan-memory says which allocations it plans and why it
// leaves the others on the heap, where each buffer goes and whose bytes it
// reuses. %c lives after %a and takes its bytes.
// CHECK:      [seq-plan-memory] planning @forward, alignment 64
// CHECK-NEXT: [seq-plan-memory] buffer 0: %{{.*}} = memref.alloc() {alignment = 64 : i64} : memref<16xf32>, live [6, 9], views 1, 64 bytes
// CHECK-NEXT: [seq-plan-memory] buffer 1: %{{.*}} = memref.alloc() {alignment = 64 : i64} : memref<32xf32>, live [8, 11], views 1, 128 bytes
// CHECK-NEXT: [seq-plan-memory] buffer 2: %{{.*}} = memref.alloc() : memref<8xf32>, live [11, 12], views 0, 64 bytes
// CHECK-NEXT: [seq-plan-memory] not planned: %{{.*}} = memref.alloc() : memref<8xf32>: it escapes through the terminator func.return at
// CHECK-NEXT: [seq-plan-memory] not planned: %{{.*}} = memref.alloc() {alignment = 128 : i64} : memref<4xf32>: it asks for a larger alignment than the arena's
// CHECK-NEXT: [seq-plan-memory] placement order: 1 0 2
// CHECK-NEXT: [seq-plan-memory] buffer 1: offset 0, 128 bytes, no buffer placed before it interferes
// CHECK-NEXT: [seq-plan-memory] buffer 0: offset 128, 64 bytes, the lowest gap below, between or above the interfering buffers 1 [0, 128)
// CHECK-NEXT: [seq-plan-memory] buffer 2: offset 128, 64 bytes, the lowest gap below, between or above the interfering buffers 1 [0, 128); reuses bytes of buffer 0 [128, 192), live [6, 9]
// CHECK-NEXT: [seq-plan-memory] the arena is argument 1 of @forward; @__seqc_arena_bytes returns 192 bytes
// CHECK-NEXT: [seq-plan-memory] buffer 0: memref<16xf32> at {{.*}} becomes a view of the arena at offset 128; its deallocations go
// CHECK-NEXT: [seq-plan-memory] buffer 1: memref<32xf32> at {{.*}} becomes a view of the arena at offset 0; its deallocations go
// CHECK-NEXT: [seq-plan-memory] buffer 2: memref<8xf32> at {{.*}} becomes a view of the arena at offset 128; its deallocations go
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 0 : i64} {
  func.func @forward(%x: memref<4xf32>) -> memref<8xf32> {
    %cst = arith.constant 1.0 : f32
    %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
    %c = memref.alloc() : memref<8xf32>
    %out = memref.alloc() : memref<8xf32>
    %over = memref.alloc() {alignment = 128 : i64} : memref<4xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<16xf32>)
    %a4 = memref.subview %a[0] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1]>>
    linalg.fill ins(%cst : f32) outs(%b : memref<32xf32>)
    memref.copy %x, %a4 : memref<4xf32> to memref<4xf32, strided<[1]>>
    %b8 = memref.subview %b[0] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1]>>
    memref.copy %b8, %c : memref<8xf32, strided<[1]>> to memref<8xf32>
    memref.copy %c, %out : memref<8xf32> to memref<8xf32>
    memref.copy %x, %over : memref<4xf32> to memref<4xf32>
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %b : memref<32xf32>
    memref.dealloc %c : memref<8xf32>
    memref.dealloc %over : memref<4xf32>
    return %out : memref<8xf32>
  }
}
