/*===- FakeAllocModelLinked.c - The alloc model, linked in -------*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The alloc model (FakeAllocModel.c) as a model executable, with the four    *|
|* symbols a seqc-compiled object defines, for CliTest.cpp.                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeModels.h"
#include "seqc_runtime.h"

const char seqc_manifest[] = FAKE_ALLOC_MANIFEST;

void seqc_invoke(void **args) { fake_alloc_invoke(args); }
void *seqc_prepare(void **params) { return fake_alloc_prepare(params); }
void seqc_release(void *state) { fake_alloc_release(state); }
