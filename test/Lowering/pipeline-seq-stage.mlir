// The seq-level stage of the pipelines: after seq-decompose and before
// convert-seq-to-linalg, passes rewrite seq ops into seq ops. -O0 runs only
// the decomposition the conversion needs; -O1 and above add CSE and the
// target's seq transforms (TargetInfoBase::addSeqTransforms: on the CPU at
// -O2, seq-raise-attention, seq-tile-attention with 64 x 64 tiles (bf16
// read in place) and the split-key decode form below 8 units, and
// seq-reassociate-linear-attention). No canonicalization runs between the
// decomposition and the conversion (docs/pipeline.md, stage 3c).

// RUN: seq-opt %s --seq-lower-to-linalg="opt-level=0" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=O0
// O0:      builtin.module(
// O0-NEXT:   seq-decompose,
// O0-NEXT:   convert-seq-to-linalg{linear-attention-chunk=0 linear-attention-per-head=false remarks=false row-forms=false scan-scalef=false scan-vector-lanes=0},

// RUN: seq-opt %s --seq-lower-to-linalg="opt-level=2" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=O2
// O2:      builtin.module(
// O2-NEXT:   seq-decompose,
// O2-NEXT:   cse,
// O2-NEXT:   seq-raise-attention{remarks=false},
// O2-NEXT:   seq-tile-attention{bf16-dot=false key-block=128 narrow-in-place=true pack-keys=true query-block=64 remarks=false split-min-keys=512 split-units=8},
// O2-NEXT:   seq-reassociate-linear-attention{remarks=false},
// O2-NEXT:   convert-seq-to-linalg{linear-attention-chunk=64 linear-attention-per-head=true remarks=false row-forms=true scan-scalef=false scan-vector-lanes=8},

// The whole pipeline has the same stage, between the manifest and the
// conversion. The conversion's strategy comes from the target too: at -O2
// the CPU asks for the fused selective scan with its vector lanes (8 for the default 256-bit
// registers) and causal linear attention in 64-token chunks, at -O0 and -O1
// for the reference forms.
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=1 emit-entry=false" --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LLVM
// LLVM:      seq-decompose,
// LLVM-NEXT: cse,
// LLVM-NEXT: convert-seq-to-linalg{linear-attention-chunk=0 linear-attention-per-head=false remarks=false row-forms=false scan-scalef=false scan-vector-lanes=0},

// The stage sees seq ops: CSE merges the two seq.elu before they are
// converted, so the conversion emits one linalg.generic.
// RUN: seq-opt %s --seq-lower-to-linalg="opt-level=2" --mlir-print-ir-after-all -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=IR
// IR-LABEL: IR Dump After CSE (cse)
// IR:         func.func @twice(%[[X:.+]]: tensor<4x8xf32>)
// IR-NEXT:      %[[E:.+]] = seq.elu %[[X]] : tensor<4x8xf32>
// IR-NEXT:      return %[[E]], %[[E]]
// IR-LABEL: IR Dump After ConvertSeqToLinalg (convert-seq-to-linalg)
// IR:           linalg.generic
// IR-NOT:       linalg.generic
// IR:         return

func.func @twice(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = seq.elu %x : tensor<4x8xf32>
  %b = seq.elu %x : tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
