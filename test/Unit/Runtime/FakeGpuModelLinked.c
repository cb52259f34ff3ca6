/*===- FakeGpuModelLinked.c - The GPU model, linked in ------------*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Linked with libseqc_runtime_main.a, the GPU model of FakeGpuModel.c gives  *|
|* a model executable like the ones `seqc --target=nvptx` builds. CliTest.cpp *|
|* runs it with and without the fake CUDA driver.                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeModels.h"
#include "seqc_runtime.h"

const char seqc_manifest[] = FAKE_GPU_MANIFEST;

void seqc_invoke(void **args) { fake_gpu_invoke(args); }
