//===- SeqBase.td - seq dialect definition -----------------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The `seq` dialect: tensor-level operations of sequence models (attention,
// transformer blocks, linear attention, state-space models).
//
//===----------------------------------------------------------------------===//

#ifndef SEQ_BASE_TD
#define SEQ_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Seq_Dialect : Dialect {
  let name = "seq";
  let cppNamespace = "::mlir::seq";
  let summary = "Tensor-level operations of sequence models";
  let description = [{
    The `seq` dialect states sequence models precisely at the tensor level:
    projections, normalization, attention with its masks and position
    encodings, linear attention, structured state-space models (HiPPO, S4,
    Mamba's selective scan) and losses. Operations have value semantics on
    ranked tensors; sequence lengths unknown until run time are dynamic
    dimensions. Layouts follow PyTorch: linear weights are `[out, in]`,
    attention operands are `[batch, heads, length, head_dim]`.

    Every op verifies the shape rules its description states. A dynamic
    dimension is compatible with any size (the lowering checks it at run
    time); ranks and static sizes must agree. The floating-point operands of
    an op and its result share one element type. The result type is exactly
    what the op computes: a result dimension is static when an operand or an
    attribute determines it and dynamic otherwise.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Seq_Op<string mnemonic, list<Trait> traits = []>
    : Op<Seq_Dialect, mnemonic, traits>;

class Seq_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Seq_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Seq_FeatureMap : I32EnumAttr<"FeatureMap",
    "kernel feature map of linear attention", [
      I32EnumAttrCase<"elu_plus_one", 0>,
      I32EnumAttrCase<"relu", 1>,
      I32EnumAttrCase<"identity", 2>
    ]> {
  let cppNamespace = "::mlir::seq";
}

def Seq_Discretization : I32EnumAttr<"Discretization",
    "discretization rule of a continuous-time state-space model", [
      I32EnumAttrCase<"zoh", 0>,
      I32EnumAttrCase<"bilinear", 1>
    ]> {
  let cppNamespace = "::mlir::seq";
}

def Seq_ReduceKind : I32EnumAttr<"ReduceKind", "reduction combiner", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>,
      I32EnumAttrCase<"min", 3>
    ]> {
  let cppNamespace = "::mlir::seq";
}

def Seq_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "approximation of GELU", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>
    ]> {
  let cppNamespace = "::mlir::seq";
}

def Seq_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "elementwise comparison", [
      I32EnumAttrCase<"eq", 0>,
      I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>,
      I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>,
      I32EnumAttrCase<"ge", 5>
    ]> {
  let cppNamespace = "::mlir::seq";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Seq_MaskAttr : Seq_Attr<"Mask", "mask"> {
  let summary = "which keys each query may attend to";
  let description = [{
    Describes an attention mask without materializing it. Query `i` may attend
    to key `j` when all of the following hold:

    - `causal` is false, or `j <= i`;
    - `window` is 0, or `|i - j| < window`, or `i < global_tokens`, or
      `j < global_tokens` (a sliding window of `window` keys around each query,
      plus `global_tokens` leading tokens that see and are seen by every
      position, as in Longformer);
    - `j` is below the key padding length of the batch row, when the
      attention op has a `lengths` operand.

    A query row that can see no key produces zeros (rather than the NaN a
    naive softmax gives).

    ```mlir
    #seq.mask<causal = true>
    #seq.mask<window = 256, global_tokens = 2>
    #seq.mask<causal = true, window = 128>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"bool", "false">:$causal,
    DefaultValuedParameter<"int64_t", "0">:$window,
    DefaultValuedParameter<"int64_t", "0">:$global_tokens
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when the mask lets every query see every key.
    bool isFull() const { return !getCausal() && getWindow() == 0; }
  }];
}

#endif // SEQ_BASE_TD
