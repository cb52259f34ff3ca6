// RUN: seq-opt %s --seq-split-deallocs -split-input-file | FileCheck %s

// The dealloc that ownership-based deallocation puts at the end of a block:
// three distinct allocations become three deallocs with the same retained
// value, and the retained value's ownership is the disjunction of theirs.

// CHECK-LABEL: func.func @distinct(
// CHECK-SAME:    %[[C:.*]]: i1, %[[R:.*]]: memref<?xf32>
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[D:.*]] = memref.alloc() : memref<2xi32>
// CHECK:         %[[O0:.*]] = bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[TRUE:.*]]) retain (%[[R]] : memref<?xf32>)
// CHECK:         %[[O1:.*]] = bufferization.dealloc (%[[B]] : memref<8xf32>) if (%[[C]]) retain (%[[R]] : memref<?xf32>)
// CHECK:         %[[O01:.*]] = arith.ori %[[O0]], %[[O1]] : i1
// CHECK:         %[[O2:.*]] = bufferization.dealloc (%[[D]] : memref<2xi32>) if (%[[TRUE]]) retain (%[[R]] : memref<?xf32>)
// CHECK:         %[[O:.*]] = arith.ori %[[O01]], %[[O2]] : i1
// CHECK:         return %[[O]]
func.func @distinct(%c: i1, %r: memref<?xf32>) -> i1 {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  %d = memref.alloc() : memref<2xi32>
  %o = bufferization.dealloc (%a, %b, %d : memref<4xf32>, memref<8xf32>, memref<2xi32>)
      if (%true, %c, %true) retain (%r : memref<?xf32>)
  return %o : i1
}

// -----

// Without retained values the deallocs have no results.

// CHECK-LABEL: func.func @no_retained(
// CHECK:         bufferization.dealloc (%{{.*}} : memref<4xf32>) if (%{{.*}}){{$}}
// CHECK-NEXT:    bufferization.dealloc (%{{.*}} : memref<8xf32>) if (%{{.*}}){{$}}
// CHECK-NEXT:    return
func.func @no_retained() {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>) if (%true, %true)
  return
}

// -----

// A memref that is not the result of an alloc (a function argument whose
// ownership was passed in) may alias another: the dealloc stays whole, for
// the simplification to decide with its alias analysis.

// CHECK-LABEL: func.func @maybe_aliasing(
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if
// CHECK-NOT:     bufferization.dealloc
func.func @maybe_aliasing(%arg: memref<4xf32>, %c: i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a, %arg : memref<4xf32>, memref<4xf32>) if (%true, %c)
  return
}

// -----

// The same allocation listed twice is freed once: left alone.

// CHECK-LABEL: func.func @twice(
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if
func.func @twice(%c: i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a, %a : memref<4xf32>, memref<4xf32>) if (%true, %c)
  return
}
