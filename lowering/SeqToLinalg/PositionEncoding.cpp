//===- PositionEncoding.cpp - lower the PositionEncoding op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populatePositionEncodingToLinalgPatterns(RewritePatternSet &patterns) {}
