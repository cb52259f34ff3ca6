// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=0 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s

// seq.selective_scan (Mamba), compiled by seq-lower-to-llvm (-O0, -O2) and
// run on the CPU: with D, z, delta_bias and softplus; with none of them;
// without z; batch, D and N of 1; L = 1, 7, 64, 100, some with dynamic batch
// and length.
//
// Reference (PyTorch, float64; mamba's selective_scan_ref, sequence-major):
//   dt = delta + delta_bias                      # when given
//   dt = F.softplus(dt)                          # when delta_softplus
//   x = torch.zeros(batch, D, N)
//   for t in range(L):
//       x = torch.exp(dt[:, t, :, None] * A) * x \
//           + dt[:, t, :, None] * B[:, t, None, :] * u[:, t, :, None]
//       y[:, t] = (x * C[:, t, None, :]).sum(-1)
//   y = y + D * u                                # when D is given
//   y = y * F.silu(z)                            # when z is given
//
// Measured max abs error: 6e-8 to 6e-7 (outputs up to 3.4); PyTorch's own
// float32 run is off by 1.4e-8 to 5.5e-7.
//
// The inputs come from @gen, a formula that numpy reproduces bit for bit. The
// expected outputs (the dense constants) were computed by PyTorch 1.13 in
// float64 from those float32 inputs and rounded to float32, the exact answer;
// the PyTorch code is quoted above. Each case prints its largest absolute
// error, then the number of elements outside |got - ref| <= 1e-6 + 1e-5 |ref|
// (the golden tests allow 1e-4 absolute and 1e-3 relative).

// CHECK: case selective_scan_L1: {{[-+.e0-9]+}}, 0{{$}}
// CHECK: case selective_scan_L7: {{[-+.e0-9]+}}, 0{{$}}
// CHECK: case selective_scan_L64: {{[-+.e0-9]+}}, 0{{$}}
// CHECK: case selective_scan_L100: {{[-+.e0-9]+}}, 0{{$}}
// CHECK: case selective_scan_plain_L7: {{[-+.e0-9]+}}, 0{{$}}
// CHECK: case selective_scan_no_z_L64: {{[-+.e0-9]+}}, 0{{$}}
// CHECK: case selective_scan_unit_dims_L7: {{[-+.e0-9]+}}, 0{{$}}

func.func @main() {
  call @selective_scan_L1() : () -> ()
  call @selective_scan_L7() : () -> ()
  call @selective_scan_L64() : () -> ()
  call @selective_scan_L100() : () -> ()
  call @selective_scan_plain_L7() : () -> ()
  call @selective_scan_no_z_L64() : () -> ()
  call @selective_scan_unit_dims_L7() : () -> ()
  return
}

