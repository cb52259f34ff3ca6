// RUN: seq-opt %s --seq-lower-to-llvm -split-input-file | FileCheck %s

// The ABI entry points of docs/abi.md, built from the frontend's attributes:
// the manifest as a constant NUL-terminated global (the text that
// `seqc --emit=manifest` prints: keys sorted, indented), and seqc_invoke, which
// forwards args[k] to the k-th parameter of the C interface.

// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.entry = @forward
// CHECK:       llvm.mlir.global external constant @seqc_manifest("{\0A  \22abi\22: 2,\0A  \22hyper\22: {\0A    \22dim\22: 4,\0A    \22eps\22: 1.0000000000000001e-05,\0A    \22tied\22: true\0A  },\0A  \22inputs\22: [\0A    {\0A      \22dtype\22: \22f32\22,\0A      \22name\22: \22x\22,\0A      \22shape\22: [\0A        \22n\22,\0A        4\0A      ]\0A    },\0A    {\0A      \22dtype\22: \22i32\22,\0A      \22name\22: \22tokens\22,\0A      \22range\22: [\0A        0,\0A        \22n\22\0A      ],\0A      \22shape\22: [\0A        \22n\22\0A      ]\0A    }\0A  ],\0A  \22model\22: \22tiny\22,\0A  \22outputs\22: [\0A    {\0A      \22dtype\22: \22f32\22,\0A      \22name\22: \22y\22,\0A      \22shape\22: [\0A        \22n\22,\0A        4\0A      ]\0A    }\0A  ],\0A  \22params\22: [\0A    {\0A      \22dtype\22: \22f32\22,\0A      \22name\22: \22w\22,\0A      \22shape\22: [\0A        4,\0A        4\0A      ]\0A    }\0A  ]\0A}\00")
// The frontend's argument and result attributes are consumed.
// CHECK-NOT:   seq.input
// CHECK-LABEL: llvm.func internal @forward(
// CHECK-LABEL: llvm.func internal @_mlir_ciface_forward(
// CHECK-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-LABEL: llvm.func @seqc_invoke(
// CHECK-SAME:    %[[ARGS:.*]]: !llvm.ptr) {
// CHECK:         %[[S0:.*]] = llvm.getelementptr inbounds %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr inbounds %[[ARGS]][1]
// CHECK:         %[[P1:.*]] = llvm.load %[[S1]]
// CHECK:         %[[S2:.*]] = llvm.getelementptr inbounds %[[ARGS]][2]
// CHECK:         %[[P2:.*]] = llvm.load %[[S2]]
// CHECK:         %[[S3:.*]] = llvm.getelementptr inbounds %[[ARGS]][3]
// CHECK:         %[[P3:.*]] = llvm.load %[[S3]]
// CHECK:         llvm.call @_mlir_ciface_forward(%[[P0]], %[[P1]], %[[P2]], %[[P3]])
// CHECK-NEXT:    llvm.return
module attributes {seq.model = "tiny",
                   seq.hyper = {dim = 4 : i64, eps = 1.0e-05 : f64, tied = true}} {
  func.func @forward(
      %x: tensor<?x4xf32> {seq.input = "x", seq.dims = ["n", 4]},
      %tokens: tensor<?xi32> {seq.input = "tokens", seq.dims = ["n"],
                              seq.range = [0, "n"]},
      %w: tensor<4x4xf32> {seq.param = "w"})
      -> (tensor<?x4xf32> {seq.output = "y", seq.dims = ["n", 4]}) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %empty = tensor.empty(%n) : tensor<?x4xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x4xf32>)
        -> tensor<?x4xf32>
    %y = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x4xf32>)
                       outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
    return %y : tensor<?x4xf32>
  }
}

// -----

// An output that is an input: ownership-based deallocation hands the caller
// a fresh copy (docs/abi.md lets the caller free every output it did not
// pass in), and the buffer the model computed into is never freed.
// CHECK-LABEL: llvm.func internal @forward(
// CHECK:         %[[COPY:.*]] = llvm.call @malloc
// CHECK:         "llvm.intr.memcpy"
// CHECK-NOT:     llvm.call @free
// CHECK:         llvm.return
module attributes {seq.model = "identity"} {
  func.func @forward(%x: tensor<8xf32> {seq.input = "x"})
      -> (tensor<8xf32> {seq.output = "y"}) {
    return %x : tensor<8xf32>
  }
}

