// RUN: seq-opt %s --seq-cpu-outline-kernels=min-ops=4 -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-cpu-outline-kernels="min-ops=4 min-uses=1" -split-input-file | FileCheck %s --check-prefix=ALL
// RUN: seq-opt %s --seq-cpu-outline-kernels="min-ops=4 remarks=true" -split-input-file -verify-diagnostics -o /dev/null
// RUN: seq-opt %s --seq-cpu-outline-kernels="min-ops=4 remarks=true" -split-input-file -verify-diagnostics \
// RUN:   -debug-only=seq-cpu-outline-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// Two identical nests on different buffers and sizes: one function (the
// constants cloned in, the captured values as arguments in order of first
// use) and two calls.

// CHECK-LABEL: func.func @same(
// CHECK-SAME:      %[[A:.*]]: memref<?x64xf32>, %[[B:.*]]: memref<?x64xf32>, %[[N:.*]]: index, %[[M:.*]]: index, %[[S:.*]]: f32)
// CHECK-NOT:     scf.parallel
// CHECK:         call @__seqc_kernel_0(%[[N]], %[[A]], %[[S]]) : (index, memref<?x64xf32>, f32) -> ()
// CHECK-NOT:     scf.parallel
// CHECK:         call @__seqc_kernel_0(%[[M]], %[[B]], %[[S]]) : (index, memref<?x64xf32>, f32) -> ()
// CHECK-NEXT:    return
// CHECK:       func.func private @__seqc_kernel_0(%[[KN:.*]]: index, %[[KA:.*]]: memref<?x64xf32>, %[[KS:.*]]: f32)
// CHECK-SAME:      attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"], seqc.kernel}
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[C0]], %[[C0]]) to (%[[KN]], %[[C64]]) step (%[[C1]], %[[C1]]) {
// CHECK:           memref.load %[[KA]][%[[I]], %[[J]]]
// CHECK:           arith.mulf %{{.*}}, %[[KS]]
// CHECK:           memref.store %{{.*}}, %[[KA]][%[[I]], %[[J]]]
// CHECK:         return
// CHECK-NOT:   func.func private @__seqc_kernel_1
// DEBUG:      [seq-cpu-outline-kernels] 2 outermost nests
// DEBUG-NEXT: [seq-cpu-outline-kernels] @__seqc_kernel_0 (5 ops, 3 arguments) shared by 2 nests at: loc({{.*}}) loc({{.*}})
func.func @same(%a: memref<?x64xf32>, %b: memref<?x64xf32>, %n: index,
                %m: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-remark @below {{kernel compiled once and shared by 2 loop nests: @__seqc_kernel_0}}
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %a[%i, %j] : memref<?x64xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c64) step (%c1, %c1) {
    %x = memref.load %b[%i, %j] : memref<?x64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i, %j] : memref<?x64xf32>
  }
  return
}

// -----

// Linalg ops on buffers are loop nests too (still to be lowered): two
// identical generics become one function.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @generics(
// CHECK-SAME:      %[[A:.*]]: memref<?x8xf32>, %[[B:.*]]: memref<?x8xf32>, %[[C:.*]]: memref<?x8xf32>)
// CHECK:         call @__seqc_kernel_0(%[[A]], %[[B]]) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
// CHECK:         call @__seqc_kernel_0(%[[B]], %[[C]]) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
// CHECK:       func.func private @__seqc_kernel_0(%[[X:.*]]: memref<?x8xf32>, %[[Y:.*]]: memref<?x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<?x8xf32>) outs(%[[Y]] : memref<?x8xf32>)
// CHECK:           math.exp
// DEBUG-NEXT: [seq-cpu-outline-kernels] 2 outermost nests
// DEBUG-NEXT: [seq-cpu-outline-kernels] @__seqc_kernel_0 (5 ops, 2 arguments) shared by 2 nests at:
func.func @generics(%a: memref<?x8xf32>, %b: memref<?x8xf32>,
                    %c: memref<?x8xf32>) {
  %one = arith.constant 1.0 : f32
  // expected-remark @below {{kernel compiled once and shared by 2 loop nests: @__seqc_kernel_0}}
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x8xf32>) outs(%b : memref<?x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    %s = arith.addf %e, %one : f32
    %r = arith.divf %one, %s : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<?x8xf32>) outs(%c : memref<?x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    %s = arith.addf %e, %one : f32
    %r = arith.divf %one, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Nests that differ in a constant (the static bound) or in a type are
// different kernels: nothing is shared. With min-uses=1 every nest becomes
// its own function.

// CHECK-LABEL: func.func @different(
// CHECK:         scf.parallel
// CHECK:         scf.parallel
// CHECK:         scf.parallel
// CHECK-NOT:     call
// CHECK-NOT:   func.func private

// ALL-LABEL:   func.func @different(
// ALL-NOT:       scf.parallel
// ALL:           call @__seqc_kernel_0(
// ALL:           call @__seqc_kernel_1(
// ALL:           call @__seqc_kernel_2(
// ALL:         func.func private @__seqc_kernel_0(
// ALL:         func.func private @__seqc_kernel_1(
// ALL:         func.func private @__seqc_kernel_2(
// DEBUG-NEXT: [seq-cpu-outline-kernels] 3 outermost nests
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (1 uses, 5 ops): scf.parallel
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (1 uses, 5 ops): scf.parallel
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (1 uses, 5 ops): scf.parallel
func.func @different(%a: memref<128xf32>, %b: memref<128xf64>, %s: f32,
                     %t: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<128xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %a[%i] : memref<128xf32>
  }
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    %x = memref.load %a[%i] : memref<128xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %a[%i] : memref<128xf32>
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %b[%i] : memref<128xf64>
    %y = arith.mulf %x, %t : f64
    memref.store %y, %b[%i] : memref<128xf64>
  }
  return
}

