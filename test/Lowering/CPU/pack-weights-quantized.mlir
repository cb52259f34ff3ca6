// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=512 vector-registers=32 vnni-bits=512 int8-activations remarks" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=256 vector-registers=16 vnni-bits=256 int8-activations" -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=512 vector-registers=32 vnni-bits=512" -split-input-file | FileCheck %s --check-prefix=F32ACT
// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=512 vector-registers=32 vnni-bits=0 int8-activations" -split-input-file | FileCheck %s --check-prefix=F32ACT

// The q4_0 generic of convert-seq-to-linalg (x @ W^T, W [33, 64] in blocks
// [33, 2, 18]) reads its blocks, a parameter, packed into panels of 16
// columns (8 with 256-bit vpdpbusd), the last partial: per panel and block
// the 16 f16 scales (bytes 2c, 2c + 1 of column c), then per group of 4
// value bytes the 16 columns' groups (byte 32 + 64 q + 4 c + t holds the
// block's byte 2 + 4 q + t). The body is kept; the generic is marked for
// seq-cpu-vectorize-quantized. Without int8 activations or VNNI nothing
// changes (F32ACT).

// CHECK-DAG:   #[[VALUE:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, ((d3 mod 16) floordiv 4) * 64 + (d1 mod 16) * 4 + d3 mod 4 + 32)>
// CHECK-DAG:   #[[LOW:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2)>
// CHECK-DAG:   #[[HIGH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2 + 1)>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x2x32xf32>, %[[W:.*]]: tensor<33x2x18xi8>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<3x2x288xi8>
// CHECK:         %[[P:.*]] = linalg.generic
// CHECK-SAME:      outs(%[[E]] : tensor<3x2x288xi8>)
// CHECK:           arith.cmpi ult
// CHECK:           tensor.extract %[[W]]
// CHECK:           arith.select
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[VALUE]], #[[LOW]], #[[HIGH]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]], %[[P]], %[[P]], %[[P]] : tensor<?x2x32xf32>, tensor<3x2x288xi8>, tensor<3x2x288xi8>, tensor<3x2x288xi8>)
// CHECK-SAME:      attrs =  {seq.quantized = "q4_0", seq.quantized_panel = 16 : i64}
// CHECK:           arith.shrui
// CHECK:           arith.subi
// CHECK:           linalg.yield
// AVX2:          (d1 floordiv 8, d2, ((d3 mod 16) floordiv 4) * 32 + (d1 mod 8) * 4 + d3 mod 4 + 16)
// AVX2:          tensor.empty() : tensor<5x2x144xi8>
// AVX2:          seq.quantized_panel = 8 : i64
// F32ACT-NOT:    seq.quantized_panel
// F32ACT-NOT:    tensor<3x2x288xi8>
#x = affine_map<(r, n, kb, j) -> (r, kb, j)>
#v = affine_map<(r, n, kb, j) -> (n, kb, j mod 16 + 2)>
#h0 = affine_map<(r, n, kb, j) -> (n, kb, 0)>
#h1 = affine_map<(r, n, kb, j) -> (n, kb, 1)>
#c = affine_map<(r, n, kb, j) -> (r, n)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<?x2x32xf32>, %w: tensor<33x2x18xi8>)
      -> tensor<?x33xf32> {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c8_i32 = arith.constant 8 : i32
    %c15_i32 = arith.constant 15 : i32
    %c8_i16 = arith.constant 8 : i16
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x2x32xf32>
    %empty = tensor.empty(%m) : tensor<?x33xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x33xf32>)
        -> tensor<?x33xf32>
    // expected-remark @+1 {{q4_0 blocks (a parameter) packed into 'tensor<3x2x288xi8>' panels of 16 columns for the int8-activation kernel (vpdpbusd, one i32 lane per column)}}
    %y = linalg.generic {indexing_maps = [#x, #v, #h0, #h1, #c],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%x, %w, %w, %w : tensor<?x2x32xf32>, tensor<33x2x18xi8>, tensor<33x2x18xi8>, tensor<33x2x18xi8>)
        outs(%init : tensor<?x33xf32>) attrs = {seq.quantized = "q4_0"} {
    ^bb0(%in: f32, %q: i8, %lo: i8, %hi: i8, %out: f32):
      %0 = arith.extui %lo : i8 to i16
      %1 = arith.extui %hi : i8 to i16
      %2 = arith.shli %1, %c8_i16 : i16
      %3 = arith.ori %0, %2 : i16
      %4 = arith.bitcast %3 : i16 to f16
      %5 = arith.extf %4 : f16 to f32
      %6 = arith.extui %q : i8 to i32
      %7 = linalg.index 3 : index
      %8 = arith.cmpi uge, %7, %c16 : index
      %9 = arith.select %8, %c4_i32, %c0_i32 : i32
      %10 = arith.shrui %6, %9 : i32
      %11 = arith.andi %10, %c15_i32 : i32
      %12 = arith.subi %11, %c8_i32 : i32
      %13 = arith.sitofp %12 : i32 to f32
      %14 = arith.mulf %13, %5 : f32
      %15 = arith.mulf %in, %14 : f32
      %16 = arith.addf %out, %15 : f32
      linalg.yield %16 : f32
    } -> tensor<?x33xf32>
    return %y : tensor<?x33xf32>
  }
}

