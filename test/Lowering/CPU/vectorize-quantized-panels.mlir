// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-quantized="vector-bits=512 vector-registers=32 vnni-bits=512 int8-activations=true remarks=true" \
// RUN:   --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-quantized="vector-bits=512 vector-registers=32 vnni-bits=256 int8-activations=true remarks=true" \
// RUN:   2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-quantized="vector-bits=512 vector-registers=32 vnni-bits=512 int8-activations=false remarks=true" \
// RUN:   2>&1 | FileCheck %s --check-prefix=OTHER

// q4_0 blocks packed by seq-cpu-pack-weights into panels of 16 columns
// (pack-weights-q4.mlir), on buffers: x [rows, 2 blocks, 32], the panels
// [3, 2, 288] of 33 columns, C [rows, 33].
//
// x is quantized once per row with signed q (no +128) and -8 times each
// block's sum of q. A tile of 4 rows x 2 panels keeps per (row, panel) an
// f32 accumulator of 16 columns over the blocks; per block, an i32
// accumulator per (row, panel) starts at the row's -8 sum(q), and each group
// of 4 value bytes is loaded once per panel (64 bytes: 4 bytes of each of 16
// columns), split into its low and high nibbles and multiplied with
// vpdpbusd by the row's 4 activations at the same positions, broadcast as
// an i32. The panel's 16 f16 scales are one load, bitcast and widened.
// Every block prefetches the same block of the next tile's panels into L2
// (locality 2), 5 cache lines of 288 bytes each. C is updated a vector of 16
// columns at a time, masked (33 columns: the last panel holds one).
// CHECK-LABEL: func.func @linear_q4_0_panels
//   CHECK-DAG:   %[[FIFTEEN:.+]] = arith.constant dense<15> : vector<64xi8>
//   CHECK-DAG:   %[[FOUR:.+]] = arith.constant dense<4> : vector<64xi8>
//       CHECK:   %[[XQ:.+]] = memref.alloc(%{{.+}}) : memref<?x64xi8>
//       CHECK:   %[[DX:.+]] = memref.alloc(%{{.+}}) : memref<?x2xf32>
//       CHECK:   %[[XS:.+]] = memref.alloc(%{{.+}}) : memref<?x2xi32>
//       CHECK:   scf.parallel
//       CHECK:     %[[Q:.+]] = arith.fptosi %{{.+}} : vector<32xf32> to vector<32xi32>
//       CHECK:     %[[QB:.+]] = arith.trunci %[[Q]] : vector<32xi32> to vector<32xi8>
//       CHECK:     %[[SUM:.+]] = vector.reduction <add>, %[[Q]] : vector<32xi32> into i32
//       CHECK:     %[[CORR:.+]] = arith.muli %[[SUM]], %{{.+}} : i32
//       CHECK:     memref.store %[[CORR]], %[[XS]]
//       CHECK:     vector.store %[[QB]], %[[XQ]]
//       CHECK:   scf.parallel ({{.+}}) = ({{.+}}) to (%c3, {{.+}}) step (%c2, %c16) {
//       CHECK:     scf.for %[[KB:.+]] = %c0 to %c2 step %c1 iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
//       CHECK:       memref.prefetch %{{.+}}[%{{.+}}, %[[KB]], %c256], read, locality<2>, data : memref<3x2x288xi8>
//       CHECK:       %[[S:.+]] = memref.load %[[XS]][%{{.+}}, %[[KB]]] : memref<?x2xi32>
//       CHECK:       %[[START:.+]] = vector.broadcast %[[S]] : i32 to vector<16xi32>
//       CHECK:       %[[P:.+]] = vector.load %{{.+}}[%{{.+}}, %[[KB]], %c32] : memref<3x2x288xi8>, vector<64xi8>
//       CHECK:       %[[LOW:.+]] = arith.andi %[[P]], %[[FIFTEEN]] : vector<64xi8>
//       CHECK:       %[[SHIFTED:.+]] = arith.shrui %[[P]], %[[FOUR]] : vector<64xi8>
//       CHECK:       %[[HIGH:.+]] = arith.andi %[[SHIFTED]], %[[FIFTEEN]] : vector<64xi8>
//       CHECK:       %[[X4:.+]] = vector.load %[[XQ]][%{{.+}}, %{{.+}}] : memref<?x64xi8>, vector<4xi8>
//       CHECK:       %[[X1:.+]] = vector.bitcast %[[X4]] : vector<4xi8> to vector<1xi32>
//       CHECK:       %[[XW:.+]] = vector.extract %[[X1]][0] : i32 from vector<1xi32>
//       CHECK:       %[[XB:.+]] = vector.broadcast %[[XW]] : i32 to vector<16xi32>
//       CHECK:       %[[XBYTES:.+]] = vector.bitcast %[[XB]] : vector<16xi32> to vector<64xi8>
//       CHECK:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[START]], %[[LOW]], %[[XBYTES]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
//       CHECK:       %[[RAW:.+]] = vector.load %{{.+}}[%{{.+}}, %[[KB]], %c0] : memref<3x2x288xi8>, vector<32xi8>
//       CHECK:       %[[HALVES:.+]] = vector.bitcast %[[RAW]] : vector<32xi8> to vector<16xf16>
//       CHECK:       %[[SCALES:.+]] = arith.extf %[[HALVES]] : vector<16xf16> to vector<16xf32>
//       CHECK:       %[[F:.+]] = arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
//       CHECK:       %[[SCALE:.+]] = arith.mulf %[[SCALES]], %{{.+}} : vector<16xf32>
//       CHECK:       vector.fma %[[F]], %[[SCALE]], %{{.+}} : vector<16xf32>
//       CHECK:     vector.create_mask %{{.+}} : vector<16xi1>
//       CHECK:     vector.maskedload %{{.+}} : memref<?x33xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
//       CHECK:     vector.maskedstore %{{.+}} : memref<?x33xf32>, vector<16xi1>, vector<16xf32>
//       CHECK:   memref.dealloc %[[XQ]]
//       CHECK:   memref.dealloc %[[DX]]
//       CHECK:   memref.dealloc %[[XS]]
//   CHECK-NOT:   linalg.generic
// Panels of 16 columns need 512-bit vpdpbusd and int8 activations; else the
// generic's loops (which read the panels) stay, and a remark says why.
// OTHER: remark: quantized contraction left to the scalar loops: q4_0 panels of 16 columns need int8 activations and vpdpbusd on 512 bits
// OTHER: linalg.generic
// OTHER: remark: quantized contraction left to the scalar loops: q8_0 panels of 16 columns need int8 activations and vpdpbusd on 512 bits
// OTHER: linalg.generic
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#q = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, ((d3 mod 16) floordiv 4) * 64 + (d1 mod 16) * 4 + d3 mod 4 + 32)>
#d0 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2)>
#d1 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2 + 1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @linear_q4_0_panels(%x: memref<?x2x32xf32>, %b: memref<3x2x288xi8>, %out: memref<?x33xf32>) {
  %c8_i32 = arith.constant 8 : i32
  %c15_i32 = arith.constant 15 : i32
  %c0_i32 = arith.constant 0 : i32
  %c4_i32 = arith.constant 4 : i32
  %c16 = arith.constant 16 : index
  %c8_i16 = arith.constant 8 : i16
  // expected-remark @below {{quantized contraction vectorized with int8 activations on q4_0 panels: x quantized per block of 32 to int8 with an f16 scale (llama.cpp's q8_0), once per row; per block, vpdpbusd of 16 columns' unsigned nibbles (one i32 lane per column) times 4 broadcast activations, from -8 sum(q), converted and scaled by the panel's 16 scales times the row's, 4 rows x 2 panels per tile, blocks of 16 rows x 2 panels}}
  linalg.generic {indexing_maps = [#x, #q, #d0, #d1, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %b, %b, %b : memref<?x2x32xf32>, memref<3x2x288xi8>, memref<3x2x288xi8>, memref<3x2x288xi8>) outs(%out : memref<?x33xf32>) attrs =  {seq.quantized = "q4_0", seq.quantized_panel = 16 : i64} {
  ^bb0(%in: f32, %in_1: i8, %in_2: i8, %in_3: i8, %acc: f32):
    %0 = arith.extui %in_2 : i8 to i16
    %1 = arith.extui %in_3 : i8 to i16
    %2 = arith.shli %1, %c8_i16 : i16
    %3 = arith.ori %0, %2 : i16
    %4 = arith.bitcast %3 : i16 to f16
    %5 = arith.extf %4 : f16 to f32
    %6 = arith.extui %in_1 : i8 to i32
    %7 = linalg.index 3 : index
    %8 = arith.cmpi uge, %7, %c16 : index
    %9 = arith.select %8, %c4_i32, %c0_i32 : i32
    %10 = arith.shrui %6, %9 : i32
    %11 = arith.andi %10, %c15_i32 : i32
    %12 = arith.subi %11, %c8_i32 : i32
    %13 = arith.sitofp %12 : i32 to f32
    %14 = arith.mulf %13, %5 : f32
    %15 = arith.mulf %in, %14 : f32
    %16 = arith.addf %acc, %15 : f32
    linalg.yield %16 : f32
  }
  return
}

