//===- Shape.cpp - lower the Shape op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateShapeToLinalgPatterns(RewritePatternSet &patterns) {}
