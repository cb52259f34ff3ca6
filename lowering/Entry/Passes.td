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
    - records the function in the module attribute `seqc.entry`, and the
      numbers of inputs and parameters in `seqc.num_inputs` and
      `seqc.num_params`, for the passes after it (`seq-hoist-preparation`,
      `seq-cpu-pack-weights`, `seq-emit-invoke`);
    - drops the frontend's `seq.*` argument and result attributes, which the
      manifest now holds (the translation to LLVM IR would warn about each).

    Runs first, on `seq` ops and tensors, while element types and symbolic
    dimensions are still in the function type. With `target=nvptx` the
    manifest says `"target": "nvptx"`, which tells the runtime to set up the
    CUDA driver and device-accessible memory when the model loads; CPU
    manifests have no `target` key.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The device the model's kernels run on (cpu, nvptx)">,
  ];
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

    With the module attribute `seqc.packed_arguments` (n, set by
    `seq-loop-layers`), the C interface takes the result area and one
    pointer to an array of the n descriptors of the model function's
    arguments: `seqc_invoke` copies `args[1..]` into an array of n pointers
    in its frame with one memcpy, writes the prepared descriptors' addresses
    after them in a loop over `@__seqc_prepared_offsets` and the arena's
    last, and passes it to `@_mlir_ciface_<entry>` and to
    `@_mlir_ciface___seqc_arena_bytes`.

    It also defines `seqc_prepare(void **params) -> void *`, which calls the
    preparation functions of `seq-hoist-preparation` into a malloc'ed state
    holding the prepared descriptors (ranks from `seqc.prepared_ranks`):
    the C interface of `@__seqc_prepare` once, with the parameters of
    `seqc.prepare_params`, and that of each function of
    `seqc.prepare_groups` in a loop over a constant table of its
    parameters' indices (`@__seqc_prepare_params_<n>`), one call per value.
    After the call that reads a parameter of `seqc.prepared_only_params` for
    the last time, a module compiled for the runtime (one that allocates
    through `_mlir_memref_to_llvm_alloc`) calls the runtime's
    `seqc_prepare_done_reading(const int64_t *params, int64_t count)` on a
    constant table of those parameters (`@__seqc_prepare_last_reads` after
    `@__seqc_prepare`, `@__seqc_prepare_last_reads_<n>` a row per call of
    the n-th group, -1 for the others), so that their memory goes as soon
    as the preparation is done with them; and `seqc_release(void *)`, which walks a constant table of the
    descriptors' offsets in the state (`@__seqc_prepared_offsets`), freeing
    each buffer once (not constant globals), and frees the state. Both are
    of constant size in the number of parameters. With prepared
    values, `seqc_invoke` passes the state's descriptors, taken from the
    slot after the parameters, as the C interface's last parameters, and
    prepares for the call alone when that slot is null. Without them,
    `seqc_prepare` returns null and `seqc_release` does nothing.

    Every other function defined in the module then gets internal linkage:
    the object exports exactly `seqc_manifest`, `seqc_invoke`,
    `seqc_prepare` and `seqc_release`, so no generic name (`forward`) leaks
    into a host or a shared library.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def SeqHoistPreparation : Pass<"seq-hoist-preparation", "::mlir::ModuleOp"> {
  let summary = "Moves computations on parameters alone into a preparation "
                "function run once per loaded model";
  let description = [{
    Runs on linalg on tensors, after `seq-build-manifest` (whose module
    attributes `seqc.entry`, `seqc.num_inputs` and `seqc.num_params` say
    which arguments of the model function are parameters). The ops that
    depend only on parameters and constants and compute data (a linalg op
    other than a fill, a pad, a concatenation), and whose results a run
    consumes, move into

    ```mlir
    func.func @__seqc_prepare(%params...) -> (%prepared...)
    ```

    and the model function takes their values as new arguments after its
    parameters. Prepared values whose computations share ops (but scalar
    constants and empty tensors) form one component; a component that
    reads parameters is a function of them, and the components of which
    that function is the same (a weight packed alike in every layer) share
    it, as `@__seqc_prepare_<n>(%params of one component) -> (%values of
    one component)`. The module attribute `seqc.prepare_groups` lists, for
    each such function, the parameters and values of its components:
    `seqc_prepare` calls it once for each, in a loop, so that its code does
    not grow with the number of layers.
    `@__seqc_prepare` computes the other values, listed in
    `seqc.prepare_values`, from the parameters they read, listed in
    `seqc.prepare_params`. `seq-emit-invoke` then exports `seqc_prepare` and
    `seqc_release`: the runtime calls them when the weights are bound and
    when they are replaced or the model is freed, and passes the prepared
    values to every `seqc_invoke` (docs/abi.md). Packed weight layouts
    (`seq-cpu-pack-weights`), S4's discretization and static tables are
    computed once this way instead of once per call.

    Metadata ops (reshapes, slices), fills, constants and scalar arithmetic
    stay in the model function, and so does everything on the way to the
    model's results, which must be fresh buffers. The ranks of the prepared
    values are recorded in the module attribute `seqc.prepared_ranks`.
    Without the entry attributes the pass does nothing.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each prepared value">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def SeqPlanMemory : Pass<"seq-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Places the model function's intermediates in one arena "
                "planned from their lifetimes";
  let description = [{
    Runs on memrefs, after bufferization and the insertion of deallocations
    (and after the target's buffer lowering, so that its passes still see
    `memref.alloc`s), on the function `seqc.entry` names. Each
    `memref.alloc` at the function's top level whose buffer does not
    escape (it, or a view of it, is not returned, yielded, passed to a call
    or turned into a pointer other than one only compared, as the CPU
    kernels' alignment tests do) becomes a `memref.view` of a byte arena at an
    offset, and its deallocations go:

    ```mlir
    %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x512xf32>
    ...
    memref.dealloc %a : memref<?x512xf32>
    // becomes
    %a = memref.view %arena[%offset][%n] : memref<?xi8> to memref<?x512xf32>
    ```

    A buffer lives from the first to the last top-level op that touches its
    data through it or a view of it; two buffers whose lives overlap get
    disjoint bytes, and the others may share. Offsets are multiples of
    `alignment`. Sizes that depend on the inputs' sizes are rebuilt at the
    function entry, and the offsets with them: the order of placement and
    which buffers interfere are fixed at compile time, an offset is the
    highest end of the interfering buffers placed before it. Allocations
    inside loops (per-block scratch) stay on the heap.

    A folded layer (`@__seqc_layer_N` of `seq-fold-layers`, called only by
    that function) is planned first, the same way: its arena is a slice of
    the caller's memory, its new last argument, and each call gets one, a
    `memref<?xi8>` of the bytes the layer's plan needs for the call's
    operands, allocated before the call and freed after it, which the
    function's own plan then places (a layer's call uses its buffers only
    while it runs, as a kernel's does). The slices' views and sizes move to
    the function's entry.

    The arena becomes the function's last argument (`memref<?xi8>`, its
    base aligned to `alignment`), and `func.func @__seqc_arena_bytes`,
    taking the other arguments, returns the bytes a call needs.
    The module attribute `seqc.arena` tells `seq-emit-invoke`, which keeps
    the arena in the prepared state (docs/abi.md); `seqc.memory_plan`
    holds a report of the plan (`seqc --emit=memory-plan`): each buffer's
    type, source location, size (an expression of the inputs' symbolic
    sizes when dynamic), offset and life, and the peak against the sum of
    the sizes, evaluated at `dims` when sizes are dynamic. Without the
    entry attributes, or without a buffer to plan, the pass does nothing.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Alignment in bytes of the arena and of every offset in it">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark summarizing the plan">,
    ListOption<"dims", "dims", "std::string",
               "Symbolic sizes of the inputs (name=value, as the manifest "
               "names them) at which the report also gives the bytes of a "
               "plan of dynamic sizes">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def SeqFoldLayers : Pass<"seq-fold-layers", "::mlir::ModuleOp"> {
  let summary = "Compiles the repeated layers of the model function once, "
                "as a function called for each layer";
  let description = [{
    Runs on memrefs, after bufferization (so that the target's kernels,
    the memory plan and the rest see each repeated layer once), on the
    function `seqc.entry` names (without it, on every public function of
    one block) unless that function already calls a folded layer (an
    earlier run folded it). With `before-deallocation` (seqc from -O1, right
    after One-Shot bufferization, so that the deallocation passes see each
    layer once too) the run is all or nothing per function: if a group of
    twins would return a buffer (whose callers could free it only with
    run-time alias checks, which keep the buffers they compare out of the
    memory plan), or nothing folds, the function is left exactly as it was
    (the run works on a clone), for the run after the deallocation passes.
    Its functions then free nothing yet; those passes add the
    deallocations. The frontend names the module instance whose forward
    built an op in the op's location
    (`loc(callsite(... at "layers.3"(call site)))`). First each
    deallocation moves right after the last op that touches its buffer, a
    `memref.dim` of an allocation or an `expand_shape` becomes the size it
    reads (and the top-level pure ops this makes constant fold: a
    broadcast check comparing a size with itself), and the pure ops whose
    operands are defined at the entry move there, with the allocations of
    the buffers a layer shares with what follows it (or that no layer
    allocates). The function's top-level ops
    are then cut into segments where the outermost instance changes (ops of
    no instance between two ops of one instance belong to it, and so do the
    deallocations right after a segment of the buffers it allocated); in
    each segment the views of buffers from above are rebuilt at its start
    and its deallocations of buffers from above move after it. Segments of
    the same structure (op names, attributes, properties and types in
    pre-order, operands by position: the values defined inside the
    segment, and the i-th value defined above it) are outlined into one
    private function `@__seqc_layer_N`, called in place of each with its
    values from above as arguments: the layer's weights and prepared
    weights, the buffers it shares, sizes. A constant defined above is
    cloned into the function when every twin uses the same one there, and
    passed otherwise. Results used after a segment are returned. A group in
    which a twin would pass one buffer as two arguments is not folded (its
    function's kernels could not tell that they alias).

    ```mlir
    %y0 = ... ops of layers.0 on %x, %w0 ...
    %y1 = ... ops of layers.1 on %y0, %w1 ...
    // becomes
    %y0 = func.call @__seqc_layer_0(%x, %w0) : (...) -> memref<...>
    %y1 = func.call @__seqc_layer_0(%y0, %w1) : (...) -> memref<...>
    ```

    Each call runs the ops of the segment it replaces on the same values,
    so outputs are unchanged; what shrinks is the code LLVM optimizes and
    generates, which no longer grows with the depth. Segments without a
    twin (a layer of a different width or options) stay in place and are
    cut again at the next level of instances (its sub-modules). Segments
    with a stack allocation at their top level, control flow of several
    blocks, or a nested deallocation of a buffer from above are not
    outlined.

    With `remarks`, a remark at the call site of the first layer of each
    folded group names the function and the layers, and one at each layer
    left unfolded says why. A non-empty `unsupported` (the target that
    cannot fold) folds nothing and says so in the remarks.

    With `on-tensors` (seqc from -O1 on the CPU: before the conversion to
    linalg and again after the preparation) the same segments are cut from
    the model function on tensors, so that the passes up to the matching
    `seq-inline-layers` (after the conversion's verifier, after One-Shot
    bufferization) see each group of twins once: bufferizing across
    function boundaries, a twin's function decides once which of its
    tensors share buffers, and each call gets the same decision. First the
    leaves of the function (pure tensor and arith ops, `linalg.fill`s and
    `seq.dequantize`s that read only its arguments, constants and other
    leaves: the input's sizes, an empty tensor of those sizes and its fill,
    a reshape of a weight, a quantized weight's view for its Linear; CSE keeps the first of equal ones inside the first layer) move
    right after what they read, and each segment gets its own copy of the
    leaves it reads, located at its op, before the segments are compared;
    the originals, dead once every segment has its copy, are erased. A
    segment's results are returned as tensors; nothing is remarked (the
    run on buffers remarks on the layers it folds), and the functions are
    private, named `@__seqc_tensor_layer_N` and marked
    `seqc.inline_after_bufferization`. If nothing folds, the function is
    left as it was. On buffers, the allocations a segment cut below the
    outermost instances shares with what follows move to the entry too
    (the residual stream of layers nested in a model's instance), and a
    `memref.dim` of a `collapse_shape` becomes the product of the sizes it
    merges.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on the layers folded and on those that are not">,
    Option<"unsupported", "unsupported", "std::string", /*default=*/"\"\"",
           "Fold nothing and remark that this target keeps layers "
           "unrolled">,
    Option<"beforeDeallocation", "before-deallocation", "bool",
           /*default=*/"false",
           "Run before the deallocation passes: fold a function only if no "
           "group of its layers would return a buffer, else leave it as it "
           "was to a run after them">,
    Option<"onTensors", "on-tensors", "bool", /*default=*/"false",
           "Run on tensors: outline each group of twins into a function "
           "that seq-inline-layers inlines back">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def SeqInlineLayers : Pass<"seq-inline-layers", "::mlir::ModuleOp"> {
  let summary = "Inlines the layer functions seq-fold-layers outlined on "
                "tensors back into their callers";
  let description = [{
    Runs after the conversion to linalg's verifier and right after One-Shot
    bufferization: each call of a function marked
    `seqc.inline_after_bufferization` (made by `seq-fold-layers` with
    `on-tensors`) is replaced by a copy of the function's ops on the call's
    operands, and the function is erased. In each copy the location of the
    first twin's instance (the function's location) becomes the call's, and
    so do the names of the instances nested in it (`layers.0.mlp` becomes
    `layers.1.mlp`), so that the ops name the instance that built them
    again, as they did before the outlining: the run of `seq-fold-layers`
    on buffers cuts them by instance, and remarks and diagnostics point at the layer they
    belong to. The layers compute what they computed unrolled; the passes
    between the two ran once per group of twins instead of once per layer.
  }];
}

def SeqLoopLayers : Pass<"seq-loop-layers", "::mlir::ModuleOp"> {
  let summary = "Runs the calls of a folded layer function as one loop over "
                "a table of the layers' values";
  let description = [{
    Runs after `seq-fold-layers` (and, on the CPU, after the thread teams),
    on the function `seqc.entry` names. Each run of two or more consecutive
    calls, without results, of one function of `seq-fold-layers`
    (`@__seqc_layer_N`, or its team form) in any block of the function
    becomes one `scf.for` over the layers whose body makes one call. An
    operand that is the same value at every call is passed as it is; one
    that differs is rebuilt in the loop body from its leaves, the pure ops
    on the path cloned from the first call's (the arena's views, their
    reshapes, the memory plan's offsets): integer constants (arena offsets,
    flags) are read from a constant table `@__seqc_layer_table_N`
    (`memref<L x K x i64>`, a row per layer), integer values computed
    before the run from a table on the stack filled before it, and the
    function's arguments (the layer's weights, prepared weights and state)
    from the array of argument descriptors:

    ```mlir
    func.call @__seqc_layer_0(%w0, %view0, %c64)
    func.call @__seqc_layer_0(%w1, %view1, %c128)
    // becomes (%descs: the array of the arguments' descriptors)
    scf.for %l = %c0 to %c2 step %c1 {
      %k = memref.load %table[%l, %c0]   // the argument's index
      %w = <llvm.load of the descriptor at %descs[%k]>
      %off = memref.load %table[%l, %c1]
      %view = memref.view %arena[%off][...]
      func.call @__seqc_layer_0(%w, %view, ...)
    }
    ```

    When a loop is made, the function (and `@__seqc_arena_bytes`) takes
    one `!llvm.ptr` instead of its memref arguments: an array of pointers to
    their descriptors, in argument order, which `seq-emit-invoke` fills
    with a table walk; the module attribute `seqc.packed_arguments` gives
    their number. Arguments used outside the loops are read from it at the
    entry. Each iteration runs the ops of the call it replaces on the same
    values, so outputs are unchanged. A run whose operands differ in a way
    the loop cannot index (a value with memory effects, a float, a value
    computed inside the run's team) stays unrolled, with a remark.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on the loops made and on the runs left unrolled">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // SEQC_LOWERING_ENTRY_PASSES_TD
