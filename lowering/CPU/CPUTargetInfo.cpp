//===- CPUTargetInfo.cpp - CPU hooks of the seq lowering ------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/CPUTargetInfo.h"
#include "lowering/CPU/Passes.h"
#include "lowering/Common/Passes.h"
#include "lowering/Entry/Entry.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::seq;

void CPUTargetInfo::addSeqTransforms(OpPassManager &pm,
                                     const SeqPipelineOptions &options) const {
  if (options.optLevel < 2)
    return;
  // 64 queries x 128 keys: the score tile (32 KiB) and the tiles of Q
  // (16 KiB at d = 64), K^T and V (32 KiB each) and O (16 KiB) stay in L2
  // on every core seqc has met (512 KiB on Zen 3, 1-2 MiB on Zen 4/5 and
  // Intel's server cores); 64 and 128 are whole numbers of vectors on AVX2
  // and AVX-512 alike. 128 keys rather than 64 halve, per FLOP, the
  // rescaling of O, the load and store of P V's 64 x d accumulator tile and
  // each key tile's fixed costs (its row maxima, alpha, the state's
  // update): on Emerald Rapids (48 KiB L1, where 64 x 64 tiles did not fit
  // L1 either) full attention at n = 1024 and 2048 ran 5-7% faster, causal
  // 3-4%, decode unchanged, and 48 or 32 query rows or 256 keys no faster.
  // Decode shapes with fewer than 8 (batch, head, query tile) units split
  // their keys into chunks of at least 512 (4 tiles), enough for 8 units:
  // both cores (and their caches) share one long cache, 4 units each, and
  // one thread pays little for the split (8 partial states and their
  // merge).
  SeqTileAttentionOptions tile;
  tile.queryBlock = 64;
  tile.keyBlock = 128;
  tile.splitUnits = 8;
  tile.splitMinKeys = 512;
  // bf16 and f16 Q, K and V read in place: the contraction kernels widen
  // them (F16C for f16) or pair bf16 operands (vdpbf16ps with bf16-dot)
  // and accumulate in f32.
  tile.narrowInPlace = true;
  tile.bf16Dot = options.bf16Dot;
  // f32 keys packed once per call into the [d, 64] tiles that Q K^T reads
  // as its right operand, instead of a transposed copy per tile pair.
  tile.packKeys = true;
  tile.remarks = options.remarks;
  addAttentionTransforms(pm, tile);
}

void CPUTargetInfo::addParameterLayouts(
    OpPassManager &pm, const SeqPipelineOptions &options) const {
  // 2-D weights of contractions in the broadcast kernel's column panels.
  SeqCPUPackWeightsOptions pack;
  pack.vectorBits = options.vectorBits;
  pack.vectorRegisters = options.vectorRegisters;
  pack.bf16Dot = options.bf16Dot;
  // q4_0 blocks in column panels for the int8-activation kernel.
  pack.vnniBits = options.vnniBits;
  pack.int8Activations = options.int8Activations;
  pack.remarks = options.remarks;
  pm.addPass(createSeqCPUPackWeights(pack));
}

void CPUTargetInfo::addTensorTransforms(
    OpPassManager &pm, const SeqPipelineOptions &options) const {
  // Loops come from linalg-to-loops after bufferization and LLVM vectorizes
  // the innermost ones; at -O2 and above, contractions get a loop order
  // whose innermost loop is vectorizable (bit-identical results). Cache
  // tiling of contractions belongs here too, on tensors, where it can
  // introduce packed copies: measured on the Zen 3 hosts, a 512^3 matmul
  // reaches 0.8 GFLOP/s through linalg-to-loops and clang -O3, and 82 (80% of
  // one core's peak) when tiled [0, 128, 256] then [6, 16, 1], vectorized,
  // with the C tile hoisted on tensors and the contraction lowered to outer
  // products; at 1024^3 it drops to 65 because rows of B 4 KiB apart alias in
  // L1, which packing B fixes.
  if (options.optLevel >= 2)
    pm.addPass(createSeqCPUInterchangeContractions());
  // A tensor-parallel model's all-reduces, as calls on buffers that
  // bufferization then places (their MPI bodies come after it).
  if (options.tensorParallel > 1)
    pm.addPass(createSeqCPULowerCollectives());
}

