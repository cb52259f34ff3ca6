// RUN: seq-opt %s --seq-cpu-stack-scratch -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-cpu-stack-scratch=remarks=true -split-input-file \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// The state of a tile, allocated and freed in each iteration of a
// worksharing loop, becomes one slot per thread at the entry of the team's
// region; a key tile's scratch of at most 64 columns gets a slot of the
// bound, viewed with its run-time size.

// CHECK-LABEL: func.func @team
// CHECK:         omp.parallel {
// CHECK-NEXT:      %[[TILE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<768xi8>
// CHECK-NEXT:      %[[ROW:.*]] = memref.alloca() {alignment = 64 : i64} : memref<3xf32>
// CHECK:           omp.loop_nest
// CHECK-NOT:         memref.alloc(
// CHECK:             scf.for %[[K:.*]] =
// CHECK:               %[[N:.*]] = arith.minui
// CHECK:               %[[V:.*]] = memref.view %[[TILE]][%{{.*}}][%[[N]]] : memref<768xi8> to memref<3x?xf32>
// CHECK:               memref.store %{{.*}}, %[[V]]
// CHECK-NOT:         memref.dealloc
// CHECK:             memref.store %{{.*}}, %[[ROW]]
// CHECK-NOT:         memref.dealloc
// CHECK:             omp.yield
func.func @team(%n: index, %out: memref<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %row = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
        scf.for %k = %c0 to %n step %c64 {
          %left = arith.subi %n, %k : index
          %w = arith.minui %left, %c64 : index
          %tile = memref.alloc(%w) {alignment = 64 : i64} : memref<3x?xf32>
          memref.store %cst, %tile[%c0, %c0] : memref<3x?xf32>
          memref.dealloc %tile : memref<3x?xf32>
        }
        memref.store %cst, %row[%c0] : memref<3xf32>
        memref.copy %row, %row : memref<3xf32> to memref<3xf32>
        memref.dealloc %row : memref<3xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Outside a parallel region (a team function, run by every thread of its
// caller's team), the slot is made at the function's entry.

// CHECK-LABEL: func.func @team_form
// CHECK-NEXT:    %[[S:.*]] = memref.alloca() : memref<4x4xf32>
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[S]]
// CHECK-NOT:       memref.dealloc
func.func @team_form(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %s = memref.alloc() : memref<4x4xf32>
    memref.store %cst, %s[%c0, %c0] : memref<4x4xf32>
    memref.dealloc %s : memref<4x4xf32>
  }
  return
}

// -----

// Rows per block chosen at run time, as the row-blocked softmax and norms do
// for a dynamic feature size: n = max(min(4096 / d, 16), 1), and a block
// of min(n, rows - r0) rows. The maximum is bounded by its operands' bounds
// (16), so the block's row state gets a slot of 16 floats.

// CHECK-LABEL: func.func @rows_at_run_time
// CHECK:         omp.parallel {
// CHECK-NEXT:      %[[SLOT:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64xi8>
// CHECK:           omp.loop_nest
// CHECK-NOT:         memref.alloc(
// CHECK:             %[[N:.*]] = arith.minui
// CHECK:             memref.view %[[SLOT]][%{{.*}}][%[[N]]] : memref<64xi8> to memref<?xf32>
// CHECK-NOT:         memref.dealloc
// CHECK:             omp.yield
func.func @rows_at_run_time(%rows: index, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c4096 = arith.constant 4096 : index
  %cst = arith.constant 0.0 : f32
  %width = arith.maxui %d, %c1 : index
  %q = arith.divui %c4096, %width : index
  %m = arith.minui %q, %c16 : index
  %per = arith.maxui %m, %c1 : index
  %blocks = arith.ceildivui %rows, %per : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%blocks) step (%c1) {
        %r0 = arith.muli %i, %per : index
        %left = arith.subi %rows, %r0 : index
        %n = arith.minui %per, %left : index
        %state = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
        memref.store %cst, %state[%c0] : memref<?xf32>
        memref.dealloc %state : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A maximum with an operand of no constant bound has none either.

// CHECK-LABEL: func.func @unbounded_maximum
// CHECK-NOT:     memref.alloca
// REMARK: [[@LINE+7]]:{{.*}}remark: a buffer allocated and freed in each iteration of a loop stays on the heap: a dynamic size has no constant upper bound
func.func @unbounded_maximum(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %w = arith.maxui %i, %c1 : index
    %d = memref.alloc(%w) : memref<?xf32>
    memref.store %cst, %d[%c0] : memref<?xf32>
    memref.dealloc %d : memref<?xf32>
  }
  return
}

