/*===- FakeModelLinked.c - The add model as a linked-in model -----*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Defines the two symbols a seqc-compiled object defines, so that linking    *|
|* this with libseqc_runtime_main.a gives a model executable like the ones    *|
|* seqc builds. CliTest.cpp drives it.                                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeModels.h"
#include "seqc_runtime.h"

const char seqc_manifest[] = FAKE_ADD_MANIFEST;

void seqc_invoke(void **args) { fake_add_invoke(args); }
