/*===- FakeModelMisc.c - The misc model as a linked-in model ------*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* A second model executable (no weights, bf16 and i32 outputs, non-finite    *|
|* values, a model error on demand) for CliTest.cpp.                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeModels.h"
#include "seqc_runtime.h"

const char seqc_manifest[] = FAKE_MISC_MANIFEST;

void seqc_invoke(void **args) { fake_misc_invoke(args); }
