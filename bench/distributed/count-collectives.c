/* A PMPI shim (LD_PRELOAD) that counts the all-reduces a process calls and
 * the bytes they reduce, and prints both at MPI_Finalize: the measured side
 * of the communication count of bench/distributed/tensor-parallel.sh. */
#include <mpi.h>
#include <stdio.h>

static long long calls, bytes;

int MPI_Allreduce(const void *send, void *recv, int count,
                  MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  int size = 0;
  PMPI_Type_size(type, &size);
  ++calls;
  bytes += (long long)count * size;
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}

int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "rank %d: %lld all-reduces of %lld bytes in all\n", rank,
          calls, bytes);
  return PMPI_Finalize();
}
