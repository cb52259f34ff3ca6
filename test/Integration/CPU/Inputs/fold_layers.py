"""fold_layers.py SEQC WORK MODEL DEPTHS LEVELS [NAME=SIZE...]: compiles examples/MODEL.seq
(or MODEL itself when it names a .seq file)
at each depth (comma separated) and -O level (digits) twice, with layers
folded (seq-fold-layers, the default) and with --fold-layers=false, runs
both on the same random weights and inputs (--dim b=2, every other symbolic
size 7, unless given) and prints one line per build: "MODEL depth D -OL: identical" when
every output's .npy file is the same bytes, else what differs."""
import filecmp
import os
import re
import subprocess
import sys

seqc, work, model, depths, levels = sys.argv[1:6]
sizes = dict(arg.split("=") for arg in sys.argv[6:])
here = os.path.dirname(os.path.abspath(__file__))
source = model if model.endswith(".seq") else \
    os.path.join(here, "..", "..", "..", "..", "examples", model + ".seq")
model = os.path.basename(model).removesuffix(".seq")


def signature(exe, section):
    """The names (outputs) or symbolic sizes (inputs) in `exe --help`."""
    text = subprocess.run([exe, "--help"], check=True, capture_output=True,
                          text=True).stdout
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith(section + ":"):
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            lines.append(line)
    if section == "outputs":
        return [line.split()[0] for line in lines]
    dims = set()
    for line in lines:
        for shape in re.findall(r"\[([^\]]*)\]", line):
            dims.update(d.strip() for d in shape.split(",")
                        if re.match(r"^[A-Za-z_]", d.strip()))
    return sorted(dims)


for depth in depths.split(","):
    for level in levels:
        outs = {}
        for kind, flags in (("folded", []), ("unrolled", ["--fold-layers=false"])):
            tag = f"{model}_d{depth}_O{level}_{kind}"
            exe = os.path.join(work, tag)
            subprocess.run([seqc, f"-O{level}", source, "-D", f"depth={depth}",
                            "-o", exe] + flags, check=True)
            out = os.path.join(work, tag + ".out")
            os.makedirs(out, exist_ok=True)
            argv = [exe, "--random-weights", "3", "--random-inputs", "4",
                    "--threads", "2"]
            for dim in signature(exe, "inputs"):
                argv += ["--dim", f"{dim}={sizes.get(dim, 2 if dim == 'b' else 7)}"]
            names = signature(exe, "outputs")
            for name in names:
                argv += ["--output", f"{name}={out}/{name}.npy"]
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            outs[kind] = (out, names)
        out_f, names = outs["folded"]
        out_u, _ = outs["unrolled"]
        differ = [n for n in names
                  if not filecmp.cmp(f"{out_f}/{n}.npy", f"{out_u}/{n}.npy",
                                     shallow=False)]
        verdict = "identical" if names and not differ else \
            "differ in " + ", ".join(differ or ["(no outputs)"])
        print(f"{model} depth {depth} -O{level}: {verdict}", flush=True)