TargetInfoBase::ConversionStrategy
CPUTargetInfo::getConversionStrategy(const SeqPipelineOptions &options) const {
  ConversionStrategy strategy;
  if (options.optLevel < 2)
    return strategy;
  // One vector register of f32 channels per scan block: the state of every
  // channel of the block then lives in N registers.
  strategy.scanVectorLanes = options.vectorBits / 32;
  // 512-bit vectors are AVX-512's, which has vscalefps.
  strategy.scanScalef = options.vectorBits == 512;
  // RoPE and conv1d in forms whose innermost loop runs along contiguous
  // features or channels, which seq-cpu-vectorize-rows vectorizes.
  strategy.rowForms = true;
  // Causal linear attention in chunks of 64 tokens: per chunk four
  // contractions of 64 x 64 x d or d x d_v tiles (vector kernels) instead of
  // 64 rank-1 updates of the [d, d_v] state.
  strategy.linearAttentionChunk = 64;
  // Each (batch, head) pair runs its chunks in turn, the pairs in parallel:
  // a loop over chunks outermost would leave its small contractions
  // sequential (seq-cpu-serialize-parallel-loops: a fork per step costs
  // more than the step), one core doing the whole op. Non-causal linear
  // attention is chunked per pair too, so that each chunk of K and V is
  // read once while its features and products are in cache.
  strategy.linearAttentionPerHead = true;
  return strategy;
}

void CPUTargetInfo::addBufferLowering(OpPassManager &pm,
                                      const SeqPipelineOptions &options) const {
  // Fused kernels (the selective scan) distribute with scf.forall; on the
  // CPU that is a parallel loop like any other.
  pm.addPass(createForallToParallelLoopPass());
  if (options.tensorParallel > 1)
    pm.addPass(createSeqCPUDefineCollectives());
  pm.addPass(createSeqCPULowerStridedCopies());
  if (options.optLevel >= 1) {
    // Linears with weights in a block format (q8_0, q4_0, q4_1): a vector
    // kernel that dequantizes the blocks in registers; -O0 keeps the
    // reference loops.
    SeqCPUVectorizeQuantizedOptions quantized;
    quantized.vectorBits = options.vectorBits;
    quantized.vectorRegisters = options.vectorRegisters;
    quantized.vnniBits = options.vnniBits;
    quantized.int8Activations = options.int8Activations;
    quantized.remarks = options.remarks;
    pm.addPass(createSeqCPUVectorizeQuantized(quantized));
  }
  if (options.optLevel >= 2) {
    // Contractions become register-tiled vector kernels in blocked
    // scf.parallel nests; elementwise ops and row reductions loops over
    // vectors of their rows (the rest become loops below).
    SeqCPUVectorizeContractionsOptions vectorize;
    vectorize.vectorBits = options.vectorBits;
    vectorize.vectorRegisters = options.vectorRegisters;
    vectorize.f16c = options.f16c;
    vectorize.bf16Dot = options.bf16Dot;
    vectorize.streamingStoreBytes = options.streamingStoreBytes;
    vectorize.remarks = options.remarks;
    pm.addPass(createSeqCPUVectorizeContractions(vectorize));
    SeqCPUVectorizeRowsOptions rows;
    rows.vectorBits = options.vectorBits;
    pm.addPass(createSeqCPUVectorizeRows(rows));
    // Sequential loops that walk a buffer by a long stride (the fused
    // selective scan over time) prefetch their reads a few steps ahead.
    SeqCPUPrefetchStridedReadsOptions prefetch;
    prefetch.remarks = options.remarks;
    pm.addPass(createSeqCPUPrefetchStridedReads(prefetch));
  }
  // Every layer of a model has its own copy of the same kernels by now: one
  // function per distinct loop nest (or linalg op still to be lowered),
  // called from each layer, spares the rest of the pipeline and LLVM the
  // copies (GPT-2 small: 12 layers). After the vector kernels, whose remarks
  // name every op; before scf-to-openmp, so that each function holds its
  // own parallel region.
  if (options.optLevel >= 1 && options.outlineKernels) {
    SeqCPUOutlineKernelsOptions outline;
    outline.remarks = options.remarks;
    pm.addPass(createSeqCPUOutlineKernels(outline));
  }
  if (options.optLevel == 0) {
    // The reference lowering: one sequential loop nest per linalg op, in
    // program order.
    pm.addPass(createConvertLinalgToLoopsPass());
    return;
  }
  // Parallel dimensions become scf.parallel (reduction dimensions stay
  // scf.for inside them). Without OpenMP, scf-to-cf later runs them
  // sequentially.
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  if (!options.enableOpenMP)
    return;
  SeqCPUSerializeParallelLoopsOptions serialize;
  serialize.minWork = options.minParallelWork;
  pm.addPass(createSeqCPUSerializeParallelLoops(serialize));
  pm.addPass(createConvertSCFToOpenMPPass());
  // convert-scf-to-openmp wraps every loop body in a memref.alloca_scope;
  // once the scf.for loops inside are lowered to blocks, the single-block
  // scope no longer verifies. The canonicalizer inlines the scopes that
  // contain no alloca, which is all of them here (bufferization allocates
  // on the heap).
  pm.addPass(createCanonicalizerPass());
}

