// RUN: seq-opt %s --seq-loop-layers=remarks -split-input-file -verify-diagnostics | FileCheck %s

// Three calls of a folded layer become one loop. Per layer: a weight (an
// argument: its index in the table), a view of the arena at an offset (a
// constant of the table, the view cloned into the body) and a size computed
// before the run (stored on the stack). The shared argument %x and the
// shared constant stay as they are. The function then takes the array of
// its arguments' descriptors, and reads those it uses outside the loop at
// the entry; so does @__seqc_arena_bytes.

// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.packed_arguments = 5 : i64
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[DESCS:.*]]: !llvm.ptr) {
// CHECK:         %[[I0:.*]] = arith.constant 0 : i64
// CHECK:         llvm.getelementptr inbounds %[[DESCS]][%[[I0]]]
// CHECK:         %[[X:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CHECK:         %[[I4:.*]] = arith.constant 4 : i64
// CHECK:         %[[ARENA:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?xi8>
// CHECK:         %[[STACK:.*]] = memref.alloca() : memref<3x1xindex>
// CHECK:         %[[TABLE:.*]] = memref.get_global @__seqc_layer_table_0 : memref<3x2xi64>
// CHECK-COUNT-3: memref.store %{{.*}}, %[[STACK]][
// CHECK:         scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[K:.*]] = memref.load %[[TABLE]]{{\[}}%[[L]], %{{.*}}] : memref<3x2xi64>
// CHECK:           llvm.getelementptr inbounds %[[DESCS]][%[[K]]]
// CHECK:           %[[W:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<4xf32>
// CHECK:           %[[OFF64:.*]] = memref.load %[[TABLE]]{{\[}}%[[L]], %{{.*}}] : memref<3x2xi64>
// CHECK:           %[[OFF:.*]] = arith.index_cast %[[OFF64]] : i64 to index
// CHECK:           %[[VIEW:.*]] = memref.view %[[ARENA]]{{\[}}%[[OFF]]][] : memref<?xi8> to memref<4xf32>
// CHECK:           %[[N:.*]] = memref.load %[[STACK]]{{\[}}%[[L]], %{{.*}}] : memref<3x1xindex>
// CHECK:           func.call @__seqc_layer_0(%[[X]], %[[W]], %[[VIEW]], %[[N]], %{{.*}})
// CHECK:         }
// CHECK-NOT:     call @__seqc_layer_0
// CHECK:         return
// CHECK-LABEL: func.func @__seqc_arena_bytes(
// CHECK-SAME:    %{{.*}}: !llvm.ptr) -> index
// CHECK:       memref.global "private" constant @__seqc_layer_table_0 : memref<3x2xi64> = dense<{{\[}}[1, 0], [2, 64], [3, 128]]>
module attributes {seqc.entry = @forward} {
  func.func private @__seqc_layer_0(memref<4xf32>, memref<4xf32>, memref<4xf32>, index, i1)
  func.func @forward(%x: memref<4xf32>, %w0: memref<4xf32>, %w1: memref<4xf32>,
                     %w2: memref<4xf32>, %arena: memref<?xi8>) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %d = memref.dim %arena, %c0 : memref<?xi8>
    %n0 = arith.addi %d, %c64 : index
    %n1 = arith.muli %d, %c64 : index
    %n2 = arith.subi %d, %c64 : index
    %v0 = memref.view %arena[%c0][] : memref<?xi8> to memref<4xf32>
    %v1 = memref.view %arena[%c64][] : memref<?xi8> to memref<4xf32>
    %v2 = memref.view %arena[%c128][] : memref<?xi8> to memref<4xf32>
    // expected-remark @+1 {{3 calls of @__seqc_layer_0 run as one loop over a table of the layers' values}}
    func.call @__seqc_layer_0(%x, %w0, %v0, %n0, %true) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, index, i1) -> ()
    func.call @__seqc_layer_0(%x, %w1, %v1, %n1, %true) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, index, i1) -> ()
    func.call @__seqc_layer_0(%x, %w2, %v2, %n2, %true) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, index, i1) -> ()
    return
  }
  func.func @__seqc_arena_bytes(%x: memref<4xf32>, %w0: memref<4xf32>, %w1: memref<4xf32>,
                                %w2: memref<4xf32>) -> index attributes {llvm.emit_c_interface} {
    %c0 = arith.constant 0 : index
    %d = memref.dim %x, %c0 : memref<4xf32>
    return %d : index
  }
}

// -----

// A value the loop cannot index (a float that differs between the layers)
// keeps the calls, with a remark; the function keeps its arguments.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK-COUNT-2: call @__seqc_layer_0(
// CHECK-NOT:     scf.for
module attributes {seqc.entry = @forward} {
  func.func private @__seqc_layer_0(memref<4xf32>, f32)
  func.func @forward(%w0: memref<4xf32>, %w1: memref<4xf32>) {
    %a = arith.constant 1.0 : f32
    %b = arith.constant 2.0 : f32
    // expected-remark @+1 {{2 calls of @__seqc_layer_0 stay unrolled: its operands differ between the layers as values of type f32, which the loop cannot index}}
    func.call @__seqc_layer_0(%w0, %a) : (memref<4xf32>, f32) -> ()
    func.call @__seqc_layer_0(%w1, %b) : (memref<4xf32>, f32) -> ()
    return
  }
}
