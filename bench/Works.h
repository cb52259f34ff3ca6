//===- Works.h - What bench/ measures, in one table ---------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A work is one computation at a sweep of sizes: the model library seqc
// compiled for it (bench/CMakeLists.txt), its hyperparameters (what the
// peers need to compute the same thing), and for each size the run-time
// dimensions and the FLOPs or bytes one run must do. seqc-bench registers a
// benchmark per (work, size); `seqc-bench --list-works` prints this table as
// JSON for bench/compare, so that the peers run exactly the same shapes.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_BENCH_WORKS_H
#define SEQC_BENCH_WORKS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace seqc::bench {

struct Size {
  /// The benchmark's name suffix, e.g. "n=2048".
  std::string label;
  /// Symbolic dimensions of the model's inputs.
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Useful floating-point operations of one run (0 for memory-bound work):
  /// masked-out scores are not counted, so a causal kernel that computes the
  /// full square shows half the rate of one that skips the empty tiles.
  double flops = 0;
  /// Bytes one run must move at least (inputs read once, outputs written
  /// once); the figure of merit of memory-bound work.
  double bytes = 0;
  /// Part of `bench/compare --quick`.
  bool quick = false;
  /// A tiny size for the smoke test only (`bench/compare --smoke`), not
  /// part of the sweeps.
  bool smoke = false;
};

struct Work {
  std::string name;    // e.g. "attention_causal"
  std::string family;  // e.g. "attention": works plotted together
  std::string library; // lib<library>.so in the model directory
  std::string what;    // one line for the report
  /// Hyperparameters as JSON values, e.g. {"heads", "8"}, {"causal", "true"}.
  std::vector<std::pair<std::string, std::string>> hyper;
  std::vector<Size> sizes;
  /// "bf16" for work whose products are bf16 times bf16 (its `% peak` is
  /// against the bf16 dot peak where the CPU has one), else "f32".
  std::string precision = "f32";
  /// The FLOPs of the sizes count the work as written, not what seqc does
  /// (the quadratic form of linear attention, which seqc reassociates):
  /// its rate compares forms, and no fraction of the peak is given.
  bool asWritten = false;
};

/// Every work, in report order.
const std::vector<Work> &allWorks();

/// allWorks() as JSON: [{"name", "family", "library", "what", "precision",
/// "as_written", "hyper",
/// "sizes": [{"label", "dims", "flops", "bytes", "quick",
/// "smoke"}]}].
std::string worksToJson();

} // namespace seqc::bench

#endif // SEQC_BENCH_WORKS_H
