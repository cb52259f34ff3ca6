"""logits_error.py DIR FORMAT...: runs DIR/f32 and DIR/FORMAT (the same
model compiled with -D weight_format=FORMAT) on the same random weights (the
quantized ones are the f32 values quantized) and tokens, and prints the
logits' error against f32 per format: the largest absolute error relative
to the largest f32 logit, and the RMS error relative to the RMS logit, and
"ok" when the largest is below the format's bound (q8_0, int8: 2%, 4-bit: 30%;
the random weights are uniform, the hardest case for 4 bits). A name
FORMAT-SUFFIX (q8_0-a8: compiled with --int8-activations) takes FORMAT's
bound."""
import subprocess
import sys

import numpy as np

directory = sys.argv[1]
common = ["--random-weights", "3", "--random-inputs", "4", "--dim", "b=2",
          "--dim", "n=24"]


def logits(name):
    out = f"{directory}/{name}.npy"
    subprocess.run([f"{directory}/{name}"] + common +
                   ["--output", f"logits={out}"], check=True,
                   capture_output=True)
    return np.load(out).astype(np.float64)


reference = logits("f32")
for fmt in sys.argv[2:]:
    y = logits(fmt)
    worst = np.abs(y - reference).max() / np.abs(reference).max()
    rms = np.sqrt(np.mean((y - reference) ** 2) / np.mean(reference ** 2))
    bound = 0.02 if fmt.split("-")[0] in ("q8_0", "int8") else 0.3
    verdict = "ok" if worst < bound and np.isfinite(y).all() else "error"
    print(f"{fmt}: logits error against f32: max {worst:.2e}, rms {rms:.2e}: "
          f"{verdict}")