void CPUTargetInfo::addLLVMConversion(OpPassManager &pm,
                                      const SeqPipelineOptions &options) const {
  if (options.optLevel >= 2 && options.enableOpenMP && options.threadTeam) {
    // After the memory plan and the folding of layers, on structured code:
    // the arena's views are no longer allocations, and a folded layer is a
    // function whose loops can join the model function's team.
    SeqCPUThreadTeamOptions team;
    team.remarks = options.remarks;
    pm.addPass(createSeqCPUThreadTeam(team));
  }
  if (options.optLevel >= 1) {
    // Buffers a loop body allocates and frees per iteration (attention's
    // tile state) get one stack slot per thread instead of an allocator
    // call per iteration; after the teams, which decide where a thread's
    // stack frame begins.
    SeqCPUStackScratchOptions scratch;
    scratch.remarks = options.remarks;
    pm.addPass(createSeqCPUStackScratch(scratch));
  }
  if (options.optLevel >= 1 && options.enableOpenMP) {
    // Each thread's block of a worksharing loop computed in the generated
    // code, instead of by libomp's static init (which formats debug traces
    // on every call in Debian's build); after the teams and the stack
    // slots, which look at the worksharing loops.
    pm.addPass(createSeqCPUStaticSchedule());
  }
  if (options.emitEntry && options.foldLayers) {
    // The calls of a folded layer become one loop over the layers (after
    // the teams: the loop of a team's calls runs on every thread of it, as
    // the calls did), on memrefs, before the conversion lowers the views.
    SeqLoopLayersOptions loop;
    loop.remarks = options.remarks && options.optLevel >= 1;
    pm.addPass(createSeqLoopLayers(loop));
  }
  addControlFlowAndDescriptorLowering(pm);
  // Vector ops of the contraction kernels: loads, masked loads and stores,
  // FMAs and reductions map to LLVM vector instructions and intrinsics.
  // The fused selective scan's exp uses x86vector's vscalefps on AVX-512.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  if (options.tensorParallel > 1) {
    // The mpi dialect's own patterns: calls of the MPI C API with Open
    // MPI's handles (seq-cpu-lower-collectives chose the implementation).
    ConvertToLLVMPassOptions mpiToLLVM;
    mpiToLLVM.filterDialects = {"mpi"};
    pm.addPass(createConvertToLLVMPass(mpiToLLVM));
    pm.addPass(createSeqCPUOpenMPIHandles());
  }
  addMemRefToLLVMConversion(pm, options.runtimeAllocator);
  // At -O2 and above, exp, tanh, erf... become polynomials that vectorize
  // (-O0 keeps the libm calls, the reference).
  if (options.optLevel >= 2)
    pm.addPass(createSeqCPUApproximateMath());
  addScalarToLLVMConversion(pm);
  if (options.optLevel >= 1 && options.enableOpenMP)
    pm.addPass(createConvertOpenMPToLLVMPass());
  addFinalLLVMConversion(pm);
}