// -----

// Buffers that stay on the heap: one yielded out of its iteration, one
// freed under a condition, one whose size has no constant bound, one too
// large, and one outside any loop (the memory plan's business).

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     memref.alloca
// REMARK: [[@LINE+13]]:{{.*}}remark: a buffer allocated and freed in each iteration of a loop stays on the heap: it leaves the loop body (scf.yield)
// REMARK: [[@LINE+17]]:{{.*}}remark: a buffer allocated and freed in each iteration of a loop stays on the heap: it is freed in another block than the one allocating it
// REMARK: [[@LINE+23]]:{{.*}}remark: a buffer allocated and freed in each iteration of a loop stays on the heap: a dynamic size has no constant upper bound
// REMARK: [[@LINE+27]]:{{.*}}remark: a buffer allocated and freed in each iteration of a loop stays on the heap: its 65536 bytes exceed 32768
// REMARK-NOT: remark
func.func @kept(%n: index, %c: i1, %init: memref<2xf32>) -> memref<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %top = memref.alloc() : memref<8xf32>
  memref.store %cst, %top[%c0] : memref<8xf32>
  memref.dealloc %top : memref<8xf32>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%prev = %init) -> (memref<2xf32>) {
    %y = memref.alloc() : memref<2xf32>
    memref.store %cst, %y[%c0] : memref<2xf32>
    scf.yield %y : memref<2xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<2xf32>
    memref.store %cst, %a[%c0] : memref<2xf32>
    scf.if %c {
      memref.dealloc %a : memref<2xf32>
    }
  }
  scf.for %i = %c0 to %n step %c1 {
    %d = memref.alloc(%i) : memref<?xf32>
    memref.store %cst, %d[%c0] : memref<?xf32>
    memref.dealloc %d : memref<?xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %big = memref.alloc() : memref<16384xf32>
    memref.store %cst, %big[%c0] : memref<16384xf32>
    memref.dealloc %big : memref<16384xf32>
  }
  return %last : memref<2xf32>
}

// -----

// Buffers never live at once share a slot: the tiles of two worksharing
// loops of one team (its phases, between barriers), and those of the two
// branches of an scf.if. 96 KiB of scratch in 3 phases of 32 KiB fit in
// the team's 128 KiB of slots as one slot of 32 KiB plus the row state. A
// buffer live while another is allocated (the row state around the tile)
// keeps a slot of its own. Largest first: the shared slot comes first,
// its bytes those of its largest buffer.

