//===- Normalization.cpp - lower the Normalization op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateNormalizationToLinalgPatterns(RewritePatternSet &patterns) {}
