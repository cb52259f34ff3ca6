"""Prints the facts compare-smoke.test checks from bench/compare's results.json:
the mode, then for each result its work, size, tool, number of rounds and
whether its time is positive, then whether the machine's peak is positive."""
import json
import sys

r = json.load(open(sys.argv[1]))
print("mode", r["mode"])
for x in r["results"]:
    print(x["work"], x["size"], x["tool"], x.get("rounds"), x.get("min_ms", 0) > 0)
print("peak", r["machine"]["peak_gflops_1t"] > 0 and r["machine"]["triad_gbs_1t"] > 0)
