//===- Passes.td - CPU-specific lowering passes ------------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_CPU_PASSES_TD
#define SEQC_LOWERING_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeqCPUSerializeParallelLoops
    : Pass<"seq-cpu-serialize-parallel-loops"> {
  let summary = "Keeps only large, outermost scf.parallel loops parallel";
  let description = [{
    `convert-scf-to-openmp` turns every `scf.parallel` into an OpenMP parallel
    region. On a CPU only the outermost parallel loop of a nest is worth a
    thread team: a nested region either runs serially on a busy team or
    oversubscribes the cores, and a loop with little work costs more in the
    fork/join than it saves. This pass rewrites into nests of `scf.for`

    - every `scf.parallel` nested inside another `scf.parallel`,
    - every `scf.parallel` inside a sequential loop (`scf.for`, `scf.while`):
      the steps of a recurrence (a state-space scan, causal linear
      attention) would otherwise fork and join the team once per step, which
      costs more than the step's work (a passive team wakes its threads from
      the kernel every time), and
    - every `scf.parallel` whose estimated work, the number of scalar loop
      iterations of the loop and the loops it contains, is statically known
      and below `min-work`.

    Loops with a dynamic trip count count as large: their size is only known
    at run time, and the models seqc compiles make them the sequence length.
    Loops with reductions are left alone (OpenMP lowers their reductions).

    Example: with `min-work=4096`,

    ```mlir
    scf.parallel (%i) = (%c0) to (%c16) step (%c1) {   // 16 * 8 < 4096
      scf.for %k = %c0 to %c8 step %c1 { ... }
    }
    ```

    becomes an `scf.for` over `%i`.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"4096",
           "Estimated scalar iterations below which a parallel loop stays "
           "sequential">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def SeqCPUThreadTeam : Pass<"seq-cpu-thread-team", "::mlir::ModuleOp"> {
  let summary = "Runs the parallel loops of a function in one OpenMP thread "
                "team";
  let description = [{
    `convert-scf-to-openmp` gives every parallel loop its own `omp.parallel`
    region: a model call forks and joins the team once per op (GPT-2 small:
    about 20 times per layer). This pass, run on the buffers after the
    memory plan and the folding of layers, wraps each maximal run of ops at
    the top level of a function that runs two worksharing loops or more in
    one `omp.parallel`, and within it

    - a parallel loop (an `omp.parallel` holding one `omp.wsloop` without
      clauses) keeps only its worksharing loop, whose implicit barrier
      orders it against what follows; the static schedule is unchanged, so
      each iteration runs on the same thread as before and results are
      bit-identical;
    - a call of a function whose body is made only of such ops runs that
      function's team form, `@<name>_team`: every thread of the team calls
      it, and its loops are orphaned worksharing loops of the caller's team;
    - ops without memory effects (index arithmetic, memref views) are
      computed by every thread; they are moved before the region;
    - other ops whose results are unused and that neither allocate nor hold
      or call parallel regions (copies, serialized small loops, asserts, calls
      of serial kernels) run on one thread, consecutive ones in one
      `omp.single` (one barrier for the group);
    - an `scf.if` without results whose branches hold only ops of the kinds
      above (a test at run time between two forms of an op: the grouped
      decode form of attention or the general one, a packed or an unpacked
      kernel) runs on every thread, which all take the same branch (its
      condition is computed before the region or by every thread alike), and
      the ops of its branches are rewritten as above.

    Everything else ends a run: allocations (a refused allocation on the
    calling thread unwinds the model call, which must not happen inside a
    parallel region), loads whose values are used, loops holding parallel
    regions, branches holding any of these, returns. A run with a single parallel loop keeps its region.
    Functions that lose their last call (an original called only inside
    teams, a team form called nowhere) are erased.

    ```mlir
    omp.parallel { omp.wsloop { omp.loop_nest ... } omp.terminator }
    %v = memref.view %arena[%off][%n] : memref<?xi8> to memref<?x64xf32>
    memref.copy %a, %v : memref<?x64xf32> to memref<?x64xf32>
    call @__seqc_kernel_1(%n, %v) : (index, memref<?x64xf32>) -> ()
    ```

    becomes

    ```mlir
    %v = memref.view %arena[%off][%n] : memref<?xi8> to memref<?x64xf32>
    omp.parallel {
      omp.wsloop { omp.loop_nest ... }
      omp.single { memref.copy %a, %v ... omp.terminator }
      call @__seqc_kernel_1_team(%n, %v) : (index, memref<?x64xf32>) -> ()
      omp.terminator
    }
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every function that runs its parallel loops "
           "in thread teams: how many loops in how many teams">
  ];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def SeqCPUInterchangeContractions
    : Pass<"seq-cpu-interchange-contractions"> {
  let summary = "Moves the reduction loops of contractions outside the "
                "innermost output dimension";
  let description = [{
    `convert-linalg-to-loops` nests loops in iterator order, which puts the
    reduction of a matmul innermost: every iteration adds to the same output
    element, a chain of dependent floating-point adds (and a store-to-load
    round trip) that LLVM may not reassociate, so it neither vectorizes nor
    overlaps them. This pass permutes the loops of every contraction on
    tensors so that the loop indexing the output's last (contiguous)
    dimension is innermost, `(i, j, k) -> (i, k, j)` for a matmul: the inner
    loop then updates consecutive output elements independently and LLVM
    vectorizes it.

    Each output element still accumulates its products in the original order
    (k ascending from the init value), so results are bit-identical to the
    unpermuted loops.

    Only contractions whose inputs are all either invariant in the new inner
    loop or contiguous along it are permuted (`x @ W`, attention's `P @ V`).
    `x @ W^T` (`W[j, k]`) keeps its order: its inner loop would gather one
    element per cache line, and transposing `W` on every call costs more than
    it saves for small batches (packing weights belongs at load time).

    A contraction here is a linalg op on tensors with one output, at least
    one reduction loop, and at least two inputs one of which does not depend
    on the output's innermost loop (it is reused across the inner loop, like
    the left operand of a matmul). Row reductions (`sum`, `max` over a
    dimension) keep their order: interchanging them would only make the
    inner loop stride through the input. Named ops are generalized first.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SeqCPULowerStridedCopies : Pass<"seq-cpu-lower-strided-copies"> {
  let summary = "Rewrites memref.copy between non-contiguous buffers into "
                "linalg.copy";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` to `llvm.memcpy` when
    both sides are contiguous, and otherwise to a call of `memrefCopy` from
    MLIR's C runner utilities, which seqc executables do not link. This pass
    rewrites the non-contiguous copies (strided subviews produced by
    bufferizing slices and concatenations) into `linalg.copy`, which the
    following linalg-to-loops lowering turns into loops (parallel ones at
    -O1 and above). Contiguous copies keep the `memcpy` lowering.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SeqCPUApproximateMath : Pass<"seq-cpu-approximate-math"> {
  let summary = "Replaces f32 transcendental math ops by polynomial "
                "approximations that vectorize";
  let description = [{
    `math.exp`, `math.log`, `math.tanh`, `math.erf`, `math.sin`, `math.cos`
    and the other functions MLIR approximates become sequences of `arith`
    ops (range reduction, a minimax polynomial, exponent manipulation) on
    f32. LLVM lowers the original ops to libm calls, one element at a time,
    which keeps softmax, GELU, SiLU and the scans' `exp` from vectorizing;
    the approximations vectorize like any other arithmetic. Their error is a
    few ulp (MLIR's `math` polynomial approximation patterns), well inside
    the tolerance seqc's numerical tests hold every level to against the
    `-O0` lowering, which keeps the libm calls.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def SeqCPUVectorizeRows : Pass<"seq-cpu-vectorize-rows"> {
  let summary = "Rewrites f32 elementwise ops, row reductions and row copies "
                "on buffers into loops over vectors of their contiguous "
                "innermost loop";
  let description = [{
    Two kinds of `linalg.generic` on f32 buffers, whose body is elementwise
    `arith`/`math` and whose operands either run contiguously along the
    vectorized loop or do not depend on it (those are loaded once and
    broadcast). Inputs may be bf16 or f16 when the body only widens them
    (`arith.extf` to f32): they are read as narrow vectors and widened in
    registers (a shift for bf16, `vcvtph2ps` for f16), as in the copy of a
    narrow left operand that `seq-cpu-vectorize-contractions` widens once
    per call.

    - **elementwise** ops (all loops parallel), vectorized along the
      output's innermost loop: activations, residual adds, softmax's
      normalization, layer norm's scale and shift;
    - **row reductions** (one reduction loop) of the form
      `out = combine(f(inputs...), out)`, `combine` one of `arith.addf`,
      `arith.maximumf`, `arith.minimumf`, vectorized along the reduction:
      softmax's row max and sum, layer norm's mean and variance, RMSNorm's
      sum of squares. A second output indexed by every loop, contiguous
      along the reduction and not read by the body gets a value per
      element, stored as each vector is combined: softmax's exps beside
      their row sums, one pass over the row instead of two.

    Copies and transposes of f32 buffers that keep the innermost dimension
    innermost and contiguous on both sides (`linalg.copy` of strided slices,
    the heads' `[b, n, h, d] <-> [b, h, n, d]` transposes) are elementwise
    ops whose body yields its input: they are generalized and move rows of
    vectors too. Without this they became scalar loops whose parallel
    dimensions, coalesced into one index, divided it at every element. A
    transpose of the innermost dimension keeps its scalar loops.

    Operands that do not vary along the row (a row's maximum or sum) are
    read once per row, before its loops: in them, LLVM could not hoist the
    load above the stores of the output.

    Each becomes an `scf.parallel` over the other loops (the rows) and, per
    row, a loop over full vectors followed by one masked step: an
    elementwise op stores the last vector with a mask; a reduction combines
    vectors into a vector of partial results, masked lanes contributing the
    combiner's neutral value (0, -inf, +inf), then reduces it once and
    combines that with the output's initial value.

    LLVM's loop vectorizer handles neither reliably here: the reductions
    add into one scalar, a chain it may not reassociate, and the loops reach
    it through OpenMP outlining and descriptor arithmetic. Sums are
    reassociated (lanes): results differ from the `-O0` loops by rounding.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of the target's vector registers in bits">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def SeqCPUPackWeights : Pass<"seq-cpu-pack-weights", "::mlir::ModuleOp"> {
  let summary = "Reads 2-D weight operands of contractions from column panels "
                "packed for the broadcast kernel";
  let description = [{
    Runs on linalg on tensors, before elementwise fusion and
    `seq-hoist-preparation`. In the model function (`seqc.entry`), every
    contraction `C += A * W` (f32, bf16 or f16 operands, an f32 C) whose
    right operand W is a 2-D parameter
    (`seqc.num_inputs`, `seqc.num_params`) laid out [n, k] (`x @ W^T`, a
    Linear) or [k, n] (`x @ W`) reads instead

    ```
    P[p, k, j] = W[p * w + j, k]  (0 where p * w + j >= n)
    ```

    through the indexing map `(n floordiv w, k, n mod w)`, where w is the
    broadcast kernel's tile width for `vector-bits` and `vector-registers`
    (64 columns on AVX-512, 16 on AVX2). P keeps W's element type: a bf16
    weight stays bf16, half the bytes of an f32 copy.
    `seq-cpu-vectorize-contractions`
    recognizes the map and runs its broadcast kernel on whole panels; the
    pack depends on the parameter alone, so `seq-hoist-preparation` computes
    it once per set of weights. Without the entry attributes the pass does
    nothing.

    With `bf16-dot` (a target with AVX512_BF16's `vdpbf16ps`) and 512-bit
    vectors, a bf16 weight whose contraction's other input is bf16 too is
    packed in k-pair panels instead:

    ```
    P[p, q, j, r] = W[p * w + j, 2 q + r]  (0 past n or k)
    ```

    through `(n floordiv w, k floordiv 2, n mod w, k mod 2)`: each 32-bit
    word holds one column's two consecutive reduction elements, the
    operand layout of `vdpbf16ps`, and a vector of 32 bf16 is 16 columns of
    one k pair.

    With `int8-activations` on a target with VNNI (`vnni-bits`), the blocks
    B [n, k / 32, b] of a q4_0 (b = 18), q4_1 (b = 20) or q8_0 (b = 34)
    Linear whose weight is a parameter (the generic carrying
    `seq.quantized`, at least w columns), or the rows B [n, 1, b = 4 + k] of
    an int8 one whose k is a multiple of 32, are packed into panels of
    w = 16 columns (8 with 256-bit vpdpbusd), one panel's block (int8: its
    rows) in b w bytes (h = the header's bytes: 2, q4_1's 4, int8's 4; e =
    the bytes of one of its fields: 2 for the f16 scale and minimum, 4 for
    int8's f32 scale):

    ```
    P[p, kb, e w f + e c + s]         = B[p w + c, kb, e f + s]    scales, minimums
    P[p, kb, h w + 4 w q + 4 c + t]   = B[p w + c, kb, h + 4 q + t] values
    ```

    (c < w, s < e, f < h / e, t < 4, q < 4 for q4's nibble bytes, q < 8
    for q8_0's values, q < k / 4 for int8's, which are stored + 128 (the
    sign bit flipped); 0 past n): the w scales side by side (then q4_1's w
    minimums), then
    for each group q of 4 value bytes of the
    blocks, the w columns' groups, so that one vector load holds 4 bytes of
    every column, the unsigned operand layout of `vpdpbusd` with one i32
    lane per column. The generic reads P through the matching maps and
    keeps its body (q8_0's flips the byte back first: its scalar loops
    compute the same values), and gets `seq.quantized_panel = w`, which
    `seq-cpu-vectorize-quantized` recognizes. The panel's bytes are a
    permutation of the blocks': 4.5 or 8.5 bits per weight as before.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of the target's vector registers in bits">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"16", "Number of vector registers of the target">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "Pack bf16 weights of bf16 contractions in k-pair panels for "
           "vdpbf16ps (AVX512_BF16)">,
    Option<"vnniBits", "vnni-bits", "int64_t", /*default=*/"0",
           "The widest vectors of the target's VNNI vpdpbusd (512, 256, or "
           "0: none)">,
    Option<"int8Activations", "int8-activations", "bool",
           /*default=*/"false",
           "Pack q4_0, q4_1 and q8_0 blocks and int8 rows into column "
           "panels for the int8-activation kernel (with VNNI)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every contraction whose weight is packed">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SeqCPUVectorizeContractions
    : Pass<"seq-cpu-vectorize-contractions"> {
  let summary = "Rewrites f32, bf16 and f16 contractions on buffers into "
                "cache-blocked, register-tiled vector FMA kernels";
  let description = [{
    Every `linalg` contraction on buffers of the form `C += A * B` with an
    f32 C (one reduction loop, operands indexed by loop indices: matmul,
    batched matmul, `x @ W^T`, attention's `Q K^T` and `P V`) becomes a loop
    nest generated for the target's vector registers:

    - an `scf.parallel` over the batch loops and over blocks of `mc` rows and
      `nc` columns of the output (the unit of work of the thread team); the
      broadcast kernel's blocks are one register tile wide and ordered
      columns first, so that a thread runs a strip of B's columns (a
      weight's packed panel) against every row of A in turn while the strip
      stays in L2, and reads B from memory once; while it runs an f32 or
      bf16 panel of at most 256 KiB (k <= 1024 in f32 with 16 lanes, one pass over the
      reduction), each step prefetches a cache line of the next panel into
      L2 (`memref.prefetch`, the line chosen by the tile's row), so that
      the first tiles of a panel do not wait on memory;
    - inside a block, register tiles: the **dot kernel** when both inputs
      are contiguous along the reduction (`x @ W^T`, `q @ k^T`): an
      `mr x nr` tile of accumulator vectors over reduction lanes, `mr + nr`
      vector loads and `mr * nr` `vector.fma` per step, a masked step for
      the remainder and one `vector.reduction` per output element at the
      end; the **broadcast kernel** when the right operand is contiguous
      along the output's columns (`x @ W`, `P @ V`): an `mr x nv` tile of
      output vectors, `nv` loads of a row of B and `mr` broadcasts of A per
      step, a masked vector at the column edge;
    - edge rows and columns use the same kernels with one row or column.

    The tile comes from `vector-bits` (lanes per register) and
    `vector-registers` (32 on AVX-512: 4 x 4 dot tiles, 6 x 4 vectors
    broadcast tiles; 16 on AVX2: 3 x 3 and 6 x 2), so that accumulators and
    operands stay in registers. Sums are reassociated (lanes of the dot
    kernel): results differ from the `-O0` loops by rounding only.

    A and B may each be f32, bf16 or f16 (the body widens them with
    `arith.extf`): the kernels load vectors of the stored type and widen
    them in registers (a 16-bit shift for bf16, F16C's `vcvtph2ps` for f16;
    `f16c=false` says in the remark that the target converts each element
    by a call instead), then multiply-add in f32; no weight is copied or
    converted outside the loop nest. The broadcast kernel would widen each
    element of a bf16 or f16 A once per block of columns, on the ports the
    FMAs use: over at least two blocks (a static column count of 2 nc or
    more), A contiguous along its last dimension is widened once instead,
    into an f32 buffer of its shape (an elementwise `arith.extf` that
    `seq-cpu-vectorize-rows` turns into vector conversions, one row per
    parallel iteration; freed after the kernel), and the kernel reads that
    with its f32 tiles (a bf16 512 x 1024 x 1024 Linear ran 1.34x faster,
    an f16 one 1.29x, on an Emerald Rapids). Otherwise it reads such an A
    contiguous along the reduction four elements at a time, widened once
    for four steps (with 4 rows per tile, so that they stay in registers).
    It reads a bf16 B two vectors at a time, as 32-bit
    words whose low halves shifted up are the even columns and whose high
    halves are the odd ones, and keeps those accumulators de-interleaved
    until the tile is stored. With `bf16-dot` (AVX512_BF16, 512-bit
    vectors), a bf16 A times a bf16 B packed in k-pair panels (see
    `seq-cpu-pack-weights`) takes `x86vector.avx512.dot` (`vdpbf16ps`)
    instead: per pair of reduction steps, `nv` loads of 32 bf16 (16
    columns x 2 steps), one 32-bit broadcast of A's pair per row, and
    `mr * nv` dot products of pairs, each the work of two FMAs; an odd
    reduction ends with A's last element paired with zero. Both products
    of a pair are exact in f32; their sum and the accumulation round like
    an FMA's (the instruction flushes bf16 denormals to zero). An epilogue that rounds
    the f32 result to bf16 or f16 (the narrow output of the contraction)
    is applied in the output tile like any other, the bf16 rounding (to
    nearest even) in integer ops.

    A dot-kernel contraction with a short static reduction (at most 256,
    `q @ k^T` at head size 64) and at least 8 rows (tested at run time when
    the row count is dynamic) copies B once per call into column panels and
    takes the broadcast kernel on them; with `bf16-dot` and both operands
    bf16 (bf16 attention's `Q K^T`, read in place), the copy is in k-pair
    panels and the broadcast kernel multiplies pairs with `vdpbf16ps`, while
    the dot kernel of fewer rows multiplies 32 bf16 of each row per step in
    pairs.

    The elementwise op right after a contraction that reads its output (an
    activation, a residual add, a scaling, a gate) is its epilogue: both
    kernels apply it before they store (the broadcast kernel to the output
    tile's vectors, the dot kernel to each element after its lanes are
    summed), and write its output instead of C. With `remarks`, a
    contraction whose output another op reads says why that op was not
    fused.

    With `streaming-store-bytes` set, a broadcast kernel that writes its
    output once (the reduction in one pass, from an absorbed fill or bias
    rather than from C) stores the full vectors of its output tiles with
    non-temporal stores (`vmovntps`: around the caches, without reading
    each line first) when, at run time, the output holds at least that
    many bytes and its base and row strides are aligned to a vector;
    otherwise with ordinary stores. Each parallel block then ends with a
    fence, which orders those stores before the threads' barrier. An output
    that large does not stay in the caches for the op that reads it, and a
    product with a short reduction (`Q K^T` at head size 64) is otherwise
    bound by reading each line of its output before writing it.

    Contractions whose layout neither kernel handles keep the scalar loops;
    with `remarks`, each says why at its location.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of the target's vector registers in bits">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"16", "Number of vector registers of the target">,
    Option<"f16c", "f16c", "bool", /*default=*/"true",
           "The target converts f16 to f32 in vector registers (x86 F16C)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "Multiply bf16 operands in pairs with vdpbf16ps (AVX512_BF16)">,
    Option<"streamingStoreBytes", "streaming-store-bytes", "int64_t",
           /*default=*/"0",
           "Write contraction outputs of at least this many bytes with "
           "non-temporal stores where the kernel can (0: never)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every contraction left to the scalar loops">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def SeqCPUVectorizeQuantized : Pass<"seq-cpu-vectorize-quantized"> {
  let summary = "Rewrites x @ W^T with W in a block format (q8_0, q4_0, "
                "q4_1) or in int8 rows into a vector kernel that dequantizes "
                "in registers";
  let description = [{
    The `linalg.generic` of convert-seq-to-linalg carrying `seq.quantized`
    (a Linear whose weight is stored in GGUF blocks, on buffers) becomes an
    `scf.parallel` over blocks of rows and output columns (columns first:
    a thread takes a block of columns' rows in turn) with register
    tiles of `mr x nr` f32 accumulator vectors inside (4 x 2 with 16
    registers, 4 x 4 with 32). Per weight block of 32 and column, the f16
    scale is read and splat; per vector of weights the bytes are loaded,
    widened (the nibbles split for q4_0 and q4_1), converted and scaled in
    registers, and multiplied into the accumulators of the tile's rows with
    FMAs. The weight is never copied. With `int8-activations` on a target
    with VNNI (`vnni-bits`), q8_0, q4_0, q4_1 and int8 take llama.cpp's
    path instead (q4_1's minimum times each block's d * sum(q) of x added
    with one more FMA; int8's rows, when their length is a multiple of 32,
    read in blocks of 32, each scaled by x's scale alone and each output
    by the row's scale after the reduction):
    x is quantized per block of 32 to int8 with an f16 scale once per row,
    and the blocks are multiplied with vpdpbusd (one block per 256 bits,
    two per 512), each block's integer dot product converted and FMAed
    into f32 accumulators times the product of the two scales. Blocks that
    `seq-cpu-pack-weights` packed into panels (`seq.quantized_panel`) get
    the panel kernel: x quantized with signed q and each block's
    correction (-8 or -128 times its sum of q; none for q4_1), per block
    and (row, panel) an i32 accumulator of w columns taking 8 vpdpbusd of the panel's
    unsigned values times 4 broadcast activations, converted and FMAed
    into an f32 accumulator of w columns times the panel's scales and the
    row's (q4_1: plus the panel's minimums times the row's d * sum(q)); C
    is updated w columns at a time. int8's panels take the same kernel over
    the row's blocks of 32, each scaled by x's scale alone, and the w
    columns' f32 scales applied once, after the reduction. With
    `remarks`, each such op says what it became, or why it kept the scalar
    loops, or why it kept f32 activations when int8 ones were asked for.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of the target's vector registers in bits">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"16", "Number of vector registers of the target">,
    Option<"vnniBits", "vnni-bits", "int64_t", /*default=*/"0",
           "The widest vectors of the target's VNNI vpdpbusd: 512 "
           "(AVX512_VNNI), 256 (AVX-VNNI, or AVX512_VNNI with AVX512VL), 0 "
           "(none)">,
    Option<"int8Activations", "int8-activations", "bool",
           /*default=*/"false",
           "With VNNI: quantize the activations of q8_0, q4_0, q4_1 and "
           "int8 contractions per block of 32 to int8 (as llama.cpp's q8_0) and "
           "multiply them with vpdpbusd">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every quantized contraction">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def SeqCPUOutlineKernels
    : Pass<"seq-cpu-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Shares loop nests that occur several times as one private "
                "function each";
  let description = [{
    A model repeats its layers: after the vector kernels, every layer of a
    12-layer GPT carries its own copy of the same projection, MLP, norm and
    attention kernels, and the rest of the pipeline and LLVM optimize and
    generate code for each copy. This pass finds the outermost loop nests
    (loops, and linalg ops on buffers that are loop nests still to be
    lowered, not nested in another loop, in every function of the module)
    that are identical, moves one copy of each into a private function and
    replaces every occurrence by a call.

    Nests are identical when their ops agree in order, names, attributes,
    properties and types, with each operand either a value defined inside
    the nest (at the same position), a constant with the same value (the
    function keeps it: kernels keep their static sizes and steps) or the
    i-th distinct value the nest captures from above (the i-th argument of
    the function; memrefs keep their types, layouts included). Each call
    therefore runs the ops the nest it replaces ran, on the same values:
    results do not change. Nests that capture one value twice and nests
    that capture two values in its place are not the same nest.

    The functions have internal linkage and LLVM's `noinline`, so that the
    code exists once; a call costs a few nanoseconds against the whole loop
    nest it runs. Parallel loops stay `scf.parallel` in the function, which
    `convert-scf-to-openmp` turns into its OpenMP region as before; the loops
    of a linalg op are generated in the function, where they would have been
    generated in each copy.

    Left in place: nests that occur fewer than `min-uses` times or have
    fewer than `min-ops` ops, nests with a region of several blocks or an op
    with successors, and nests that return a memref (it could be a stack
    allocation of the nest).

    ```mlir
    scf.parallel (%i) = (%c0) to (%n) step (%c1) { ... %x ... }
    scf.parallel (%i) = (%c0) to (%n) step (%c1) { ... %y ... }
    ```

    becomes

    ```mlir
    call @__seqc_kernel_0(%n, %x) : (index, memref<?xf32>) -> ()
    call @__seqc_kernel_0(%n, %y) : (index, memref<?xf32>) -> ()
    ```
  }];
  let options = [
    Option<"minUses", "min-uses", "int64_t", /*default=*/"2",
           "Outline a loop nest only if it occurs at least this many times "
           "(1 outlines every nest of min-ops or more)">,
    Option<"minOps", "min-ops", "int64_t", /*default=*/"8",
           "Leave loop nests of fewer ops (root included) in place">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at the first nest of every group shared as one "
           "function">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // SEQC_LOWERING_CPU_PASSES_TD

def SeqCPULowerCollectives
    : Pass<"seq-cpu-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "Lowers the shard collectives of a tensor-parallel model to calls";
  let description = [{
    Rewrites each `shard.all_reduce` (sum, on a tensor, over the module's
    one-dimensional `shard.grid`, as seq-tensor-parallel emits them) into a
    call of a private function `@__seqc_all_reduce_<type>` from the
    operand's buffer into a new one (out of place), declared without a
    body and marked `seqc.collective`; each `shard.all_gather` (the
    vocabulary-parallel logits) into a call of `@__seqc_all_gather_<type>`
    into a buffer `[ranks, ...]` of the ranks' slices in rank order, then
    a `linalg.transpose` that moves the ranks' axis next to the gathered
    one and a `tensor.collapse_shape` that merges them. Then it erases the
    grids.
    seq-cpu-define-collectives gives those functions their MPI bodies after
    bufferization and deallocation, which do not know the effects of the
    `mpi` ops on their buffers, but know a call's.

    ```mlir
    %s = shard.all_reduce %p on @tensor_parallel grid_axes = [0] reduction = sum
        : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    // becomes
    %in = bufferization.to_buffer %p read_only : ... to memref<?x?x64xf32>
    %out = memref.alloc(%d0, %d1) : memref<?x?x64xf32>
    call @__seqc_all_reduce_f32(%in_flat, %out_flat) : (memref<?xf32>, memref<?xf32>) -> ()
    %s = bufferization.to_tensor %out restrict writable : ...
    ```

    Why not upstream's `convert-shard-to-mpi` (LLVM 22): it sizes the
    buffer of a tensor with dynamic dimensions by `memref.dim` at the index
    `ShapedType::kDynamic` (the hidden states are `[?, ?, dim]`), reduces
    in place with the same buffer as send and receive buffer (which MPI
    forbids without `MPI_IN_PLACE`), and splits a new communicator
    (`MPI_Comm_split`, itself a collective) at every all-reduce. Other
    collectives, reductions and grids of more than one axis are errors:
    seq-tensor-parallel does not emit them.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SeqCPUDefineCollectives
    : Pass<"seq-cpu-define-collectives", "::mlir::ModuleOp"> {
  let summary = "Gives the collectives' functions their MPI bodies";
  let description = [{
    Defines each function seq-cpu-lower-collectives declared: an
    `mpi.allreduce` (sum) from its first buffer into its second on
    `MPI_COMM_WORLD`; for an all-gather (LLVM 22's mpi dialect has no
    allgather), the sum of buffers that hold each rank's slice at the
    rank's offset and zeros elsewhere (`mpi.comm_rank`), which is the
    gathered buffer exactly, at twice `MPI_Allgather`'s bytes. The runtime checks that the world has exactly the
    grid's processes (docs/distributed.md), so the world communicator is
    the grid's. Marks the module for Open MPI's ABI (`dlti.map`
    `"MPI:Implementation" = "OpenMPI"`), which the mpi dialect's conversion
    to LLVM reads to name the library's handles (`ompi_mpi_comm_world`,
    `ompi_mpi_float`, ...).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::mpi::MPIDialect",
                           "::mlir::DLTIDialect"];
}

def SeqCPUOpenMPIHandles
    : Pass<"seq-cpu-open-mpi-handles", "::mlir::ModuleOp"> {
  let summary = "Names Open MPI's reduction handles as its library does";
  let description = [{
    The mpi dialect's conversion to LLVM (LLVM 22) refers to Open MPI's
    predefined reduction operations as `ompi_mpi_sum`, `ompi_mpi_max`, ...,
    but Open MPI's library exports them as `ompi_mpi_op_sum`,
    `ompi_mpi_op_max`, ... (`MPI_SUM` is `&ompi_mpi_op_sum` in its
    `mpi.h`), so a model would not link. This pass renames those external
    globals and their uses, after the conversion.
  }];
}

def SeqCPUStaticSchedule : Pass<"seq-cpu-static-schedule", "::mlir::ModuleOp"> {
  let summary = "Splits worksharing loops among the threads in the generated "
                "code";
  let description = [{
    The OpenMP translation lowers a worksharing loop to calls of libomp's
    `__kmpc_for_static_init` and `__kmpc_for_static_fini` around it. The
    libomp that Debian ships (LLVM 19's) is built with its debug traces: the
    static init formats two trace strings with `vsnprintf` into buffers it
    allocates and frees on every call, whether tracing is on or not. A
    SmolLM2-sized decode step runs about 1,200 worksharing loops (one per
    kernel per layer), and the formatting took 4% of it in `perf`.

    This pass, run after the thread teams and before the OpenMP conversion,
    replaces each `omp.wsloop` without clauses (no reductions, private
    copies, schedule, order or nowait) by the block of iterations of the
    calling thread: `t = omp_get_thread_num()`, `n =
    omp_get_num_threads()`, and of the nest's `total` iterations (a
    collapsed nest counts them all, the last dimension fastest) thread `t`
    runs `total / n` from `t * (total / n) + min(t, total % n)` on, one
    more when `t < total % n`: libomp's balanced static schedule. An
    `scf.for` over that block runs the body, the induction variables
    recovered from the linear index. The worksharing loop's implicit
    barrier becomes an `omp.barrier`, left out where the end of the
    `omp.parallel` region (the team's join) follows at once. Each iteration
    writes what it wrote before, so the results do not change; which
    thread runs an iteration may (libomp's default for a static schedule
    is the balanced one or the greedy one, by version and `KMP_SCHEDULE`).

    ```mlir
    omp.wsloop {
      omp.loop_nest (%i) : index = (%lb) to (%ub) step (%s) { ... omp.yield }
    }
    ```

    becomes

    ```mlir
    %t = call @omp_get_thread_num() : () -> i32
    %n = call @omp_get_num_threads() : () -> i32
    ... // the thread's block [%begin, %end) of the trip count
    scf.for %k = %begin to %end step %c1 {
      %i = arith.addi %lb, (%k * %s)
      ...
    }
    omp.barrier
    ```
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def SeqCPUStackScratch : Pass<"seq-cpu-stack-scratch", "::mlir::ModuleOp"> {
  let summary = "Gives the small buffers a loop allocates and frees in each "
                "iteration one stack slot per thread";
  let description = [{
    Bufferization allocates the tensors a loop body creates (tiled
    attention's running maximum and sum of a query tile, its score tile, a
    key tile's scratch) with `memref.alloc` in the body and frees them with
    `memref.dealloc` at its end: one call of the runtime's allocator and one
    of its release per iteration, taken under the allocator's lock by every
    thread of a team (a decode step over 4096 cached keys made about 17,000
    of them in a SmolLM2-sized model). An allocation refused inside a
    parallel region would also unwind the model call from a worker thread.

    This pass, run on the buffers after the thread teams are formed, moves
    such a buffer to the stack: one `memref.alloca` at the entry of the
    innermost enclosing `omp.parallel` region (each thread of the team gets
    its own) or, outside any, of the enclosing function (a team function
    runs on every thread's own stack), reused by every iteration. It applies
    to a `memref.alloc` nested in a loop (`scf.for`, `scf.while`,
    `scf.parallel`, `omp.loop_nest`) whose buffer

    - is freed by `memref.dealloc` ops in the allocation's own block only
      (so that two iterations never hold it at once), which are erased;
    - does not leave that block's iteration: neither it nor a view of it is
      yielded, returned, passed as a loop's initial value or to a function
      defined outside the module;
    - has an identity layout and a static size, or dynamic sizes with a
      constant upper bound (a constant, `arith.minui`/`arith.minsi`/
      `affine.min` with a constant operand: a tile's `min(64, n - i)`, an
      `arith.maxui`/`arith.maxsi` of bounded operands: the rows of a block
      chosen at run time, `max(min(4096 / d, 16), 1)`, or an unsigned
      quotient of a bounded value by a positive constant), in
      which case the slot has the size of the bound and a `memref.view` of
      it gives the buffer its sizes at run time;
    - takes at most `max-bytes`, and the slots of one region at most
      `max-region-bytes` together (worker threads' stacks are a few MiB).

    Buffers that are never live at once share a slot, largest first: one is
    live from its allocation to its last deallocation in its block, so the
    buffers of different ops of a block (a thread team's worksharing loops,
    between their barriers), of different blocks or of the two branches of
    an `scf.if` never are. A team region of many ops thus needs the slots
    of its largest op, not of all of them. A slot of one buffer of static
    size keeps the buffer's type; a shared slot, or one of dynamic sizes,
    is a slot of bytes (the largest buffer's, at the largest alignment
    asked and at least the elements' size) and each buffer a `memref.view`
    of it.

    The contents are unchanged (an allocation is uninitialized either way),
    so the results are bit-identical. With `remarks`, an allocation inside
    a sequential loop (`scf.for`, `scf.while`: as many allocator calls as
    iterations) that stays on the heap gets a remark saying why.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"32768",
           "Largest buffer moved to the stack, in bytes">,
    Option<"maxRegionBytes", "max-region-bytes", "int64_t",
           /*default=*/"131072",
           "Largest sum of the slots of one function or parallel region "
           "(a shared slot counted once)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on every loop-local allocation left on the heap">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def SeqCPUPrefetchStridedReads : Pass<"seq-cpu-prefetch-strided-reads"> {
  let summary = "Prefetches the vector reads of a sequential loop that step "
                "through a buffer by a long stride";
  let description = [{
    A sequential `scf.for` whose body reads a vector (`vector.transfer_read`
    or `vector.load`, directly in the body) at an index `iv + c` (c >= 0, or
    that clamped from above by `arith.minsi`/`arith.minui`: a software-
    pipelined read of the next step) moves through the buffer by that
    dimension's stride per iteration. From `min-stride` bytes on (2 KiB: the
    L1 stride prefetcher of Intel's cores follows strides below 2 KiB and
    the L2 streamer stays within a 4 KiB page), no hardware prefetcher
    follows it, and each iteration waits for its rows from the last-level
    cache or memory. The fused selective scan is such a loop: a block of 16
    channels walks u, delta and z over time, 6 KiB apart at Mamba-130M's
    1536 channels, and on an Emerald Rapids a third of its samples stalled
    on those reads, one step ahead of their use.

    This pass adds `memref.prefetch` (read, locality 2: into L2) of the same
    vector `distance` iterations further ahead, its index clamped to the
    dimension's last element, before each such read. Reads along a short
    stride (rows of contiguous vectors, the contraction kernels' panels)
    are left alone. The results are unchanged. With `remarks`, each
    prefetched read gets a remark.
  }];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"8",
           "Iterations between a prefetch and the read it is for">,
    Option<"minStrideBytes", "min-stride", "int64_t", /*default=*/"2048",
           "Shortest stride per iteration, in bytes, that is prefetched">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every prefetched read">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}