// -----

// The intermediate buffer lives in the arena (seq-plan-memory): @forward
// allocates only its result and frees nothing. The arena is the caller's
// record {base, capacity} in args[1 + inputs + parameters + 1], after the
// prepared block's slot (ABI version 2): seqc_invoke grows it to what
// @__seqc_arena_bytes asks for and passes it as the last descriptor; a null
// record makes the call use one of its own, freed before it returns. With
// no prepared value, seqc_prepare returns null and seqc_release does
// nothing.
// CHECK-LABEL: llvm.func internal @forward(
// CHECK-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-COUNT-1: llvm.call @malloc
// CHECK-NOT:     llvm.call @free
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @seqc_prepare(
// CHECK-NEXT:    %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    llvm.return %[[NULL]]
// CHECK-LABEL: llvm.func @seqc_release(
// CHECK-NEXT:    llvm.return
// CHECK-LABEL: llvm.func @seqc_invoke(
// CHECK-SAME:    %[[ARGS:.*]]: !llvm.ptr) {
// CHECK:         %[[DESC:.*]] = llvm.alloca %{{.*}} x !llvm.array<5 x i64>
// CHECK:         %[[LOCAL:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x i64>
// CHECK:         %[[SLOT:.*]] = llvm.getelementptr inbounds %[[ARGS]][3]
// CHECK:         %[[GIVEN:.*]] = llvm.load %[[SLOT]]
// CHECK:         %[[NONE:.*]] = llvm.icmp "eq" %[[GIVEN]]
// CHECK:         %[[RECORD:.*]] = llvm.select %[[NONE]], %[[LOCAL]], %[[GIVEN]]
// CHECK:         %[[NEED:.*]] = llvm.call @_mlir_ciface___seqc_arena_bytes(%{{.*}}) : (!llvm.ptr) -> i64
// CHECK:         %[[CAPSLOT:.*]] = llvm.getelementptr inbounds %[[RECORD]][8]
// CHECK:         %[[CAP:.*]] = llvm.load %[[CAPSLOT]] : !llvm.ptr -> i64
// CHECK:         %[[GROW:.*]] = llvm.icmp "ugt" %[[NEED]], %[[CAP]] : i64
// CHECK:         llvm.cond_br %[[GROW]]
// CHECK:         llvm.call @aligned_alloc(
// CHECK:         llvm.call @_mlir_ciface_forward(%{{.*}}, %{{.*}}, %[[DESC]])
// CHECK:         llvm.cond_br %[[NONE]], ^[[OWN:.*]], ^
// CHECK:       ^[[OWN]]:
// CHECK:         llvm.call @free(
module attributes {seq.model = "two_steps"} {
  func.func @forward(%x: tensor<8x8xf32> {seq.input = "x"})
      -> (tensor<8x8xf32> {seq.output = "y"}) {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<8x8xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>)
        -> tensor<8x8xf32>
    %xx = linalg.matmul ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>)
                        outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
    %empty2 = tensor.empty() : tensor<8x8xf32>
    %init2 = linalg.fill ins(%zero : f32) outs(%empty2 : tensor<8x8xf32>)
        -> tensor<8x8xf32>
    %y = linalg.matmul ins(%xx, %x : tensor<8x8xf32>, tensor<8x8xf32>)
                       outs(%init2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

// In a GPU module (gpu.container_module) the kernels read the arena, so it
// comes from the runtime's allocator (seqc_alloc_arena), which serves GPU
// models managed memory (docs/abi.md), and goes back to it.
// CHECK-LABEL: llvm.func @seqc_invoke(
// CHECK:         llvm.cond_br
// CHECK:         llvm.call @_mlir_memref_to_llvm_free(
// CHECK-NOT:     llvm.call @aligned_alloc(
// CHECK:         llvm.call @seqc_alloc_arena(
// CHECK-NOT:     llvm.call @aligned_alloc(
// CHECK:         llvm.call @_mlir_ciface_forward(
// CHECK:         llvm.call @_mlir_memref_to_llvm_free(
module attributes {gpu.container_module, seq.model = "gpu_steps"} {
  func.func @forward(%x: tensor<8x8xf32> {seq.input = "x"})
      -> (tensor<8x8xf32> {seq.output = "y"}) {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<8x8xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>)
        -> tensor<8x8xf32>
    %xx = linalg.matmul ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>)
                        outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
    %empty2 = tensor.empty() : tensor<8x8xf32>
    %init2 = linalg.fill ins(%zero : f32) outs(%empty2 : tensor<8x8xf32>)
        -> tensor<8x8xf32>
    %y = linalg.matmul ins(%xx, %x : tensor<8x8xf32>, tensor<8x8xf32>)
                       outs(%init2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

// A model with a prepared value (its weight packed in column panels at -O2,
// computed by seq-hoist-preparation's @__seqc_prepare): seqc_prepare
// returns the prepared block, malloc'ed: the address of its description
// (@__seqc_prepared_table: the count, the descriptors' offsets, their ranks
// and their keys), then the descriptors. seqc_release frees them (and
// never a constant global, marked 0xdeadbeef) and the block, and
// seqc_invoke passes the descriptors of the block in args[1 + inputs +
// parameters] after the parameters, preparing for the call alone when the
// block is null.
// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.prepared_keys = array<i64: [[KEY:-?[0-9]+]]>
// CHECK-SAME:    seqc.prepared_ranks = array<i64: 3>
// CHECK:       llvm.mlir.global internal constant @__seqc_prepared_table(dense<[1, 8, 3, [[KEY]]]> : tensor<4xi64>)
// CHECK-LABEL: llvm.func @seqc_prepare(
// CHECK-SAME:    %[[PARAMS:.*]]: !llvm.ptr) -> !llvm.ptr {
// CHECK:         %[[BYTES:.*]] = llvm.mlir.constant(80 : i64)
// CHECK:         %[[STATE:.*]] = llvm.call @malloc(%[[BYTES]])
// CHECK:         %[[TABLE:.*]] = llvm.mlir.addressof @__seqc_prepared_table
// CHECK:         llvm.store %[[TABLE]], %[[STATE]]
// CHECK:         %[[AREA:.*]] = llvm.getelementptr inbounds %[[STATE]][8]
// CHECK:         %[[S0:.*]] = llvm.getelementptr inbounds %[[PARAMS]][0]
// CHECK:         %[[W:.*]] = llvm.load %[[S0]]
// CHECK:         llvm.call @_mlir_ciface___seqc_prepare(%[[AREA]], %[[W]])
// CHECK:         llvm.return %[[STATE]]
// CHECK-LABEL: llvm.func @seqc_release(
// CHECK:         llvm.mlir.constant(3735928559 : i64)
// CHECK:         llvm.call @free
// CHECK:         llvm.call @free
// CHECK-LABEL: llvm.func @seqc_invoke(
// CHECK-SAME:    %[[ARGS:.*]]: !llvm.ptr) {
// CHECK:         %[[S3:.*]] = llvm.getelementptr inbounds %[[ARGS]][3]
// CHECK:         %[[GIVEN:.*]] = llvm.load %[[S3]]
// CHECK:         %[[NONE:.*]] = llvm.icmp "eq" %[[GIVEN]]
// CHECK:         llvm.cond_br %[[NONE]], ^[[PREP:.*]], ^[[CALL:.*]](%[[GIVEN]] : !llvm.ptr)
// CHECK:       ^[[PREP]]:
// CHECK:         %[[AT:.*]] = llvm.getelementptr inbounds %[[ARGS]][2]
// CHECK:         %[[FRESH:.*]] = llvm.call @seqc_prepare(%[[AT]])
// CHECK:       ^[[CALL]](%[[STATE2:.*]]: !llvm.ptr):
// CHECK:         %[[D0:.*]] = llvm.getelementptr inbounds %[[STATE2]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK:         llvm.call @_mlir_ciface_forward(%{{.*}}, %{{.*}}, %{{.*}}, %[[D0]])
// CHECK:         llvm.call @seqc_release(%[[STATE2]])
module attributes {seq.model = "packed"} {
  func.func @forward(
      %x: tensor<?x4xf32> {seq.input = "x", seq.dims = ["n", 4]},
      %w: tensor<4x16xf32> {seq.param = "w"})
      -> (tensor<?x16xf32> {seq.output = "y", seq.dims = ["n", 16]}) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %empty = tensor.empty(%n) : tensor<?x16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x16xf32>)
        -> tensor<?x16xf32>
    %y = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x16xf32>)
                       outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}
