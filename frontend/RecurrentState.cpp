//===- RecurrentState.cpp - State carried by recurrences across calls -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The recurrent state of a decoder that is not softmax attention: the conv
// window of a CausalConv1d and the SSM state of a selective scan (Mamba's
// `conv_state` and `ssm_state`), the sums (S, z) of causal linear
// attention, owned by the model instance between calls (docs/language.md,
// "Recurrent state").
//
// A call passes `pos` (each batch row's position; 0 restarts the row from
// the zero state) and optionally `lengths` (each row's number of valid
// tokens in this call). Unlike a KV cache, a recurrence's state cannot skip
// right padding, so the state stored after the call is the one after token
// `lengths[r] - 1` of row r:
//   - the selective scan's step is zeroed at padded positions (delta = 0
//     makes exp(delta A) = 1 and delta B u = 0, so the state passes through
//     unchanged), and its final state is stored;
//   - causal linear attention's keys are mapped to phi(k) = 0 at padded
//     positions, which add nothing to its sums (S, z);
//   - the convolution runs over the stored window followed by the new
//     inputs, and the new window is the K - 1 inputs ending at the row's last
//     valid one, gathered by a one-hot product over the positions.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/IR/SeqOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

FailureOr<std::string> Elaborator::getInputName(SMLoc loc,
                                                const TensorVal &value,
                                                StringRef what) {
  auto arg = dyn_cast<BlockArgument>(value.value);
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      arg.getArgNumber() >= inputs.size()) {
    emitError(loc) << what
                   << " must be a model input (the runtime reads it to keep "
                      "the state of each batch row)";
    return failure();
  }
  return inputs[arg.getArgNumber()].name;
}

FailureOr<Elaborator::RecurrentState>
Elaborator::openRecurrentState(SMLoc loc, StringRef op, const std::string &name,
                               Shape shape, Type elementType,
                               const RecurrentInputs &in) {
  ShapeMatcher m(*this, loc, op);
  m.define("batch", shape[0], "the state");
  m.bindInteger("pos", in.pos, {"batch"});
  if (in.lengths)
    m.bindInteger("lengths", *in.lengths, {"batch"});
  if (m.failed())
    return failure();
  Dim batch = m.lookup("batch");
  if (!batch.isStatic() && !batch.symbol) {
    emitError(loc) << "the batch dimension of " << op
                   << " with state must be a size or a named dimension of an "
                      "input";
    return failure();
  }
  shape[0] = batch;
  FailureOr<std::string> posName = getInputName(loc, in.pos, "pos=");
  if (failed(posName))
    return failure();
  std::string lengthsName;
  if (in.lengths) {
    FailureOr<std::string> lengths =
        getInputName(loc, *in.lengths, "lengths=");
    if (failed(lengths))
      return failure();
    lengthsName = *lengths;
  }
  if (llvm::any_of(states, [&](const StateInfo &s) { return s.name == name; })) {
    emitError(loc) << op << " with state '" << name
                   << "' is called more than once in forward; each call "
                      "needs its own state";
    return failure();
  }

  auto dimAttr = [&](const Dim &dim) -> Attribute {
    if (dim.isStatic())
      return builder.getI64IntegerAttr(dim.size);
    return dim.symbol;
  };
  SmallVector<NamedAttribute> carry = {
      builder.getNamedAttr("input", builder.getStringAttr(*posName))};
  if (!lengthsName.empty())
    carry.push_back(
        builder.getNamedAttr("lengths", builder.getStringAttr(lengthsName)));
  RankedTensorType type = getTensorType(shape, elementType);
  Value arg = func.getBody().front().addArgument(type, getLoc(loc));
  states.push_back(
      {name,
       builder.getArrayAttr(llvm::map_to_vector(shape, dimAttr)),
       DictionaryAttr(), builder.getDictionaryAttr(carry)});

  // Rows at position 0 start from zeros: the stored state times (pos != 0).
  Val keep = buildElementwise(loc, Elementwise::Ne, Val::tensor(in.pos),
                              Val::integer(0), op);
  if (keep.isPoison())
    return failure();
  keep = buildCast(loc, keep.getTensor(), elementType);
  Shape keepShape(shape.size(), Dim::fixed(1));
  keepShape[0] = batch;
  SmallVector<Value> sizes;
  if (!batch.isStatic())
    sizes.push_back(getDimValue(loc, in.pos, 0));
  keep = buildReshape(loc, keep.getTensor(), keepShape, sizes);
  Val initial = buildElementwise(loc, Elementwise::Mul,
                                 Val::tensor({arg, shape}), keep, op);
  if (initial.isPoison())
    return failure();
  return RecurrentState{arg, initial.getTensor()};
}

void Elaborator::closeRecurrentState(SMLoc loc, const RecurrentState &state,
                                     const TensorVal &final) {
  create<StateStoreOp>(loc, final.value, state.arg);
}

