"""Checks the fake CUDA driver's trace (FAKE_CUDA_TRACE=1) of a model run
`runs` times: the same kernels in the same order at every run, and the
summary line's launch count equal to the launches traced.

Usage: check_fake_cuda_trace.py TRACE RUNS
"""

import re
import sys


def main():
    path, runs = sys.argv[1], int(sys.argv[2])
    with open(path) as f:
        lines = f.read().splitlines()
    launches = [line for line in lines if line.startswith("fake-cuda: launch ")]
    summary = [line for line in lines if re.match(r"fake-cuda: \d+ cuInit", line)]
    if len(summary) != 1:
        sys.exit(f"expected one summary line, got {len(summary)}")
    counted = int(re.search(r"(\d+) launches", summary[0]).group(1))
    if counted != len(launches):
        sys.exit(f"the summary counts {counted} launches, the trace has "
                 f"{len(launches)}")
    if not launches or len(launches) % runs:
        sys.exit(f"{len(launches)} launches for {runs} runs")
    per_run = len(launches) // runs
    first = launches[:per_run]
    for run in range(1, runs):
        if launches[run * per_run:(run + 1) * per_run] != first:
            sys.exit(f"run {run} launched other kernels than run 0")
    names = [line.split()[2] for line in first]
    print(f"{per_run} kernels per run: {' '.join(names)}")


if __name__ == "__main__":
    main()
