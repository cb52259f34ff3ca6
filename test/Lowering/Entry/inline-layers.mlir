// RUN: seq-opt %s --seq-inline-layers --mlir-print-debuginfo | FileCheck %s

// seq-inline-layers (right after One-Shot bufferization): each call of a
// function marked seqc.inline_after_bufferization becomes a copy of its body
// on the call's operands, its results the values the function returns, and
// the function is erased. The copies name the instance of the call they
// replace again (the function's location is the first twin's), nested
// locations included, and so do the instances nested in it ('layers.0.mlp'
// becomes 'layers.1.mlp'). Calls of other functions stay.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4xf32> {{.*}}, %[[W0:[^:]*]]: memref<4xf32> {{.*}}, %[[W1:[^:]*]]: memref<4xf32>
// CHECK-NEXT:    %[[A0:.*]] = memref.alloc() : memref<4xf32> loc(#[[CS0:loc[0-9]*]])
// CHECK-NEXT:    linalg.add ins(%[[X]], %[[W0]] : {{.*}}) outs(%[[A0]] : memref<4xf32>) loc(#[[L0:loc[0-9]*]])
// CHECK-NEXT:    linalg.exp ins(%[[A0]] : {{.*}}) outs(%[[A0]] : memref<4xf32>) loc(#[[M0:loc[0-9]*]])
// CHECK-NEXT:    %[[A1:.*]] = memref.alloc() : memref<4xf32> loc(#[[CS1:loc[0-9]*]])
// CHECK-NEXT:    linalg.add ins(%[[A0]], %[[W1]] : {{.*}}) outs(%[[A1]] : memref<4xf32>) loc(#[[L1:loc[0-9]*]])
// CHECK-NEXT:    linalg.exp ins(%[[A1]] : {{.*}}) outs(%[[A1]] : memref<4xf32>) loc(#[[M1:loc[0-9]*]])
// CHECK-NEXT:    call @other(%[[A1]])
// CHECK-NEXT:    return %[[A1]]
// CHECK-NOT:     @__seqc_tensor_layer_0
// CHECK-DAG:     #[[N0:loc[0-9]*]] = loc("layers.0"(
// CHECK-DAG:     #[[N1:loc[0-9]*]] = loc("layers.1"(
// CHECK-DAG:     #[[CS0]] = loc(callsite(#{{loc[0-9]*}} at #[[N0]]))
// CHECK-DAG:     #[[CS1]] = loc(callsite(#{{loc[0-9]*}} at #[[N1]]))
// CHECK-DAG:     #[[L0]] = loc(fused[#[[CS0]], #{{loc[0-9]*}}])
// CHECK-DAG:     #[[L1]] = loc(fused[#[[CS1]], #{{loc[0-9]*}}])
// CHECK-DAG:     #[[M0]] = loc("layers.0.mlp"(#[[CS0]]))
// CHECK-DAG:     #[[M1]] = loc("layers.1.mlp"(#[[CS1]]))
#n0 = loc("layers.0"("model.seq":3:7))
#n1 = loc("layers.1"("model.seq":3:7))
#op = loc("model.seq":8:5)
#in0 = loc(callsite(#op at #n0))
module {
  func.func private @other(memref<4xf32>)
  func.func @forward(%x: memref<4xf32>, %w0: memref<4xf32>,
                     %w1: memref<4xf32>) -> memref<4xf32> {
    %y0 = call @__seqc_tensor_layer_0(%x, %w0) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32> loc(#n0)
    %y1 = call @__seqc_tensor_layer_0(%y0, %w1) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32> loc(#n1)
    call @other(%y1) : (memref<4xf32>) -> ()
    return %y1 : memref<4xf32>
  }
  func.func private @__seqc_tensor_layer_0(%in: memref<4xf32>, %w: memref<4xf32>) -> memref<4xf32>
      attributes {seqc.inline_after_bufferization} {
    %a = memref.alloc() : memref<4xf32> loc(#in0)
    linalg.add ins(%in, %w : memref<4xf32>, memref<4xf32>) outs(%a : memref<4xf32>) loc(fused[#in0, "other.seq":1:1])
    linalg.exp ins(%a : memref<4xf32>) outs(%a : memref<4xf32>) loc("layers.0.mlp"(#in0))
    return %a : memref<4xf32>
  } loc(#n0)
}