// Deterministic input i of a flat tensor of n:
//   ((i * mult + seed) mod 997) / 498.5 - 1, times scale, plus offset,
// in f64 then rounded to f32 (numpy reproduces it bit for bit).
func.func @gen(%n: index, %mult: i64, %seed: i64, %scale: f64, %offset: f64) -> tensor<?xf32> {
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.muli %ii, %mult : i64
    %ms = arith.addi %m, %seed : i64
    %c997 = arith.constant 997 : i64
    %k = arith.remsi %ms, %c997 : i64
    %kf = arith.sitofp %k : i64 to f64
    %half = arith.constant 498.5 : f64
    %q = arith.divf %kf, %half : f64
    %one = arith.constant 1.0 : f64
    %x = arith.subf %q, %one : f64
    %xs = arith.mulf %x, %scale : f64
    %xo = arith.addf %xs, %offset : f64
    %t = arith.truncf %xo : f64 to f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func private @printString(!llvm.ptr)
func.func private @printF32(f32)
func.func private @printI64(i64)
func.func private @printComma()
func.func private @printNewline()

// Prints "<label>" then the largest |got - ref|, then the number of elements
// outside |got - ref| <= 1.0e-06 + 1.0e-05 |ref| (a NaN counts as outside).
func.func @check(%label: !llvm.ptr, %got: tensor<?xf32>, %ref: tensor<?xf32>) {
  %atol = arith.constant 1.0e-06 : f32
  %rtol = arith.constant 1.0e-05 : f32
  %zf = arith.constant 0.0 : f32
  %zi = arith.constant 0 : i64
  %e0 = tensor.empty() : tensor<f32>
  %i0 = tensor.empty() : tensor<i64>
  %f0 = linalg.fill ins(%zf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %g0 = linalg.fill ins(%zi : i64) outs(%i0 : tensor<i64>) -> tensor<i64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%got, %ref : tensor<?xf32>, tensor<?xf32>) outs(%f0, %g0 : tensor<f32>, tensor<i64>) {
  ^bb0(%g: f32, %w: f32, %err: f32, %bad: i64):
    %d = arith.subf %g, %w : f32
    %a = math.absf %d : f32
    %m = arith.maximumf %err, %a : f32
    %wa = math.absf %w : f32
    %rt = arith.mulf %rtol, %wa : f32
    %tol = arith.addf %atol, %rt : f32
    %out = arith.cmpf ugt, %a, %tol : f32
    %one = arith.constant 1 : i64
    %inc = arith.addi %bad, %one : i64
    %nb = arith.select %out, %inc, %bad : i64
    linalg.yield %m, %nb : f32, i64
  } -> (tensor<f32>, tensor<i64>)
  %err = tensor.extract %r#0[] : tensor<f32>
  %bad = tensor.extract %r#1[] : tensor<i64>
  call @printString(%label) : (!llvm.ptr) -> ()
  call @printF32(%err) : (f32) -> ()
  call @printComma() : () -> ()
  call @printI64(%bad) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

llvm.mlir.global internal constant @name_selective_scan_L1("case selective_scan_L1: \00") {addr_space = 0 : i32}
func.func @selective_scan_L1() {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c20 = arith.constant 20 : index
  %i1 = arith.constant 1 : i64
  %i3 = arith.constant 3 : i64
  %i4 = arith.constant 4 : i64
  %i5 = arith.constant 5 : i64
  %i6 = arith.constant 6 : i64
  %i7 = arith.constant 7 : i64
  %i9 = arith.constant 9 : i64
  %i11 = arith.constant 11 : i64
  %i13 = arith.constant 13 : i64
  %i17 = arith.constant 17 : i64
  %i19 = arith.constant 19 : i64
  %i23 = arith.constant 23 : i64
  %i29 = arith.constant 29 : i64
  %i31 = arith.constant 31 : i64
  %f1 = arith.constant 1.0 : f64
  %f0 = arith.constant 0.0 : f64
  %f1p5 = arith.constant 1.5 : f64
  %fm0p5 = arith.constant -0.5 : f64
  %fm2 = arith.constant -2.0 : f64
  %f0p69999999999999996 = arith.constant 0.7 : f64
  %f2 = arith.constant 2.0 : f64
  %f0p5 = arith.constant 0.5 : f64
  %v1 = call @gen(%c8, %i7, %i4, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v2 = tensor.cast %v1 : tensor<?xf32> to tensor<8xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2]] output_shape [2, 1, 4] : tensor<8xf32> into tensor<2x1x4xf32>
  %v4 = call @gen(%c8, %i11, %i6, %f1p5, %fm0p5) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v5 = tensor.cast %v4 : tensor<?xf32> to tensor<8xf32>
  %v6 = tensor.expand_shape %v5 [[0, 1, 2]] output_shape [2, 1, 4] : tensor<8xf32> into tensor<2x1x4xf32>
  %v7 = call @gen(%c20, %i13, %i1, %f1, %fm2) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v8 = tensor.cast %v7 : tensor<?xf32> to tensor<20xf32>
  %v9 = tensor.expand_shape %v8 [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  %v10 = call @gen(%c10, %i17, %i3, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v11 = tensor.cast %v10 : tensor<?xf32> to tensor<10xf32>
  %v12 = tensor.expand_shape %v11 [[0, 1, 2]] output_shape [2, 1, 5] : tensor<10xf32> into tensor<2x1x5xf32>
  %v13 = call @gen(%c10, %i19, %i5, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v14 = tensor.cast %v13 : tensor<?xf32> to tensor<10xf32>
  %v15 = tensor.expand_shape %v14 [[0, 1, 2]] output_shape [2, 1, 5] : tensor<10xf32> into tensor<2x1x5xf32>
  %v16 = call @gen(%c4, %i23, %i6, %f0p69999999999999996, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v17 = tensor.cast %v16 : tensor<?xf32> to tensor<4xf32>
  %v18 = call @gen(%c8, %i29, %i9, %f2, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v19 = tensor.cast %v18 : tensor<?xf32> to tensor<8xf32>
  %v20 = tensor.expand_shape %v19 [[0, 1, 2]] output_shape [2, 1, 4] : tensor<8xf32> into tensor<2x1x4xf32>
  %v21 = call @gen(%c4, %i31, %i9, %f0p5, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v22 = tensor.cast %v21 : tensor<?xf32> to tensor<4xf32>
  %v23 = seq.selective_scan %v3, %v6, %v9, %v12, %v15 D(%v17 : tensor<4xf32>) z(%v20 : tensor<2x1x4xf32>) delta_bias(%v22 : tensor<4xf32>) {delta_softplus}
      : tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<4x5xf32>, tensor<2x1x5xf32>, tensor<2x1x5xf32> -> tensor<2x1x4xf32>
  %v25 = tensor.collapse_shape %v23 [[0, 1, 2]] : tensor<2x1x4xf32> into tensor<8xf32>
  %v26 = arith.constant dense<[-8.34317282e-02, -7.23115951e-02, -5.98682314e-02, -4.62298281e-02, -1.12531677e-01, -9.99910980e-02, -8.64273086e-02, -7.21057951e-02]> : tensor<8xf32>
  %v27 = tensor.cast %v25 : tensor<8xf32> to tensor<?xf32>
  %v28 = tensor.cast %v26 : tensor<8xf32> to tensor<?xf32>
  %v29 = llvm.mlir.addressof @name_selective_scan_L1 : !llvm.ptr
  call @check(%v29, %v27, %v28) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

llvm.mlir.global internal constant @name_selective_scan_L7("case selective_scan_L7: \00") {addr_space = 0 : i32}
func.func @selective_scan_L7() {
  %c4 = arith.constant 4 : index
  %c20 = arith.constant 20 : index
  %c56 = arith.constant 56 : index
  %c70 = arith.constant 70 : index
  %i1 = arith.constant 1 : i64
  %i6 = arith.constant 6 : i64
  %i7 = arith.constant 7 : i64
  %i9 = arith.constant 9 : i64
  %i10 = arith.constant 10 : i64
  %i11 = arith.constant 11 : i64
  %i12 = arith.constant 12 : i64
  %i13 = arith.constant 13 : i64
  %i15 = arith.constant 15 : i64
  %i17 = arith.constant 17 : i64
  %i19 = arith.constant 19 : i64
  %i23 = arith.constant 23 : i64
  %i29 = arith.constant 29 : i64
  %i31 = arith.constant 31 : i64
  %f1 = arith.constant 1.0 : f64
  %f0 = arith.constant 0.0 : f64
  %f1p5 = arith.constant 1.5 : f64
  %fm0p5 = arith.constant -0.5 : f64
  %fm2 = arith.constant -2.0 : f64
  %f0p69999999999999996 = arith.constant 0.7 : f64
  %f2 = arith.constant 2.0 : f64
  %f0p5 = arith.constant 0.5 : f64
  %v1 = call @gen(%c56, %i7, %i10, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v2 = tensor.cast %v1 : tensor<?xf32> to tensor<56xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2]] output_shape [2, 7, 4] : tensor<56xf32> into tensor<2x7x4xf32>
  %v4 = call @gen(%c56, %i11, %i12, %f1p5, %fm0p5) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v5 = tensor.cast %v4 : tensor<?xf32> to tensor<56xf32>
  %v6 = tensor.expand_shape %v5 [[0, 1, 2]] output_shape [2, 7, 4] : tensor<56xf32> into tensor<2x7x4xf32>
  %v7 = call @gen(%c20, %i13, %i1, %f1, %fm2) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v8 = tensor.cast %v7 : tensor<?xf32> to tensor<20xf32>
  %v9 = tensor.expand_shape %v8 [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  %v10 = call @gen(%c70, %i17, %i9, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v11 = tensor.cast %v10 : tensor<?xf32> to tensor<70xf32>
  %v12 = tensor.expand_shape %v11 [[0, 1, 2]] output_shape [2, 7, 5] : tensor<70xf32> into tensor<2x7x5xf32>
  %v13 = call @gen(%c70, %i19, %i11, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v14 = tensor.cast %v13 : tensor<?xf32> to tensor<70xf32>
  %v15 = tensor.expand_shape %v14 [[0, 1, 2]] output_shape [2, 7, 5] : tensor<70xf32> into tensor<2x7x5xf32>
  %v16 = call @gen(%c4, %i23, %i6, %f0p69999999999999996, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v17 = tensor.cast %v16 : tensor<?xf32> to tensor<4xf32>
  %v18 = call @gen(%c56, %i29, %i15, %f2, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v19 = tensor.cast %v18 : tensor<?xf32> to tensor<56xf32>
  %v20 = tensor.expand_shape %v19 [[0, 1, 2]] output_shape [2, 7, 4] : tensor<56xf32> into tensor<2x7x4xf32>
  %v21 = call @gen(%c4, %i31, %i9, %f0p5, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v22 = tensor.cast %v21 : tensor<?xf32> to tensor<4xf32>
  %v23 = seq.selective_scan %v3, %v6, %v9, %v12, %v15 D(%v17 : tensor<4xf32>) z(%v20 : tensor<2x7x4xf32>) delta_bias(%v22 : tensor<4xf32>) {delta_softplus}
      : tensor<2x7x4xf32>, tensor<2x7x4xf32>, tensor<4x5xf32>, tensor<2x7x5xf32>, tensor<2x7x5xf32> -> tensor<2x7x4xf32>
  %v25 = tensor.collapse_shape %v23 [[0, 1, 2]] : tensor<2x7x4xf32> into tensor<56xf32>
  %v26 = arith.constant dense<[-8.38727504e-02, -7.27687404e-02, -6.03711084e-02, -4.68152612e-02, -5.75612672e-02, -4.19513211e-02, -2.57501267e-02, -9.39330552e-03, -6.24080412e-02, -4.63412665e-02, -3.08267586e-02, -1.65241808e-02, -6.60514161e-02, -4.83081974e-02, -3.18801925e-02, -1.74738225e-02, -1.64720640e-02, 7.80085009e-03, 3.04340590e-02, 5.08094877e-02, 1.15467124e-01, 1.47311345e-01, 1.76934868e-01, 2.03902572e-01, 2.89665490e-01, 3.19713056e-01, 3.46301615e-01, 3.69281054e-01, 3.47873628e-01, 3.52056414e-01, 3.50750029e-01, 3.43978792e-01, 2.25252464e-01, 1.89334318e-01, -1.97844170e-02, -1.28137693e-02, 2.82886401e-02, 3.86341624e-02, 4.89909165e-02, 5.90846688e-02, -1.30311117e-01, -1.24389350e-01, -1.17309116e-01, -1.09044261e-01, -1.86870217e-01, -1.70277432e-01, -1.50583759e-01, -1.27658069e-01, -8.53959564e-03, -3.97257414e-03, -1.10400398e-03, -8.50873857e-06, -3.71008762e-04, -2.89978762e-03, -7.61871831e-03, -1.44282253e-02]> : tensor<56xf32>
  %v27 = tensor.cast %v25 : tensor<56xf32> to tensor<?xf32>
  %v28 = tensor.cast %v26 : tensor<56xf32> to tensor<?xf32>
  %v29 = llvm.mlir.addressof @name_selective_scan_L7 : !llvm.ptr
  call @check(%v29, %v27, %v28) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

llvm.mlir.global internal constant @name_selective_scan_L64("case selective_scan_L64: \00") {addr_space = 0 : i32}
func.func @selective_scan_L64() {
  %c4 = arith.constant 4 : index
  %c20 = arith.constant 20 : index
  %c512 = arith.constant 512 : index
  %c640 = arith.constant 640 : index
  %i1 = arith.constant 1 : i64
  %i6 = arith.constant 6 : i64
  %i7 = arith.constant 7 : i64
  %i9 = arith.constant 9 : i64
  %i11 = arith.constant 11 : i64
  %i13 = arith.constant 13 : i64
  %i17 = arith.constant 17 : i64
  %i19 = arith.constant 19 : i64
  %i23 = arith.constant 23 : i64
  %i29 = arith.constant 29 : i64
  %i31 = arith.constant 31 : i64
  %i66 = arith.constant 66 : i64
  %i67 = arith.constant 67 : i64
  %i68 = arith.constant 68 : i64
  %i69 = arith.constant 69 : i64
  %i72 = arith.constant 72 : i64
  %f1 = arith.constant 1.0 : f64
  %f0 = arith.constant 0.0 : f64
  %f1p5 = arith.constant 1.5 : f64
  %fm0p5 = arith.constant -0.5 : f64
  %fm2 = arith.constant -2.0 : f64
  %f0p69999999999999996 = arith.constant 0.7 : f64
  %f2 = arith.constant 2.0 : f64
  %f0p5 = arith.constant 0.5 : f64
  %v1 = call @gen(%c512, %i7, %i67, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v2 = tensor.cast %v1 : tensor<?xf32> to tensor<512xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2]] output_shape [2, 64, 4] : tensor<512xf32> into tensor<2x64x4xf32>
  %v4 = tensor.cast %v3 : tensor<2x64x4xf32> to tensor<?x?x4xf32>
  %v5 = call @gen(%c512, %i11, %i69, %f1p5, %fm0p5) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v6 = tensor.cast %v5 : tensor<?xf32> to tensor<512xf32>
  %v7 = tensor.expand_shape %v6 [[0, 1, 2]] output_shape [2, 64, 4] : tensor<512xf32> into tensor<2x64x4xf32>
  %v8 = tensor.cast %v7 : tensor<2x64x4xf32> to tensor<?x?x4xf32>
  %v9 = call @gen(%c20, %i13, %i1, %f1, %fm2) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v10 = tensor.cast %v9 : tensor<?xf32> to tensor<20xf32>
  %v11 = tensor.expand_shape %v10 [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  %v12 = call @gen(%c640, %i17, %i66, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v13 = tensor.cast %v12 : tensor<?xf32> to tensor<640xf32>
  %v14 = tensor.expand_shape %v13 [[0, 1, 2]] output_shape [2, 64, 5] : tensor<640xf32> into tensor<2x64x5xf32>
  %v15 = tensor.cast %v14 : tensor<2x64x5xf32> to tensor<?x?x5xf32>
  %v16 = call @gen(%c640, %i19, %i68, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v17 = tensor.cast %v16 : tensor<?xf32> to tensor<640xf32>
  %v18 = tensor.expand_shape %v17 [[0, 1, 2]] output_shape [2, 64, 5] : tensor<640xf32> into tensor<2x64x5xf32>
  %v19 = tensor.cast %v18 : tensor<2x64x5xf32> to tensor<?x?x5xf32>
  %v20 = call @gen(%c4, %i23, %i6, %f0p69999999999999996, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v21 = tensor.cast %v20 : tensor<?xf32> to tensor<4xf32>
  %v22 = call @gen(%c512, %i29, %i72, %f2, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v23 = tensor.cast %v22 : tensor<?xf32> to tensor<512xf32>
  %v24 = tensor.expand_shape %v23 [[0, 1, 2]] output_shape [2, 64, 4] : tensor<512xf32> into tensor<2x64x4xf32>
  %v25 = tensor.cast %v24 : tensor<2x64x4xf32> to tensor<?x?x4xf32>
  %v26 = call @gen(%c4, %i31, %i9, %f0p5, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v27 = tensor.cast %v26 : tensor<?xf32> to tensor<4xf32>
  %v28 = seq.selective_scan %v4, %v8, %v11, %v15, %v19 D(%v21 : tensor<4xf32>) z(%v25 : tensor<?x?x4xf32>) delta_bias(%v27 : tensor<4xf32>) {delta_softplus}
      : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4x5xf32>, tensor<?x?x5xf32>, tensor<?x?x5xf32> -> tensor<?x?x4xf32>
  %v29 = tensor.cast %v28 : tensor<?x?x4xf32> to tensor<2x64x4xf32>
  %v30 = tensor.collapse_shape %v29 [[0, 1, 2]] : tensor<2x64x4xf32> into tensor<512xf32>
  %v31 = arith.constant dense<[-8.72143731e-02, -7.63407722e-02, -6.44664466e-02, -5.17874211e-02, -6.84129447e-02, -5.43657877e-02, -4.01388817e-02, -2.61848997e-02, -6.96293712e-02, -5.44236936e-02, -3.99161614e-02, -2.66877469e-02, -4.87191305e-02, -2.96049956e-02, -1.16655612e-02, 4.53369971e-03, 3.48238274e-02, 6.04768880e-02, 8.44860077e-02, 1.06393896e-01, 1.73645854e-01, 2.01096460e-01, 2.25901917e-01, 2.47811615e-01, 2.89465070e-01, 3.04698765e-01, 3.15928787e-01, 3.23197007e-01, 2.59933382e-01, 2.45233670e-01, 2.25497708e-01, 2.01051190e-01, 3.38564045e-03, 1.08972462e-02, 1.86227970e-02, 2.64033508e-02, 5.22706704e-03, 1.22142481e-02, 1.88981276e-02, 2.50484850e-02, -2.15393811e-01, -2.04727516e-01, -1.91031098e-01, -1.74128503e-01, -8.26306269e-03, -4.19100560e-03, -1.33977702e-03, 2.59351858e-04, 2.59566540e-03, 2.76269740e-04, -3.63357365e-03, -8.95057805e-03, 1.72950118e-03, -2.38873326e-04, -3.27551807e-03, -7.11325277e-03, 2.05377750e-02, 1.77399311e-02, 1.38007794e-02, 8.96593928e-03, 1.86062939e-02, 8.89274478e-03, -2.32418859e-03, -1.48229860e-02, -3.34855132e-02, -5.15301824e-02, -7.06215873e-02, 1.20037096e-02, 1.20918583e-02, 1.34486360e-02, 1.44802323e-02, 1.51317539e-02, 8.36131803e-04, -1.91102247e-03, -5.14270458e-03, -8.72354861e-03, -4.51983400e-02, -5.07786013e-02, -5.47798909e-02, -5.63039966e-02, 5.71392551e-02, 4.58189510e-02, 3.05379666e-02, 1.08232135e-02, -3.78989242e-02, -7.73499534e-02, -1.43586934e-01, -2.24131852e-01, -2.90583551e-01, -2.75891960e-01, -3.56082618e-01, -4.47585940e-01, -3.84187281e-01, -3.39393556e-01, -3.89604300e-01, -4.41946328e-01, -4.49293345e-01, -4.23693299e-01, -4.52241480e-01, -4.77780819e-01, -6.21401668e-01, 8.67450312e-02, 8.78669545e-02, 8.81927982e-02, 1.18084274e-01, 1.23700291e-01, 1.23531774e-01, 1.22036733e-01, 1.45427823e-01, 1.47571012e-01, 1.41387239e-01, 1.32842481e-01, 1.28981858e-01, 1.17996454e-01, 9.95149463e-02, 7.79669508e-02, 4.72942628e-02, 2.28855759e-02, -4.28993441e-03, -3.23737785e-02, -6.10620528e-02, -8.89120474e-02, -1.13911077e-01, -1.35666743e-01, -5.94026625e-01, -7.29861498e-01, -8.80502880e-01, -1.04480994e+00, -1.33656192e+00, -1.54451907e+00, -1.77042639e+00, -2.01439953e+00, -2.19371271e+00, 1.73047364e+00, 1.83126903e+00, 1.92608476e+00, -1.65162265e-01, -2.35500187e-01, -2.35001326e-01, -2.32965827e-01, -1.23554595e-01, -1.20532639e-01, -1.08179413e-01, -9.50267836e-02, -1.88364521e-01, -1.70156673e-01, -1.51368931e-01, -1.30707175e-01, -1.68339893e-01, -1.33649737e-01, -9.60970521e-02, -5.50042056e-02, -1.18388087e-02, 4.23382781e-02, 1.00035340e-01, 1.61096126e-01, 2.02695340e-01, 2.59517908e-01, 3.17135841e-01, 3.75256747e-01, 2.78541982e-01, 3.02775025e-01, 3.23471576e-01, 3.40604424e-01, 6.04658902e-01, 6.41598940e-01, 6.74906909e-01, 7.04521120e-01, 1.54493487e+00, 1.64086354e+00, -2.30885640e-01, -2.36096576e-01, -2.60253191e-01, -2.62796402e-01, -2.63368607e-01, -1.92535132e-01, -1.88745469e-01, -1.81769297e-01, -1.72740594e-01, -1.27675578e-01, -1.02910995e-01, -9.01817083e-02, -7.62703791e-02, -5.26866838e-02, -2.67676879e-02, -1.60463024e-02, -5.83386328e-03, 3.59267648e-03, 9.15692281e-03, 1.39645655e-02, 1.70993097e-02, 2.51372308e-02, 2.80484986e-02, 2.72069518e-02, 2.40278412e-02, 3.92359160e-02, 4.26850542e-02, 3.55586670e-02, 2.54598092e-02, 4.50061224e-02, 3.64886299e-02, 2.05252711e-02, 1.11571478e-03, 1.51263131e-02, -2.82979541e-04, 2.65277433e-03, 5.69611276e-03, 6.59509050e-03, 1.03776911e-02, 1.24710752e-02, 1.41635658e-02, 1.74256749e-02, 2.69593336e-02, 2.86414269e-02, 2.94813756e-02, 2.99598817e-02, 3.52953300e-02, 3.24766636e-02, 2.77597941e-02, 2.09860373e-02, 1.23323705e-02, -2.41080925e-04, -1.57529525e-02, -3.44316773e-02, -5.03178798e-02, -7.18394592e-02, -9.56814438e-02, -1.21758185e-01, -9.83469561e-02, -1.11325920e-01, -1.22410536e-01, -1.30931750e-01, -4.21161652e-01, -4.81980711e-01, -5.46005309e-01, -6.12951398e-01, -1.09447503e+00, -1.23631847e+00, -1.38936567e+00, 2.05562532e-01, 2.48238027e-01, 2.67330825e-01, 2.86209792e-01, 3.04393083e-01, 3.00208628e-01, 3.11771333e-01, 3.20326120e-01, 3.24914306e-01, 1.05254792e-01, 9.57255736e-02, 8.43455791e-02, 7.12175742e-02, 4.67359610e-02, 3.22665721e-02, 1.79361645e-02, 4.48513171e-03, -2.65678726e-02, -7.17954338e-02, -1.21229611e-01, -1.74620554e-01, -3.17323834e-01, -4.05501217e-01, -5.00448525e-01, -6.01984739e-01, -7.08523750e-01, -8.18666518e-01, -7.26914823e-01, -8.08207691e-01, -7.69110024e-01, -8.23090851e-01, -8.53791952e-01, -8.95303845e-01, -6.24757588e-01, 8.03118795e-02, 9.95549634e-02, 9.30223316e-02, -2.98820257e-01, -3.00022572e-01, -2.56059587e-01, -2.51354367e-01, -3.76482397e-01, -3.67099494e-01, -3.10821831e-01, -2.92476714e-01, -3.52880210e-01, -3.14840049e-01, -2.43828148e-01, -1.92207977e-01, -1.01806082e-01, -4.55300771e-02, 1.57752763e-02, 8.02608058e-02, -3.94144543e-02, -7.33441338e-02, -1.01115189e-01, -1.54956594e-01, 2.85089985e-02, 8.05525295e-03, -4.29166248e-03, -4.12244126e-02, 2.62872249e-01, 2.61260927e-01, 2.63089836e-01, 2.48362854e-01, 5.58317304e-01, 5.65757632e-01, 5.71882188e-01, -7.68131986e-02, -9.93302539e-02, -9.63059142e-02, -9.26897451e-02, -8.82820114e-02, -8.13189670e-02, -7.46084824e-02, -6.73336312e-02, -5.96707277e-02, -2.85623129e-02, -2.04556156e-02, -1.29702743e-02, -6.47464534e-03, 2.43829601e-02, 2.37532351e-02, 1.99990273e-02, 1.27253197e-02, -1.32826401e-03, 9.19367000e-03, 1.83819048e-02, 2.58555505e-02, 1.70259342e-01, 2.16491580e-01, 2.62132138e-01, 3.06226432e-01, 3.91914062e-02, 3.44428159e-02, 2.75331140e-02, 1.86204873e-02, -1.40343606e-01, -1.60384387e-01, -1.78684086e-01, -1.94249123e-01, -2.68849917e-02, -3.70870754e-02, 6.02553552e-03, 6.58298237e-03, -2.86558620e-03, -1.02806289e-03, 5.68774645e-04, 1.86346471e-03, 4.34070127e-03, 6.68865722e-03, 8.62060674e-03, 1.00490628e-02, 1.29778367e-02, 1.33763077e-02, 1.29457377e-02, 1.16314851e-02, 5.89739624e-03, 6.37575286e-03, 2.28166138e-03, -2.40641320e-03, -4.08764742e-03, -1.46449655e-02, -2.01898832e-02, -2.48644967e-02, -8.84197745e-03, -3.26718315e-02, -3.00759152e-02, -2.31088288e-02, 4.05795984e-02, 2.12497283e-02, 5.48218004e-02, 9.93303806e-02, -2.29596838e-01, -2.71751553e-01, -2.80263811e-01, -2.83925116e-01, 3.46693285e-02, 2.45460607e-02, 1.98781826e-02, 1.42055470e-02, 2.60156915e-02, 1.51964491e-02, 6.86402433e-03, -2.27540336e-03, 4.40866947e-02, 3.45764011e-02, 2.59080678e-02, 1.70553066e-02, 5.88787198e-02, 4.67056334e-02, 3.42670344e-02, 2.17031091e-02, 1.99280754e-02, -2.80367793e-03, -2.65049599e-02, -5.06539159e-02, -1.02823086e-01, -1.38260290e-01, -1.73879907e-01, -2.09061190e-01, -2.55118221e-01, -2.86741227e-01, -3.14649105e-01, -3.38052124e-01, -2.45646894e-01, -2.28907421e-01, -1.99961767e-01, -1.57536373e-01, 2.74912894e-01, 4.17441785e-01, 5.86909592e-01, -1.03601992e-01, -2.32846156e-01, -2.73379564e-01, -3.16272229e-01, -3.60703945e-01, 1.15471996e-01, 1.03998408e-01, -2.26658341e-02, -4.84632747e-03, 3.50848049e-01, 3.56177956e-01, 2.45921969e-01, 2.33182013e-01, 1.19745716e-01, 9.85796079e-02, 5.99737316e-02, 1.43456766e-02, -7.16617424e-03, -2.44587138e-02, -5.03159240e-02, -8.78094435e-02, 9.61706638e-02, 1.02320269e-01, 1.02200270e-01, 9.47384387e-02, 3.69506001e-01, 3.95206660e-01, 4.15844172e-01, 4.31161463e-01, 6.03882372e-01, 6.23846948e-01, 6.38526738e-01, 6.48009896e-01, 5.06710410e-01, -6.46870509e-02, -5.93420602e-02, -1.02288134e-01, -5.24796024e-02, -4.47903275e-02, -3.67570110e-02, -8.96196663e-02, -1.87473148e-02, -9.70244128e-03, -1.27996074e-03, -4.77712974e-02, -3.00376248e-02, -2.09938418e-02, -1.30925039e-02, -2.09295861e-02, -6.17158152e-02, -2.50790287e-02, 1.48160178e-02, 4.69255038e-02, 7.94158503e-02, 1.14762239e-01, 1.50830120e-01, 1.60646617e-01, 1.15900345e-01, 1.27760142e-01, 1.37707457e-01, 1.21724844e-01, 1.23251267e-01, 1.20992824e-01, 1.16539478e-01, 9.66029540e-02, 1.53878421e-01, 1.44788727e-01, 1.33814901e-01, -1.58401057e-02, -2.42745224e-02, -2.16092020e-02, -1.88281666e-02, -1.62171777e-02, -1.88737735e-02, -1.54099613e-02, -1.19897928e-02, -9.05660354e-03, -6.36050757e-03, -3.36254714e-03, -8.27864860e-04, 9.44687810e-04, 2.42799311e-03, 2.73650791e-03, 2.38715927e-03, 1.41626282e-03, 1.01477472e-05, -2.82477267e-04, 3.59953352e-04, 2.56298739e-03, -4.30647694e-02, -6.04160465e-02, -8.05710778e-02, -1.03602126e-01, -2.85453290e-01, -3.60871792e-01, -4.48189646e-01, -5.48528194e-01, -6.25397325e-01, -7.43713677e-01, -8.76341105e-01, -1.02448618e+00]> : tensor<512xf32>
  %v32 = tensor.cast %v30 : tensor<512xf32> to tensor<?xf32>
  %v33 = tensor.cast %v31 : tensor<512xf32> to tensor<?xf32>
  %v34 = llvm.mlir.addressof @name_selective_scan_L64 : !llvm.ptr
  call @check(%v34, %v32, %v33) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

llvm.mlir.global internal constant @name_selective_scan_L100("case selective_scan_L100: \00") {addr_space = 0 : i32}
func.func @selective_scan_L100() {
  %c4 = arith.constant 4 : index
  %c20 = arith.constant 20 : index
  %c800 = arith.constant 800 : index
  %c1000 = arith.constant 1000 : index
  %i1 = arith.constant 1 : i64
  %i6 = arith.constant 6 : i64
  %i7 = arith.constant 7 : i64
  %i9 = arith.constant 9 : i64
  %i11 = arith.constant 11 : i64
  %i13 = arith.constant 13 : i64
  %i17 = arith.constant 17 : i64
  %i19 = arith.constant 19 : i64
  %i23 = arith.constant 23 : i64
  %i29 = arith.constant 29 : i64
  %i31 = arith.constant 31 : i64
  %i102 = arith.constant 102 : i64
  %i103 = arith.constant 103 : i64
  %i104 = arith.constant 104 : i64
  %i105 = arith.constant 105 : i64
  %i108 = arith.constant 108 : i64
  %f1 = arith.constant 1.0 : f64
  %f0 = arith.constant 0.0 : f64
  %f1p5 = arith.constant 1.5 : f64
  %fm0p5 = arith.constant -0.5 : f64
  %fm2 = arith.constant -2.0 : f64
  %f0p69999999999999996 = arith.constant 0.7 : f64
  %f2 = arith.constant 2.0 : f64
  %f0p5 = arith.constant 0.5 : f64
  %v1 = call @gen(%c800, %i7, %i103, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v2 = tensor.cast %v1 : tensor<?xf32> to tensor<800xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2]] output_shape [2, 100, 4] : tensor<800xf32> into tensor<2x100x4xf32>
  %v4 = call @gen(%c800, %i11, %i105, %f1p5, %fm0p5) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v5 = tensor.cast %v4 : tensor<?xf32> to tensor<800xf32>
  %v6 = tensor.expand_shape %v5 [[0, 1, 2]] output_shape [2, 100, 4] : tensor<800xf32> into tensor<2x100x4xf32>
  %v7 = call @gen(%c20, %i13, %i1, %f1, %fm2) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v8 = tensor.cast %v7 : tensor<?xf32> to tensor<20xf32>
  %v9 = tensor.expand_shape %v8 [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  %v10 = call @gen(%c1000, %i17, %i102, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v11 = tensor.cast %v10 : tensor<?xf32> to tensor<1000xf32>
  %v12 = tensor.expand_shape %v11 [[0, 1, 2]] output_shape [2, 100, 5] : tensor<1000xf32> into tensor<2x100x5xf32>
  %v13 = call @gen(%c1000, %i19, %i104, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v14 = tensor.cast %v13 : tensor<?xf32> to tensor<1000xf32>
  %v15 = tensor.expand_shape %v14 [[0, 1, 2]] output_shape [2, 100, 5] : tensor<1000xf32> into tensor<2x100x5xf32>
  %v16 = call @gen(%c4, %i23, %i6, %f0p69999999999999996, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v17 = tensor.cast %v16 : tensor<?xf32> to tensor<4xf32>
  %v18 = call @gen(%c800, %i29, %i108, %f2, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v19 = tensor.cast %v18 : tensor<?xf32> to tensor<800xf32>
  %v20 = tensor.expand_shape %v19 [[0, 1, 2]] output_shape [2, 100, 4] : tensor<800xf32> into tensor<2x100x4xf32>
  %v21 = call @gen(%c4, %i31, %i9, %f0p5, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v22 = tensor.cast %v21 : tensor<?xf32> to tensor<4xf32>
  %v23 = seq.selective_scan %v3, %v6, %v9, %v12, %v15 D(%v17 : tensor<4xf32>) z(%v20 : tensor<2x100x4xf32>) delta_bias(%v22 : tensor<4xf32>) {delta_softplus}
      : tensor<2x100x4xf32>, tensor<2x100x4xf32>, tensor<4x5xf32>, tensor<2x100x5xf32>, tensor<2x100x5xf32> -> tensor<2x100x4xf32>
  %v25 = tensor.collapse_shape %v23 [[0, 1, 2]] : tensor<2x100x4xf32> into tensor<800xf32>
  %v26 = arith.constant dense<[-8.80889371e-02, -7.73942098e-02, -6.58848137e-02, -5.37853017e-02, -7.22742900e-02, -5.89343756e-02, -4.56006974e-02, -3.27142142e-02, -6.69578463e-02, -5.17172106e-02, -3.71907316e-02, -2.38974970e-02, -2.88477708e-02, -8.91699456e-03, 9.86931659e-03, 2.70292051e-02, 6.81519806e-02, 9.29449424e-02, 1.15926608e-01, 1.36736751e-01, 1.92745969e-01, 2.14373752e-01, 2.33031392e-01, 2.48584926e-01, 2.52890319e-01, 2.56533921e-01, 2.56055146e-01, 2.51613885e-01, 1.38032973e-01, 1.09379649e-01, 7.62331337e-02, -5.23147779e-03, 2.94164661e-02, 3.70515548e-02, 4.45246585e-02, 5.16229495e-02, -9.44781005e-02, -8.98648277e-02, -8.44878256e-02, -7.83564970e-02, -1.01952419e-01, -9.20572355e-02, -8.10812563e-02, -6.90895543e-02, 1.44800311e-03, 2.55782134e-03, 2.53106304e-03, 1.49326446e-03, -1.75506866e-04, -1.85004156e-03, -4.29035164e-03, -7.17133097e-03, 3.36939073e-03, 1.71319803e-03, -4.90972772e-04, -2.91458680e-03, 2.19104183e-03, -4.24322952e-03, -1.16829099e-02, -1.98629554e-02, -4.14040461e-02, -5.73633201e-02, -7.45814368e-02, -9.28233862e-02, -1.18491307e-01, -1.38555720e-01, 2.08947044e-02, 2.28244364e-02, 1.51318973e-02, 1.45736467e-02, 1.34774884e-02, 1.18313059e-02, -2.01030262e-02, -2.60884520e-02, -3.21257412e-02, -3.78109403e-02, -9.29246321e-02, -9.63324085e-02, -9.52328518e-02, -8.80372971e-02, 1.39053971e-01, 8.72836858e-02, 1.11544477e-02, -4.34993319e-02, -1.11878835e-01, -1.94755331e-01, -2.06206396e-01, -2.87167490e-01, -3.04995894e-01, -3.85290146e-01, -3.60242635e-01, -4.31930155e-01, -3.82300824e-01, -4.32139248e-01, -3.94987077e-01, -4.30120707e-01, -5.08859217e-01, -5.41673839e-01, -5.34732223e-01, -5.54878056e-01, 1.05910450e-01, 1.07723758e-01, 1.10163204e-01, 1.10251077e-01, 1.45989969e-01, 1.45919040e-01, 1.48763850e-01, 1.45611018e-01, 1.63339451e-01, 1.55589893e-01, 1.49172962e-01, 1.35760888e-01, 1.18181117e-01, 9.74477977e-02, 7.54647031e-02, 4.85957339e-02, 1.49671454e-02, -9.75174550e-03, -3.43621634e-02, -5.71339503e-02, -1.87688604e-01, -2.52075523e-01, -3.19461256e-01, -3.90384525e-01, -8.82734418e-01, -1.06118858e+00, -1.25474572e+00, -1.46665382e+00, 1.24941516e+00, 1.36141312e+00, 1.47070742e+00, 1.57524812e+00, 2.19238901e+00, 2.35354090e+00, -3.38555485e-01, -3.50591332e-01, -8.67337137e-02, -7.61353821e-02, -6.47073165e-02, -5.26602305e-02, -1.35732949e-01, -1.24202885e-01, -1.11623950e-01, -9.81933475e-02, -1.87739059e-01, -1.67750105e-01, -1.45298570e-01, -1.20450668e-01, -1.25081688e-01, -8.66452456e-02, -4.46498655e-02, 8.12653627e-04, 5.09461239e-02, 1.03733212e-01, 1.58950180e-01, 2.16372102e-01, 2.21321195e-01, 2.64746457e-01, 3.07168514e-01, 3.48407388e-01, 1.72129691e-01, 1.70398220e-01, 1.63899943e-01, 1.52794629e-01, 1.02991605e+00, 1.10698199e+00, 1.18144131e+00, 1.25296509e+00, 1.61586344e+00, -2.25071982e-01, -2.29258627e-01, -2.32060581e-01, -1.81915104e-01, -1.80053607e-01, -1.76679835e-01, -1.71649620e-01, -1.25274271e-01, -1.17019035e-01, -1.07457802e-01, -9.65955183e-02, -5.85914664e-02, -4.79604527e-02, -3.70286368e-02, -2.59427950e-02, -9.37794335e-03, -2.32009683e-03, 3.74818151e-03, 8.67106766e-03, 1.25087928e-02, 1.44046368e-02, 1.44844046e-02, 1.26142241e-02, 2.30817162e-02, 1.87333394e-02, 1.18138352e-02, 2.15297029e-03, 1.52580645e-02, 1.82876678e-03, -1.49392039e-02, -3.52644771e-02, -3.17030735e-02, -5.60876280e-02, -8.40033740e-02, 1.54583994e-02, 1.20660048e-02, 1.44416327e-02, 1.66085251e-02, 1.84922460e-02, 2.80868337e-02, 2.99968421e-02, 3.13285366e-02, 3.19745615e-02, 4.64465544e-02, 4.64063883e-02, 4.50072028e-02, 4.20339666e-02, 4.34420556e-02, 3.57253812e-02, 2.53317095e-02, 1.19775664e-02, -4.55064047e-03, -2.41697431e-02, -4.71150018e-02, -7.35194609e-02, -8.33215415e-02, -1.07549764e-01, -1.33044496e-01, -1.59498975e-01, -1.84625462e-01, -2.09153831e-01, -2.32446402e-01, -2.53875285e-01, -7.02372909e-01, -7.99949348e-01, -9.04034853e-01, -1.01468849e+00, -1.53881657e+00, 2.32927427e-01, 2.52785772e-01, 2.73060948e-01, 3.02610934e-01, 3.22147429e-01, 3.40611219e-01, 3.57311815e-01, 3.26489329e-01, 3.32544833e-01, 3.34157974e-01, 3.30209345e-01, 8.59491341e-03, -1.36603822e-03, -9.66980122e-03, -1.52624603e-02, 5.45595400e-02, 2.97675505e-02, 3.28623271e-03, -2.43546907e-02, -1.05927281e-01, -1.71266913e-01, -2.42690861e-01, -3.19995999e-01, -4.82841700e-01, -5.91862321e-01, -7.08309889e-01, -5.86465538e-01, -7.04400659e-01, -7.86974490e-01, -8.69277298e-01, -8.24759901e-01, -7.95723557e-01, -8.29354823e-01, -8.55099976e-01, 1.04244316e+00, -1.97697625e-01, -1.97076708e-01, -1.95426762e-01, -1.26846433e-01, -2.61125237e-01, -2.57356077e-01, -2.51618683e-01, -1.62109539e-01, -3.17603916e-01, -3.01858634e-01, -2.81619281e-01, -1.94684356e-01, -2.64421433e-01, -2.20348924e-01, -1.68457165e-01, -9.00838226e-02, -9.05112457e-03, 8.39430094e-03, 2.28196532e-02, 4.06630225e-02, -1.67681910e-02, -3.84729169e-02, -6.95489123e-02, -7.49993697e-02, 1.07857458e-01, 1.00072704e-01, 8.50807801e-02, 8.77266005e-02, 3.51717263e-01, 3.57202232e-01, 3.57086092e-01, 3.63405168e-01, 5.94285846e-01, 6.00488842e-01, -8.07755962e-02, -7.86348060e-02, -8.71890411e-02, -8.32452476e-02, -7.86880404e-02, -7.35787079e-02, -5.60291111e-02, -4.89686616e-02, -4.17333730e-02, -3.44388522e-02, -1.79887586e-03, 3.75395478e-03, 7.97130633e-03, 1.05707087e-02, 3.03959809e-02, 2.31938325e-02, 1.24716107e-02, -1.93845190e-03, 2.97448989e-02, 5.65405153e-02, 8.28716382e-02, 1.07947245e-01, 2.08315298e-01, 2.46545985e-01, 2.81638116e-01, 3.12424570e-01, -1.44986540e-01, -1.64084226e-01, -1.80553794e-01, -1.93124697e-01, -6.34604543e-02, -6.86223358e-02, -7.04114437e-02, -6.78233728e-02, -7.11890915e-03, 1.64732151e-03, 1.97059405e-03, 1.87163742e-03, 6.31004944e-03, 8.10144655e-03, 9.56466887e-03, 1.06346235e-02, 1.89682636e-02, 2.03326140e-02, 2.10154764e-02, 2.09246110e-02, 1.94259156e-02, 1.93688180e-02, 1.63315590e-02, 1.23144742e-02, 6.25727745e-03, 1.79283484e-03, -5.36223454e-03, -1.29600987e-02, -1.48297381e-02, -2.94366833e-02, -3.57968993e-02, -4.03894559e-02, -1.47394184e-02, -3.08152232e-02, -1.99892875e-02, -2.40686117e-03, 1.55597515e-02, 9.78671014e-03, 4.89544906e-02, 1.00288384e-01, -3.98255557e-01, -4.07977909e-01, -4.26436692e-01, 5.87795451e-02, 2.32009124e-02, 1.25656566e-02, 4.18670382e-03, -5.36564505e-03, 2.89278757e-02, 1.83903761e-02, 8.65372736e-03, -1.66600605e-03, 5.63690737e-02, 4.62095067e-02, 3.60975973e-02, 2.59217750e-02, 6.09319210e-02, 4.48162369e-02, 2.79683713e-02, 1.08132483e-02, -1.03394659e-02, -3.98648717e-02, -7.04013184e-02, -1.01355843e-01, -1.62139103e-01, -2.00954378e-01, -2.38853052e-01, -2.75101453e-01, -2.92939723e-01, -3.14714313e-01, -3.30049485e-01, -3.37872118e-01, -1.10188343e-01, -5.05609401e-02, 2.71295849e-02, 1.24655023e-01, 8.18199277e-01, -1.42325550e-01, -1.74480379e-01, -2.09612727e-01, -3.82771492e-01, 2.16407567e-01, 2.42840633e-01, 2.66621858e-01, 3.24898548e-02, -1.63489491e-01, -1.47115916e-01, -1.29653931e-01, 2.26446718e-01, 1.98615208e-01, 1.86899975e-01, 1.63155198e-01, 5.09789884e-02, 3.05043738e-02, 6.18113496e-04, -4.14573736e-02, 3.14817252e-03, -4.81902715e-03, -2.06306968e-02, -4.49678153e-02, 1.66367099e-01, 1.81014970e-01, 1.90380305e-01, 1.94073707e-01, 4.28040087e-01, 4.53159481e-01, 4.73589033e-01, 4.89225596e-01, 5.51498771e-01, 5.58214366e-01, 5.59728384e-01, 5.56230903e-01, -8.46381783e-02, -8.06514472e-02, -7.60581642e-02, -7.08978996e-02, -6.84606358e-02, -6.12546653e-02, -5.36600873e-02, -4.58294079e-02, -2.97343004e-02, -2.11105961e-02, -1.31342430e-02, -6.13718247e-03, -7.51653388e-02, -5.91975488e-02, -4.24348898e-02, -2.50387732e-02, -1.26762502e-02, 1.99135616e-02, 5.44653274e-02, 9.07650366e-02, 7.32883215e-02, 9.21424106e-02, 1.10079020e-01, 1.27047241e-01, 8.30411837e-02, 8.55152085e-02, 8.61723423e-02, 8.52811486e-02, 9.22911391e-02, 8.62427428e-02, 7.86168650e-02, 6.97879493e-02, 1.11149214e-01, 9.89954397e-02, -1.14331553e-02, -9.21734050e-03, -1.25785312e-02, -9.68986843e-03, -6.79295696e-03, -3.95086082e-03, -2.58202571e-03, 4.74469096e-04, 3.23764421e-03, 5.60756261e-03, 7.36196944e-03, 8.46213009e-03, 8.84548295e-03, 8.46102275e-03, 5.21793542e-03, 3.47216800e-03, 1.50496897e-03, -4.06802137e-04, 1.88487803e-03, 6.03133813e-03, 1.34629086e-02, 2.51848586e-02, -1.77505314e-01, -2.38129109e-01, -3.09635967e-01, -3.93112034e-01, -4.89023089e-01, -5.97531259e-01, -7.20700443e-01, -8.59797359e-01, -9.17114437e-01, -1.06789517e+00, -1.23471069e+00, -1.41885960e+00, -2.71375384e-03, -9.83478967e-03, -1.80041250e-02, -2.71417126e-02, 4.11436968e-02, 3.66952978e-02, 3.13239098e-02, 2.51117889e-02, 1.13420881e-01, 1.09409191e-01, 1.03520945e-01, 9.56285372e-02, 1.33575395e-01, 1.17390148e-01, 9.68988836e-02, 7.17388242e-02, 4.47249413e-02, 6.45987829e-03, -3.77027392e-02, -8.80063847e-02, -1.12521656e-01, -1.58087328e-01, -2.06308588e-01, -3.76963437e-01, -3.26616675e-01, -3.81354690e-01, -4.36369717e-01, -7.23384321e-01, -6.36730492e-01, -7.02297330e-01, -7.66672254e-01, -7.36657381e-01, -1.11565435e+00, -1.20725644e+00, -1.29938853e+00, 1.51439771e-01, 2.36163661e-01, 2.45167851e-01, 2.53083944e-01, 2.39948481e-01, 2.83661008e-01, 2.85312384e-01, 2.84005940e-01, -1.96442842e-01, -1.61062270e-01, -1.40168488e-01, -1.18080966e-01, -1.33251220e-01, -1.03185952e-01, -7.41664916e-02, -4.47225794e-02, -1.58838760e-02, 2.19414365e-02, 7.02303573e-02, 1.19767889e-01, 1.59408674e-01, 3.04093748e-01, 3.78958285e-01, 4.55699295e-01, 5.03996730e-01, 6.97283983e-01, 7.87678480e-01, 8.79190505e-01, 9.34653401e-01, 1.02577937e+00, 1.10398138e+00, 1.18149626e+00, 1.22757959e+00, 1.06714678e+00, -1.47758156e-01, -1.47611350e-01, -1.44360706e-01, -1.33494779e-01, -1.29745543e-01, -1.24868564e-01, -1.19708635e-01, -1.78038195e-01, -1.69467121e-01, -1.58892125e-01, -1.46409303e-01, -1.51900262e-01, -1.32519156e-01, -1.10526606e-01, -8.59505981e-02, -5.60236424e-02, -2.75565665e-02, 2.66962242e-03, 3.44356485e-02, 5.22499382e-02, 7.70247877e-02, 1.01214521e-01, 1.24540128e-01, 1.21216320e-01, 1.35367855e-01, 1.47232264e-01, 1.56654984e-01, 3.18066895e-01, 3.39468837e-01, 3.57611895e-01, 3.72214019e-01, 5.20422518e-01, 5.35082698e-01, 5.44625998e-01, 5.48715413e-01, -7.45844543e-02, -7.11424649e-02, -6.68435097e-02, -6.16713800e-02, -4.78543900e-02, -4.13950644e-02, -3.43870185e-02, -2.69738398e-02, -6.08912623e-03, -1.00241695e-03, 1.10589189e-03, 2.65162857e-03, 6.54336018e-03, 1.35382107e-02, 9.93804540e-03, 5.77957463e-03, 1.19312247e-03, -4.44877334e-03, -1.15590589e-02, -1.94594599e-02, -2.99519561e-02, -4.65599932e-02, -6.06955476e-02, -7.59992376e-02, -9.94238034e-02, -1.23830467e-01, -1.45989090e-01, -1.69147506e-01, -1.93546861e-01, -2.17721358e-01, -2.40973249e-01, -2.63561726e-01, -2.45436922e-01, -2.51332790e-01, 3.40625905e-02, 3.29904892e-02, 6.58587590e-02, 6.65494129e-02, 6.69888481e-02, 6.65612221e-02, 1.29654408e-01, 1.31507844e-01, 1.32074460e-01, 1.30524859e-01, 1.67998642e-01, 1.60014734e-01, 1.47574320e-01, 1.29573241e-01, 1.11118503e-01, 7.69937858e-02, 3.42275761e-02, -1.84004083e-02, -1.21271051e-03, 3.89592117e-03, 1.59272943e-02, 3.66025679e-02, -1.07070118e-01, -1.20141208e-01, -1.28377512e-01, -1.30518794e-01, -4.01753724e-01, -4.46607471e-01, -4.89242941e-01, -5.28890133e-01, -8.30522299e-01, -9.02302206e-01, -9.73079801e-01, -1.04248965e+00, 1.60946578e-01, 1.65389612e-01, 1.68885723e-01, 1.71257034e-01, 1.35201767e-01, 1.30055085e-01, 1.23223834e-01, 1.14708349e-01, 1.20200329e-02, -4.03588451e-03, -1.95749030e-02, -3.36218849e-02, -2.93784663e-02, -3.87590304e-02, -1.18642952e-02, -3.22671956e-03, -1.54388934e-01, -8.14796332e-03, 1.43749267e-01, 3.13803613e-01, 5.89614868e-01, 8.36113930e-01, 1.09278893e+00, 1.38361216e+00, 1.85038105e-01, 1.89740181e-01, 1.85986668e-01, 1.74795106e-01, -6.53071702e-01, -8.03504288e-01, -9.70733345e-01, -1.15549123e+00, -3.70460153e-01, -4.82648402e-01, -6.07120395e-01, 9.86613110e-02, -1.73247159e-02, -7.65152602e-03, 2.52098986e-03, 1.30667696e-02, -7.79339597e-02, -6.91702813e-02, -5.99021390e-02, -5.02920970e-02, -9.69608054e-02, -8.42763335e-02, -7.10154995e-02, -5.74027933e-02, -5.85176125e-02, -4.10869159e-02, -2.38147508e-02, -7.01724505e-03, 8.67915899e-03, 2.24766470e-02, 3.41165438e-02, 4.33062837e-02, 2.26205923e-02, 1.63157936e-02, 5.45514841e-03, -9.98587720e-03, 3.40444632e-02, 1.81518905e-02, -2.20162328e-03, -2.68690698e-02, 3.73799533e-01, 3.87550503e-01, 3.97505879e-01, 4.03351039e-01, -9.71102342e-02, 1.77270565e-02, 2.18615327e-02, 2.56281197e-02, 1.05922185e-02, 1.39996875e-02, 1.69423651e-02, 1.92880481e-02, -1.30092876e-03, 1.34882797e-03, 3.47859878e-03, 5.00675710e-03, -4.84258402e-03, -2.41187005e-03, -6.13177486e-04, 5.03102841e-04, -2.95502075e-04, 2.73729267e-04, -1.60633746e-04, -1.61156594e-03, -4.41173138e-03, -8.33334401e-03, -1.33462688e-02, -1.93147045e-02, -2.27396768e-02, -2.80138664e-02, -3.28104049e-02, -3.66634652e-02, -1.51481957e-03, 1.04518738e-02, 2.77455449e-02, 5.13675474e-02, 2.20761269e-01, 2.92939872e-01, 3.80130470e-01, -6.55227304e-02, -1.25054300e-01, -1.47997528e-01, -1.73041433e-01, -1.99880168e-01, -9.64947864e-02, -1.12086073e-01, -1.27648681e-01, -1.42440364e-01, -1.92795321e-01, -2.05657706e-01, -2.13493153e-01, -2.14273468e-01]> : tensor<800xf32>
  %v27 = tensor.cast %v25 : tensor<800xf32> to tensor<?xf32>
  %v28 = tensor.cast %v26 : tensor<800xf32> to tensor<?xf32>
  %v29 = llvm.mlir.addressof @name_selective_scan_L100 : !llvm.ptr
  call @check(%v29, %v27, %v28) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

llvm.mlir.global internal constant @name_selective_scan_plain_L7("case selective_scan_plain_L7: \00") {addr_space = 0 : i32}
func.func @selective_scan_plain_L7() {
  %c20 = arith.constant 20 : index
  %c56 = arith.constant 56 : index
  %c70 = arith.constant 70 : index
  %i1 = arith.constant 1 : i64
  %i7 = arith.constant 7 : i64
  %i9 = arith.constant 9 : i64
  %i10 = arith.constant 10 : i64
  %i11 = arith.constant 11 : i64
  %i12 = arith.constant 12 : i64
  %i13 = arith.constant 13 : i64
  %i17 = arith.constant 17 : i64
  %i19 = arith.constant 19 : i64
  %f1 = arith.constant 1.0 : f64
  %f0 = arith.constant 0.0 : f64
  %f0p5 = arith.constant 0.5 : f64
  %f0p90000000000000002 = arith.constant 0.9 : f64
  %fm2 = arith.constant -2.0 : f64
  %v1 = call @gen(%c56, %i7, %i10, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v2 = tensor.cast %v1 : tensor<?xf32> to tensor<56xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2]] output_shape [2, 7, 4] : tensor<56xf32> into tensor<2x7x4xf32>
  %v4 = call @gen(%c56, %i11, %i12, %f0p5, %f0p90000000000000002) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v5 = tensor.cast %v4 : tensor<?xf32> to tensor<56xf32>
  %v6 = tensor.expand_shape %v5 [[0, 1, 2]] output_shape [2, 7, 4] : tensor<56xf32> into tensor<2x7x4xf32>
  %v7 = call @gen(%c20, %i13, %i1, %f1, %fm2) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v8 = tensor.cast %v7 : tensor<?xf32> to tensor<20xf32>
  %v9 = tensor.expand_shape %v8 [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  %v10 = call @gen(%c70, %i17, %i9, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v11 = tensor.cast %v10 : tensor<?xf32> to tensor<70xf32>
  %v12 = tensor.expand_shape %v11 [[0, 1, 2]] output_shape [2, 7, 5] : tensor<70xf32> into tensor<2x7x5xf32>
  %v13 = call @gen(%c70, %i19, %i11, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v14 = tensor.cast %v13 : tensor<?xf32> to tensor<70xf32>
  %v15 = tensor.expand_shape %v14 [[0, 1, 2]] output_shape [2, 7, 5] : tensor<70xf32> into tensor<2x7x5xf32>
  %v16 = seq.selective_scan %v3, %v6, %v9, %v12, %v15
      : tensor<2x7x4xf32>, tensor<2x7x4xf32>, tensor<4x5xf32>, tensor<2x7x5xf32>, tensor<2x7x5xf32> -> tensor<2x7x4xf32>
  %v18 = tensor.collapse_shape %v16 [[0, 1, 2]] : tensor<2x7x4xf32> into tensor<56xf32>
  %v19 = arith.constant dense<[-1.66863191e+00, -1.68876171e+00, -1.70761108e+00, -1.72518015e+00, -1.46196270e+00, -1.48572946e+00, -1.50999403e+00, -1.53488708e+00, -8.97523224e-01, -9.13734257e-01, -9.30929422e-01, -9.49295461e-01, -4.13318872e-01, -4.20896381e-01, -4.29133594e-01, -4.38163459e-01, -1.08784698e-01, -1.10814400e-01, -1.13068447e-01, -1.15594514e-01, 6.06112881e-03, 6.43290626e-03, 6.86079962e-03, 7.35616218e-03, -5.59372306e-02, -5.48695773e-02, -5.36336713e-02, -5.22007421e-02, -2.61377603e-01, -2.59026617e-01, -2.56484151e-01, -2.53750324e-01, -6.14230633e-01, -6.09528542e-01, -6.04629457e-01, -5.99559188e-01, -1.04865766e+00, -1.03783941e+00, -1.02680123e+00, -1.01561642e+00, 3.74905676e-01, 3.69852275e-01, 3.64758432e-01, 3.59661430e-01, 8.67133856e-01, 8.52465391e-01, 8.37763071e-01, 8.23123038e-01, -7.31216490e-01, -7.01252282e-01, -6.70091927e-01, -6.37682021e-01, -3.94808918e-01, -3.79612476e-01, -3.64021093e-01, -3.48019421e-01]> : tensor<56xf32>
  %v20 = tensor.cast %v18 : tensor<56xf32> to tensor<?xf32>
  %v21 = tensor.cast %v19 : tensor<56xf32> to tensor<?xf32>
  %v22 = llvm.mlir.addressof @name_selective_scan_plain_L7 : !llvm.ptr
  call @check(%v22, %v20, %v21) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

llvm.mlir.global internal constant @name_selective_scan_no_z_L64("case selective_scan_no_z_L64: \00") {addr_space = 0 : i32}
func.func @selective_scan_no_z_L64() {
  %c3 = arith.constant 3 : index
  %c48 = arith.constant 48 : index
  %c384 = arith.constant 384 : index
  %c2048 = arith.constant 2048 : index
  %i1 = arith.constant 1 : i64
  %i6 = arith.constant 6 : i64
  %i7 = arith.constant 7 : i64
  %i9 = arith.constant 9 : i64
  %i11 = arith.constant 11 : i64
  %i13 = arith.constant 13 : i64
  %i17 = arith.constant 17 : i64
  %i19 = arith.constant 19 : i64
  %i23 = arith.constant 23 : i64
  %i31 = arith.constant 31 : i64
  %i66 = arith.constant 66 : i64
  %i67 = arith.constant 67 : i64
  %i68 = arith.constant 68 : i64
  %i69 = arith.constant 69 : i64
  %f1 = arith.constant 1.0 : f64
  %f0 = arith.constant 0.0 : f64
  %f1p5 = arith.constant 1.5 : f64
  %fm0p5 = arith.constant -0.5 : f64
  %fm2 = arith.constant -2.0 : f64
  %f0p69999999999999996 = arith.constant 0.7 : f64
  %f0p5 = arith.constant 0.5 : f64
  %v1 = call @gen(%c384, %i7, %i67, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v2 = tensor.cast %v1 : tensor<?xf32> to tensor<384xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2]] output_shape [2, 64, 3] : tensor<384xf32> into tensor<2x64x3xf32>
  %v4 = tensor.cast %v3 : tensor<2x64x3xf32> to tensor<2x?x3xf32>
  %v5 = call @gen(%c384, %i11, %i69, %f1p5, %fm0p5) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v6 = tensor.cast %v5 : tensor<?xf32> to tensor<384xf32>
  %v7 = tensor.expand_shape %v6 [[0, 1, 2]] output_shape [2, 64, 3] : tensor<384xf32> into tensor<2x64x3xf32>
  %v8 = tensor.cast %v7 : tensor<2x64x3xf32> to tensor<2x?x3xf32>
  %v9 = call @gen(%c48, %i13, %i1, %f1, %fm2) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v10 = tensor.cast %v9 : tensor<?xf32> to tensor<48xf32>
  %v11 = tensor.expand_shape %v10 [[0, 1]] output_shape [3, 16] : tensor<48xf32> into tensor<3x16xf32>
  %v12 = call @gen(%c2048, %i17, %i66, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v13 = tensor.cast %v12 : tensor<?xf32> to tensor<2048xf32>
  %v14 = tensor.expand_shape %v13 [[0, 1, 2]] output_shape [2, 64, 16] : tensor<2048xf32> into tensor<2x64x16xf32>
  %v15 = tensor.cast %v14 : tensor<2x64x16xf32> to tensor<2x?x16xf32>
  %v16 = call @gen(%c2048, %i19, %i68, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v17 = tensor.cast %v16 : tensor<?xf32> to tensor<2048xf32>
  %v18 = tensor.expand_shape %v17 [[0, 1, 2]] output_shape [2, 64, 16] : tensor<2048xf32> into tensor<2x64x16xf32>
  %v19 = tensor.cast %v18 : tensor<2x64x16xf32> to tensor<2x?x16xf32>
  %v20 = call @gen(%c3, %i23, %i6, %f0p69999999999999996, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v21 = tensor.cast %v20 : tensor<?xf32> to tensor<3xf32>
  %v22 = call @gen(%c3, %i31, %i9, %f0p5, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v23 = tensor.cast %v22 : tensor<?xf32> to tensor<3xf32>
  %v24 = seq.selective_scan %v4, %v8, %v11, %v15, %v19 D(%v21 : tensor<3xf32>) delta_bias(%v23 : tensor<3xf32>) {delta_softplus}
      : tensor<2x?x3xf32>, tensor<2x?x3xf32>, tensor<3x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32> -> tensor<2x?x3xf32>
  %v25 = tensor.cast %v24 : tensor<2x?x3xf32> to tensor<2x64x3xf32>
  %v26 = tensor.collapse_shape %v25 [[0, 1, 2]] : tensor<2x64x3xf32> into tensor<384xf32>
  %v27 = arith.constant dense<[8.62636566e-02, 2.56123636e-02, -3.49460021e-02, 5.27002335e-01, 4.89134640e-01, 4.52070445e-01, 3.25110137e-01, 2.99358428e-01, 2.80362427e-01, 5.35939097e-01, 4.93892670e-01, 4.47927594e-01, 4.27731484e-01, 3.93035203e-01, 3.58149141e-01, 5.58524251e-01, 5.48090398e-01, 5.44752717e-01, 7.24928260e-01, 6.89944148e-01, 6.48790896e-01, 3.14945400e-01, 2.87542552e-01, 2.60353237e-01, 5.24008036e-01, 5.03824830e-01, 4.85463202e-01, 6.01388812e-01, 6.01072252e-01, 6.08160675e-01, 8.22966695e-01, 8.06379497e-01, 7.86686182e-01, 3.48312587e-01, 3.24671030e-01, 3.00883949e-01, 4.56652611e-01, 4.39638674e-01, 4.22128201e-01, 5.59567153e-01, 5.29190302e-01, 4.94910955e-01, 3.54345590e-01, 3.33796114e-01, 3.12666386e-01, 5.07375419e-01, 4.87670511e-01, 4.66040373e-01, 1.75641507e-01, 1.45047829e-01, 1.12002887e-01, 2.11283192e-01, 1.90096110e-01, 1.68518156e-01, 1.96869195e-01, 1.58965200e-01, 1.19088627e-01, 9.98371392e-02, 8.01004618e-02, 6.09693304e-02, 1.67325139e-02, -3.82215949e-03, -2.36347821e-02, -1.70802604e-02, -2.45157387e-02, -2.98389606e-02, -1.97907418e-01, -2.30567291e-01, -2.51955211e-01, 3.00373398e-02, 5.42560630e-02, 8.83022025e-02, -9.37522738e-04, 9.98756289e-03, 2.32478343e-02, -5.07975221e-01, -5.34337342e-01, -5.46341538e-01, 6.36272132e-01, 7.22546816e-01, 8.14958751e-01, -1.17708765e-01, -1.06862955e-01, -9.21954364e-02, 1.55848336e+00, 1.96045831e-01, 2.16689736e-01, -1.14931965e+00, -4.87435222e-01, -5.12146711e-01, -6.41780436e-01, -1.95635453e-01, -1.74520954e-01, 2.62663960e-01, -1.39483377e-01, -1.15625203e-01, -1.15543290e-03, -8.32965001e-02, -8.55453014e-02, -4.78372455e-01, -1.95362389e-01, -1.75982773e-01, -3.16582799e-01, -3.83385807e-01, -3.68912488e-01, -6.17237315e-02, -1.67828828e-01, -1.42732486e-01, -8.33359838e-01, -7.46858656e-01, -7.64690518e-01, -5.10922849e-01, -5.06507337e-01, -4.99151140e-01, -5.22598207e-01, -5.66419303e-01, -5.75622916e-01, -1.48375261e+00, -1.51819360e+00, -1.57082891e+00, -4.93798345e-01, -4.75553900e-01, -4.60914046e-01, -1.05525661e+00, -1.07643545e+00, -1.09276199e+00, -1.25032628e+00, -1.27914345e+00, -1.31211162e+00, -1.69054759e+00, -1.73914146e+00, -1.78806973e+00, -1.30368865e+00, 1.44011569e+00, 1.44651771e+00, 1.12223113e+00, 2.41223931e+00, 2.69520187e+00, 2.04137969e+00, 1.53311980e+00, 1.39234626e+00, 1.25605166e+00, 1.23505414e+00, 1.19311464e+00, 2.40362120e+00, 2.48545051e+00, 2.53171444e+00, 5.02108216e-01, 3.87395382e-01, 2.58000106e-01, 6.92023754e-01, 6.56789541e-01, 6.20433748e-01, 2.13797593e+00, 2.04918885e+00, 1.91903234e+00, -3.34429890e-02, -1.47631288e-01, -2.79843777e-01, 6.95241928e-01, 6.46546483e-01, 5.86421669e-01, 2.86721531e-02, -3.49034667e-02, -1.06862836e-01, 1.21114886e+00, 1.12798166e+00, 1.01450253e+00, -1.61896184e-01, -2.38481879e-01, -3.30258757e-01, -4.65535223e-01, -4.98132139e-01, -5.25999784e-01, -3.13973933e-01, -5.33924043e-01, -5.56994081e-01, 5.42488337e-01, 1.26741147e+00, 1.29078221e+00, 6.83586419e-01, 9.35648531e-02, 6.06762096e-02, 5.11453152e-01, -8.68549347e-01, -9.86656189e-01, -2.75756240e-01, 5.66589415e-01, 6.43846512e-01, 2.66543150e-01, 1.67308792e-01, 1.63046628e-01, 5.57217151e-02, 4.26020920e-02, 3.08375731e-02, 9.90298539e-02, 8.78347903e-02, 7.77915642e-02, 5.86884096e-02, 5.25343679e-02, 4.79752161e-02, 3.54797989e-02, 2.26535965e-02, 1.00242235e-02, -1.17784142e-02, -2.48084571e-02, -3.82324718e-02, -4.18086797e-02, -5.80597669e-02, -7.42679462e-02, -7.26521164e-02, -8.42749923e-02, -9.59320441e-02, -9.19141695e-02, -1.04229420e-01, -1.18860930e-01, -4.27226782e-01, -4.73439187e-01, -5.20702302e-01, -1.52475610e-01, -1.55611500e-01, -1.57750845e-01, -3.91458958e-01, -4.20933872e-01, -4.51493144e-01, -4.59247410e-01, -4.75732625e-01, -4.87705052e-01, -5.97492218e-01, -6.30905688e-01, -6.64796293e-01, -7.26028025e-01, -7.56929278e-01, -7.84656048e-01, -6.42438829e-01, -6.65741503e-01, -6.87259614e-01, -8.78564954e-01, -9.03305948e-01, -9.20615971e-01, -8.46195757e-01, -8.58226597e-01, -8.62005532e-01, -1.51262093e+00, -1.57136548e+00, -1.62219501e+00, -4.69486624e-01, -4.19777423e-01, -3.47889632e-01, -4.49384488e-02, -3.46552348e-04, 4.84253354e-02, -3.37425590e+00, -3.43752742e+00, -3.43929362e+00, 1.20652044e+00, 1.45137680e+00, 1.76085186e+00, -6.11576021e-01, -5.84317207e-01, -5.44204772e-01, 5.58169186e-01, 6.92325592e-01, 8.57580721e-01, -5.60244799e-01, -5.22925675e-01, 2.87627280e-01, 1.40849650e+00, 1.54975855e+00, -2.09384751e+00, -1.60203981e+00, -1.69110763e+00, -1.68562010e-01, -1.08852398e+00, -1.08932567e+00, 2.51345849e+00, 1.31728184e+00, 1.41795957e+00, -1.12663865e+00, 3.68263155e-01, 2.77389050e-01, 3.29582781e-01, -7.60769904e-01, -9.81618345e-01, 5.70535481e-01, 6.31517768e-01, 7.14213967e-01, -5.32906711e-01, 4.48410213e-01, 4.02030081e-01, 1.92695692e-01, 1.43235892e-01, 3.59593071e-02, 3.15612316e-01, 1.05043387e+00, 1.07815492e+00, 8.88293684e-01, 3.21815372e-01, 2.97477305e-01, 1.79231852e-01, 6.03959978e-01, 5.71902871e-01, 5.93686163e-01, 8.16218436e-01, 8.18669796e-01, 8.63673568e-01, 7.45792687e-01, 7.36519217e-01, 7.03347027e-01, 6.27686203e-01, 6.11175954e-01, 5.98167717e-01, 5.29555261e-01, 5.10514736e-01, 5.04032016e-01, 1.13995099e+00, 1.12700784e+00, 1.10747695e+00, 3.27063233e-01, 2.96919703e-01, 2.65198767e-01, 7.58385181e-01, 7.54086971e-01, 7.48099208e-01, 4.82429862e-01, 4.30151522e-01, 3.65276694e-01, 4.49929893e-01, 4.27803308e-01, 4.03540879e-01, 6.30420089e-01, 5.94343781e-01, 5.52166581e-01, 2.34444126e-01, 2.11498991e-01, 1.89005032e-01, 2.42093801e-01, 2.15048835e-01, 1.85882509e-01, 1.93514407e-01, 1.58907771e-01, 1.22303329e-01, 6.82143047e-02, 3.13394032e-02, -6.38216361e-03, 7.58779561e-03, -7.70822819e-03, -2.10327506e-02, 2.28150040e-02, 4.36114036e-02, 6.86306134e-02, -3.67352068e-01, -4.55979019e-01, -5.43360889e-01, 2.15259731e-01, 2.73605108e-01, 3.46323758e-01, -6.13845177e-02, -5.79676330e-02, -5.27370311e-02, -1.82926700e-01, -2.11229086e-01, -2.50329494e-01, -4.24550809e-02, -1.41206784e-02, 2.78624855e-02, -1.24676265e-01, -1.10199340e-01, -8.99522007e-02, -1.27262697e-01, -1.27404898e-01, -1.33336052e-01, 1.95925117e-01, 2.34649777e-01, 2.73875415e-01, -1.74221680e-01, -1.57215938e-01, -1.34534881e-01, -3.08494687e-01, -3.09954256e-01, -3.14436466e-01, -2.89506108e-01, -2.83613324e-01, -2.79767603e-01]> : tensor<384xf32>
  %v28 = tensor.cast %v26 : tensor<384xf32> to tensor<?xf32>
  %v29 = tensor.cast %v27 : tensor<384xf32> to tensor<?xf32>
  %v30 = llvm.mlir.addressof @name_selective_scan_no_z_L64 : !llvm.ptr
  call @check(%v30, %v28, %v29) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

llvm.mlir.global internal constant @name_selective_scan_unit_dims_L7("case selective_scan_unit_dims_L7: \00") {addr_space = 0 : i32}
func.func @selective_scan_unit_dims_L7() {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %i1 = arith.constant 1 : i64
  %i6 = arith.constant 6 : i64
  %i7 = arith.constant 7 : i64
  %i9 = arith.constant 9 : i64
  %i10 = arith.constant 10 : i64
  %i11 = arith.constant 11 : i64
  %i12 = arith.constant 12 : i64
  %i13 = arith.constant 13 : i64
  %i15 = arith.constant 15 : i64
  %i17 = arith.constant 17 : i64
  %i19 = arith.constant 19 : i64
  %i23 = arith.constant 23 : i64
  %i29 = arith.constant 29 : i64
  %i31 = arith.constant 31 : i64
  %f1 = arith.constant 1.0 : f64
  %f0 = arith.constant 0.0 : f64
  %f1p5 = arith.constant 1.5 : f64
  %fm0p5 = arith.constant -0.5 : f64
  %fm2 = arith.constant -2.0 : f64
  %f0p69999999999999996 = arith.constant 0.7 : f64
  %f2 = arith.constant 2.0 : f64
  %f0p5 = arith.constant 0.5 : f64
  %v1 = call @gen(%c7, %i7, %i10, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v2 = tensor.cast %v1 : tensor<?xf32> to tensor<7xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2]] output_shape [1, 7, 1] : tensor<7xf32> into tensor<1x7x1xf32>
  %v4 = tensor.cast %v3 : tensor<1x7x1xf32> to tensor<?x?x1xf32>
  %v5 = call @gen(%c7, %i11, %i12, %f1p5, %fm0p5) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v6 = tensor.cast %v5 : tensor<?xf32> to tensor<7xf32>
  %v7 = tensor.expand_shape %v6 [[0, 1, 2]] output_shape [1, 7, 1] : tensor<7xf32> into tensor<1x7x1xf32>
  %v8 = tensor.cast %v7 : tensor<1x7x1xf32> to tensor<?x?x1xf32>
  %v9 = call @gen(%c1, %i13, %i1, %f1, %fm2) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v10 = tensor.cast %v9 : tensor<?xf32> to tensor<1xf32>
  %v11 = tensor.expand_shape %v10 [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
  %v12 = call @gen(%c7, %i17, %i9, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v13 = tensor.cast %v12 : tensor<?xf32> to tensor<7xf32>
  %v14 = tensor.expand_shape %v13 [[0, 1, 2]] output_shape [1, 7, 1] : tensor<7xf32> into tensor<1x7x1xf32>
  %v15 = tensor.cast %v14 : tensor<1x7x1xf32> to tensor<?x?x1xf32>
  %v16 = call @gen(%c7, %i19, %i11, %f1, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v17 = tensor.cast %v16 : tensor<?xf32> to tensor<7xf32>
  %v18 = tensor.expand_shape %v17 [[0, 1, 2]] output_shape [1, 7, 1] : tensor<7xf32> into tensor<1x7x1xf32>
  %v19 = tensor.cast %v18 : tensor<1x7x1xf32> to tensor<?x?x1xf32>
  %v20 = call @gen(%c1, %i23, %i6, %f0p69999999999999996, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v21 = tensor.cast %v20 : tensor<?xf32> to tensor<1xf32>
  %v22 = call @gen(%c7, %i29, %i15, %f2, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v23 = tensor.cast %v22 : tensor<?xf32> to tensor<7xf32>
  %v24 = tensor.expand_shape %v23 [[0, 1, 2]] output_shape [1, 7, 1] : tensor<7xf32> into tensor<1x7x1xf32>
  %v25 = tensor.cast %v24 : tensor<1x7x1xf32> to tensor<?x?x1xf32>
  %v26 = call @gen(%c1, %i31, %i9, %f0p5, %f0) : (index, i64, i64, f64, f64) -> tensor<?xf32>
  %v27 = tensor.cast %v26 : tensor<?xf32> to tensor<1xf32>
  %v28 = seq.selective_scan %v4, %v8, %v11, %v15, %v19 D(%v21 : tensor<1xf32>) z(%v25 : tensor<?x?x1xf32>) delta_bias(%v27 : tensor<1xf32>) {delta_softplus}
      : tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<1x1xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32> -> tensor<?x?x1xf32>
  %v29 = tensor.cast %v28 : tensor<?x?x1xf32> to tensor<1x7x1xf32>
  %v30 = tensor.collapse_shape %v29 [[0, 1, 2]] : tensor<1x7x1xf32> into tensor<7xf32>
  %v31 = arith.constant dense<[-1.46306306e-01, -1.36147037e-01, -1.29191443e-01, -1.24757409e-01, -1.22152187e-01, -1.20685406e-01, -1.19681261e-01]> : tensor<7xf32>
  %v32 = tensor.cast %v30 : tensor<7xf32> to tensor<?xf32>
  %v33 = tensor.cast %v31 : tensor<7xf32> to tensor<?xf32>
  %v34 = llvm.mlir.addressof @name_selective_scan_unit_dims_L7 : !llvm.ptr
  call @check(%v34, %v32, %v33) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