// -----

// q8_0 panels (20 columns, two blocks): the values are stored + 128, so each
// group of 4 bytes of 16 columns is vpdpbusd's unsigned operand as loaded
// (8 groups, no unpacking), and each block's i32 accumulators start at
// -128 sum(q). Single rows alternate their 8 vpdpbusd between two chains.
// CHECK-LABEL: func.func @linear_q8_0_panels
//       CHECK:     arith.muli %{{.+}}, %c-128_i32 : i32
//       CHECK:     scf.for %[[KB:.+]] = %c0 to %c2 step %c1 iter_args
//       CHECK:       memref.prefetch %{{.+}}[%{{.+}}, %[[KB]], %c512], read, locality<2>, data : memref<2x2x544xi8>
//       CHECK:       %[[V:.+]] = vector.load %{{.+}}[%{{.+}}, %[[KB]], %c32] : memref<2x2x544xi8>, vector<64xi8>
//   CHECK-NOT:       arith.shrui
//       CHECK:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.+}}, %[[V]], %{{.+}})
//       CHECK:       vector.load %{{.+}}[%{{.+}}, %[[KB]], %c480] : memref<2x2x544xi8>, vector<64xi8>
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#q = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d3 floordiv 4) * 64 + (d1 mod 16) * 4 + d3 mod 4 + 32)>
#d0 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2)>
#d1 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2 + 1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @linear_q8_0_panels(%x: memref<?x2x32xf32>, %b: memref<2x2x544xi8>, %out: memref<?x20xf32>) {
  %c8_i16 = arith.constant 8 : i16
  %flip = arith.constant -128 : i8
  // expected-remark @below {{quantized contraction vectorized with int8 activations on q8_0 panels: x quantized per block of 32 to int8 with an f16 scale (llama.cpp's q8_0), once per row; per block, vpdpbusd of 16 columns' values + 128 (one i32 lane per column) times 4 broadcast activations, from -128 sum(q), converted and scaled by the panel's 16 scales times the row's, 4 rows x 2 panels per tile, blocks of 16 rows x 2 panels}}
  linalg.generic {indexing_maps = [#x, #q, #d0, #d1, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %b, %b, %b : memref<?x2x32xf32>, memref<2x2x544xi8>, memref<2x2x544xi8>, memref<2x2x544xi8>) outs(%out : memref<?x20xf32>) attrs =  {seq.quantized = "q8_0", seq.quantized_panel = 16 : i64} {
  ^bb0(%in: f32, %in_1: i8, %in_2: i8, %in_3: i8, %acc: f32):
    %v = arith.xori %in_1, %flip : i8
    %0 = arith.extui %in_2 : i8 to i16
    %1 = arith.extui %in_3 : i8 to i16
    %2 = arith.shli %1, %c8_i16 : i16
    %3 = arith.ori %0, %2 : i16
    %4 = arith.bitcast %3 : i16 to f16
    %5 = arith.extf %4 : f16 to f32
    %6 = arith.sitofp %v : i8 to f32
    %7 = arith.mulf %6, %5 : f32
    %8 = arith.mulf %in, %7 : f32
    %9 = arith.addf %acc, %8 : f32
    linalg.yield %9 : f32
  }
  return
}