// -----

// q8_0 blocks [20, 1, 34] in panels of 16 columns: the scales as q4_0's,
// then per group of 4 value bytes (8 groups) the 16 columns' groups, each
// byte + 128 (its sign bit flipped: vpdpbusd's unsigned operand); the
// body flips the byte it reads back, so the loops still compute the
// reference's dequantized weight.

// CHECK-DAG:   #[[VALUE8:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d3 floordiv 4) * 64 + (d1 mod 16) * 4 + d3 mod 4 + 32)>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x1x32xf32>, %[[W:.*]]: tensor<20x1x34xi8>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x1x544xi8>
// CHECK:         %[[P:.*]] = linalg.generic
// CHECK-SAME:      outs(%[[E]] : tensor<2x1x544xi8>)
// CHECK:           %[[B:.*]] = tensor.extract %[[W]]
// CHECK:           %[[FLIP:.*]] = arith.xori %[[B]], %{{.*}} : i8
// CHECK:           arith.select %{{.*}}, %[[B]], %[[FLIP]] : i8
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[VALUE8]], #{{.*}}, #{{.*}}, #{{.*}}]
// CHECK-SAME:      attrs =  {seq.quantized = "q8_0", seq.quantized_panel = 16 : i64}
// CHECK-NEXT:      ^bb0(%{{[^:]*}}: f32, %[[Q:[^:]*]]: i8,
// CHECK:             %[[BACK:.*]] = arith.xori %[[Q]], %{{.*}} : i8
// CHECK:             arith.sitofp %[[BACK]] : i8 to f32
// F32ACT-NOT:    seq.quantized_panel
#x = affine_map<(r, n, kb, j) -> (r, kb, j)>
#v = affine_map<(r, n, kb, j) -> (n, kb, j + 2)>
#h0 = affine_map<(r, n, kb, j) -> (n, kb, 0)>
#h1 = affine_map<(r, n, kb, j) -> (n, kb, 1)>
#c = affine_map<(r, n, kb, j) -> (r, n)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<?x1x32xf32>, %w: tensor<20x1x34xi8>)
      -> tensor<?x20xf32> {
    %c0 = arith.constant 0 : index
    %c8_i16 = arith.constant 8 : i16
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x1x32xf32>
    %empty = tensor.empty(%m) : tensor<?x20xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x20xf32>)
        -> tensor<?x20xf32>
    // expected-remark @+1 {{q8_0 blocks (a parameter) packed into 'tensor<2x1x544xi8>' panels of 16 columns for the int8-activation kernel (vpdpbusd, one i32 lane per column)}}
    %y = linalg.generic {indexing_maps = [#x, #v, #h0, #h1, #c],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%x, %w, %w, %w : tensor<?x1x32xf32>, tensor<20x1x34xi8>, tensor<20x1x34xi8>, tensor<20x1x34xi8>)
        outs(%init : tensor<?x20xf32>) attrs = {seq.quantized = "q8_0"} {
    ^bb0(%in: f32, %q: i8, %lo: i8, %hi: i8, %out: f32):
      %0 = arith.extui %lo : i8 to i16
      %1 = arith.extui %hi : i8 to i16
      %2 = arith.shli %1, %c8_i16 : i16
      %3 = arith.ori %0, %2 : i16
      %4 = arith.bitcast %3 : i16 to f16
      %5 = arith.extf %4 : f16 to f32
      %6 = arith.sitofp %q : i8 to f32
      %7 = arith.mulf %6, %5 : f32
      %8 = arith.mulf %in, %7 : f32
      %9 = arith.addf %out, %8 : f32
      linalg.yield %9 : f32
    } -> tensor<?x20xf32>
    return %y : tensor<?x20xf32>
  }
}

