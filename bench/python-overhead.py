#!/usr/bin/env python3
"""The cost of one model call through the Python package (docs/python.md,
"Overhead"): a tiny model (y = x * w on 4 floats) called as model(x=x), as
model.run() with the input bound, and as the bare ctypes call of
seqc_model_run, which is the C API's cost plus ctypes' (about 1 us). Five
rounds of N calls each; prints the minimum and median microseconds per call.

    PYTHONPATH=build/python /usr/bin/python3 bench/python-overhead.py [N]
"""

import sys
import time

import numpy as np

import seqc

SOURCE = """model tiny() {
  w = Parameter(4)
  def forward(x: f32[4]) -> (y: f32[4]) { return x * w }
}
"""


def per_call(function, calls):
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    rounds.sort()
    return rounds[0], rounds[len(rounds) // 2]


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    model = seqc.compile(SOURCE).load(random_weights=0)
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


if __name__ == "__main__":
    main()
