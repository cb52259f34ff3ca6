//===- Parallel.cpp - libseqc_runtime_mpi.a: MPI for tensor parallelism ---===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The functions of Parallel.h over MPI (Open MPI's ABI, as the model's own
// calls). seqc links this library, and the MPI C library, into models
// compiled with --tensor-parallel=N; the core runtime finds them through
// weak references (ParallelHooks.cpp).
//
// Errors: MPI_COMM_WORLD keeps MPI's default handler, MPI_ERRORS_ARE_FATAL,
// so a failed collective, in the model's code or here, aborts the whole
// job rather than leave the other ranks waiting in it. A rank that exits
// with a non-zero status after MPI_Init without MPI_Finalize makes mpirun
// end the job too; the model executable calls seqc_parallel_abort on its
// errors, which does that at once.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace {

/// At exit, when this library initialized MPI: every rank gets here after
/// its last collective, so the finalization (itself collective) completes.
void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

} // namespace

extern "C" int seqc_parallel_init(int *rank, int *size) {
  int initialized = 0;
  if (int error = MPI_Initialized(&initialized))
    return error;
  if (!initialized) {
    // MPI_THREAD_SERIALIZED rather than FUNNELED: the model calls MPI on
    // the thread that runs it, which a host may choose (one at a time:
    // seqc_model_run of one instance is serialized). The OpenMP threads
    // inside a run never call MPI.
    int provided = 0;
    if (int error = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED,
                                    &provided))
      return error;
    std::atexit(finalizeAtExit);
  }
  if (int error = MPI_Comm_rank(MPI_COMM_WORLD, rank))
    return error;
  return MPI_Comm_size(MPI_COMM_WORLD, size);
}

extern "C" void seqc_parallel_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  // MPI_Abort does not return; should an implementation let it, the
  // process must not go on as if nothing happened.
  std::_Exit(code);
}

extern "C" int seqc_parallel_broadcast_i32(int32_t *data, int count) {
  return MPI_Bcast(data, count, MPI_INT32_T, 0, MPI_COMM_WORLD);
}

extern "C" int seqc_parallel_gather_rows(const void *send, void *recv,
                                         const int64_t *rows_per_rank,
                                         int64_t row_bytes) {
  int rank = 0, size = 0;
  if (int error = MPI_Comm_rank(MPI_COMM_WORLD, &rank))
    return error;
  if (int error = MPI_Comm_size(MPI_COMM_WORLD, &size))
    return error;
  if (row_bytes < 0 || row_bytes > INT_MAX)
    return MPI_ERR_COUNT;
  // One element per row, so that the counts and displacements, ints, count
  // rows rather than bytes. A row of no bytes sends nothing.
  if (row_bytes == 0)
    return MPI_SUCCESS;
  std::vector<int> counts(static_cast<size_t>(size));
  std::vector<int> displacements(static_cast<size_t>(size));
  int64_t offset = 0;
  for (int r = 0; r < size; ++r) {
    if (rows_per_rank[r] < 0 || rows_per_rank[r] > INT_MAX || offset > INT_MAX)
      return MPI_ERR_COUNT;
    counts[static_cast<size_t>(r)] = static_cast<int>(rows_per_rank[r]);
    displacements[static_cast<size_t>(r)] = static_cast<int>(offset);
    offset += rows_per_rank[r];
  }
  MPI_Datatype row;
  if (int error =
          MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &row))
    return error;
  if (int error = MPI_Type_commit(&row)) {
    MPI_Type_free(&row);
    return error;
  }
  int error =
      MPI_Gatherv(send, counts[static_cast<size_t>(rank)], row, recv,
                  counts.data(), displacements.data(), row, 0, MPI_COMM_WORLD);
  MPI_Type_free(&row);
  return error;
}
