//===- Peak.cpp - Measured machine figures --------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The FMA kernels keep 12 (AVX2, 16 ymm registers) or 24 (AVX-512, 32 zmm
// registers) independent accumulators in flight: enough to cover a 4-cycle
// FMA latency on two pipes, which is what Zen 3/4/5 and recent Intel cores
// have. They are compiled with function-level target attributes, so this
// file needs no -m flags and the binary runs on any x86-64 host; a width the
// host lacks is skipped at run time.
//
//===----------------------------------------------------------------------===//

#include "bench/peak/Peak.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sstream>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace seqc::bench;
using Clock = std::chrono::steady_clock;

static double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename... Args>
static std::string formatString(const char *format, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

// Each call performs iters * ACC * LANES FMAs and returns a value that
// depends on all of them, so that nothing is optimized away.
__attribute__((target("avx2,fma"), noinline)) static float
fmaLoopAvx2(int64_t iters) {
  constexpr int kAcc = 12;
  __m256 acc[kAcc];
  for (int i = 0; i < kAcc; ++i)
    acc[i] = _mm256_set1_ps(1.0f + 1e-3f * i);
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma clang loop unroll(full)
    for (int i = 0; i < kAcc; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], m, a);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < kAcc; ++i)
    sum = _mm256_add_ps(sum, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  return out[0] + out[7];
}

__attribute__((target("avx512f"), noinline)) static float
fmaLoopAvx512(int64_t iters) {
  constexpr int kAcc = 24;
  __m512 acc[kAcc];
  for (int i = 0; i < kAcc; ++i)
    acc[i] = _mm512_set1_ps(1.0f + 1e-3f * i);
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma clang loop unroll(full)
    for (int i = 0; i < kAcc; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kAcc; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  return _mm512_reduce_add_ps(sum);
}

// Each call performs iters * ACC vdpbf16ps, 32 bf16 products each (two per
// f32 lane), accumulated in f32.
__attribute__((target("avx512f,avx512bf16"), noinline)) static float
dotLoopAvx512Bf16(int64_t iters) {
  constexpr int kAcc = 24;
  __m512 acc[kAcc];
  for (int i = 0; i < kAcc; ++i)
    acc[i] = _mm512_set1_ps(1.0f + 1e-3f * i);
  const __m512bh m = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f),
                                        _mm512_set1_ps(-1e-3f));
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-4f),
                                        _mm512_set1_ps(1e-4f));
  for (int64_t it = 0; it < iters; ++it) {
#pragma clang loop unroll(full)
    for (int i = 0; i < kAcc; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], m, a);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kAcc; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  return _mm512_reduce_add_ps(sum);
}

namespace {
struct FmaKernel {
  const char *isa;
  int bits;
  int accumulators;
  float (*loop)(int64_t);
  bool supported;
  /// Products per f32 lane and instruction: 1 for an FMA, 2 for vdpbf16ps.
  int productsPerLane = 1;
};
} // namespace

static volatile float gSink;

/// The CPUs this process may run on, in order.
static std::vector<int> allowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set))
        cpus.push_back(c);
  return cpus;
}

/// Runs body(t) on `threads` threads, thread t pinned to the t-th allowed
/// CPU, so that two threads never share a core the scheduler chose.
template <typename Body>
static void runPinned(int threads, Body &&body) {
  static const std::vector<int> cpus = allowedCpus();
  std::vector<std::thread> team;
  for (int t = 0; t < threads; ++t) {
    team.emplace_back([&, t] {
      if (t < static_cast<int>(cpus.size())) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[t], &one);
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      }
      body(t);
    });
  }
  for (auto &th : team)
    th.join();
}

/// Runs `kernel` on `threads` threads at once for about `seconds` each and
/// returns the best GFLOP/s of `rounds` rounds; `median` receives their
/// median, whose distance from the best tells a disturbed measurement.
static double measureFma(const FmaKernel &k, int threads, double seconds,
                         int rounds, double &median) {
  const int lanes = k.bits / 32;
  // Calibrate: iterations per second on one thread.
  int64_t iters = 1 << 16;
  for (;;) {
    auto start = Clock::now();
    gSink = k.loop(iters);
    double t = secondsSince(start);
    if (t > 0.02) {
      iters = static_cast<int64_t>(iters * seconds / t) + 1;
      break;
    }
    iters *= 4;
  }
  std::vector<double> rates;
  for (int r = 0; r < rounds; ++r) {
    auto start = Clock::now();
    runPinned(threads, [&](int) { gSink = k.loop(iters); });
    double t = secondsSince(start);
    double flops =
        2.0 * iters * k.accumulators * lanes * k.productsPerLane * threads;
    rates.push_back(flops / t * 1e-9);
  }
  std::sort(rates.begin(), rates.end());
  median = rates[rates.size() / 2];
  return rates.back();
}

