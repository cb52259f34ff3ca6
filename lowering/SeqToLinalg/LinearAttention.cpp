//===- LinearAttention.cpp - lower the LinearAttention op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateLinearAttentionToLinalgPatterns(RewritePatternSet &patterns) {}
