// RUN: seq-opt %s --seq-lower-to-llvm -split-input-file -verify-diagnostics

// Every malformed model description is an error at the module, function or
// argument it is about; none reaches the lowering.

// expected-error @+1 {{expected the module attribute 'seq.model' naming the model}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{expected the model function @forward}}
module attributes {seq.model = "m"} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'seq.model' must be the model's name (a string)}}
module attributes {seq.model = 3 : i64} {
  func.func @forward(%x: tensor<4xf32> {seq.input = "x"})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model argument 0: expected exactly one of 'seq.input', 'seq.param' and 'seq.state'}}
  func.func @forward(%x: tensor<4xf32>) -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model argument 1: input 'x' follows a parameter; inputs come first}}
  func.func @forward(%w: tensor<4xf32> {seq.param = "w"}, %x: tensor<4xf32> {seq.input = "x"})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model argument 0: dimension 0 of input 'x' is dynamic; expected its symbol name in 'seq.dims'}}
  func.func @forward(%x: tensor<?xf32> {seq.input = "x"})
      -> (tensor<?xf32> {seq.output = "y", seq.dims = ["n"]}) {
    return %x : tensor<?xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model argument 0: 'seq.dims' entry 0 of input 'x' is 5 but the tensor type says 4}}
  func.func @forward(%x: tensor<4xf32> {seq.input = "x", seq.dims = [5]})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model argument 0: input 'x' has element type 'i8', which the runtime does not support (expected f32, f64, f16, bf16, i32 or i64)}}
  func.func @forward(%x: tensor<4xi8> {seq.input = "x"})
      -> (tensor<4xi8> {seq.output = "y"}) {
    return %x : tensor<4xi8>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model argument 0: 'seq.range' on input 'x' of non-integer type 'tensor<4xf32>'}}
  func.func @forward(%x: tensor<4xf32> {seq.input = "x", seq.range = [0, 3]})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model argument 0: 'seq.range' of input 't' must be [lo, hi], each an integer or a dimension name}}
  func.func @forward(%t: tensor<4xi32> {seq.input = "t", seq.range = [0]})
      -> (tensor<4xi32> {seq.output = "y"}) {
    return %t : tensor<4xi32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{model result 0: expected its name in 'seq.output'}}
  func.func @forward(%x: tensor<4xf32> {seq.input = "x"}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{the model function returns nothing; expected at least one output tensor}}
  func.func @forward(%x: tensor<4xf32> {seq.input = "x"}) {
    return
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{two model values are named 'x'}}
  func.func @forward(%x: tensor<4xf32> {seq.input = "x"}, %y: tensor<4xf32> {seq.input = "x"})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'seq.hyper' must be a dictionary}}
module attributes {seq.model = "m", seq.hyper = [1]} {
  func.func @forward(%x: tensor<4xf32> {seq.input = "x"})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{the model function must be public: its C interface is the entry point}}
  func.func private @forward(%x: tensor<4xf32> {seq.input = "x"})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {seq.model = "m"} {
  // expected-error @+1 {{the symbol 'seqc_manifest' is reserved for the model manifest}}
  func.func @seqc_manifest() {
    return
  }
  func.func @forward(%x: tensor<4xf32> {seq.input = "x"})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}