// -----

// A lookup of the same q8_0 table (an Embedding whose table the head is
// tied to: a tensor.extract of byte [row, kb, byte] of the blocks) reads
// the panels instead, so that only the pack reads the blocks: column
// c = row mod 16 of panel row / 16; a scale byte (byte < 2) at 2c + byte,
// value byte v = byte - 2 at 32 + 64 (v / 4) + 4c + v mod 4, flipped back.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %{{.*}}: tensor<?x1x32xf32>, %[[ROW:.*]]: index, %[[KB:.*]]: index, %[[BYTE:.*]]: index, %[[W:.*]]: tensor<20x1x34xi8>)
// CHECK:         %[[P:.*]] = linalg.generic
// CHECK:           tensor.extract %[[W]]
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %[[P]], %[[P]], %[[P]] :
// CHECK:         %[[C:.*]] = arith.remui %[[ROW]], %{{.*}} : index
// CHECK:         %[[SCALE:.*]] = arith.cmpi ult, %[[BYTE]], %{{.*}} : index
// CHECK:         %[[PANEL:.*]] = arith.divui %[[ROW]], %{{.*}} : index
// CHECK:         %[[READ:.*]] = tensor.extract %[[P]][%[[PANEL]], %[[KB]], %{{.*}}] : tensor<2x1x544xi8>
// CHECK:         %[[FLIP:.*]] = arith.xori %[[READ]], %{{.*}} : i8
// CHECK:         %[[OUT:.*]] = arith.select %[[SCALE]], %[[READ]], %[[FLIP]] : i8
// CHECK:         return %{{.*}}, %[[OUT]]
// AVX2:          tensor.extract %{{.*}} : tensor<3x1x272xi8>
// F32ACT:        tensor.extract %{{.*}} : tensor<20x1x34xi8>
#x = affine_map<(r, n, kb, j) -> (r, kb, j)>
#v = affine_map<(r, n, kb, j) -> (n, kb, j + 2)>
#h0 = affine_map<(r, n, kb, j) -> (n, kb, 0)>
#h1 = affine_map<(r, n, kb, j) -> (n, kb, 1)>
#c = affine_map<(r, n, kb, j) -> (r, n)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 4 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<?x1x32xf32>, %row: index, %kb: index,
                     %byte: index, %w: tensor<20x1x34xi8>)
      -> (tensor<?x20xf32>, i8) {
    %c0 = arith.constant 0 : index
    %c8_i16 = arith.constant 8 : i16
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x1x32xf32>
    %empty = tensor.empty(%m) : tensor<?x20xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x20xf32>)
        -> tensor<?x20xf32>
    // expected-remark @+1 {{q8_0 blocks (a parameter) packed into 'tensor<2x1x544xi8>' panels of 16 columns for the int8-activation kernel (vpdpbusd, one i32 lane per column)}}
    %y = linalg.generic {indexing_maps = [#x, #v, #h0, #h1, #c],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%x, %w, %w, %w : tensor<?x1x32xf32>, tensor<20x1x34xi8>, tensor<20x1x34xi8>, tensor<20x1x34xi8>)
        outs(%init : tensor<?x20xf32>) attrs = {seq.quantized = "q8_0"} {
    ^bb0(%in: f32, %q: i8, %lo: i8, %hi: i8, %out: f32):
      %0 = arith.extui %lo : i8 to i16
      %1 = arith.extui %hi : i8 to i16
      %2 = arith.shli %1, %c8_i16 : i16
      %3 = arith.ori %0, %2 : i16
      %4 = arith.bitcast %3 : i16 to f16
      %5 = arith.extf %4 : f16 to f32
      %6 = arith.sitofp %q : i8 to f32
      %7 = arith.mulf %6, %5 : f32
      %8 = arith.mulf %in, %7 : f32
      %9 = arith.addf %out, %8 : f32
      linalg.yield %9 : f32
    } -> tensor<?x20xf32>
    // expected-remark @+1 {{the lookups of this table read the panels of the Linear tied to it: only the preparation reads its blocks, which are held once}}
    %b = tensor.extract %w[%row, %kb, %byte] : tensor<20x1x34xi8>
    return %y, %b : tensor<?x20xf32>, i8
  }
}

