"""Checks `MODEL generate` against plain runs of the same executable.

  check_generate.py greedy EXE WORKDIR SEED PROMPT [PROMPT ...]
      `EXE generate --random-weights SEED --prompt-ids PROMPT ...` (greedy)
      gives, for each prompt, the argmax of the logits of one plain run
      (`EXE --input tokens=... --output logits=...`) over the prompt and the
      generated tokens, at every position that chose a token; and the batch
      gives each row the tokens of its prompt alone.
  check_generate.py stop EXE WORKDIR SEED PROMPT
      --stop-ids ends a row right after the first stop id it generates.

PROMPT is "1,2,3". Only numpy: the logits come from the executable.
"""

import os
import subprocess
import sys

import numpy as np

MAX_NEW = 8
# The model's token input: `tokens`, or Hugging Face's `input_ids`
# (the environment variable TOKENS_INPUT).
TOKENS_INPUT = os.environ.get("TOKENS_INPUT", "tokens")


def generate(exe, seed, prompts, *extra):
    args = [exe, "generate", "--random-weights", str(seed),
            "--max-new-tokens", str(MAX_NEW)]
    for prompt in prompts:
        args += ["--prompt-ids", prompt]
    result = subprocess.run(args + list(extra), check=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines = result.stdout.splitlines()
    assert len(lines) == len(prompts), result.stdout
    assert "decode:" in result.stderr, result.stderr
    return [[int(t) for t in line.split()] for line in lines]


def forward_argmax(exe, workdir, seed, tokens):
    """The argmax of the logits at every position of one plain run."""
    path = os.path.join(workdir, "tokens.npy")
    out = os.path.join(workdir, "logits.npy")
    np.save(path, np.array([tokens], dtype=np.int32))
    subprocess.run([exe, "--random-weights", str(seed), "--input",
                    TOKENS_INPUT + "=" + path, "--output", "logits=" + out],
                   check=True, stdout=subprocess.DEVNULL)
    logits = np.load(out)
    assert logits.shape[:2] == (1, len(tokens)), logits.shape
    return logits[0].argmax(axis=-1)


def check_greedy(exe, workdir, seed, prompts):
    batch = generate(exe, seed, prompts)
    for prompt, generated in zip(prompts, batch):
        ids = [int(t) for t in prompt.split(",")]
        assert len(generated) == MAX_NEW, generated
        argmax = forward_argmax(exe, workdir, seed, ids + generated)
        expected = [int(argmax[len(ids) - 1 + k]) for k in range(MAX_NEW)]
        assert generated == expected, (prompt, generated, expected)
        alone = generate(exe, seed, [prompt])[0]
        assert alone == generated, (prompt, alone, generated)
    print("greedy ok: %d prompts" % len(prompts))


def check_stop(exe, workdir, seed, prompt):
    full = generate(exe, seed, [prompt])[0]
    # The first id that differs from the first token (random weights often
    # repeat one), so that the row stops after more than one token.
    stop = next((t for t in full if t != full[0]), full[0])
    stopped = generate(exe, seed, [prompt], "--stop-ids", "9999,%d" % stop)[0]
    expected = full[:full.index(stop) + 1]
    assert stopped == expected, (stopped, expected)
    print("stop ok: %d of %d tokens" % (len(stopped), len(full)))


def main():
    mode, exe, workdir, seed = sys.argv[1:5]
    prompts = sys.argv[5:]
    os.makedirs(workdir, exist_ok=True)
    if mode == "greedy":
        check_greedy(exe, workdir, int(seed), prompts)
    elif mode == "stop":
        check_stop(exe, workdir, int(seed), prompts[0])
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