// CHECK-LABEL: func.func @phases
// CHECK:         omp.parallel {
// CHECK-NEXT:      %[[SHARED:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32768xi8>
// CHECK-NEXT:      %[[ROW:.*]] = memref.alloca() : memref<64xf32>
// CHECK-NOT:       memref.alloca
// CHECK:           omp.wsloop
// CHECK:             scf.for
// CHECK:               memref.view %[[SHARED]][%{{.*}}][] : memref<32768xi8> to memref<64x128xf32>
// CHECK:           omp.barrier
// CHECK:           omp.wsloop
// CHECK:             memref.store %{{.*}}, %[[ROW]]
// CHECK:             scf.for
// CHECK:               %[[W:.*]] = arith.minui
// CHECK:               memref.view %[[SHARED]][%{{.*}}][%[[W]]] : memref<32768xi8> to memref<?x128xf32>
// CHECK:           omp.barrier
// CHECK:           omp.wsloop
// CHECK:             scf.if
// CHECK:               scf.for
// CHECK:                 memref.view %[[SHARED]][%{{.*}}][] : memref<32768xi8> to memref<8192xf32>
// CHECK:             } else {
// CHECK:               scf.for
// CHECK:                 memref.view %[[SHARED]][%{{.*}}][] : memref<32768xi8> to memref<4096xi32>
// CHECK-NOT:       memref.alloc(
// CHECK-NOT:       memref.dealloc
// REMARK-NOT: remark
func.func @phases(%n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  %zero = arith.constant 0 : i32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        scf.for %k = %c0 to %n step %c1 {
          %t = memref.alloc() {alignment = 64 : i64} : memref<64x128xf32>
          memref.store %cst, %t[%c0, %c0] : memref<64x128xf32>
          memref.dealloc %t : memref<64x128xf32>
        }
        omp.yield
      }
    }
    omp.barrier
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %row = memref.alloc() : memref<64xf32>
        memref.store %cst, %row[%c0] : memref<64xf32>
        scf.for %k = %c0 to %n step %c64 {
          %left = arith.subi %n, %k : index
          %w = arith.minui %left, %c64 : index
          %t = memref.alloc(%w) : memref<?x128xf32>
          memref.store %cst, %t[%c0, %c0] : memref<?x128xf32>
          memref.dealloc %t : memref<?x128xf32>
        }
        memref.store %cst, %row[%c1] : memref<64xf32>
        memref.dealloc %row : memref<64xf32>
        omp.yield
      }
    }
    omp.barrier
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        scf.if %c {
          scf.for %k = %c0 to %n step %c1 {
            %t = memref.alloc() : memref<8192xf32>
            memref.store %cst, %t[%c0] : memref<8192xf32>
            memref.dealloc %t : memref<8192xf32>
          }
        } else {
          scf.for %k = %c0 to %n step %c1 {
            %t = memref.alloc() : memref<4096xi32>
            memref.store %zero, %t[%c0] : memref<4096xi32>
            memref.dealloc %t : memref<4096xi32>
          }
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Buffers of one iteration live at once (the second allocated before the
// first is freed) get slots of their own: 4 x 32 KiB fill the region's
// 128 KiB, and a fifth stays on the heap.

// CHECK-LABEL: func.func @live_at_once
// CHECK-COUNT-4: memref.alloca() : memref<8192xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         scf.for
// CHECK:           memref.alloc() : memref<8192xf32>
// CHECK:           memref.dealloc
// CHECK-NOT:       memref.dealloc
// REMARK: [[@LINE+11]]:{{.*}}remark: a buffer allocated and freed in each iteration of a loop stays on the heap: the region's stack slots would exceed 131072 bytes
// REMARK-NOT: remark
func.func @live_at_once(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<8192xf32>
    %b = memref.alloc() : memref<8192xf32>
    %c = memref.alloc() : memref<8192xf32>
    %d = memref.alloc() : memref<8192xf32>
    %e = memref.alloc() : memref<8192xf32>
    memref.store %cst, %a[%c0] : memref<8192xf32>
    memref.store %cst, %b[%c0] : memref<8192xf32>
    memref.store %cst, %c[%c0] : memref<8192xf32>
    memref.store %cst, %d[%c0] : memref<8192xf32>
    memref.store %cst, %e[%c0] : memref<8192xf32>
    memref.dealloc %a : memref<8192xf32>
    memref.dealloc %b : memref<8192xf32>
    memref.dealloc %c : memref<8192xf32>
    memref.dealloc %d : memref<8192xf32>
    memref.dealloc %e : memref<8192xf32>
  }
  return
}