// -----

// q4_1 blocks [33, 2, 20] in panels of 16 columns: per panel and block the
// 16 f16 scales (bytes 2c, 2c + 1), then the 16 f16 minimums (bytes
// 32 + 2c, 32 + 2c + 1), then per group of 4 value bytes the 16 columns'
// groups (byte 64 + 64 q + 4 c + t holds the block's byte 4 + 4 q + t).

// CHECK-DAG:   #[[VALUE1:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, ((d3 mod 16) floordiv 4) * 64 + (d1 mod 16) * 4 + d3 mod 4 + 64)>
// CHECK-DAG:   #[[D0:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2)>
// CHECK-DAG:   #[[D1:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2 + 1)>
// CHECK-DAG:   #[[M0:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2 + 32)>
// CHECK-DAG:   #[[M1:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 2 + 33)>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x2x32xf32>, %[[W:.*]]: tensor<33x2x20xi8>)
// CHECK:         %[[P:.*]] = linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<3x2x320xi8>)
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[VALUE1]], #[[D0]], #[[D1]], #[[M0]], #[[M1]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]], %[[P]], %[[P]], %[[P]], %[[P]], %[[P]] :
// CHECK-SAME:      attrs =  {seq.quantized = "q4_1", seq.quantized_panel = 16 : i64}
// AVX2:          (d1 floordiv 8, d2, ((d3 mod 16) floordiv 4) * 32 + (d1 mod 8) * 4 + d3 mod 4 + 32)
// AVX2:          tensor.empty() : tensor<5x2x160xi8>
// F32ACT-NOT:    seq.quantized_panel
#x = affine_map<(r, n, kb, j) -> (r, kb, j)>
#v = affine_map<(r, n, kb, j) -> (n, kb, j mod 16 + 4)>
#h0 = affine_map<(r, n, kb, j) -> (n, kb, 0)>
#h1 = affine_map<(r, n, kb, j) -> (n, kb, 1)>
#h2 = affine_map<(r, n, kb, j) -> (n, kb, 2)>
#h3 = affine_map<(r, n, kb, j) -> (n, kb, 3)>
#c = affine_map<(r, n, kb, j) -> (r, n)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<?x2x32xf32>, %w: tensor<33x2x20xi8>)
      -> tensor<?x33xf32> {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x2x32xf32>
    %empty = tensor.empty(%m) : tensor<?x33xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x33xf32>)
        -> tensor<?x33xf32>
    // expected-remark @+1 {{q4_1 blocks (a parameter) packed into 'tensor<3x2x320xi8>' panels of 16 columns for the int8-activation kernel (vpdpbusd, one i32 lane per column)}}
    %y = linalg.generic {indexing_maps = [#x, #v, #h0, #h1, #h2, #h3, #c],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%x, %w, %w, %w, %w, %w : tensor<?x2x32xf32>, tensor<33x2x20xi8>, tensor<33x2x20xi8>, tensor<33x2x20xi8>, tensor<33x2x20xi8>, tensor<33x2x20xi8>)
        outs(%init : tensor<?x33xf32>) attrs = {seq.quantized = "q4_1"} {
    ^bb0(%in: f32, %q: i8, %d0: i8, %d1: i8, %m0: i8, %m1: i8, %out: f32):
      // Not the dequantization (the pass keeps the body as it is): each
      // byte read, so that every operand is used.
      %0 = arith.addi %q, %d0 : i8
      %1 = arith.addi %0, %d1 : i8
      %2 = arith.addi %1, %m0 : i8
      %3 = arith.addi %2, %m1 : i8
      %4 = arith.sitofp %3 : i8 to f32
      %5 = arith.mulf %in, %4 : f32
      %6 = arith.addf %out, %5 : f32
      linalg.yield %6 : f32
    } -> tensor<?x33xf32>
    return %y : tensor<?x33xf32>
  }
}

