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
// CHECK-NOT: {{^ *}}gpu.
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

// Threads that meet at a barrier run in phases: a loop over the threads
// before the barrier and one after. The value loaded before and used after
// is kept per thread in a buffer allocated before the block loops (indexed
// by the linear thread id), the workgroup buffer is allocated there too,
// with the race checks' phase counter and shadows, and all of them are
// freed after the loops. The pure index arithmetic is recomputed after the
// barrier, not kept.
// CHECK-LABEL: func.func @barrier
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK: arith.muli
// CHECK: %[[N:.*]] = arith.muli
// CHECK: %[[SM:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: %[[PHASE:.*]] = memref.alloc() : memref<1xi64>
// CHECK: %[[KEPT:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// Phase 1.
// CHECK: memref.load %[[PHASE]]
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for %[[T1:[^ ]*]] =
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[T1]]]
// CHECK: memref.store %[[V]], %[[KEPT]]
// CHECK: memref.store %[[V]], %[[SM]][%[[T1]]]
// Phase 2.
// CHECK: memref.load %[[PHASE]]
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for %[[T2:[^ ]*]] =
// CHECK: %[[J:.*]] = arith.xori %[[T2]]
// CHECK: %[[W:.*]] = memref.load %[[SM]][%[[J]]]
// CHECK: %[[MINE:.*]] = memref.load %[[KEPT]]
// CHECK: arith.addf %[[W]], %[[MINE]]
// CHECK: memref.dealloc %[[SM]]
// CHECK-NOT: {{^ *}}gpu.
func.func @barrier(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c64, %dy = %c1, %dz = %c1)
             workgroup(%sm : memref<64xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %x[%tx] : memref<?xf32>
    memref.store %v, %sm[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    %j = arith.xori %tx, %c1 : index
    gpu.barrier
    %w = memref.load %sm[%j] : memref<64xf32, #gpu.address_space<workgroup>>
    %s = arith.addf %w, %v : f32
    memref.store %s, %y[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Only structured loops and branches may hold a barrier.
func.func @while_barrier(%n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c1, %dy = %c1, %dz = %c1) {
    // expected-error @below {{the GPU interpreter runs the threads of a block together through 'scf.for' and 'scf.if', not through 'scf.while', which holds a barrier, shuffle or reduction}}
    scf.while (%i = %tx) : (index) -> index {
      %go = arith.cmpi ult, %i, %n : index
      scf.condition(%go) %i : index
    } do {
    ^bb0(%i: index):
      gpu.barrier
      %next = arith.addi %i, %c1 : index
      scf.yield %next : index
    }
    gpu.terminator
  }
  return
}

// -----

// A buffer allocated before a barrier and used after cannot be kept per
// thread (private buffers of static shape can).
func.func @memref_across(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c1, %dy = %c1, %dz = %c1) {
    // expected-error @below {{the GPU interpreter cannot keep a value of type 'memref<?xf32>' for each thread across a barrier, shuffle or reduction}}
    %m = memref.alloc(%n) : memref<?xf32>
    gpu.barrier
    memref.store %cst, %m[%c0] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @printf() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c1, %dy = %c1, %dz = %c1) {
    // expected-error @below {{the GPU interpreter does not emulate 'gpu.printf'}}
    gpu.printf "thread %lld\n", %tx : index
    gpu.terminator
  }
  return
}

// -----

func.func @all_reduce_region(%v: f32) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c1, %dy = %c1, %dz = %c1) {
    // expected-error @below {{the GPU interpreter emulates gpu.all_reduce with an operation attribute, not with a region}}
    %s = gpu.all_reduce %v {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    } : (f32) -> (f32)
    gpu.terminator
  }
  return
}

// -----

func.func @cluster(%v: f32) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c1, %dy = %c1, %dz = %c1) {
    // expected-error @below {{the GPU interpreter emulates gpu.subgroup_reduce over whole warps, not clusters}}
    %s = gpu.subgroup_reduce add %v cluster(size = 4) : (f32) -> f32
    gpu.terminator
  }
  return
}

// -----

// Integer mma.sync is not emulated.
func.func @mma_int8(%a: vector<4x4xi8>, %b: vector<2x4xi8>, %c: vector<2x2xi32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c32, %dy = %c1, %dz = %c1) {
    // expected-error @below {{the GPU interpreter emulates nvgpu.mma.sync for f16 and bf16 m16n8k16 and m16n8k8 and tf32 m16n8k8 and m16n8k4 with f32 or f16 accumulators, not vector<4x4xi8> x vector<2x4xi8> + vector<2x2xi32> in m16n8k32}}
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 32]} : (vector<4x4xi8>, vector<2x4xi8>, vector<2x2xi32>) -> vector<2x2xi32>
    gpu.terminator
  }
  return
}

// -----

// Asynchronous copies (cp.async) into views of workgroup memory are not
// emulated (the interpreter records them per element of an attribution).
func.func @async_copy(%src: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c1, %dy = %c1, %dz = %c1)
             workgroup(%sm : memref<16xf32, #gpu.address_space<workgroup>>) {
    %v = memref.subview %sm[4] [8] [1] : memref<16xf32, #gpu.address_space<workgroup>> to memref<8xf32, strided<[1], offset: 4>, #gpu.address_space<workgroup>>
    // expected-error @below {{the GPU interpreter emulates nvgpu.device_async_copy into the launch's workgroup attributions, not into views of them}}
    %t = nvgpu.device_async_copy %src[%c0], %v[%c0], 4 : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}