/// The 1-minute load average, or -1 where /proc/loadavg cannot be read.
static double readLoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  if (!(in >> load))
    return -1;
  return load;
}

/// The running clock: a chain of dependent 64-bit integer multiplies, whose
/// latency is 3 cycles on every x86-64 core of the last decade (Intel since
/// Nehalem, AMD since Zen). A chain of `add $1` is not used: Intel's Golden
/// Cove and later fold immediate adds in the renamer, so such a chain
/// retires several per cycle and read as a 22.5 GHz clock.
static double measureClockGHz(double seconds) {
  auto run = [](int64_t n) {
    uint64_t x = 3, one = 1;
    int64_t count = n;
    asm volatile("1:\n\t"
                 ".rept 32\n\t"
                 "imul %2, %0\n\t"
                 ".endr\n\t"
                 "dec %1\n\t"
                 "jnz 1b"
                 : "+r"(x), "+r"(count)
                 : "r"(one)
                 : "cc");
    return x;
  };
  int64_t n = 1 << 14;
  for (;;) {
    auto start = Clock::now();
    run(n);
    if (secondsSince(start) > seconds)
      break;
    n *= 2;
  }
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    auto start = Clock::now();
    run(n);
    best = std::max(best, 3.0 * 32.0 * n / secondsSince(start) * 1e-9);
  }
  return best;
}

/// STREAM triad a = b + s * c over arrays far larger than the last-level
/// cache; each thread first-touches and then streams its own slice. Counts
/// 24 bytes per element (two reads, one write), as STREAM does.
static double measureTriad(int threads, size_t elems, int rounds) {
  std::vector<double *> arrays(3);
  for (auto &p : arrays) {
    p = static_cast<double *>(std::aligned_alloc(64, elems * sizeof(double)));
    if (!p) {
      std::fprintf(stderr, "seqc-peak: out of memory for the triad\n");
      std::exit(1);
    }
  }
  double *a = arrays[0], *b = arrays[1], *c = arrays[2];
  auto forSlices = [&](auto &&body) {
    runPinned(threads, [&](int t) {
      body(elems * t / threads, elems * (t + 1) / threads);
    });
  };
  forSlices([&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  double best = 0;
  const double s = 3.0;
  for (int r = 0; r < rounds; ++r) {
    auto start = Clock::now();
    forSlices([&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i)
        a[i] = b[i] + s * c[i];
    });
    double t = secondsSince(start);
    best = std::max(best, 24.0 * elems / t * 1e-9);
  }
  gSink = static_cast<float>(a[elems / 2]);
  for (auto *p : arrays)
    std::free(p);
  return best;
}

/// The model name, family and model number of the first CPU in
/// /proc/cpuinfo.
static void readCpuInfo(MachineFigures &fig) {
  fig.cpuModel = "unknown";
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      if (line.empty() && fig.cpuModel != "unknown")
        return; // the first processor's block ends
      continue;
    }
    std::string key =
        line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (key == "model name")
      fig.cpuModel = value;
    else if (key == "cpu family")
      fig.family = std::atoi(value.c_str());
    else if (key == "model")
      fig.model = std::atoi(value.c_str());
  }
}

/// The size of CPU 0's largest cache in bytes (sysfs gives "32768K"), 0 when
/// sysfs does not say.
static size_t readLastLevelCacheBytes() {
  size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" +
                     std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text))
      continue;
    char *end = nullptr;
    size_t size = std::strtoull(text.c_str(), &end, 10);
    if (*end == 'K')
      size <<= 10;
    else if (*end == 'M')
      size <<= 20;
    best = std::max(best, size);
  }
  return best;
}

