//===- Attention.cpp - lower the Attention op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateAttentionToLinalgPatterns(RewritePatternSet &patterns) {}
