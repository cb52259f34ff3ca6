// RUN: seq-opt %s --seq-verify="stage=bufferization" | FileCheck %s
// RUN: not seq-opt %S/Inputs/does-not-verify.mlir \
// RUN:   --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false \
// RUN:   --seq-verify="stage=bufferization" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BROKEN

// seqc's check at the end of each stage of its pipeline: IR that verifies
// goes through unchanged; IR that does not is reported by the op's own
// verifier, then by the stage that let it through.

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %[[S:.*]] = arith.addi %arg0, %arg0 : i32
// CHECK-NEXT:    return %[[S]] : i32
func.func @f(%a: i32) -> i32 {
  %s = arith.addi %a, %a : i32
  return %s : i32
}

// BROKEN: does-not-verify.mlir:6:3: error: type of return operand 0 ('i32') doesn't match function result type ('i64')
// BROKEN: error: the IR does not verify after the bufferization stage: this is a bug of seqc (rerun with --verify-each to find the pass that broke it)
