//===- StateSpace.h - builders of the state-space lowerings -----*- C++ -*-===//
//-*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The state-space family is lowered in three files: StateSpace.cpp (HiPPO,
// the LTI and selective scans), Discretization.cpp (the continuous-to-
// discrete step of `seq.ssm`) and Conv1d.cpp (`seq.conv1d`). This header
// holds what they share; it is not part of the library's interface.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_SEQTOLINALG_STATESPACE_H
#define SEQC_LOWERING_SEQTOLINALG_STATESPACE_H

#include "lowering/SeqToLinalg/Utils.h"

namespace mlir::seq::statespace {

/// An elementwise `linalg.generic` over tensors of the same shape, writing
/// into `init` (which the body sees as its last argument).
Value buildMap(OpBuilder &b, Location loc, ValueRange inputs, Value init,
               GenericBodyFn body);

/// `linalg.fill` of `init` with the float `value`.
Value fillWith(OpBuilder &b, Location loc, Value init, double value);

/// `acc + lhs * rhs` for square matrices, as `linalg.matmul`.
Value matmulAcc(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc);

/// `x * sigmoid(x)` (torch.nn.functional.silu) on a scalar or a vector;
/// with `fastExp` its exp is createFastExp's (Utils.h).
Value buildSilu(OpBuilder &b, Location loc, Value x, bool fastExp = false);

/// `log(1 + exp(x))`, or `x` above 20 (torch.nn.functional.softplus with its
/// defaults), on a scalar or a vector.
Value buildSoftplus(OpBuilder &b, Location loc, Value x);

/// `linalg.copy` of `source` into `dest`.
Value copyInto(OpBuilder &b, Location loc, Value source, Value dest);

/// The discrete-time system of `seq.ssm`: `Ab: [N, N]`, `Bb: [H, N]`.
struct DiscreteSystem {
  Value ab;
  Value bb;
};

/// The element type discretization is carried out in: f64, or the element
/// type itself when it is wider.
Type getDiscretizationType(Type elementType);

/// Zero-order hold of `(A: [N, N], B: [H, N])` with time step `step`:
/// `Ab = exp(step A)`, `Bb_h = (int_0^step exp(s A) ds) B_h`, without
/// inverting A (Discretization.cpp).
DiscreteSystem discretizeZoh(OpBuilder &b, Location loc, Value a, Value bMat,
                             double step);

/// Bilinear (Tustin) discretization: `Ab = (I - step/2 A)^-1 (I + step/2 A)`,
/// `Bb = (I - step/2 A)^-1 step B` (Discretization.cpp).
DiscreteSystem discretizeBilinear(OpBuilder &b, Location loc, Value a,
                                  Value bMat, double step);

} // namespace mlir::seq::statespace

#endif // SEQC_LOWERING_SEQTOLINALG_STATESPACE_H
