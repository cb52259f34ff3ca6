// RUN: seq-opt %s --seq-cpu-open-mpi-handles | FileCheck %s

// The mpi dialect's conversion (LLVM 22) names MPI_SUM `ompi_mpi_sum`;
// Open MPI's library exports `ompi_mpi_op_sum`. Other handles keep their
// names.

// CHECK: llvm.mlir.global external @ompi_mpi_op_sum()
// CHECK: llvm.mlir.global external @ompi_mpi_float()
// CHECK-LABEL: llvm.func @f
//       CHECK:   llvm.mlir.addressof @ompi_mpi_op_sum : !llvm.ptr
//       CHECK:   llvm.mlir.addressof @ompi_mpi_float : !llvm.ptr
module {
  llvm.mlir.global external @ompi_mpi_sum() {addr_space = 0 : i32} : !llvm.struct<"ompi_predefined_op_t", opaque>
  llvm.mlir.global external @ompi_mpi_float() {addr_space = 0 : i32} : !llvm.struct<"ompi_predefined_datatype_t", opaque>
  llvm.func @f() -> !llvm.ptr {
    %0 = llvm.mlir.addressof @ompi_mpi_sum : !llvm.ptr
    %1 = llvm.mlir.addressof @ompi_mpi_float : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
}
