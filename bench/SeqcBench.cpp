//===- SeqcBench.cpp - Google Benchmark over models compiled by seqc ------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Every benchmark drives a model shared library built by seqc from
// bench/kernels/*.seq or examples/*.seq through the C API, as an embedder
// would: dlopen the library, call its seqc_model_load, bind random weights
// and inputs of the benchmark's sizes, and time seqc_model_run (which
// includes copying the outputs out, as every embedder pays).
//
// Counters: GFLOP/s (or GB/s for memory-bound kernels) and the fraction of
// the machine's peak (FMA peak or triad bandwidth, bench/peak) on the number
// of threads used. The peak comes from $SEQC_BENCH_PEAK (a seqc-peak JSON
// file) or is measured quickly at start-up.
//
//   seqc-bench [google benchmark flags]
//   seqc-bench --list-works     the works, sizes and FLOP/byte counts (JSON),
//                               read by bench/compare
//
//===----------------------------------------------------------------------===//

#include "bench/Works.h"
#include "bench/peak/Peak.h"
#include "seqc_runtime.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <string>

using namespace seqc::bench;

namespace {

/// A loaded model library, one per distinct library, kept for the process.
/// A library built by `seqc -o lib.so` holds the model and the whole
/// runtime; the benchmark calls that runtime's C API, as an embedder that
/// links the library does (two copies of the runtime in one process would
/// each own the buffers of the other's models).
struct Library {
  void *handle = nullptr;
  std::string error;
  seqc_status *(*load)(seqc_model **) = nullptr;
  void (*freeModel)(seqc_model *) = nullptr;
  seqc_status *(*setThreads)(int32_t) = nullptr;
  seqc_status *(*randomWeights)(seqc_model *, uint64_t) = nullptr;
  seqc_status *(*setDim)(seqc_model *, const char *, int64_t) = nullptr;
  seqc_status *(*randomInputs)(seqc_model *, uint64_t) = nullptr;
  seqc_status *(*run)(seqc_model *) = nullptr;
  const char *(*message)(const seqc_status *) = nullptr;
  void (*freeStatus)(seqc_status *) = nullptr;
};

template <typename F>
void bind(Library &lib, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(lib.handle, name));
  if (!fn && lib.error.empty())
    lib.error = std::string("the library does not define ") + name;
}

std::string modelDir() {
  if (const char *dir = std::getenv("SEQC_BENCH_MODELS"))
    return dir;
  return SEQC_BENCH_MODEL_DIR;
}

const Library &openLibrary(const std::string &name) {
  static std::map<std::string, Library> libraries;
  auto it = libraries.find(name);
  if (it != libraries.end())
    return it->second;
  Library &lib = libraries[name];
  std::string path = modelDir() + "/lib" + name + ".so";
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    lib.error = dlerror();
    return lib;
  }
  bind(lib, lib.load, "seqc_model_load");
  bind(lib, lib.freeModel, "seqc_model_free");
  bind(lib, lib.setThreads, "seqc_set_num_threads");
  bind(lib, lib.randomWeights, "seqc_model_random_weights");
  bind(lib, lib.setDim, "seqc_model_set_dim");
  bind(lib, lib.randomInputs, "seqc_model_random_inputs");
  bind(lib, lib.run, "seqc_model_run");
  bind(lib, lib.message, "seqc_status_message");
  bind(lib, lib.freeStatus, "seqc_status_free");
  if (!lib.error.empty())
    lib.error = path + ": " + lib.error;
  return lib;
}

int numThreads() {
  if (const char *t = std::getenv("SEQC_BENCH_THREADS"))
    return std::max(1, std::atoi(t));
  return 2;
}

const MachineFigures &machine() {
  static MachineFigures figures = [] {
    MachineFigures f;
    const char *path = std::getenv("SEQC_BENCH_PEAK");
    if (path && readMachineFigures(path, f))
      return f;
    if (path)
      std::fprintf(stderr, "seqc-bench: cannot read peak figures from '%s'; "
                           "measuring them\n",
                   path);
    return measureMachine(/*quick=*/true);
  }();
  return figures;
}

/// Fails the benchmark with the message of `status` (and frees it).
bool check(benchmark::State &state, const Library &lib, seqc_status *status,
           const char *what) {
  if (!status)
    return true;
  std::string msg = std::string(what) + ": " + lib.message(status);
  lib.freeStatus(status);
  state.SkipWithError(msg.c_str());
  return false;
}

void runWork(benchmark::State &state, const Work &work, const Size &size) {
  const Library &lib = openLibrary(work.library);
  if (!lib.error.empty()) {
    state.SkipWithError(lib.error.c_str());
    return;
  }
  seqc_model *model = nullptr;
  if (!check(state, lib, lib.load(&model), "load"))
    return;
  struct Free {
    const Library &lib;
    seqc_model *m;
    ~Free() { lib.freeModel(m); }
  } release{lib, model};
  if (!check(state, lib, lib.setThreads(numThreads()), "threads") ||
      !check(state, lib, lib.randomWeights(model, 1), "weights"))
    return;
  for (const auto &[dim, value] : size.dims)
    if (!check(state, lib, lib.setDim(model, dim.c_str(), value),
               ("dimension " + dim).c_str()))
      return;
  if (!check(state, lib, lib.randomInputs(model, 2), "inputs") ||
      !check(state, lib, lib.run(model), "warm-up run"))
    return;

  double best = 1e30;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    seqc_status *status = lib.run(model);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    if (!check(state, lib, status, "run"))
      return;
    state.SetIterationTime(t);
    best = std::min(best, t);
  }
  const int threads = numThreads();
  state.counters["min_ms"] = best * 1e3;
  state.counters["threads"] = threads;
  if (size.flops > 0) {
    double gflops = size.flops / best * 1e-9;
    state.counters["GFLOP/s"] = gflops;
    // No fraction of the peak for FLOPs seqc does not do (bench/compare
    // says the same).
    if (!work.asWritten)
      state.counters["peak_frac"] =
          gflops / machine().peakGflops(threads, work.precision == "bf16");
  }
  if (size.bytes > 0) {
    double gbs = size.bytes / best * 1e-9;
    state.counters["GB/s"] = gbs;
    // Nor of the triad for bytes that stay in the last-level cache.
    if (size.flops == 0 &&
        (machine().llcBytes == 0 || size.bytes > machine().llcBytes))
      state.counters["peak_frac"] = gbs / machine().bandwidthGBs(threads);
  }
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list-works") == 0) {
      std::fputs(worksToJson().c_str(), stdout);
      return 0;
    }
  }
  for (const Work &work : allWorks())
    for (const Size &size : work.sizes)
      benchmark::RegisterBenchmark(
          (work.name + "/" + size.label).c_str(),
          [&work, &size](benchmark::State &s) { runWork(s, work, size); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::AddCustomContext("threads", std::to_string(numThreads()));
  benchmark::AddCustomContext(
      "peak_gflops", std::to_string(machine().peakGflops(numThreads())));
  benchmark::AddCustomContext(
      "triad_gbs", std::to_string(machine().bandwidthGBs(numThreads())));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
