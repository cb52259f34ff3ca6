// RUN: seq-opt %s --seq-emit-invoke -split-input-file | FileCheck %s

// seqc_prepare tells the runtime, after the call that reads a parameter
// only the preparation reads (seqc.prepared_only_params) for the last
// time, that it reads it no more: seqc_prepare_done_reading(indices,
// count), over a constant table of the indices (a row per call of a group's
// function, at the call's row of its parameters' table), -1 where a call's
// operand is not such a last read. The runtime then gives the parameter's memory
// back at once (docs/runtime.md, "Memory of the parameters").

// Parameter 0 is read by @__seqc_prepare and by the first call of
// @__seqc_prepare_0 (its last read); parameter 1 by the second call of
// @__seqc_prepare_0 and by @__seqc_prepare_1 (its last read); parameter 2,
// which the model function reads too, is not named.

// CHECK-LABEL: module attributes
// CHECK-DAG:   llvm.mlir.global internal constant @__seqc_prepare_last_reads_1(dense<[1, -1]> : tensor<2xi64>)
// CHECK-DAG:   llvm.mlir.global internal constant @__seqc_prepare_last_reads_0(dense<[0, -1]> : tensor<2xi64>)
// CHECK-DAG:   llvm.func @seqc_prepare_done_reading(!llvm.ptr, i64)
// CHECK-NOT:   @__seqc_prepare_last_reads(
// CHECK-LABEL: llvm.func @seqc_prepare(
// CHECK:         llvm.call @_mlir_ciface___seqc_prepare(
// CHECK-NOT:     llvm.call @seqc_prepare_done_reading
// CHECK:         llvm.call @_mlir_ciface___seqc_prepare_0(
// CHECK-NEXT:    %[[TABLE0:.*]] = llvm.mlir.addressof @__seqc_prepare_last_reads_0
// CHECK-NEXT:    %[[AT0:.*]] = llvm.getelementptr inbounds %[[TABLE0]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:    llvm.call @seqc_prepare_done_reading(%[[AT0]], %[[ONE]])
// CHECK:         llvm.call @_mlir_ciface___seqc_prepare_1(
// CHECK-NEXT:    %[[TABLE1:.*]] = llvm.mlir.addressof @__seqc_prepare_last_reads_1
// CHECK-NEXT:    %[[AT1:.*]] = llvm.getelementptr inbounds %[[TABLE1]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT:    llvm.call @seqc_prepare_done_reading(%[[AT1]], %[[TWO]])
// CHECK:         llvm.return
module attributes {seqc.entry = @forward, seqc.num_params = 3 : i64,
                   seqc.prepared_ranks = array<i64: 1, 1, 1, 1>,
                   seqc.prepare_params = array<i64: 0>,
                   seqc.prepare_values = array<i64: 0>,
                   seqc.prepare_groups = [{function = @__seqc_prepare_0,
                                           params = array<i64: 0, 1>,
                                           values = array<i64: 1, 2>},
                                          {function = @__seqc_prepare_1,
                                           params = array<i64: 1, 2>,
                                           values = array<i64: 3>}],
                   seqc.prepared_only_params = array<i64: 0, 1>} {
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.mlir.global external constant @seqc_manifest("{\22params\22: [{\22name\22: \22a\22}, {\22name\22: \22b\22}, {\22name\22: \22c\22}]}\00") {addr_space = 0 : i32}
  llvm.func @_mlir_ciface_forward(%r: !llvm.ptr, %p0: !llvm.ptr, %p1: !llvm.ptr,
                                  %p2: !llvm.ptr, %v0: !llvm.ptr, %v1: !llvm.ptr,
                                  %v2: !llvm.ptr, %v3: !llvm.ptr) {
    llvm.return
  }
  llvm.func @_mlir_ciface___seqc_prepare(%out: !llvm.ptr, %p0: !llvm.ptr) {
    llvm.return
  }
  llvm.func @_mlir_ciface___seqc_prepare_0(%out: !llvm.ptr, %p: !llvm.ptr) {
    llvm.return
  }
  llvm.func @_mlir_ciface___seqc_prepare_1(%out: !llvm.ptr, %p: !llvm.ptr,
                                           %q: !llvm.ptr) {
    llvm.return
  }
}

