//===- Elementwise.cpp - lower the Elementwise op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateElementwiseToLinalgPatterns(RewritePatternSet &patterns) {}
