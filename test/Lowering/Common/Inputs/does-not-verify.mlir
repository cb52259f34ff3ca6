// Input of verify.mlir, parsed without the verifier: what a pass that broke
// an invariant would leave behind.

func.func @f(%a: i32) -> i64 {
  // The result type is wrong.
  return %a : i32
}