FailureOr<TensorVal> Elaborator::buildValidMask(SMLoc loc,
                                                const TensorVal &lengths,
                                                const TensorVal &sequence,
                                                unsigned axis,
                                                Type elementType) {
  // mask[r, i] = (i < lengths[r]), shaped [b, 1, .., n, .., 1] (n at `axis`)
  // to scale `sequence`.
  Dim batch = sequence.shape[0], n = sequence.shape[axis];
  Type i64 = builder.getI64Type();
  TensorVal positions =
      tensorResult(create<ArangeOp>(loc, getTensorType({n}, i64),
                                    getDimValue(loc, sequence, axis)),
                   {n})
          .getTensor();
  SmallVector<Value> batchSize;
  if (!batch.isStatic())
    batchSize.push_back(getDimValue(loc, sequence, 0));
  Val counts = buildCast(loc, lengths, i64);
  counts = buildReshape(loc, counts.getTensor(), {batch, Dim::fixed(1)},
                        batchSize);
  Val mask = buildElementwise(loc, Elementwise::Lt, Val::tensor(positions),
                              counts, "lengths=");
  if (mask.isPoison())
    return failure();
  mask = buildCast(loc, mask.getTensor(), elementType);
  Shape shape(sequence.getRank(), Dim::fixed(1));
  shape[0] = batch;
  shape[axis] = n;
  SmallVector<Value> sizes = batchSize;
  if (!n.isStatic())
    sizes.push_back(getDimValue(loc, sequence, axis));
  return buildReshape(loc, mask.getTensor(), shape, sizes).getTensor();
}

Val Elaborator::buildStatefulConv1d(SMLoc loc, const TensorVal &x,
                                    const TensorVal &weight, const Val &bias,
                                    const RecurrentInputs &in,
                                    const std::string &path) {
  StringRef op = "CausalConv1d";
  if (failed(checkInForward(loc, op)))
    return Val::poison();
  if (x.getRank() != 3)
    return emitError(loc) << "a CausalConv1d with state takes [batch, n, "
                             "channels], got "
                          << x.str();
  int64_t channels = weight.shape[0].size;
  int64_t kernel = weight.shape[2].size;
  Dim batch = x.shape[0], n = x.shape[1];
  Type elementType = x.getElementType();
  if (kernel == 1) // No window to keep.
    return callBuiltinFunction("causal_conv1d", loc,
                               {Val::tensor(x), Val::tensor(weight), bias});
  FailureOr<RecurrentState> state = openRecurrentState(
      loc, op, joinPath(path, "conv_state"),
      {batch, Dim::fixed(channels), Dim::fixed(kernel - 1)}, elementType, in);
  if (failed(state))
    return Val::poison();

  // The window [b, K - 1, C] of earlier inputs, then the new ones.
  Val window = buildTranspose(loc, state->initial, {0, 2, 1});
  Dim extended = n.isStatic() ? Dim::fixed(n.size + kernel - 1) : Dim();
  Shape extendedShape = {state->initial.shape[0], extended, x.shape[2]};
  TensorVal inputs =
      tensorResult(create<ConcatOp>(
                       loc, getTensorType(extendedShape, elementType),
                       ValueRange{window.getTensor().value, x.value},
                       builder.getI64IntegerAttr(1)),
                   extendedShape)
          .getTensor();
  Val convolved = callBuiltinFunction(
      "causal_conv1d", loc, {Val::tensor(inputs), Val::tensor(weight), bias});
  if (convolved.isPoison())
    return convolved;
  Value nValue = getDimValue(loc, x, 1);
  Value offset = getIndexConstant(loc, kernel - 1);
  Value end = create<arith::AddIOp>(loc, nValue, offset);
  Val y = buildSlice(loc, convolved.getTensor(), 1, offset, end, n);

  // The new window: the K - 1 inputs ending at each row's last valid one,
  // inputs[r, lengths[r] + j] for j < K - 1 (inputs[r, n + j] without
  // lengths).
  Val next;
  if (!in.lengths) {
    next = buildSlice(loc, inputs, 1, nValue,
                      create<arith::AddIOp>(loc, nValue, offset),
                      Dim::fixed(kernel - 1));
  } else {
    Type i64 = builder.getI64Type();
    Value extendedSize = getDimValue(loc, inputs, 1);
    TensorVal positions =
        tensorResult(create<ArangeOp>(loc, getTensorType({extended}, i64),
                                      extendedSize),
                     {extended})
            .getTensor();
    Shape taps = {Dim::fixed(kernel - 1)};
    TensorVal tapIndex =
        tensorResult(create<ArangeOp>(loc, getTensorType(taps, i64),
                                      getIndexConstant(loc, kernel - 1)),
                     taps)
            .getTensor();
    Val tapColumn = buildReshape(loc, tapIndex,
                                 {Dim::fixed(kernel - 1), Dim::fixed(1)}, {});
    SmallVector<Value> batchSize;
    if (!state->initial.shape[0].isStatic())
      batchSize.push_back(getDimValue(loc, x, 0));
    Val counts = buildCast(loc, *in.lengths, i64);
    counts = buildReshape(
        loc, counts.getTensor(),
        {state->initial.shape[0], Dim::fixed(1), Dim::fixed(1)}, batchSize);
    Val first = buildElementwise(loc, Elementwise::Add, counts, tapColumn, op);
    if (first.isPoison())
      return first;
    // onehot[r, j, t] = (t == lengths[r] + j): [b, K - 1, n + K - 1].
    Val onehot = buildElementwise(loc, Elementwise::Eq,
                                  Val::tensor(positions), first, op);
    if (onehot.isPoison())
      return onehot;
    onehot = buildCast(loc, onehot.getTensor(), elementType);
    next = buildMatmul(loc, onehot, Val::tensor(inputs), /*transposeRhs=*/false);
  }
  if (next.isPoison())
    return next;
  Val nextState = buildTranspose(loc, next.getTensor(), {0, 2, 1});
  if (nextState.isPoison())
    return nextState;
  closeRecurrentState(loc, *state, nextState.getTensor());
  return y;
}
