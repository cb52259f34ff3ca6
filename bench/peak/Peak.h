//===- Peak.h - Measured machine figures for benchmark reports -*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Every performance figure seqc reports is a ratio against what the machine
// it ran on can do, measured in the same run: the FP32 FMA peak at each
// vector width the host supports, on 1 and 2 threads; the running clock; and
// the memory bandwidth of a STREAM-style triad. Threads are pinned, each
// figure is the best of several rounds, and what makes a run suspect (load,
// disagreeing rounds, an impossible clock) is listed with the figures.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_BENCH_PEAK_H
#define SEQC_BENCH_PEAK_H

#include <string>
#include <vector>

namespace seqc::bench {

/// FP32 FMA throughput of one vector width (or, in `bf16Dot`, of the bf16
/// pair products that accumulate in f32: AVX512_BF16's vdpbf16ps).
struct FmaPeak {
  std::string isa; // "avx2" (256-bit), "avx512" (512-bit), "avx512bf16"
  int bits = 0;
  double gflops1 = 0; // one thread
  double gflops2 = 0; // two threads, one per core where there are two
};

struct MachineFigures {
  std::string cpuModel;
  /// /proc/cpuinfo's "cpu family" and "model" (-1 where absent): what tells
  /// hosts of one model name apart (AMD EPYC: family 25 is Zen 3 or Zen 4,
  /// 26 Zen 5).
  int family = -1, model = -1;
  /// The largest cache of CPU 0 (sysfs), in bytes; 0 where unknown. The
  /// triad's arrays are each at least 4 times it, and bench/compare gives
  /// no fraction of the triad to work whose bytes fit in it.
  size_t llcBytes = 0;
  std::vector<std::string> isa; // the relevant ISA extensions present
  int cores = 0;                // online CPUs
  double clockGHz = 0;          // running clock of one busy core
  std::vector<FmaPeak> fma;     // one entry per supported vector width
  /// bf16 products accumulated in f32 (vdpbf16ps: 32 per instruction, two
  /// FLOPs each), where the CPU has an instruction for them; empty where
  /// bf16 is widened and multiplied by the FMAs above.
  std::vector<FmaPeak> bf16Dot;
  double triadGBs1 = 0;         // STREAM triad, one thread
  double triadGBs2 = 0;         // two threads
  double load1 = 0;             // 1-minute load average as measuring began
  /// Why the figures may understate the machine (other work running, rounds
  /// that disagree, a clock reading that cannot be right); empty when none.
  std::vector<std::string> disturbed;

  /// The best FMA throughput on `threads` (1 or 2) threads over all widths;
  /// with `bf16`, the best rate at which bf16 products can accumulate in f32
  /// (the bf16 dot instructions where there are some, else the FMAs).
  double peakGflops(int threads, bool bf16 = false) const;
  /// The triad bandwidth on `threads` threads, in GB/s.
  double bandwidthGBs(int threads) const;
  std::string toJson() const;
};

/// Measures the machine. `quick` shortens every measurement (~0.5 s in all
/// instead of ~3 s), for the benchmark binary's own reference figures.
MachineFigures measureMachine(bool quick = false);

/// Reads figures written by toJson() (the output of seqc-peak). Returns false
/// if the file cannot be read or lacks the peak.
bool readMachineFigures(const std::string &path, MachineFigures &out);

} // namespace seqc::bench

#endif // SEQC_BENCH_PEAK_H
