// RUN: seq-opt %s --split-input-file --seq-cpu-lower-collectives | FileCheck %s --check-prefix=CALLS
// RUN: seq-opt %s --split-input-file --seq-cpu-lower-collectives --seq-cpu-define-collectives | FileCheck %s --check-prefix=MPI

// The collectives of a tensor-parallel model (seq-tensor-parallel): an
// all-reduce of the hidden states (dynamic batch and length) out of place,
// an all-gather of the vocabulary-parallel logits as the ranks' slices in
// rank order, transposed next to the vocabulary axis and merged with it.

// CALLS-NOT: shard.grid
// CALLS-LABEL: func.func @reduce
//       CALLS:   %[[IN:.*]] = bufferization.to_buffer %[[P:.*]] read_only : tensor<?x?x64xf32> to memref<?x?x64xf32>
//       CALLS:   %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x64xf32>
//       CALLS:   %[[INF:.*]] = memref.collapse_shape %[[IN]] {{\[}}[0, 1, 2]]
//       CALLS:   %[[OUTF:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1, 2]]
//       CALLS:   call @__seqc_all_reduce_f32(%[[INF]], %[[OUTF]]) : (memref<?xf32>, memref<?xf32>) -> ()
//       CALLS:   bufferization.to_tensor %[[OUT]] restrict writable
// CALLS-LABEL: func.func @gather
//       CALLS:   %[[STACK:.*]] = memref.alloc(%{{.*}}) : memref<2x?x1x128xf32>
//       CALLS:   call @__seqc_all_gather_f32
//       CALLS:   %[[T:.*]] = bufferization.to_tensor %[[STACK]] restrict writable : memref<2x?x1x128xf32> to tensor<2x?x1x128xf32>
//       CALLS:   %[[M:.*]] = linalg.transpose ins(%[[T]] : tensor<2x?x1x128xf32>) outs(%{{.*}} : tensor<?x1x2x128xf32>) permutation = [1, 2, 0, 3]
//       CALLS:   tensor.collapse_shape %[[M]] {{\[}}[0], [1], [2, 3]] : tensor<?x1x2x128xf32> into tensor<?x1x256xf32>
//       CALLS:   func.func private @__seqc_all_reduce_f32(memref<?xf32>, memref<?xf32>) attributes {seqc.collective = "all_reduce"}
//       CALLS:   func.func private @__seqc_all_gather_f32(memref<?xf32>, memref<?xf32>) attributes {seqc.collective = "all_gather"}

// MPI: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// MPI-LABEL: func.func private @__seqc_all_reduce_f32
//  MPI-SAME:   (%[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>)
//  MPI-NEXT:   %[[W:.*]] = mpi.comm_world : !mpi.comm
//  MPI-NEXT:   mpi.allreduce(%[[A]], %[[B]], MPI_SUM, %[[W]]) : memref<?xf32>, memref<?xf32>
//  MPI-NEXT:   return
// MPI-LABEL: func.func private @__seqc_all_gather_f32
//  MPI-SAME:   (%[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>)
//       MPI:   %[[W:.*]] = mpi.comm_world : !mpi.comm
//       MPI:   %[[R:.*]] = mpi.comm_rank(%[[W]]) : i32
//       MPI:   %[[PAD:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
//       MPI:   linalg.fill ins(%{{.*}} : f32) outs(%[[PAD]] : memref<?xf32>)
//       MPI:   %[[SLOT:.*]] = memref.subview %[[PAD]]
//       MPI:   memref.copy %[[A]], %[[SLOT]]
//       MPI:   mpi.allreduce(%[[PAD]], %[[B]], MPI_SUM, %[[W]])
//       MPI:   memref.dealloc %[[PAD]]
module {
shard.grid @tensor_parallel(shape = 2)
func.func @reduce(%p: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %s = shard.all_reduce %p on @tensor_parallel grid_axes = [0] : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %s : tensor<?x?x64xf32>
}
func.func @gather(%l: tensor<?x1x128xf32>) -> tensor<?x1x256xf32> {
  %g = shard.all_gather %l on @tensor_parallel grid_axes = [0] gather_axis = 2 : tensor<?x1x128xf32> -> tensor<?x1x256xf32>
  return %g : tensor<?x1x256xf32>
}
}
