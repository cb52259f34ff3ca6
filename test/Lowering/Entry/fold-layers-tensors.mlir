// RUN: seq-opt %s --seq-fold-layers="on-tensors=true" -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-fold-layers="on-tensors=true" -split-input-file \
// RUN:   --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// seq-fold-layers on tensors (seqc from -O1, before the elimination of empty
// tensors and One-Shot bufferization). CSE left one tensor.empty and one fill
// of it for both layers, and one size of the input, outside the layers:
// those leaves (pure ops reading only arguments, constants and other leaves)
// move to the entry and each layer gets its own copy, where it reads them,
// located at its op; the originals, dead, are erased (bufferization would
// allocate and fill them). The layers' function takes the weights and the input and
// returns the layer's result as a tensor; it is private and marked for
// seq-inline-layers, with none of the attributes of the functions folded on
// buffers. Nothing is remarked.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?xf32>, %[[W0:[^:]*]]: tensor<?xf32>, %[[W1:[^:]*]]: tensor<?xf32>)
// CHECK:         %[[Y0:.*]] = call @__seqc_tensor_layer_0(%[[X]], %[[X]], %[[W0]]) : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[Y1:.*]] = call @__seqc_tensor_layer_0(%[[X]], %[[Y0]], %[[W1]]) : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT:    return %[[Y1]]
// CHECK-LABEL: func.func private @__seqc_tensor_layer_0(
// CHECK-SAME:      %[[SIZED:[^:]*]]: tensor<?xf32>, %[[IN:[^:]*]]: tensor<?xf32>, %[[W:[^:]*]]: tensor<?xf32>) -> tensor<?xf32>
// CHECK-SAME:      attributes {seqc.inline_after_bufferization}
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.0
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[N:.*]] = tensor.dim %[[SIZED]], %[[C0]]
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[N]])
// CHECK-NEXT:    %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] :
// CHECK-NEXT:    %[[S:.*]] = linalg.add ins(%[[IN]], %[[W]] : {{.*}}) outs(%[[F]] :
// CHECK-NEXT:    return %[[S]]
// CHECK-NOT:     func.func private
// LOC:         #[[L0:loc[0-9]+]] = loc("layers.0"(
// LOC-LABEL:   func.func private @__seqc_tensor_layer_0(
// LOC:           tensor.empty({{.*}}) : tensor<?xf32> loc(#[[L0]])
// LOC-NEXT:      linalg.fill {{.*}} loc(#[[L0]])
// LOC-NEXT:      linalg.add {{.*}} loc(#[[L0]])
#l0 = loc("layers.0"("model.seq":3:7))
#l1 = loc("layers.1"("model.seq":3:7))
#top = loc("model.seq":9:9)
module attributes {seqc.entry = @forward} {
  func.func @forward(%x: tensor<?xf32>, %w0: tensor<?xf32>,
                     %w1: tensor<?xf32>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %x, %c0 : tensor<?xf32> loc(#top)
    %e = tensor.empty(%n) : tensor<?xf32> loc(#top)
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32> loc(#top)
    %y0 = linalg.add ins(%x, %w0 : tensor<?xf32>, tensor<?xf32>) outs(%f : tensor<?xf32>) -> tensor<?xf32> loc(#l0)
    %y1 = linalg.add ins(%y0, %w1 : tensor<?xf32>, tensor<?xf32>) outs(%f : tensor<?xf32>) -> tensor<?xf32> loc(#l1)
    return %y1 : tensor<?xf32>
  }
}

// -----

// Nothing folds (the layers differ): the function is left exactly as it was,
// its leaves where they were.
// CHECK-LABEL: func.func @forward(
// CHECK:         tensor.dim
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    linalg.add
// CHECK-NEXT:    linalg.sub
// CHECK-NEXT:    return
// CHECK-NOT:     func.func private
#l0 = loc("layers.0"("model.seq":3:7))
#l1 = loc("layers.1"("model.seq":3:7))
module attributes {seqc.entry = @forward} {
  func.func @forward(%x: tensor<?xf32>, %w0: tensor<?xf32>,
                     %w1: tensor<?xf32>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?xf32> loc(#l0)
    %e = tensor.empty(%n) : tensor<?xf32> loc(#l0)
    %y0 = linalg.add ins(%x, %w0 : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32> loc(#l0)
    %y1 = linalg.sub ins(%y0, %w1 : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32> loc(#l1)
    return %y1 : tensor<?xf32>
  }
}
