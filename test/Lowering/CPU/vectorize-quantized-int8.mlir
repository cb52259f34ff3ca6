// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-quantized="vector-bits=512 vector-registers=32 vnni-bits=256 int8-activations=true remarks=true" \
// RUN:   --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-quantized="vector-bits=512 vector-registers=32 vnni-bits=0 int8-activations=true remarks=true" \
// RUN:   2>&1 | FileCheck %s --check-prefix=NOVNNI
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-quantized="vector-bits=512 vector-registers=32 vnni-bits=512 int8-activations=true" \
// RUN:   --canonicalize --cse | FileCheck %s --check-prefix=W512
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-quantized="vector-bits=512 vector-registers=32 vnni-bits=512" \
// RUN:   | FileCheck %s --check-prefix=DEFAULT

// int8 activations (VNNI targets, asked for): the quantized generic of
// convert-seq-to-linalg, on buffers, as convert-seq-to-linalg and
// bufferization leave it.
//
// x is quantized once per row, before the tiles: per block of 32, the f16
// rounding of max |x| / 127 into [rows, blocks] f32, and
// round_half_even(x * 127 / max |x|) + 128 into [rows, blocks * 32] i8; both
// freed after the kernel. In the tiles, per block and column the 32 weight
// bytes are loaded once and -128 * sum(w) formed with a vpdpbusd of 128s
// (-128 as an i8); per row and column a vpdpbusd from it gives the block's
// integer dot product, converted and FMAed into an 8-lane accumulator with
// the product of the two scales. Per step and column the tile prefetches the
// same block of the next tile's column into L2 (the row nr on, clamped to
// the last).
// CHECK-LABEL: func.func @linear_q8_0
//   CHECK-DAG:   %[[ZERO:.+]] = arith.constant dense<0> : vector<8xi32>
//   CHECK-DAG:   %[[BIAS:.+]] = arith.constant dense<-128> : vector<32xi8>
//   CHECK-DAG:   %[[ROWS:.+]] = memref.dim %{{.+}}, %c0 : memref<?x8xf32>
//       CHECK:   %[[XQ:.+]] = memref.alloc(%[[ROWS]]) : memref<?x64xi8>
//       CHECK:   %[[DX:.+]] = memref.alloc(%[[ROWS]]) : memref<?x2xf32>
//       CHECK:   scf.parallel (%[[R:.+]]) = (%c0) to (%[[ROWS]]) step (%c1) {
//       CHECK:     scf.for %[[KB:.+]] = %c0 to %c2 step %c1 {
//       CHECK:       %[[V:.+]] = vector.load %{{.+}}[%[[R]], %[[KB]], %c0] : memref<?x2x32xf32>, vector<32xf32>
//       CHECK:       %[[ABS:.+]] = math.absf %[[V]] : vector<32xf32>
//       CHECK:       %[[AMAX:.+]] = vector.reduction <maxnumf>, %[[ABS]] : vector<32xf32> into f32
//       CHECK:       %[[D:.+]] = arith.divf %[[AMAX]], %{{.+}} : f32
//       CHECK:       %[[D16:.+]] = arith.truncf %[[D]] : f32 to f16
//       CHECK:       %[[D32:.+]] = arith.extf %[[D16]] : f16 to f32
//       CHECK:       memref.store %[[D32]], %[[DX]][%[[R]], %[[KB]]]
//       CHECK:       arith.cmpf une, %[[AMAX]]
//       CHECK:       math.roundeven %{{.+}} : vector<32xf32>
//       CHECK:       arith.fptosi %{{.+}} : vector<32xf32> to vector<32xi32>
//       CHECK:       arith.trunci %{{.+}} : vector<32xi32> to vector<32xi8>
//       CHECK:       %[[Q:.+]] = arith.addi %{{.+}}, %[[BIAS]] : vector<32xi8>
//       CHECK:       vector.store %[[Q]], %[[XQ]][%[[R]], %{{.+}}] : memref<?x64xi8>, vector<32xi8>
//       CHECK:   scf.parallel
//       CHECK:     %[[NEXT:.+]] = arith.minsi %{{.+}}, %c7 : index
//       CHECK:     scf.for %[[STEP:.+]] = {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>,
//       CHECK:       memref.prefetch %{{.+}}[%[[NEXT]], %[[STEP]], %c0], read, locality<2>, data : memref<8x2x34xi8>
//       CHECK:       %[[W:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}, %c2] : memref<8x2x34xi8>, vector<32xi8>
//       CHECK:       %[[SUMW:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%[[ZERO]], %[[BIAS]], %[[W]]) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
//       CHECK:       %[[NEG:.+]] = arith.subi %[[ZERO]], %[[SUMW]] : vector<8xi32>
//       CHECK:       %[[DW:.+]] = vector.broadcast %{{.+}} : f32 to vector<8xf32>
//       CHECK:       %[[XS:.+]] = vector.load %[[XQ]][%{{.+}}, %{{.+}}] : memref<?x64xi8>, vector<32xi8>
//       CHECK:       %[[DXI:.+]] = memref.load %[[DX]]
//       CHECK:       %[[DXS:.+]] = vector.broadcast %[[DXI]] : f32 to vector<8xf32>
//       CHECK:       %[[DOT:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%[[NEG]], %[[XS]], %[[W]])
//       CHECK:       %[[F:.+]] = arith.sitofp %[[DOT]] : vector<8xi32> to vector<8xf32>
//       CHECK:       %[[S:.+]] = arith.mulf %[[DW]], %[[DXS]] : vector<8xf32>
//       CHECK:       vector.fma %[[F]], %[[S]], %{{.+}} : vector<8xf32>
//       CHECK:     vector.reduction <add>, %{{.+}} : vector<8xf32> into f32
//       CHECK:   memref.dealloc %[[XQ]]
//       CHECK:   memref.dealloc %[[DX]]
//   CHECK-NOT:   linalg.generic
// NOVNNI: remark: int8 activations not used: the target has no VNNI
// NOVNNI: remark: quantized contraction vectorized: q8_0 weight blocks dequantized in registers (8-bit values widened to 16 f32 lanes
// With 512-bit VNNI (AVX512_VNNI) a step takes two blocks: the weights of
// both in one vector<64xi8> (two loads, the scale between them skipped),
// their scales splat into the two halves of a 16-lane vector, 16-lane
// accumulators.
// W512-LABEL: func.func @linear_q8_0
//       W512:   %[[LO:.+]] = vector.load %{{.+}}[%{{.+}}, %c0, %c2] : memref<8x2x34xi8>, vector<32xi8>
//       W512:   %[[HI:.+]] = vector.load %{{.+}}[%{{.+}}, %c1, %c2] : memref<8x2x34xi8>, vector<32xi8>
//       W512:   %[[W:.+]] = vector.shuffle %[[LO]], %[[HI]] [0, 1, {{.*}}, 62, 63] : vector<32xi8>, vector<32xi8>
//       W512:   llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.+}}, %{{.+}}, %[[W]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
//       W512:   vector.shuffle %{{.+}}, %{{.+}} [0, 1, {{.*}}, 14, 15] : vector<8xf32>, vector<8xf32>
//       W512:   vector.load %{{.+}} : memref<?x64xi8>, vector<64xi8>
//       W512:   vector.fma %{{.+}} : vector<16xf32>
// DEFAULT-LABEL: func.func @linear_q8_0
// DEFAULT-NOT: vpdpbusd
// DEFAULT-NOT: math.roundeven
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#q = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3 + 2)>
#d0 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>
#d1 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @linear_q8_0(%x: memref<?x2x32xf32>, %b: memref<8x2x34xi8>, %out: memref<?x8xf32>) {
  %c8_i16 = arith.constant 8 : i16
  // expected-remark @below {{quantized contraction vectorized with int8 activations (the target has VNNI; --int8-activations=false keeps f32 ones): x quantized per block of 32 to int8 with an f16 scale (llama.cpp's q8_0), once per row, q8_0 blocks multiplied with vpdpbusd, 1 block per step (8 i32 lanes), converted and scaled by the product of the two scales into 8-lane f32 accumulators, 4 x 4 tiles (1 x 8 for a single row), blocks of 16 x 32}}
  linalg.generic {indexing_maps = [#x, #q, #d0, #d1, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %b, %b, %b : memref<?x2x32xf32>, memref<8x2x34xi8>, memref<8x2x34xi8>, memref<8x2x34xi8>) outs(%out : memref<?x8xf32>) attrs =  {seq.quantized = "q8_0"} {
  ^bb0(%in: f32, %in_1: i8, %in_2: i8, %in_3: i8, %acc: f32):
    %0 = arith.extui %in_2 : i8 to i16
    %1 = arith.extui %in_3 : i8 to i16
    %2 = arith.shli %1, %c8_i16 : i16
    %3 = arith.ori %0, %2 : i16
    %4 = arith.bitcast %3 : i16 to f16
    %5 = arith.extf %4 : f16 to f32
    %6 = arith.sitofp %in_1 : i8 to f32
    %7 = arith.mulf %6, %5 : f32
    %8 = arith.mulf %in, %7 : f32
    %9 = arith.addf %acc, %8 : f32
    linalg.yield %9 : f32
  }
  return
}

