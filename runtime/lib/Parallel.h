//===- Parallel.h - Tensor parallelism over MPI, as the runtime sees it -*- C++
//-*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A model compiled with `seqc --tensor-parallel=N` runs as N processes
// (`mpirun -np N`), each holding a slice of the sharded parameters; its
// code all-reduces through MPI itself (docs/abi.md, "Tensor parallelism").
// The runtime's part: initialize MPI before the model runs, know the
// process's rank, abort the whole job on an error, and agree on the tokens
// generation chooses. A model compiled with `seqc --data-parallel` uses the
// same calls, and the model executable gathers each rank's block of the
// outputs' rows on rank 0 (seqc_parallel_gather_rows). Those calls live in
// libseqc_runtime_mpi.a (Parallel.cpp), the one library that depends on MPI;
// the core runtime references its functions weakly, so that a program without
// it (every model for one process) links no MPI and finds them NULL.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_PARALLEL_H
#define SEQC_RUNTIME_PARALLEL_H

#include <cstdint>

extern "C" {
/// Initializes MPI unless the host did (MPI_Init_thread; MPI_Finalize then
/// runs at exit) and sets *rank and *size from MPI_COMM_WORLD. Returns 0,
/// or an MPI error code.
int seqc_parallel_init(int *rank, int *size);
/// MPI_Abort on MPI_COMM_WORLD: ends every rank of the job with `code`.
void seqc_parallel_abort(int code);
/// MPI_Bcast of `count` int32 from rank 0 to every rank. Returns 0, or an
/// MPI error code.
int seqc_parallel_broadcast_i32(int32_t *data, int count);
/// MPI_Gatherv to rank 0 of rows of `row_bytes` bytes (data parallelism):
/// each rank sends its `rows_per_rank[rank]` rows from `send`, and rank 0
/// receives every rank's in rank order into `recv` (significant on rank 0
/// only). Every rank passes the same `rows_per_rank` (one count per rank)
/// and `row_bytes`, which must fit an int, as must each count. Returns 0,
/// or an MPI error code.
int seqc_parallel_gather_rows(const void *send, void *recv,
                              const int64_t *rows_per_rank, int64_t row_bytes);
}

namespace seqc::parallel {

/// The functions the runtime calls: libseqc_runtime_mpi.a's when it is
/// linked in, else NULL. Tests replace them (a process that is rank 1 of
/// 2 without MPI).
struct Functions {
  int (*init)(int *rank, int *size);
  void (*abort)(int code);
  int (*broadcastI32)(int32_t *data, int count);
  int (*gatherRows)(const void *send, void *recv, const int64_t *rowsPerRank,
                    int64_t rowBytes);
};
Functions &functions();

} // namespace seqc::parallel

#endif // SEQC_RUNTIME_PARALLEL_H