// -----

// int8 rows [20, 1, 68] (k = 64, whole blocks of 32) in panels of 16
// columns: the 16 columns' f32 scales side by side (bytes 4c .. 4c + 3 of
// column c), then per group of 4 values (16 groups) the 16 columns' groups,
// each byte + 128; the body flips the byte it reads back. Rows of 48 (not
// whole blocks of the activations' quantization) are not packed.

// CHECK-DAG:   #[[IVALUE:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d3 floordiv 4) * 64 + (d1 mod 16) * 4 + d3 mod 4 + 64)>
// CHECK-DAG:   #[[S0:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 4)>
// CHECK-DAG:   #[[S3:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 16, d2, (d1 mod 16) * 4 + 3)>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x1x64xf32>, %[[W:.*]]: tensor<20x1x68xi8>, %[[W48:.*]]: tensor<20x1x52xi8>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x1x1088xi8>
// CHECK:         %[[P:.*]] = linalg.generic
// CHECK-SAME:      outs(%[[E]] : tensor<2x1x1088xi8>)
// CHECK:           %[[B:.*]] = tensor.extract %[[W]]
// CHECK:           %[[FLIP:.*]] = arith.xori %[[B]], %{{.*}} : i8
// CHECK:           arith.select %{{.*}}, %[[B]], %[[FLIP]] : i8
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[IVALUE]], #[[S0]], #{{.*}}, #{{.*}}, #[[S3]], #{{.*}}]
// CHECK-SAME:      attrs =  {seq.quantized = "int8", seq.quantized_panel = 16 : i64}
// CHECK-NEXT:      ^bb0(%{{[^:]*}}: f32, %[[Q:[^:]*]]: i8,
// CHECK:             %[[BACK:.*]] = arith.xori %[[Q]], %{{.*}} : i8
// CHECK:             arith.sitofp %[[BACK]] : i8 to f32
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %[[W48]], %[[W48]], %[[W48]], %[[W48]], %[[W48]] :
// CHECK-SAME:      attrs =  {seq.quantized = "int8"}
// AVX2:          tensor.empty() : tensor<3x1x544xi8>
// F32ACT-NOT:    seq.quantized_panel
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#q = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3 + 4)>
#s0 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>
#s1 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>
#s2 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 2)>
#s3 = affine_map<(d0, d1, d2, d3) -> (d1, d2, 3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 2 : i64} {
  func.func @forward(%x: tensor<?x1x64xf32>, %w: tensor<20x1x68xi8>,
                     %w48: tensor<20x1x52xi8>)
      -> (tensor<?x20xf32>, tensor<?x20xf32>) {
    %c0 = arith.constant 0 : index
    %c8_i32 = arith.constant 8 : i32
    %c16_i32 = arith.constant 16 : i32
    %c24_i32 = arith.constant 24 : i32
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x1x64xf32>
    %empty = tensor.empty(%m) : tensor<?x20xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x20xf32>)
        -> tensor<?x20xf32>
    // expected-remark @+1 {{int8 rows (a parameter) packed into 'tensor<2x1x1088xi8>' panels of 16 columns for the int8-activation kernel (vpdpbusd, one i32 lane per column)}}
    %y = linalg.generic {indexing_maps = [#x, #q, #s0, #s1, #s2, #s3, #c],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%x, %w, %w, %w, %w, %w : tensor<?x1x64xf32>, tensor<20x1x68xi8>, tensor<20x1x68xi8>, tensor<20x1x68xi8>, tensor<20x1x68xi8>, tensor<20x1x68xi8>)
        outs(%init : tensor<?x20xf32>) attrs = {seq.quantized = "int8"} {
    ^bb0(%in: f32, %q: i8, %b0: i8, %b1: i8, %b2: i8, %b3: i8, %out: f32):
      %0 = arith.extui %b0 : i8 to i32
      %1 = arith.extui %b1 : i8 to i32
      %2 = arith.shli %1, %c8_i32 : i32
      %3 = arith.ori %0, %2 : i32
      %4 = arith.extui %b2 : i8 to i32
      %5 = arith.shli %4, %c16_i32 : i32
      %6 = arith.ori %3, %5 : i32
      %7 = arith.extui %b3 : i8 to i32
      %8 = arith.shli %7, %c24_i32 : i32
      %9 = arith.ori %6, %8 : i32
      %10 = arith.bitcast %9 : i32 to f32
      %11 = arith.sitofp %q : i8 to f32
      %12 = arith.mulf %11, %10 : f32
      %13 = arith.mulf %in, %12 : f32
      %14 = arith.addf %out, %13 : f32
      linalg.yield %14 : f32
    } -> tensor<?x20xf32>
    %x48 = tensor.extract_slice %x[0, 0, 0] [%m, 1, 48] [1, 1, 1]
        : tensor<?x1x64xf32> to tensor<?x1x48xf32>
    %y48 = linalg.generic {indexing_maps = [#x, #q, #s0, #s1, #s2, #s3, #c],
                           iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%x48, %w48, %w48, %w48, %w48, %w48 : tensor<?x1x48xf32>, tensor<20x1x52xi8>, tensor<20x1x52xi8>, tensor<20x1x52xi8>, tensor<20x1x52xi8>, tensor<20x1x52xi8>)
        outs(%init : tensor<?x20xf32>) attrs = {seq.quantized = "int8"} {
    ^bb0(%in: f32, %q: i8, %b0: i8, %b1: i8, %b2: i8, %b3: i8, %out: f32):
      %0 = arith.extui %b0 : i8 to i32
      %1 = arith.extui %b1 : i8 to i32
      %2 = arith.shli %1, %c8_i32 : i32
      %3 = arith.ori %0, %2 : i32
      %4 = arith.extui %b2 : i8 to i32
      %5 = arith.shli %4, %c16_i32 : i32
      %6 = arith.ori %3, %5 : i32
      %7 = arith.extui %b3 : i8 to i32
      %8 = arith.shli %7, %c24_i32 : i32
      %9 = arith.ori %6, %8 : i32
      %10 = arith.bitcast %9 : i32 to f32
      %11 = arith.sitofp %q : i8 to f32
      %12 = arith.mulf %11, %10 : f32
      %13 = arith.mulf %in, %12 : f32
      %14 = arith.addf %out, %13 : f32
      linalg.yield %14 : f32
    } -> tensor<?x20xf32>
    return %y, %y48 : tensor<?x20xf32>, tensor<?x20xf32>
  }
}
