// RUN: seq-opt %s --seq-fold-layers="before-deallocation=true" -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-fold-layers="before-deallocation=true" --seq-fold-layers -split-input-file \
// RUN:   | FileCheck %s --check-prefix=THEN

// seq-fold-layers before the deallocation passes (seqc at -O1 and above):
// the layers' shared buffers move to the entry and are passed to the calls;
// a layer's own buffer stays in its function, with no deallocation yet (the
// passes after add them). The broadcast check of a size the layer reads from
// its own buffer compares the entry's size with itself once resolved: it
// folds to true instead of becoming an i1 argument of the layer.
// The run after the deallocation passes leaves a function that calls a
// folded layer as it is.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?xf32>, %[[W0:[^:]*]]: memref<?xf32>, %[[W1:[^:]*]]: memref<?xf32>)
// CHECK:         %[[N:.*]] = memref.dim %[[X]]
// CHECK:         %[[Y0:.*]] = memref.alloc(%[[N]])
// CHECK:         %[[Y1:.*]] = memref.alloc(%[[N]])
// CHECK-NEXT:    call @__seqc_layer_0(%[[N]], %[[X]], %[[W0]], %[[Y0]]) : (index, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
// CHECK-NEXT:    call @__seqc_layer_0(%[[N]], %[[Y0]], %[[W1]], %[[Y1]]) : (index, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
// CHECK-NEXT:    return %[[Y1]]
// CHECK-LABEL: func.func private @__seqc_layer_0(
// CHECK-SAME:      %[[SIZE:[^:]*]]: index, %[[IN:[^:]*]]: memref<?xf32>, %[[W:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<?xf32>)
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[T:.*]] = memref.alloc(%[[SIZE]])
// CHECK-NEXT:    cf.assert %[[TRUE]]
// CHECK-NEXT:    linalg.add ins(%[[IN]], %[[W]] : {{.*}}) outs(%[[T]] :
// CHECK-NEXT:    linalg.add ins(%[[T]], %[[IN]] : {{.*}}) outs(%[[OUT]] :
// CHECK-NEXT:    return
// CHECK-NOT:     memref.dealloc
// THEN-LABEL:  func.func @forward(
// THEN-COUNT-2:  call @__seqc_layer_0(
// THEN-NOT:      func.func private @__seqc_layer_1
#l0 = loc("layers.0"("model.seq":3:7))
#l1 = loc("layers.1"("model.seq":3:7))
module attributes {seqc.entry = @forward} {
  func.func @forward(%x: memref<?xf32>, %w0: memref<?xf32>,
                     %w1: memref<?xf32>) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %y0 = memref.alloc(%n) : memref<?xf32>
    %y1 = memref.alloc(%n) : memref<?xf32>
    %t0 = memref.alloc(%n) : memref<?xf32> loc(#l0)
    %d0 = memref.dim %t0, %c0 : memref<?xf32> loc(#l0)
    %ok0 = arith.cmpi eq, %d0, %n : index loc(#l0)
    cf.assert %ok0, "sizes differ" loc(#l0)
    linalg.add ins(%x, %w0 : memref<?xf32>, memref<?xf32>) outs(%t0 : memref<?xf32>) loc(#l0)
    linalg.add ins(%t0, %x : memref<?xf32>, memref<?xf32>) outs(%y0 : memref<?xf32>) loc(#l0)
    %t1 = memref.alloc(%n) : memref<?xf32> loc(#l1)
    %d1 = memref.dim %t1, %c0 : memref<?xf32> loc(#l1)
    %ok1 = arith.cmpi eq, %d1, %n : index loc(#l1)
    cf.assert %ok1, "sizes differ" loc(#l1)
    linalg.add ins(%y0, %w1 : memref<?xf32>, memref<?xf32>) outs(%t1 : memref<?xf32>) loc(#l1)
    linalg.add ins(%t1, %y0 : memref<?xf32>, memref<?xf32>) outs(%y1 : memref<?xf32>) loc(#l1)
    return %y1 : memref<?xf32>
  }
}

// -----

// Layers whose function would return a buffer (each allocates one of a size
// it loads, which the code after the layers reads) are left to the run after
// the deallocation passes, with the whole function, twins that return none
// (pre.0 and pre.1) included: its callers could free a returned buffer only
// with run-time alias checks, which keep the buffers they compare out of the
// memory plan. That run folds them.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT:     call
// CHECK:         linalg.fill
// CHECK:         linalg.fill
// CHECK:         memref.load
// CHECK:         memref.alloc
// CHECK:         linalg.fill
// CHECK:         memref.load
// CHECK:         memref.alloc
// CHECK:         linalg.fill
// CHECK:         linalg.add
// CHECK-NEXT:    return
// CHECK-NOT:     func.func private @__seqc_layer
// THEN-LABEL:  func.func @forward(
// THEN-COUNT-2:  call @__seqc_layer_0(%{{.*}}) : (f32, memref<?xf32>) -> ()
// THEN:          %[[A0:.*]] = call @__seqc_layer_1(%{{.*}}) : (memref<1xindex>) -> memref<?xf32>
// THEN-NEXT:     %[[A1:.*]] = call @__seqc_layer_1(%{{.*}}) : (memref<1xindex>) -> memref<?xf32>
// THEN-NEXT:     linalg.add ins(%[[A0]], %[[A1]] :
// THEN-LABEL:  func.func private @__seqc_layer_1(
// THEN-SAME:       -> memref<?xf32>

#p0 = loc("pre.0"("model.seq":2:7))
#p1 = loc("pre.1"("model.seq":2:7))
#l0 = loc("layers.0"("model.seq":3:7))
#l1 = loc("layers.1"("model.seq":3:7))
module attributes {seqc.entry = @forward} {
  func.func @forward(%len: memref<1xindex>, %out: memref<?xf32>, %s: f32) {
    %c0 = arith.constant 0 : index
    %cst = arith.constant 1.0 : f32
    linalg.fill ins(%s : f32) outs(%out : memref<?xf32>) loc(#p0)
    linalg.fill ins(%s : f32) outs(%out : memref<?xf32>) loc(#p1)
    %n0 = memref.load %len[%c0] : memref<1xindex> loc(#l0)
    %a0 = memref.alloc(%n0) : memref<?xf32> loc(#l0)
    linalg.fill ins(%cst : f32) outs(%a0 : memref<?xf32>) loc(#l0)
    %n1 = memref.load %len[%c0] : memref<1xindex> loc(#l1)
    %a1 = memref.alloc(%n1) : memref<?xf32> loc(#l1)
    linalg.fill ins(%cst : f32) outs(%a1 : memref<?xf32>) loc(#l1)
    linalg.add ins(%a0, %a1 : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
    return
  }
}

// -----

// Layers nested in a model instance (model.layers.N) that allocate the buffer
// the next layer reads, of a size read through a collapse_shape of the input:
// the size resolves to the product of the input's sizes, the allocations move
// to the entry and the layers take them as arguments (at every level of
// instances, not only the outermost), so the layers fold before the
// deallocation passes instead of returning their buffers.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x?xf32>, %[[W0:[^:]*]]: memref<?xf32>, %[[W1:[^:]*]]: memref<?xf32>)
// CHECK-DAG:     %[[D0:.*]] = memref.dim %[[X]], %c0
// CHECK-DAG:     %[[D1:.*]] = memref.dim %[[X]], %c1
// CHECK:         %[[N:.*]] = arith.muli %[[D0]], %[[D1]]
// CHECK:         %[[Y0:.*]] = memref.alloc(%[[N]])
// CHECK:         %[[Y1:.*]] = memref.alloc(%[[N]])
// CHECK:         %[[H:.*]] = memref.alloc(%[[N]])
// CHECK:         memref.copy %{{.*}}, %[[H]]
// CHECK-NEXT:    call @__seqc_layer_0(%[[H]], %[[W0]], %[[Y0]])
// CHECK-NEXT:    call @__seqc_layer_0(%[[Y0]], %[[W1]], %[[Y1]])
// CHECK-NEXT:    return %[[Y1]]
// CHECK-LABEL: func.func private @__seqc_layer_0(
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.add
// CHECK-NEXT:    return
#m = loc("model"("model.seq":9:3))
#l0 = loc("model.layers.0"(callsite("model.seq":3:7 at #m)))
#l1 = loc("model.layers.1"(callsite("model.seq":3:7 at #m)))
module attributes {seqc.entry = @forward} {
  func.func @forward(%x: memref<?x?xf32>, %w0: memref<?xf32>,
                     %w1: memref<?xf32>) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %flat = memref.collapse_shape %x [[0, 1]] : memref<?x?xf32> into memref<?xf32> loc(#m)
    %n = memref.dim %flat, %c0 : memref<?xf32> loc(#m)
    %h = memref.alloc(%n) : memref<?xf32> loc(#m)
    memref.copy %flat, %h : memref<?xf32> to memref<?xf32> loc(#m)
    %n0 = memref.dim %h, %c0 : memref<?xf32> loc(#l0)
    %y0 = memref.alloc(%n0) : memref<?xf32> loc(#l0)
    linalg.add ins(%h, %w0 : memref<?xf32>, memref<?xf32>) outs(%y0 : memref<?xf32>) loc(#l0)
    %n1 = memref.dim %y0, %c0 : memref<?xf32> loc(#l1)
    %y1 = memref.alloc(%n1) : memref<?xf32> loc(#l1)
    linalg.add ins(%y0, %w1 : memref<?xf32>, memref<?xf32>) outs(%y1 : memref<?xf32>) loc(#l1)
    return %y1 : memref<?xf32>
  }
}
