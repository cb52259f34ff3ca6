//===- Passes.td - model entry points of the ABI -----------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The two symbols a compiled model exports (docs/abi.md) are built in two
// steps, because they need information from two ends of the pipeline: the
// manifest describes tensors (element types, symbolic dimensions) that
// bufferization erases, and the packed wrapper calls the C interface that
// only exists in the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_ENTRY_PASSES_TD
#define SEQC_LOWERING_ENTRY_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeqBuildManifest : Pass<"seq-build-manifest", "::mlir::ModuleOp"> {
  let summary = "Records the model's manifest as the seqc_manifest global";
  let description = [{
    Finds the model function the frontend marked (docs/language.md, "IR
    conventions"), checks that its attributes describe every argument and
    result, and

    - adds `llvm.mlir.global constant @seqc_manifest`, the NUL-terminated
      JSON manifest of docs/abi.md;
    - sets `llvm.emit_c_interface` on the model function, so that the
      conversion to the LLVM dialect emits `_mlir_ciface_<name>`, which
      takes every memref descriptor by pointer;
    - records the function in the module attribute `seqc.entry`, for
      `seq-emit-invoke`;
    - drops the frontend's `seq.*` argument and result attributes, which the
      manifest now holds (the translation to LLVM IR would warn about each).

    Runs first, on `seq` ops and tensors, while element types and symbolic
    dimensions are still in the function type.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def SeqEmitInvoke : Pass<"seq-emit-invoke", "::mlir::ModuleOp"> {
  let summary = "Emits seqc_invoke, the packed entry point of the model";
  let description = [{
    Runs after the conversion to the LLVM dialect. Defines

    ```mlir
    llvm.func @seqc_invoke(%args: !llvm.ptr) {
      // for every parameter k of @_mlir_ciface_<entry>:
      %slot = llvm.getelementptr %args[k] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %ptr = llvm.load %slot : !llvm.ptr -> !llvm.ptr
      llvm.call @_mlir_ciface_<entry>(%ptr0, %ptr1, ...) : (...) -> ()
      llvm.return
    }
    ```

    `args[0]` is the result area (the C interface's first parameter: the
    results' descriptors, one after another) and `args[1 + i]` the
    descriptor of argument i, as docs/abi.md specifies.

    Every other function defined in the module then gets internal linkage:
    the object exports exactly `seqc_manifest` and `seqc_invoke`, so no
    generic name (`forward`) leaks into a host or a shared library.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // SEQC_LOWERING_ENTRY_PASSES_TD