// -----

// q4_0: the 32 signed values of a block are the low nibbles of its 16 bytes,
// then the high ones, minus 8, in one vector<32xi8> (vpdpbusd's signed
// operand); the rest is q8_0's kernel.
// CHECK-LABEL: func.func @linear_q4_0
//       CHECK:   math.roundeven
//       CHECK:   %[[B:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}, %c2] : memref<8x3x18xi8>, vector<16xi8>
//   CHECK-DAG:   %[[LO:.+]] = arith.andi %[[B]], %{{.+}} : vector<16xi8>
//   CHECK-DAG:   %[[HI:.+]] = arith.shrui %[[B]], %{{.+}} : vector<16xi8>
//       CHECK:   %[[BOTH:.+]] = vector.shuffle %[[LO]], %[[HI]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xi8>, vector<16xi8>
//       CHECK:   %[[W:.+]] = arith.subi %[[BOTH]], %{{.+}} : vector<32xi8>
//       CHECK:   llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.+}}, %{{.+}}, %[[W]])
// On 512 bits the third (odd, last) block is a step of its own, the upper
// halves of its values, activations and scales zeros.
// W512-LABEL: func.func @linear_q4_0
//   W512-DAG:   %[[Z8:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
//   W512-DAG:   %[[Z32:.+]] = arith.constant dense<0> : vector<32xi8>
//       W512:   %[[LAST:.+]] = vector.load %{{.+}}[%{{.+}}, %c64] : memref<?x96xi8>, vector<32xi8>
//       W512:   vector.shuffle %[[LAST]], %[[Z32]] [0, 1, {{.*}}, 62, 63] : vector<32xi8>, vector<32xi8>
//       W512:   %[[DLAST:.+]] = memref.load %{{.+}}[%{{.+}}, %c2] : memref<?x3xf32>
//       W512:   %[[SLAST:.+]] = vector.broadcast %[[DLAST]] : f32 to vector<8xf32>
//       W512:   vector.shuffle %[[SLAST]], %[[Z8]] [0, 1, {{.*}}, 14, 15] : vector<8xf32>, vector<8xf32>
// NOVNNI: remark: int8 activations not used: the target has no VNNI
// NOVNNI: remark: quantized contraction vectorized: q4_0 weight blocks dequantized in registers
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#q = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3 mod 16 + 2)>
#d0 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>
#d1 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @linear_q4_0(%x: memref<?x3x32xf32>, %b: memref<8x3x18xi8>, %out: memref<?x8xf32>) {
  %c8_i32 = arith.constant 8 : i32
  %c15_i32 = arith.constant 15 : i32
  %c0_i32 = arith.constant 0 : i32
  %c4_i32 = arith.constant 4 : i32
  %c16 = arith.constant 16 : index
  %c8_i16 = arith.constant 8 : i16
  // expected-remark @below {{quantized contraction vectorized with int8 activations (the target has VNNI; --int8-activations=false keeps f32 ones): x quantized per block of 32 to int8 with an f16 scale (llama.cpp's q8_0), once per row, q4_0 blocks multiplied with vpdpbusd, 1 block per step}}
  linalg.generic {indexing_maps = [#x, #q, #d0, #d1, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %b, %b, %b : memref<?x3x32xf32>, memref<8x3x18xi8>, memref<8x3x18xi8>, memref<8x3x18xi8>) outs(%out : memref<?x8xf32>) attrs =  {seq.quantized = "q4_0"} {
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

// Per-output-channel int8 rows of 64 weights (two blocks of 32, the row's
// f32 scale in bytes 0..3): x [rows, 1, 64] is quantized per block of 32 as
// for the block formats; per block and column the row's 32 values at byte
// 4 + 32 kb are vpdpbusd's signed operand, the dot product scaled by x's
// scale alone, and each output's sum by the row's scale once, after the
// reduction.
// CHECK-LABEL: func.func @linear_int8
//       CHECK:   %[[DX:.+]] = memref.alloc(%{{.+}}) : memref<?x2xf32>
//       CHECK:   scf.parallel
//       CHECK:     scf.for %[[KB:.+]] = %c0 to %c2 step %c1 {
//       CHECK:       %[[K:.+]] = arith.muli %[[KB]], %c32 : index
//       CHECK:       vector.load %{{.+}}[%{{.+}}, %c0, %[[K]]] : memref<?x1x64xf32>, vector<32xf32>
//       CHECK:   scf.parallel
//       CHECK:     scf.for %[[STEP:.+]] = {{.+}} iter_args(
//       CHECK:       %[[AT:.+]] = arith.addi %{{.+}}, %c4 : index
//       CHECK:       memref.prefetch %{{.+}}[%{{.+}}, %c0, %[[AT]]], read, locality<2>, data : memref<8x1x68xi8>
//       CHECK:       %[[W:.+]] = vector.load %{{.+}}[%{{.+}}, %c0, %[[AT]]] : memref<8x1x68xi8>, vector<32xi8>
//       CHECK:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.+}}, %{{.+}}, %[[W]])
//       CHECK:       %[[DXI:.+]] = memref.load %[[DX]]
//       CHECK:       %[[DXS:.+]] = vector.broadcast %[[DXI]] : f32 to vector<8xf32>
//       CHECK:       %[[DOT:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
//       CHECK:       %[[F:.+]] = arith.sitofp %[[DOT]] : vector<8xi32> to vector<8xf32>
//       CHECK:       vector.fma %[[F]], %[[DXS]], %{{.+}} : vector<8xf32>
//       CHECK:     %[[SCALE:.+]] = arith.bitcast %{{.+}} : i32 to f32
//       CHECK:     %[[SUM:.+]] = vector.reduction <add>, %{{.+}} : vector<8xf32> into f32
//       CHECK:     arith.mulf %[[SUM]], %[[SCALE]] : f32
// NOVNNI: remark: int8 activations not used: the target has no VNNI
// NOVNNI: remark: quantized contraction vectorized: int8 weight rows dequantized in registers
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#q = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3 + 4)>
#s0 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>
#s1 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>
#s2 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 2)>
#s3 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @linear_int8(%x: memref<?x1x64xf32>, %b: memref<8x1x68xi8>, %out: memref<?x8xf32>) {
  %c8_i32 = arith.constant 8 : i32
  %c16_i32 = arith.constant 16 : i32
  %c24_i32 = arith.constant 24 : i32
  // expected-remark @below {{quantized contraction vectorized with int8 activations (the target has VNNI; --int8-activations=false keeps f32 ones): x quantized per block of 32 to int8 with an f16 scale (llama.cpp's q8_0), once per row, int8 rows multiplied in blocks of 32 with vpdpbusd, 1 block per step (8 i32 lanes), converted and scaled by the activations' scale into 8-lane f32 accumulators, the row's f32 scale applied once per output after the reduction, 4 x 4 tiles (1 x 8 for a single row), blocks of 16 x 32}}
  linalg.generic {indexing_maps = [#x, #q, #s0, #s1, #s2, #s3, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %b, %b, %b, %b, %b : memref<?x1x64xf32>, memref<8x1x68xi8>, memref<8x1x68xi8>, memref<8x1x68xi8>, memref<8x1x68xi8>, memref<8x1x68xi8>) outs(%out : memref<?x8xf32>) attrs =  {seq.quantized = "int8"} {
  ^bb0(%in: f32, %in_2: i8, %in_3: i8, %in_4: i8, %in_5: i8, %in_6: i8, %acc: f32):
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
    %11 = arith.sitofp %in_2 : i8 to f32
    %12 = arith.mulf %11, %10 : f32
    %13 = arith.mulf %in, %12 : f32
    %14 = arith.addf %acc, %13 : f32
    linalg.yield %14 : f32
  }
  return
}