// -----

// int8 rows of 64 in panels (20 columns, pack-weights-quantized.mlir): the
// panel's first 64 bytes are its 16 columns' f32 scales, then the rows'
// values (+ 128) in groups of 4 bytes of 16 columns, block kb's 8 groups at
// bytes 64 + 512 kb. x (viewed [rows, 1, 64]) is quantized per block of 32
// with signed q and -128 sum(q). Per block, the i32 accumulators are
// scaled by the row's scale alone; after the reduction each (row, panel)
// sum is multiplied by the panel's 16 row scales, one 64-byte load bitcast
// to f32, before C is updated (masked in the last panel, of 4 columns).
// CHECK-LABEL: func.func @linear_int8_panels
//       CHECK:     vector.load %{{.+}}[%{{.+}}, %c0, %{{.+}}] : memref<?x1x64xf32>, vector<32xf32>
//       CHECK:     arith.muli %{{.+}}, %c-128_i32 : i32
//       CHECK:     scf.for %[[KB:.+]] = %c0 to %c2 step %c1 iter_args
//       CHECK:       %[[BASE:.+]] = arith.muli %[[KB]], %c512 : index
//       CHECK:       %[[AT:.+]] = arith.addi %[[BASE]], %c64 : index
//       CHECK:       memref.prefetch %{{.+}}[%{{.+}}, %c0, %[[AT]]], read, locality<2>, data : memref<2x1x1088xi8>
//       CHECK:       %[[V:.+]] = vector.load %{{.+}}[%{{.+}}, %c0, %[[AT]]] : memref<2x1x1088xi8>, vector<64xi8>
//       CHECK:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.+}}, %[[V]], %{{.+}})
//   CHECK-NOT:       vector<16xf16>
//       CHECK:       %[[D:.+]] = memref.load %{{.+}}[%{{.+}}, %[[KB]]] : memref<?x2xf32>
//       CHECK:       %[[DS:.+]] = vector.broadcast %[[D]] : f32 to vector<16xf32>
//       CHECK:       %[[F:.+]] = arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
//       CHECK:       vector.fma %[[F]], %[[DS]], %{{.+}} : vector<16xf32>
//       CHECK:     %[[RAW:.+]] = vector.load %{{.+}}[%{{.+}}, %c0, %c0] : memref<2x1x1088xi8>, vector<64xi8>
//       CHECK:     %[[SCALES:.+]] = vector.bitcast %[[RAW]] : vector<64xi8> to vector<16xf32>
//       CHECK:     %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SCALES]] : vector<16xf32>
//       CHECK:     %[[OLD:.+]] = vector.load %{{.+}} : memref<?x20xf32>, vector<16xf32>
//       CHECK:     arith.addf %[[OLD]], %[[SCALED]] : vector<16xf32>
//       CHECK:     %[[RAW2:.+]] = vector.load %{{.+}}[%c1, %c0, %c0] : memref<2x1x1088xi8>, vector<64xi8>
//       CHECK:     %[[SCALES2:.+]] = vector.bitcast %[[RAW2]] : vector<64xi8> to vector<16xf32>
//       CHECK:     %[[SCALED2:.+]] = arith.mulf %{{.+}}, %[[SCALES2]] : vector<16xf32>
//       CHECK:     %[[OLD2:.+]] = vector.maskedload %{{.+}} : memref<?x20xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
//       CHECK:     arith.addf %[[OLD2]], %[[SCALED2]] : vector<16xf32>
// OTHER: remark: quantized contraction left to the scalar loops: int8 panels of 16 columns need int8 activations and vpdpbusd on 512 bits
// OTHER: linalg.generic
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#q = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d3 floordiv 4) * 64 + (d1 mod 16) * 4 + d3 mod 4 + 64)>
#s0 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 4)>
#s1 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 4 + 1)>
#s2 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 4 + 2)>
#s3 = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 4 + 3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @linear_int8_panels(%x: memref<?x1x64xf32>, %b: memref<2x1x1088xi8>, %out: memref<?x20xf32>) {
  %c8_i32 = arith.constant 8 : i32
  %c16_i32 = arith.constant 16 : i32
  %c24_i32 = arith.constant 24 : i32
  %flip = arith.constant -128 : i8
  // expected-remark @below {{quantized contraction vectorized with int8 activations on int8 panels: x quantized per block of 32 to int8 with an f16 scale (llama.cpp's q8_0), once per row; per block, vpdpbusd of 16 columns' values + 128 (one i32 lane per column) times 4 broadcast activations, from -128 sum(q), converted and scaled by the row's scale, the panel's 16 f32 row scales applied after the reduction, 4 rows x 2 panels per tile, blocks of 16 rows x 2 panels}}
  linalg.generic {indexing_maps = [#x, #q, #s0, #s1, #s2, #s3, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %b, %b, %b, %b, %b : memref<?x1x64xf32>, memref<2x1x1088xi8>, memref<2x1x1088xi8>, memref<2x1x1088xi8>, memref<2x1x1088xi8>, memref<2x1x1088xi8>) outs(%out : memref<?x20xf32>) attrs =  {seq.quantized = "int8", seq.quantized_panel = 16 : i64} {
  ^bb0(%in: f32, %in_2: i8, %in_3: i8, %in_4: i8, %in_5: i8, %in_6: i8, %acc: f32):
    %v = arith.xori %in_2, %flip : i8
    %0 = arith.extui %in_3 : i8 to i32
    %1 = arith.extui %in_4 : i8 to i32
    %2 = arith.shli %1, %c8_i32 : i32
    %3 = arith.ori %0, %2 : i32
    %4 = arith.extui %in_5 : i8 to i32
    %5 = arith.shli %4, %c16_i32 : i32
    %6 = arith.ori %3, %5 : i32
    %7 = arith.extui %in_6 : i8 to i32
    %8 = arith.shli %7, %c24_i32 : i32
    %9 = arith.ori %6, %8 : i32
    %10 = arith.bitcast %9 : i32 to f32
    %11 = arith.sitofp %v : i8 to f32
    %12 = arith.mulf %11, %10 : f32
    %13 = arith.mulf %in, %12 : f32
    %14 = arith.addf %acc, %13 : f32
    linalg.yield %14 : f32
  }
  return
}