// -----

// The last read of parameters 0 and 2 is @__seqc_prepare's; parameter 1's
// the second call of @__seqc_prepare_0.

// CHECK-LABEL: module attributes
// CHECK-DAG:   llvm.mlir.global internal constant @__seqc_prepare_last_reads_0(dense<[-1, 1]> : tensor<2xi64>)
// CHECK-DAG:   llvm.mlir.global internal constant @__seqc_prepare_last_reads(dense<[0, 2]> : tensor<2xi64>)
// CHECK-LABEL: llvm.func @seqc_prepare(
// CHECK:         llvm.call @_mlir_ciface___seqc_prepare(
// CHECK-NEXT:    %[[TABLE:.*]] = llvm.mlir.addressof @__seqc_prepare_last_reads :
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT:    llvm.call @seqc_prepare_done_reading(%[[TABLE]], %[[TWO]])
// CHECK:         llvm.call @_mlir_ciface___seqc_prepare_0(
// CHECK:         llvm.call @seqc_prepare_done_reading(
module attributes {seqc.entry = @forward, seqc.num_params = 3 : i64,
                   seqc.prepared_ranks = array<i64: 1, 1, 1>,
                   seqc.prepare_params = array<i64: 0, 2>,
                   seqc.prepare_values = array<i64: 0>,
                   seqc.prepare_groups = [{function = @__seqc_prepare_0,
                                           params = array<i64: 1, 1>,
                                           values = array<i64: 1, 2>}],
                   seqc.prepared_only_params = array<i64: 0, 1, 2>} {
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.mlir.global external constant @seqc_manifest("{\22params\22: [{\22name\22: \22a\22}, {\22name\22: \22b\22}, {\22name\22: \22c\22}]}\00") {addr_space = 0 : i32}
  llvm.func @_mlir_ciface_forward(%r: !llvm.ptr, %p0: !llvm.ptr, %p1: !llvm.ptr,
                                  %p2: !llvm.ptr, %v0: !llvm.ptr, %v1: !llvm.ptr,
                                  %v2: !llvm.ptr) {
    llvm.return
  }
  llvm.func @_mlir_ciface___seqc_prepare(%out: !llvm.ptr, %p0: !llvm.ptr,
                                         %p2: !llvm.ptr) {
    llvm.return
  }
  llvm.func @_mlir_ciface___seqc_prepare_0(%out: !llvm.ptr, %p: !llvm.ptr) {
    llvm.return
  }
}

// -----

// A module that allocates with malloc is not compiled for seqc's runtime,
// which defines the function: no call.

// CHECK-LABEL: module attributes
// CHECK-NOT:   seqc_prepare_done_reading
// CHECK-NOT:   __seqc_prepare_last_reads
// CHECK-LABEL: llvm.func @seqc_prepare(
// CHECK:         llvm.call @malloc(
// CHECK-NOT:     seqc_prepare_done_reading
// CHECK:         llvm.return
module attributes {seqc.entry = @forward, seqc.num_params = 1 : i64,
                   seqc.prepared_ranks = array<i64: 1>,
                   seqc.prepare_params = array<i64: 0>,
                   seqc.prepare_values = array<i64: 0>,
                   seqc.prepare_groups = [],
                   seqc.prepared_only_params = array<i64: 0>} {
  llvm.mlir.global external constant @seqc_manifest("{\22params\22: [{\22name\22: \22a\22}]}\00") {addr_space = 0 : i32}
  llvm.func @_mlir_ciface_forward(%r: !llvm.ptr, %p0: !llvm.ptr, %v0: !llvm.ptr) {
    llvm.return
  }
  llvm.func @_mlir_ciface___seqc_prepare(%out: !llvm.ptr, %p0: !llvm.ptr) {
    llvm.return
  }
}
