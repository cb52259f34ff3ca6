// RUN: seq-opt %s --seq-plan-memory=remarks -verify-diagnostics | FileCheck %s

// A folded layer plans its own buffers into a slice of its caller's arena:
// the slice is its new last argument, each call gets one of the bytes the
// layer's plan needs for the call's operands (n * 16 rounded up to 64, twice:
// %a and %b live at the same time), and the model function's plan places
// the slices with its own buffers. The two calls' slices, alive one call
// each, share one place; the buffer the layers share (%y) lives across both.
// CHECK-LABEL: module attributes {seqc.arena = 64 : i64, seqc.entry = @forward
// CHECK-SAME:    memory plan of @forward: 3 buffers in one arena
// CHECK-SAME:    memory plan of @__seqc_layer_0: 2 buffers in one arena
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x4xf32>, %[[ARENA:.*]]: memref<?xi8>)
// CHECK-DAG:     %[[Y:.*]] = memref.view %[[ARENA]]
// CHECK-DAG:     %[[S0:.*]] = memref.view %[[ARENA]][%[[OFF:[a-z0-9_]+]]][%{{.*}}] : memref<?xi8> to memref<?xi8>
// CHECK-DAG:     %[[S1:.*]] = memref.view %[[ARENA]][%[[OFF]]][%{{.*}}] : memref<?xi8> to memref<?xi8>
// CHECK:         call @__seqc_layer_0(%[[X]], %[[Y]], %[[S0]])
// CHECK-NEXT:    call @__seqc_layer_0(%[[Y]], %[[Y]], %[[S1]])
// CHECK-NOT:     memref.dealloc
// CHECK-LABEL: func.func private @__seqc_layer_0(
// CHECK-SAME:      %[[IN:[^:]*]]: memref<?x4xf32>, %[[OUT:[^:]*]]: memref<?x4xf32>, %[[SLICE:[^:]*]]: memref<?xi8>)
// CHECK:         %[[A:.*]] = memref.view %[[SLICE]]
// CHECK:         %[[B:.*]] = memref.view %[[SLICE]]
// CHECK:         linalg.add ins(%[[IN]], %[[A]] : {{.*}}) outs(%[[B]] :
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.dealloc
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 0 : i64} {
  // expected-remark @below {{memory plan: 3 buffers in one arena of a size computed from the input sizes at each call}}
  func.func @forward(%x: memref<?x4xf32>) -> memref<?x4xf32> {
    %c0 = arith.constant 0 : index
    %n = memref.dim %x, %c0 : memref<?x4xf32>
    %y = memref.alloc(%n) {alignment = 64 : i64} : memref<?x4xf32>
    func.call @__seqc_layer_0(%x, %y) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
    func.call @__seqc_layer_0(%y, %y) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
    %out = memref.alloc(%n) : memref<?x4xf32>
    memref.copy %y, %out : memref<?x4xf32> to memref<?x4xf32>
    memref.dealloc %y : memref<?x4xf32>
    return %out : memref<?x4xf32>
  }
  // expected-remark @below {{memory plan: 2 buffers in a slice of the caller's arena per call, of a size computed from its arguments}}
  func.func private @__seqc_layer_0(%in: memref<?x4xf32>, %out: memref<?x4xf32>) {
    %c0 = arith.constant 0 : index
    %cst = arith.constant 1.0 : f32
    %n = memref.dim %in, %c0 : memref<?x4xf32>
    %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x4xf32>
    %b = memref.alloc(%n) {alignment = 64 : i64} : memref<?x4xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<?x4xf32>)
    linalg.add ins(%in, %a : memref<?x4xf32>, memref<?x4xf32>) outs(%b : memref<?x4xf32>)
    memref.copy %b, %out : memref<?x4xf32> to memref<?x4xf32>
    memref.dealloc %a : memref<?x4xf32>
    memref.dealloc %b : memref<?x4xf32>
    return
  }
}
