// The options of seq-lower-to-llvm and the stage order they select.

// Values are checked as seqc checks its flags (seq::verifyPipelineOptions).
// RUN: not seq-opt %s --seq-lower-to-llvm="opt-level=7" 2>&1 | FileCheck %s --check-prefix=LEVEL
// RUN: not seq-opt %s --seq-lower-to-linalg="opt-level=7" 2>&1 | FileCheck %s --check-prefix=LEVEL
// LEVEL: error: optimization level 7 is out of range (0 to 3)

// RUN: not seq-opt %s --seq-lower-to-llvm="target=nvptx gpu-arch=gfx90a" 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: error: 'gfx90a' is not a GPU architecture for --gpu-arch (expected sm_NN, e.g. sm_80 or sm_90)
// RUN: not seq-opt %s --seq-lower-to-llvm="target=nvptx gpu-binary=elf" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: 'elf' is not a kernel format for --gpu-binary (fatbin, cubin or ptx)

// RUN: not seq-opt %s --seq-lower-to-llvm="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: for the --target option: Cannot find option named 'tpu'!

// -O0: no fusion, no empty-tensor elimination, sequential loops.
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=0 emit-entry=false" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=O0 --implicit-check-not=openmp --implicit-check-not=fuse \
// RUN:       --implicit-check-not=eliminate-empty-tensors --implicit-check-not=parallel-loops \
// RUN:       --implicit-check-not=seq-build-manifest --implicit-check-not=seq-emit-invoke \
// RUN:       --implicit-check-not=interchange
// O0:      seq-decompose
// O0:      convert-seq-to-linalg
// O0:      one-shot-bufferize{{.*}}bufferize-function-boundaries=true
// O0-SAME:   function-boundary-type-conversion=identity-layout-map
// O0:      ownership-based-buffer-deallocation
// O0:      convert-bufferization-to-memref
// O0:      seq-cpu-lower-strided-copies
// O0:      convert-linalg-to-loops
// O0:      convert-scf-to-cf
// O0:      finalize-memref-to-llvm
// O0:      convert-func-to-llvm
// O0:      convert-ub-to-llvm
// O0:      cse
// O0:      canonicalize
// O0:      reconcile-unrealized-casts
// O0:      seq-check-lowered

// Repeated layers fold after the deallocation passes at -O0 and on the NVPTX
// target (which only remarks that it keeps them unrolled); from -O1 on the
// CPU also before them (the O2 checks below).
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=0" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LATE-FOLD --implicit-check-not=before-deallocation=true
// RUN: seq-opt %s --seq-lower-to-llvm="target=nvptx" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LATE-FOLD --implicit-check-not=before-deallocation=true
// LATE-FOLD:      ownership-based-buffer-deallocation
// LATE-FOLD:      seq-fold-layers{before-deallocation=false

// -O2: entry points around the whole pipeline, fusion before bufferization,
// OpenMP for the outermost parallel loops.
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 min-parallel-work=100" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=O2
// O2:      seq-build-manifest
// O2:      seq-decompose
// O2:      convert-seq-to-linalg
// O2:      linalg-fuse-elementwise-ops
// O2:      seq-cpu-interchange-contractions
// O2:      eliminate-empty-tensors
// O2:      one-shot-bufferize
// O2:      seq-fold-layers{before-deallocation=true
// O2:      ownership-based-buffer-deallocation
// O2:      seq-fold-layers{before-deallocation=false
// O2:      convert-linalg-to-parallel-loops
// O2:      seq-cpu-serialize-parallel-loops{min-work=100}
// O2:      convert-scf-to-openmp
// O2:      seq-plan-memory
// O2:      seq-cpu-thread-team
// O2:      convert-openmp-to-llvm
// O2:      convert-func-to-llvm
// O2:      reconcile-unrealized-casts
// O2:      seq-check-lowered
// O2:      seq-emit-invoke

// The manifest names the device the runtime sets up when the model loads:
// the GPU for nvptx, the host (no target) for the GPU interpreter, whose
// kernels run on the host. seqc --emit=manifest prints the same
// (test/Driver/manifest.test).
// RUN: seq-opt %s --seq-lower-to-llvm="target=nvptx" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NVPTX-MANIFEST
// NVPTX-MANIFEST: seq-build-manifest{target=nvptx}
// RUN: seq-opt %s --seq-lower-to-llvm="target=nvptx gpu-interpret=true" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=INTERPRET-MANIFEST
// INTERPRET-MANIFEST: seq-build-manifest{target=cpu}

// -O1 and thread-team=false fork a team per parallel loop.
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=1" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOTEAM --implicit-check-not=thread-team
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 thread-team=false" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOTEAM --implicit-check-not=thread-team
// NOTEAM:  convert-scf-to-openmp
// NOTEAM:  convert-openmp-to-llvm

// Without OpenMP, parallel loops stay scf.parallel until scf-to-cf.
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 openmp=false" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOOMP --implicit-check-not=openmp
// NOOMP:   convert-linalg-to-parallel-loops
// NOOMP:   convert-scf-to-cf

module attributes {seq.model = "m"} {
  func.func @forward(%x: tensor<4xf32> {seq.input = "x"})
      -> (tensor<4xf32> {seq.output = "y"}) {
    return %x : tensor<4xf32>
  }
}
