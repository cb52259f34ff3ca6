// RUN: seq-opt %s --seq-fold-layers -split-input-file | FileCheck %s

// seq-fold-layers on buffers, before the memory plan. Each layer allocates
// a scratch buffer for itself (%t) and the next layer's input (%y), which
// bufferization allocated at the top, and frees everything at the end. (The
// first layer reads a buffer the function allocated, an embedding's output,
// as the others do.)
// The deallocations move after the last use, so the scratch buffer and its
// deallocation stay in the layer's function; the shared buffers move to
// the entry and are passed once each, as themselves: the view of the input
// is rebuilt inside the function from its argument; the deallocation of a
// layer's input, which the layer does not own, stays in the caller.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: memref<8xf32>, %[[W0:[^:]*]]: memref<8xf32>, %[[W1:[^:]*]]: memref<8xf32>)
// CHECK:         %[[E:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[Y0:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[Y1:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         memref.copy %[[X]], %[[E]]
// CHECK-NEXT:    call @__seqc_layer_0(%[[E]], %[[Y0]], %[[W0]])
// CHECK-NEXT:    memref.dealloc %[[E]]
// CHECK-NEXT:    call @__seqc_layer_0(%[[Y0]], %[[Y1]], %[[W1]])
// CHECK-NEXT:    memref.dealloc %[[Y0]]
// CHECK-NEXT:    return %[[Y1]]
// CHECK-LABEL: func.func private @__seqc_layer_0(
// CHECK-SAME:      %[[IN:[^:]*]]: memref<8xf32>, %[[OUT:[^:]*]]: memref<8xf32>, %[[W:[^:]*]]: memref<8xf32>)
// CHECK-NEXT:    %[[VIN:.*]] = memref.expand_shape %[[IN]]
// CHECK-NEXT:    %[[VOUT:.*]] = memref.expand_shape %[[OUT]]
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:    linalg.add ins(%[[IN]], %[[W]] : {{.*}}) outs(%[[T]] :
// CHECK-NEXT:    %[[VT:.*]] = memref.expand_shape %[[T]]
// CHECK-NEXT:    linalg.add ins(%[[VIN]], %[[VT]] : {{.*}}) outs(%[[VOUT]] :
// CHECK-NEXT:    memref.dealloc %[[T]]
// CHECK-NEXT:    return
#l0 = loc("layers.0"("model.seq":3:7))
#l1 = loc("layers.1"("model.seq":3:7))
module attributes {seqc.entry = @forward} {
  func.func @forward(%x: memref<8xf32>, %w0: memref<8xf32>,
                     %w1: memref<8xf32>) -> memref<8xf32> {
    %e = memref.alloc() : memref<8xf32>
    %y0 = memref.alloc() : memref<8xf32>
    %y1 = memref.alloc() : memref<8xf32>
    memref.copy %x, %e : memref<8xf32> to memref<8xf32>
    %t0 = memref.alloc() : memref<8xf32> loc(#l0)
    linalg.add ins(%e, %w0 : memref<8xf32>, memref<8xf32>) outs(%t0 : memref<8xf32>) loc(#l0)
    %v0 = memref.expand_shape %e [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    %u0 = memref.expand_shape %t0 [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    %o0 = memref.expand_shape %y0 [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    linalg.add ins(%v0, %u0 : memref<2x4xf32>, memref<2x4xf32>) outs(%o0 : memref<2x4xf32>) loc(#l0)
    %t1 = memref.alloc() : memref<8xf32> loc(#l1)
    linalg.add ins(%y0, %w1 : memref<8xf32>, memref<8xf32>) outs(%t1 : memref<8xf32>) loc(#l1)
    %v1 = memref.expand_shape %y0 [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    %u1 = memref.expand_shape %t1 [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    %o1 = memref.expand_shape %y1 [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    linalg.add ins(%v1, %u1 : memref<2x4xf32>, memref<2x4xf32>) outs(%o1 : memref<2x4xf32>) loc(#l1)
    memref.dealloc %e : memref<8xf32>
    memref.dealloc %t0 : memref<8xf32>
    memref.dealloc %t1 : memref<8xf32>
    memref.dealloc %y0 : memref<8xf32>
    return %y1 : memref<8xf32>
  }
}

// -----

// A layer that would pass one buffer as two arguments (layers.0 adds %x to
// itself where layers.1 adds two buffers) is not folded: its function's
// kernels could not tell that the two alias.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT:     call @__seqc_layer
// CHECK:         return
#l0 = loc("layers.0"("model.seq":3:7))
#l1 = loc("layers.1"("model.seq":3:7))
module attributes {seqc.entry = @forward} {
  func.func @forward(%x: memref<8xf32>, %z: memref<8xf32>) -> memref<8xf32> {
    %y0 = memref.alloc() : memref<8xf32>
    %y1 = memref.alloc() : memref<8xf32>
    linalg.add ins(%x, %x : memref<8xf32>, memref<8xf32>) outs(%y0 : memref<8xf32>) loc(#l0)
    linalg.add ins(%y0, %z : memref<8xf32>, memref<8xf32>) outs(%y1 : memref<8xf32>) loc(#l1)
    memref.dealloc %y0 : memref<8xf32>
    return %y1 : memref<8xf32>
  }
}
