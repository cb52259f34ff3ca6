//===- main.cpp - seqc-peak: the machine's figures as JSON ----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
//   seqc-peak [--quick]
//
// Prints the CPU model and ISA, the running clock, the FP32 FMA peak on 1
// and 2 threads at every vector width the host supports and the STREAM triad
// bandwidth, as JSON on stdout. Every benchmark report starts with it.
//
//===----------------------------------------------------------------------===//

#include "bench/peak/Peak.h"

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--help") == 0 ||
               std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: seqc-peak [--quick]\n"
                  "Prints the machine's FMA peak, clock and memory bandwidth "
                  "as JSON.\n");
      return 0;
    } else {
      std::fprintf(stderr, "seqc-peak: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  std::fputs(seqc::bench::measureMachine(quick).toJson().c_str(), stdout);
  return 0;
}
