#!/usr/bin/env python3
"""The cost of one model call through the Python package (docs/python.md,
"Overhead"). A tiny model (y = x * w on 4 floats) is called

  - from Python: model(x=x) (bind the input, run, wrap the output), and
    model.run() with the input bound;
  - through ctypes: the bare seqc_model_run (the C API's run plus ctypes'
    cost of a foreign call);
  - from C (a driver compiled here against the model library): the same
    call through the C API (seqc_model_reset_inputs, set_input_view, run,
    retain_output, buffer_ref_release), and seqc_model_run alone.

Seven rounds of N calls each; prints the minimum and median microseconds
per call.

    PYTHONPATH=build/python /usr/bin/python3 bench/python-overhead.py [N]
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import seqc

SOURCE = """model tiny() {
  w = Parameter(4)
  def forward(x: f32[4]) -> (y: f32[4]) { return x * w }
}
"""

ROUNDS = 7

# The C API's side of the comparison: the same calls with no Python.
DRIVER = r"""
#include "seqc_runtime.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void check(seqc_status *status) {
  if (status) {
    fprintf(stderr, "%s\n", seqc_status_message(status));
    exit(1);
  }
}

int main(int argc, char **argv) {
  long calls = atol(argv[1]);
  seqc_model *model;
  check(seqc_model_load(&model));
  check(seqc_model_random_weights(model, 0));
  _Alignas(64) float x[4] = {1, 1, 1, 1};
  seqc_tensor input = {SEQC_DTYPE_F32, 1, {4}, x};
  double whole[ROUNDS], run[ROUNDS];
  for (int r = 0; r < ROUNDS; ++r) {
    double start = now();
    for (long i = 0; i < calls; ++i) {
      seqc_tensor output;
      seqc_buffer_ref *ref;
      int32_t borrowed;
      seqc_model_reset_inputs(model);
      check(seqc_model_set_input_view(model, "x", &input, &borrowed));
      check(seqc_model_run(model));
      check(seqc_model_retain_output(model, "y", &output, &ref));
      seqc_buffer_ref_release(ref);
    }
    whole[r] = (now() - start) / calls * 1e6;
    start = now();
    for (long i = 0; i < calls; ++i)
      check(seqc_model_run(model));
    run[r] = (now() - start) / calls * 1e6;
  }
  qsort(whole, ROUNDS, sizeof(double), compare);
  qsort(run, ROUNDS, sizeof(double), compare);
  printf("%f %f %f %f\n", whole[0], whole[ROUNDS / 2], run[0], run[ROUNDS / 2]);
  seqc_model_free(model);
  return 0;
}
"""


def per_call(function, calls):
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    rounds.sort()
    return rounds[0], rounds[len(rounds) // 2]


def runtime_header():
    """The directory of seqc_runtime.h: the installed package's copy, else
    the source tree's."""
    for directory in (os.path.join(os.path.dirname(seqc.__file__), "include"),
                      os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   "..", "runtime", "include")):
        if os.path.exists(os.path.join(directory, "seqc_runtime.h")):
            return directory
    return None


def c_api(module, calls):
    """[(name, min, median)] of the C driver, [] without a C compiler."""
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which(
        "clang")
    include = runtime_header()
    if not compiler or not include:
        return []
    directory = tempfile.mkdtemp(prefix="seqc-overhead-")
    try:
        library = os.path.join(directory, "libtiny.so")
        module.save(library)
        source = os.path.join(directory, "driver.c")
        with open(source, "w") as f:
            f.write("#define ROUNDS %d\n" % ROUNDS + DRIVER)
        driver = os.path.join(directory, "driver")
        subprocess.run([compiler, "-O2", "-std=gnu11", "-I", include, source,
                        library, "-Wl,-rpath," + directory, "-o", driver],
                       check=True)
        out = subprocess.run([driver, str(calls)], check=True,
                             capture_output=True, text=True).stdout.split()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    whole_min, whole_mid, run_min, run_mid = map(float, out)
    return [("the same call from C", whole_min, whole_mid),
            ("seqc_model_run from C", run_min, run_mid)]


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    module = seqc.compile(SOURCE)
    model = module.load(random_weights=0)
    x = np.ones(4, np.float32)
    rows = [("model(x=x)", lambda: model(x=x))]
    model.set_input("x", x)
    api, handle = model._api, model._handle
    rows += [("model.run()", model.run),
             ("seqc_model_run (ctypes)", lambda: api.model_run(handle))]
    print("%-26s %9s %9s" % ("call", "min us", "median us"))
    for name, function in rows:
        low, mid = per_call(function, calls)
        print("%-26s %9.2f %9.2f" % (name, low, mid))
    for name, low, mid in c_api(module, calls):
        print("%-26s %9.2f %9.2f" % (name, low, mid))


if __name__ == "__main__":
    main()
