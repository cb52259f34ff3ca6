// RUN: seq-opt %s --seq-nvptx-launch-to-loops | %host_to_llvm | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | %run_main | FileCheck %s

// Warp shuffles and reductions in the GPU interpreter, on a block of 64
// threads (two warps) with v = thread id: PTX's shfl.sync semantics for
// each mode (an out-of-range source gives the thread its own value and
// `valid` false), a butterfly sum with xor shuffles, per-warp reductions
// and a block-wide one.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @print(%m: memref<?xf32>) {
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// For each mode, a shuffle's value plus 1000 when it is valid.
// CHECK-LABEL: sizes = [64]
// down 1:
// CHECK-NEXT: [1001,  1002,  1003,  1004,  1005,  1006,  1007,  1008,  1009,  1010,  1011,  1012,  1013,  1014,  1015,  1016,  1017,  1018,  1019,  1020,  1021,  1022,  1023,  1024,  1025,  1026,  1027,  1028,  1029,  1030,  1031,  31,  1033,  1034,  1035,  1036,  1037,  1038,  1039,  1040,  1041,  1042,  1043,  1044,  1045,  1046,  1047,  1048,  1049,  1050,  1051,  1052,  1053,  1054,  1055,  1056,  1057,  1058,  1059,  1060,  1061,  1062,  1063,  63]
// CHECK-LABEL: sizes = [64]
// up 2:
// CHECK-NEXT: [0,  1,  1000,  1001,  1002,  1003,  1004,  1005,  1006,  1007,  1008,  1009,  1010,  1011,  1012,  1013,  1014,  1015,  1016,  1017,  1018,  1019,  1020,  1021,  1022,  1023,  1024,  1025,  1026,  1027,  1028,  1029,  32,  33,  1032,  1033,  1034,  1035,  1036,  1037,  1038,  1039,  1040,  1041,  1042,  1043,  1044,  1045,  1046,  1047,  1048,  1049,  1050,  1051,  1052,  1053,  1054,  1055,  1056,  1057,  1058,  1059,  1060,  1061]
// CHECK-LABEL: sizes = [64]
// xor 5:
// CHECK-NEXT: [1005,  1004,  1007,  1006,  1001,  1000,  1003,  1002,  1013,  1012,  1015,  1014,  1009,  1008,  1011,  1010,  1021,  1020,  1023,  1022,  1017,  1016,  1019,  1018,  1029,  1028,  1031,  1030,  1025,  1024,  1027,  1026,  1037,  1036,  1039,  1038,  1033,  1032,  1035,  1034,  1045,  1044,  1047,  1046,  1041,  1040,  1043,  1042,  1053,  1052,  1055,  1054,  1049,  1048,  1051,  1050,  1061,  1060,  1063,  1062,  1057,  1056,  1059,  1058]
// CHECK-LABEL: sizes = [64]
// idx 7:
// CHECK-NEXT: [1007{{(,  1007){31},  }}1039{{(,  1039){31}]}}
func.func @modes() {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %i1 = arith.constant 1 : i32
  %i2 = arith.constant 2 : i32
  %i5 = arith.constant 5 : i32
  %i7 = arith.constant 7 : i32
  %w = arith.constant 32 : i32
  %k = arith.constant 1000.0 : f32
  %zero = arith.constant 0.0 : f32
  %down = memref.alloc(%c64) : memref<?xf32>
  %up = memref.alloc(%c64) : memref<?xf32>
  %xor = memref.alloc(%c64) : memref<?xf32>
  %idx = memref.alloc(%c64) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c64, %dy = %c1, %dz = %c1) {
    %ti = arith.index_cast %tx : index to i32
    %v = arith.sitofp %ti : i32 to f32
    %d, %dv = gpu.shuffle down %v, %i1, %w : f32
    %u, %uv = gpu.shuffle up %v, %i2, %w : f32
    %x, %xv = gpu.shuffle xor %v, %i5, %w : f32
    %j, %jv = gpu.shuffle idx %v, %i7, %w : f32
    %d1 = arith.select %dv, %k, %zero : f32
    %d2 = arith.addf %d, %d1 : f32
    memref.store %d2, %down[%tx] : memref<?xf32>
    %u1 = arith.select %uv, %k, %zero : f32
    %u2 = arith.addf %u, %u1 : f32
    memref.store %u2, %up[%tx] : memref<?xf32>
    %x1 = arith.select %xv, %k, %zero : f32
    %x2 = arith.addf %x, %x1 : f32
    memref.store %x2, %xor[%tx] : memref<?xf32>
    %j1 = arith.select %jv, %k, %zero : f32
    %j2 = arith.addf %j, %j1 : f32
    memref.store %j2, %idx[%tx] : memref<?xf32>
    gpu.terminator
  }
  call @print(%down) : (memref<?xf32>) -> ()
  call @print(%up) : (memref<?xf32>) -> ()
  call @print(%xor) : (memref<?xf32>) -> ()
  call @print(%idx) : (memref<?xf32>) -> ()
  return
}

