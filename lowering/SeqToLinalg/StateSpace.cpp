//===- StateSpace.cpp - lower the StateSpace op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateStateSpaceToLinalgPatterns(RewritePatternSet &patterns) {}