// -----

// The same ops, but the first nest reads and writes two buffers where the
// second passes one buffer in both places: not the same nest (sharing would
// need the function to be correct for both aliasings, and the calls to pass
// one value twice). Both stay.

// CHECK-LABEL: func.func @aliasing(
// CHECK:         scf.parallel
// CHECK:         scf.parallel
// CHECK-NOT:     call
// DEBUG-NEXT: [seq-cpu-outline-kernels] 2 outermost nests
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (1 uses, 5 ops): scf.parallel
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (1 uses, 5 ops): scf.parallel
func.func @aliasing(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i] : memref<64xf32>
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%i] : memref<64xf32>
  }
  return
}

// -----

// Kept in place even with min-uses=1: a nest that returns a memref (an
// alloca of the nest would not survive the call), a nest with a region of
// several blocks, and a nest below min-ops. Nested loops are never outlined
// on their own, only the outermost one.

// ALL-LABEL:   func.func @kept(
// ALL:           scf.for {{.*}} -> (memref<4xf32>)
// ALL:           scf.parallel
// ALL:             scf.execute_region
// ALL:           scf.for
// ALL-NOT:       call
// ALL-NOT:     func.func private
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (returns a memref): scf.for
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (several blocks or successors): scf.parallel
// DEBUG-NEXT: [seq-cpu-outline-kernels] 1 outermost nests
// DEBUG-NEXT: [seq-cpu-outline-kernels] left in place (3 ops): scf.for
func.func @kept(%a: memref<4xf32>, %n: index, %s: f32) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %a) -> (memref<4xf32>) {
    %t = memref.alloca() : memref<4xf32>
    memref.store %s, %t[%c0] : memref<4xf32>
    %u = arith.addf %s, %s : f32
    memref.store %u, %t[%c1] : memref<4xf32>
    scf.yield %t : memref<4xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = scf.execute_region -> f32 {
      cf.br ^bb1(%s : f32)
    ^bb1(%w: f32):
      scf.yield %w : f32
    }
    memref.store %v, %a[%c0] : memref<4xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    memref.store %s, %a[%c0] : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// Nests are shared across functions (the preparation and the model
// function), inside scf.if, and a nest may read the result of one outlined
// before it: its call takes the result of that call.

// ALL-LABEL:   func.func @first(
// CHECK-LABEL: func.func @first(
// CHECK:         %[[R:.*]] = call @__seqc_kernel_0(%{{.*}}, %{{.*}}) : (index, memref<?xf32>) -> f32
// CHECK:         call @__seqc_kernel_1(%{{.*}}, %{{.*}}, %[[R]]) : (index, memref<?xf32>, f32) -> ()
// CHECK-LABEL: func.func @second(
// CHECK:         scf.if
// CHECK:           %[[R2:.*]] = {{(func.)?}}call @__seqc_kernel_0(
// CHECK:           {{(func.)?}}call @__seqc_kernel_1(%{{.*}}, %{{.*}}, %[[R2]])
// CHECK:       func.func private @__seqc_kernel_0(%{{.*}}: index, %{{.*}}: memref<?xf32>) -> f32
// CHECK:         %[[SUM:.*]] = scf.for
// CHECK:         return %[[SUM]] : f32
// CHECK:       func.func private @__seqc_kernel_1(
// DEBUG-NEXT: [seq-cpu-outline-kernels] 4 outermost nests
// DEBUG-NEXT: [seq-cpu-outline-kernels] @__seqc_kernel_0 (4 ops, 2 arguments) shared by 2 nests at:
// DEBUG-NEXT: [seq-cpu-outline-kernels] @__seqc_kernel_1 (5 ops, 3 arguments) shared by 2 nests at:
func.func @first(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{kernel compiled once and shared by 2 loop nests: @__seqc_kernel_0}}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  // expected-remark @below {{kernel compiled once and shared by 2 loop nests: @__seqc_kernel_1}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.divf %x, %sum : f32
    memref.store %y, %a[%i] : memref<?xf32>
  }
  return
}

func.func @second(%a: memref<?xf32>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.if %p {
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%i] : memref<?xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %x = memref.load %a[%i] : memref<?xf32>
      %y = arith.divf %x, %sum : f32
      memref.store %y, %a[%i] : memref<?xf32>
    }
  }
  return
}