MachineFigures seqc::bench::measureMachine(bool quick) {
  MachineFigures fig;
  readCpuInfo(fig);
  fig.llcBytes = readLastLevelCacheBytes();
  fig.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  __builtin_cpu_init();
  struct {
    const char *name;
    bool present;
  } isa[] = {{"sse4.2", __builtin_cpu_supports("sse4.2") != 0},
             {"avx", __builtin_cpu_supports("avx") != 0},
             {"avx2", __builtin_cpu_supports("avx2") != 0},
             {"fma", __builtin_cpu_supports("fma") != 0},
             {"avx512f", __builtin_cpu_supports("avx512f") != 0},
             {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
             {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
             {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0}};
  for (auto &i : isa)
    if (i.present)
      fig.isa.push_back(i.name);

  // Work other than ours, running as the measurement starts, takes cores
  // from the 2-thread figures.
  fig.load1 = readLoadAverage();
  if (fig.load1 > 0.5)
    fig.disturbed.push_back(formatString(
        "load average %.2f before the measurement: other work shared the "
        "CPUs",
        fig.load1));

  const double seconds = quick ? 0.05 : 0.25;
  const int rounds = quick ? 3 : 5;
  fig.clockGHz = measureClockGHz(quick ? 0.02 : 0.1);
  FmaKernel kernels[] = {
      {"avx2", 256, 12, fmaLoopAvx2,
       __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
      {"avx512", 512, 24, fmaLoopAvx512,
       __builtin_cpu_supports("avx512f") != 0},
      {"avx512bf16", 512, 24, dotLoopAvx512Bf16,
       __builtin_cpu_supports("avx512bf16") != 0, /*productsPerLane=*/2}};
  const int maxThreads = std::min(2, std::max(1, fig.cores));
  for (const FmaKernel &k : kernels) {
    if (!k.supported)
      continue;
    FmaPeak p;
    p.isa = k.isa;
    p.bits = k.bits;
    double median1 = 0, median2 = 0;
    p.gflops1 = measureFma(k, 1, seconds, rounds, median1);
    p.gflops2 = p.gflops1;
    median2 = median1;
    if (maxThreads >= 2)
      p.gflops2 = measureFma(k, 2, seconds, rounds, median2);
    (k.productsPerLane == 1 ? fig.fma : fig.bf16Dot).push_back(p);

    // Sanity of the figures against each other. A core issues at most two
    // FMAs (or bf16 dot products) of a vector per cycle, so a faster
    // 1-thread rate means the clock reading is wrong; two threads cannot do
    // more than twice the work of one; and rounds of the same loop agree
    // within a few percent on a quiet machine.
    const int lanes = k.bits / 32;
    if (fig.clockGHz > 0 &&
        p.gflops1 > 1.05 * 2 * 2 * lanes * k.productsPerLane * fig.clockGHz)
      fig.disturbed.push_back(formatString(
          "%s: %.1f GFLOP/s on 1 thread exceeds two %d-bit instructions per "
          "cycle at the measured %.2f GHz: the clock reading is wrong",
          k.isa, p.gflops1, k.bits, fig.clockGHz));
    if (p.gflops2 > 2.1 * p.gflops1)
      fig.disturbed.push_back(formatString(
          "%s: the 2-thread peak (%.1f) is more than twice the 1-thread peak "
          "(%.1f): the 1-thread rounds were disturbed",
          k.isa, p.gflops2, p.gflops1));
    for (auto [threads, best, median] :
         {std::tuple{1, p.gflops1, median1}, std::tuple{2, p.gflops2, median2}})
      if (threads <= maxThreads && median < 0.9 * best)
        fig.disturbed.push_back(formatString(
            "%s: the %d-thread rounds spread from %.1f to %.1f GFLOP/s "
            "(median %.0f%% of the best)",
            k.isa, threads, median, best, 100 * median / best));
  }
  // Each array 64 MiB (quick: 16 MiB) and at least 4 times the last-level
  // cache, STREAM's rule (up to 1 GiB): 3 x 16 MiB on a 32 MiB L3 measured
  // 49 GB/s on 2 threads where the memory gives 34.
  size_t elems = std::max<size_t>(
      (quick ? 2u : 8u) << 20,
      std::min<size_t>(4 * fig.llcBytes, size_t(1) << 30) / sizeof(double));
  fig.triadGBs1 = measureTriad(1, elems, rounds + 1);
  fig.triadGBs2 =
      maxThreads >= 2 ? measureTriad(2, elems, rounds + 1) : fig.triadGBs1;
  return fig;
}

double MachineFigures::peakGflops(int threads, bool bf16) const {
  double best = 0;
  for (const std::vector<FmaPeak> *peaks : {&fma, &bf16Dot}) {
    if (peaks == &bf16Dot && !bf16)
      continue;
    for (const FmaPeak &p : *peaks)
      best = std::max(best, threads >= 2 ? p.gflops2 : p.gflops1);
  }
  return best;
}

double MachineFigures::bandwidthGBs(int threads) const {
  return threads >= 2 ? triadGBs2 : triadGBs1;
}

static std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  }
  return out + "\"";
}

std::string MachineFigures::toJson() const {
  std::ostringstream os;
  os.precision(4);
  os << std::fixed;
  os << "{\n  \"cpu\": " << jsonString(cpuModel)
     << ",\n  \"family\": " << family << ",\n  \"model\": " << model
     << ",\n  \"llc_bytes\": " << llcBytes << ",\n  \"isa\": [";
  for (size_t i = 0; i < isa.size(); ++i)
    os << (i ? ", " : "") << jsonString(isa[i]);
  os << "],\n  \"cores\": " << cores << ",\n  \"clock_ghz\": " << clockGHz;
  for (auto [key, peaks] : {std::pair{"fma", &fma}, {"bf16_dot", &bf16Dot}}) {
    os << ",\n  \"" << key << "\": [";
    for (size_t i = 0; i < peaks->size(); ++i)
      os << (i ? ",\n" : "\n") << "    {\"isa\": " << jsonString((*peaks)[i].isa)
         << ", \"bits\": " << (*peaks)[i].bits
         << ", \"gflops_1t\": " << (*peaks)[i].gflops1
         << ", \"gflops_2t\": " << (*peaks)[i].gflops2 << "}";
    os << (peaks->empty() ? "]" : "\n  ]");
  }
  os << ",\n  \"peak_gflops_1t\": " << peakGflops(1)
     << ",\n  \"peak_gflops_2t\": " << peakGflops(2)
     << ",\n  \"peak_bf16_gflops_1t\": " << peakGflops(1, true)
     << ",\n  \"peak_bf16_gflops_2t\": " << peakGflops(2, true)
     << ",\n  \"triad_gbs_1t\": " << triadGBs1
     << ",\n  \"triad_gbs_2t\": " << triadGBs2
     << ",\n  \"load_1m\": " << load1 << ",\n  \"disturbed\": [";
  for (size_t i = 0; i < disturbed.size(); ++i)
    os << (i ? ",\n" : "\n") << "    " << jsonString(disturbed[i]);
  os << (disturbed.empty() ? "]" : "\n  ]") << "\n}\n";
  return os.str();
}

/// Finds `"key": <number>` in `text`; a deliberately small reader for the
/// flat figures toJson() writes.
static bool findNumber(const std::string &text, const std::string &key,
                       double &out) {
  size_t at = text.find("\"" + key + "\"");
  if (at == std::string::npos)
    return false;
  at = text.find(':', at);
  if (at == std::string::npos)
    return false;
  char *end = nullptr;
  out = std::strtod(text.c_str() + at + 1, &end);
  return end != text.c_str() + at + 1;
}

bool seqc::bench::readMachineFigures(const std::string &path,
                                     MachineFigures &out) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  FmaPeak best;
  best.isa = "file";
  double clock = 0, t1 = 0, t2 = 0;
  if (!findNumber(text, "peak_gflops_1t", best.gflops1) ||
      !findNumber(text, "peak_gflops_2t", best.gflops2) ||
      !findNumber(text, "triad_gbs_1t", t1) ||
      !findNumber(text, "triad_gbs_2t", t2))
    return false;
  findNumber(text, "clock_ghz", clock);
  out = MachineFigures();
  out.fma.push_back(best);
  // Files from before the bf16 figures: bf16 work against the FMA peak.
  FmaPeak bf16;
  bf16.isa = "file";
  if (findNumber(text, "peak_bf16_gflops_1t", bf16.gflops1) &&
      findNumber(text, "peak_bf16_gflops_2t", bf16.gflops2))
    out.bf16Dot.push_back(bf16);
  out.clockGHz = clock;
  double llc = 0; // absent from files of before it
  if (findNumber(text, "llc_bytes", llc))
    out.llcBytes = static_cast<size_t>(llc);
  out.triadGBs1 = t1;
  out.triadGBs2 = t2;
  return true;
}
