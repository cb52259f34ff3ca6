import sys
from mk_la import *
i = int(sys.argv[1])
causal = True
cases = [lambda: la_case(1, causal=causal), lambda: la_case(7, causal=causal),
         lambda: la_case(64, causal=causal, batch=1, dyn=(0, 2)), lambda: la_case(100, causal=causal, batch=1),
         lambda: la_case(7, "relu", causal, offset=0.5),
         lambda: la_case(7, "identity", causal, offset=1.2, e=2, dyn=(2,), eps=1e-3)]
print(render_file("", [cases[i]()], 1e-6, 1e-5))
