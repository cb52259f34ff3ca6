/*===- FakeParallelModel.c - A tensor-parallel model, linked in ---*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* What `seqc --tensor-parallel=2` makes of y = w @ x, written by hand: each  *|
|* rank holds two columns of w (the parameter's "shard" axis 1), multiplies   *|
|* them by its two elements of x and all-reduces the partial sums over        *|
|* MPI_COMM_WORLD, without initializing MPI (the runtime does). Linked with   *|
|* libseqc_runtime_main.a, libseqc_runtime.a and libseqc_runtime_mpi.a as     *|
|* seqc links such a model; ParallelCliTest.cpp runs it under mpirun.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

const char seqc_manifest[] =
    "{\"model\": \"tp\", \"tensor_parallel\": 2, \"inputs\": ["
    "{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [3]}],"
    " \"params\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [3, 2],"
    " \"shard\": {\"axis\": 1}}]}";

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1;

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} MemRef2;

void seqc_invoke(void **args) {
  MemRef1 *y = (MemRef1 *)args[0];
  const MemRef1 *x = (const MemRef1 *)args[1];
  const MemRef2 *w = (const MemRef2 *)args[2];
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  float partial[3] = {0, 0, 0};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      partial[i] += w->aligned[w->offset + i * w->strides[0] +
                               j * w->strides[1]] *
                    x->aligned[x->offset + (rank * 2 + j) * x->strides[0]];
  float *sum = (float *)malloc(sizeof(float) * 3);
  MPI_Allreduce(partial, sum, 3, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  *y = (MemRef1){sum, sum, 0, {3}, {1}};
}
