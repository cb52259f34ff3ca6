// RUN: seq-opt %s --seq-nvptx-launch-to-loops -split-input-file -verify-diagnostics | FileCheck %s

// A launch becomes loops over its blocks and threads, z, y, x outermost
// first; ids become the induction variables, the dimensions the launch's
// operands, and the threads' private buffers are allocated once, before.
// CHECK-LABEL: func.func @launch
// CHECK-SAME: (%[[Y:.*]]: memref<?xf32>, %[[GX:.*]]: index)
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[PRIV:.*]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[BX:.*]] = %{{.*}} to %[[GX]] step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[TX:.*]] = %{{.*}} to %[[C128]] step
// CHECK: %[[B:.*]] = arith.muli %[[BX]], %[[C128]]
// CHECK: %[[I:.*]] = arith.addi %[[B]], %[[TX]]
// CHECK: memref.store %{{.*}}, %[[PRIV]]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[I]]]
// CHECK-NOT: gpu.
func.func @launch(%y: memref<?xf32>, %gx: index) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %gx, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c128, %dy = %c1, %dz = %c1) {
    %priv = memref.alloca() : memref<4xf32>
    %b = arith.muli %bx, %dx : index
    %i = arith.addi %b, %tx : index
    memref.store %cst, %priv[%c0] : memref<4xf32>
    %v = memref.load %priv[%c0] : memref<4xf32>
    memref.store %v, %y[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Threads that synchronize cannot run one after the other.
func.func @barrier(%y: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c1, %dy = %c1, %dz = %c1) {
    // expected-error @below {{the GPU interpreter runs one thread after the other, so its threads cannot communicate through 'gpu.barrier'}}
    gpu.barrier
    gpu.terminator
  }
  return
}