// A butterfly sum over each warp (xor 16, 8, 4, 2, 1 in a loop), then
// gpu.subgroup_reduce add and maxnumf, and gpu.all_reduce add: lane t
// stores the subgroup sum + 100000 (if the butterfly sum equals it) at t,
// the warp's maximum at 64 + t, and thread 0 the block's sum at 128.
// CHECK-LABEL: sizes = [129]
// CHECK-NEXT: [100496{{(,  100496){31},  }}101520{{(,  101520){31},  }}31{{(,  31){31},  }}63{{(,  63){31},  }}2016]
func.func @reductions() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c129 = arith.constant 129 : index
  %c128 = arith.constant 128 : index
  %w = arith.constant 32 : i32
  %flagged = arith.constant 100000.0 : f32
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc(%c129) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c64, %dy = %c1, %dz = %c1) {
    %ti = arith.index_cast %tx : index to i32
    %v = arith.sitofp %ti : i32 to f32
    %b = scf.for %k = %c0 to %c5 step %c1 iter_args(%s = %v) -> f32 {
      %off = arith.shrui %c16, %k : index
      %offi = arith.index_cast %off : index to i32
      %o, %ok = gpu.shuffle xor %s, %offi, %w : f32
      %s2 = arith.addf %s, %o : f32
      scf.yield %s2 : f32
    }
    %sum = gpu.subgroup_reduce add %v : (f32) -> f32
    %max = gpu.subgroup_reduce maxnumf %v : (f32) -> f32
    %all = gpu.all_reduce add %v {} : (f32) -> f32
    %same = arith.cmpf oeq, %b, %sum : f32
    %flag = arith.select %same, %flagged, %zero : f32
    %r = arith.addf %sum, %flag : f32
    memref.store %r, %y[%tx] : memref<?xf32>
    %t64 = arith.addi %tx, %c64 : index
    memref.store %max, %y[%t64] : memref<?xf32>
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      memref.store %all, %y[%c128] : memref<?xf32>
    }
    gpu.terminator
  }
  call @print(%y) : (memref<?xf32>) -> ()
  return
}

// gpu.lane_id, gpu.subgroup_size and gpu.thread_id in a block of 2 x 20
// threads: lane = (20 y + x) % 32, stored at x + 20 y, plus 100 * the
// subgroup size over 32.
// CHECK-LABEL: sizes = [40]
// CHECK-NEXT: [100,  101,  102,  103,  104,  105,  106,  107,  108,  109,  110,  111,  112,  113,  114,  115,  116,  117,  118,  119,  120,  121,  122,  123,  124,  125,  126,  127,  128,  129,  130,  131,  100,  101,  102,  103,  104,  105,  106,  107]
func.func @ids() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c20 = arith.constant 20 : index
  %c32 = arith.constant 32 : index
  %c40 = arith.constant 40 : index
  %c100 = arith.constant 100 : index
  %y = memref.alloc(%c40) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c20, %dy = %c2, %dz = %c1) {
    %lane = gpu.lane_id
    %size = gpu.subgroup_size : index
    %x = gpu.thread_id x
    %t = gpu.thread_id y
    %units = arith.divui %size, %c32 : index
    %hundreds = arith.muli %units, %c100 : index
    %v = arith.addi %lane, %hundreds : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f32
    %row = arith.muli %t, %c20 : index
    %i = arith.addi %row, %x : index
    memref.store %vf, %y[%i] : memref<?xf32>
    gpu.terminator
  }
  call @print(%y) : (memref<?xf32>) -> ()
  return
}

func.func @main() {
  call @modes() : () -> ()
  call @reductions() : () -> ()
  call @ids() : () -> ()
  return
}
