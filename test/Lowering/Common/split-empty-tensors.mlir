// RUN: seq-opt %s --seq-split-empty-tensors -split-input-file | FileCheck %s

// One tensor.empty written by two layers (as CSE leaves the empties of equal
// shapes; the frontend names the layer in each op's location): each layer
// gets its own, with the same sizes. Two ops of one layer keep sharing it.

// CHECK-LABEL: func.func @layers(
// CHECK-SAME:    %[[N:.*]]: index
// CHECK:         %[[E0:.*]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK-NOT:     tensor.empty
// CHECK:         %[[A:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<?x8xf32>)
// CHECK:         %[[B:.*]] = linalg.add ins(%[[A]], %[[A]] : tensor<?x8xf32>, tensor<?x8xf32>) outs(%[[E1]] : tensor<?x8xf32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<?x8xf32>)
func.func @layers(%n: index, %x: f32, %y: f32) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32> loc("layers.0")
  %b = linalg.add ins(%a, %a : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32> loc("layers.0")
  %c = linalg.fill ins(%y : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32> loc("layers.1")
  return %b, %c : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A use inside a loop: its clone stays outside the loop, next to the
// original (one allocation, not one per iteration). An empty tensor with
// one use is left alone.

// CHECK-LABEL: func.func @nested(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK:         scf.for
// CHECK-NEXT:      linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK:         %[[ALONE:.*]] = tensor.empty() : tensor<2xf32>
// CHECK-NOT:     tensor.empty
func.func @nested(%x: f32, %n: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc("layers.0")
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<4xf32> {
    %f = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc(callsite("inner" at "layers.1"))
    scf.yield %f : tensor<4xf32>
  } loc("layers.1")
  %alone = tensor.empty() : tensor<2xf32>
  return %a, %r, %alone : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>
}

// -----

// The two branches of an scf.if of one layer (one form of an op or the
// other) keep writing one empty tensor: one buffer, whichever runs.

// CHECK-LABEL: func.func @branches(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NOT:     tensor.empty
// CHECK:         scf.if
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK:         else
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
func.func @branches(%c: i1, %x: f32, %y: f32) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = scf.if %c -> tensor<4xf32> {
    %a = linalg.fill ins(%x : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc("layers.0")
    scf.yield %a : tensor<4xf32>
  } else {
    %b = linalg.fill ins(%y : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc("layers.0")
    scf.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// One zero fill as the destination of three projections (CSE merged their
// fills): each writer but the first gets its own fill of its own empty
// tensor, so that bufferization copies no filled buffer and each contraction
// can fold its fill. A fill that is only read is left alone.

// CHECK-LABEL: func.func @shared_fill(
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x8xf32>)
// CHECK:         %[[E2:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK:         %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<?x8xf32>)
// CHECK:         %[[E3:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK:         %[[F3:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E3]] : tensor<?x8xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<4x8xf32>) outs(%[[F]] : tensor<?x8xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<4x8xf32>) outs(%[[F2]] : tensor<?x8xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<4x8xf32>) outs(%[[F3]] : tensor<?x8xf32>)
// CHECK:         %[[R:.*]] = linalg.fill
// CHECK:         linalg.add ins(%[[R]], %[[R]] : tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK-NOT:     linalg.fill
func.func @shared_fill(%n: index, %x: tensor<?x4xf32>, %wq: tensor<4x8xf32>,
                       %wk: tensor<4x8xf32>, %wv: tensor<4x8xf32>, %y: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<?x4xf32>, tensor<4x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<?x4xf32>, tensor<4x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<?x4xf32>, tensor<4x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %r = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %s = linalg.add ins(%r, %r : tensor<?x8xf32>, tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %q, %k, %v, %s : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
