"""The seqc Python package against the runtime and the compiler it wraps."""

import json
import os
import threading

import numpy as np
import pytest

import seqc

ROOT = os.environ.get("SEQC_SRC_ROOT",
                      os.path.join(os.path.dirname(__file__), "..", ".."))
GPT = os.path.join(ROOT, "examples", "gpt.seq")
GPT_DECODE = os.path.join(ROOT, "examples", "gpt_decode.seq")
TINY = {"depth": 2, "dim": 32, "heads": 2, "kv_heads": 2, "vocab": 64}

BAD_SOURCE = """model bad() {
  def forward(x: f32[2]) -> (y: f32[2]) { return x + }
}
"""


@pytest.fixture(scope="module")
def gpt():
    return seqc.compile(GPT, defines=TINY, opt_level=2)


@pytest.fixture(scope="module")
def gpt_forward():
    """examples/gpt.seq's forward entry alone (seqc --entry forward)."""
    return seqc.compile(GPT, defines=TINY, opt_level=2, entry="forward")


@pytest.fixture(scope="module")
def gpt_decode():
    return seqc.compile(GPT_DECODE, defines=dict(TINY, max_len=32))


def tokens(b=2, n=7, seed=0):
    return np.random.default_rng(seed).integers(0, 64, (b, n), dtype=np.int32)


def aligned(shape, dtype, alignment=64):
    """An array whose data starts at a multiple of `alignment` bytes."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + alignment, np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


def test_manifest_described(gpt):
    model = gpt.load(random_weights=0)
    assert model.name == "gpt"
    assert model.inputs == [seqc.ValueInfo("tokens", "i32", ("b", "n"))]
    assert model.outputs == [seqc.ValueInfo("logits", "f32", ("b", "n", 64))]
    # Every entry is compiled (as seqc -o lib.so does): the state is the
    # caches that prefill and decode use.
    assert model.entries == ("forward", "prefill", "decode")
    assert [s.name for s in model.state] == [
        "layers.%d.attn.%s_cache" % (i, kv) for i in range(2)
        for kv in "kv"]
    assert model.state[0] == seqc.ValueInfo(
        "layers.0.attn.k_cache", "f32", ("b", 2, 256, 16))
    assert len(model.params) > 0
    manifest = json.loads(model.manifest)
    assert manifest["model"] == "gpt"
    assert [e["name"] for e in manifest["entries"]] == list(model.entries)


def test_one_entry_compiled_alone(gpt_forward):
    model = gpt_forward.load(random_weights=0)
    assert model.entries == ("forward",) and model.state == []
    assert "entries" not in json.loads(model.manifest)
    with pytest.raises(ValueError, match="has no entry 'decode'"):
        model.entry("decode")
    with pytest.raises(seqc.CompileError,
                       match="no entry 'nope' \\(it has forward, prefill, "
                             "decode\\)"):
        seqc.compile(GPT, defines=TINY, entry="nope")


def test_runs_like_the_reference_level(gpt):
    reference = seqc.compile(GPT, defines=TINY, opt_level=0)
    x = tokens()
    fast = gpt.load(random_weights=3)(tokens=x).logits
    slow = reference.load(random_weights=3)(x).logits
    assert fast.shape == (2, 7, 64) and fast.dtype == np.float32
    np.testing.assert_allclose(fast, slow, rtol=1e-4, atol=1e-5)


def test_inputs_used_in_place(gpt):
    model = gpt.load(random_weights=0)
    x = tokens(2, 5)
    assert model.set_input("tokens", x)
    assert model.input_pointer("tokens") == x.ctypes.data
    before = x.copy()
    model.run()
    np.testing.assert_array_equal(x, before)  # the model only reads it
    # Data off its element alignment (1 byte past a 64-byte boundary) or
    # strided is copied.
    y = aligned((41,), np.uint8)[1:].view(np.int32).reshape(2, 5)
    assert not y.flags.aligned
    y[...] = x
    assert not model.set_input("tokens", y)
    assert model.input_pointer("tokens") != y.ctypes.data
    model.run()
    assert not model.set_input("tokens", np.asfortranarray(tokens(2, 5)))
    np.testing.assert_array_equal(model(tokens=y).logits,
                                  model(tokens=x).logits)


def test_outputs_are_not_copied_and_survive_the_next_run(gpt):
    model = gpt.load(random_weights=0)
    first = model(tokens=tokens(seed=1)).logits
    assert not first.flags.owndata
    kept = first.copy()
    second = model(tokens=tokens(seed=2)).logits
    np.testing.assert_array_equal(first, kept)
    assert second.ctypes.data != first.ctypes.data
    del model  # the arrays own their storage past the instance
    np.testing.assert_array_equal(first, kept)


def test_call_arguments(gpt):
    model = gpt.load(random_weights=0)
    x = tokens()
    expected = model(tokens=x).logits
    np.testing.assert_array_equal(model(x).logits, expected)
    # Any sequence is an input (as numpy.asarray reads it, so a list of
    # Python ints is int64 here).
    with pytest.raises(ValueError, match="dtype i64 does not match"):
        model(tokens=x.tolist())
    np.testing.assert_array_equal(
        model(tokens=np.asarray(x.tolist(), np.int32)).logits, expected)
    with pytest.raises(TypeError, match="given twice"):
        model(x, tokens=x)
    with pytest.raises(TypeError, match="takes 1 inputs, got 2"):
        model(x, x)
    with pytest.raises(ValueError, match="is not one seqc takes"):
        model(tokens=x.astype(">i4"))
    out = model(tokens=x).logits
    assert out.flags.writeable and out.flags.c_contiguous
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(seqc.Error, match="needs PyTorch"):
            model(tokens=x, as_torch=True)
    # as_torch is not an input.
    np.testing.assert_array_equal(model(tokens=x, as_torch=False).logits,
                                  expected)


def test_compile_error_carries_the_location():
    with pytest.raises(seqc.CompileError) as info:
        seqc.compile(BAD_SOURCE)
    error = info.value
    assert (error.file, error.line, error.column) == ("<string>", 2, 54)
    assert error.message == "expected an expression"
    assert "<string>:2:54: error: expected an expression" in str(error)
    assert "^" in str(error)  # the source line and caret, as the CLI prints


def test_compile_error_from_a_file(tmp_path):
    path = tmp_path / "bad.seq"
    path.write_text(BAD_SOURCE)
    with pytest.raises(seqc.CompileError) as info:
        seqc.compile(path)
    assert info.value.file == str(path) and info.value.line == 2


def test_bad_options():
    with pytest.raises(seqc.CompileError, match="not a target"):
        seqc.compile(GPT, target="tpu")
    with pytest.raises(seqc.CompileError, match="opt_level"):
        seqc.compile(GPT, opt_level=7)
    with pytest.raises(seqc.CompileError, match="no-such-cpu|not a recognized"):
        seqc.compile(GPT, defines=TINY, mcpu="no-such-cpu")
    with pytest.raises(ValueError, match="stage"):
        seqc.emit(GPT, "bitcode")
    with pytest.raises(seqc.CompileError, match="depth"):
        seqc.compile(GPT, defines={"depth": "two"})


def test_emit_stages():
    assert "seq." in seqc.emit(GPT, "seq", defines=TINY)
    assert json.loads(seqc.emit(GPT, "manifest", defines=TINY))["model"] == "gpt"
    assert "linalg." in seqc.emit(GPT, "linalg", defines=TINY)
    assert "define " in seqc.emit(GPT, "llvm-ir", defines=TINY, opt_level=1)
    assert "seqc_model" in seqc.emit(GPT, "header", defines=TINY) or \
        "#include" in seqc.emit(GPT, "header", defines=TINY)


def test_save_and_load_library(gpt, tmp_path):
    path = tmp_path / "libgpt.so"
    gpt.save(path)
    again = seqc.load_library(path)
    x = tokens()
    np.testing.assert_array_equal(
        gpt.load(random_weights=5)(tokens=x).logits,
        again.load(random_weights=5)(tokens=x).logits)


def test_weights_from_files_and_dicts(gpt, tmp_path):
    source = gpt.load(random_weights=7)
    path = tmp_path / "w.safetensors"
    source.save_weights(path)
    x = tokens()
    expected = source(tokens=x).logits
    np.testing.assert_array_equal(gpt.load(weights=path)(tokens=x).logits,
                                  expected)
    rng = np.random.default_rng(0)
    arrays = {p.name: rng.standard_normal(p.shape).astype(np.float32)
              for p in source.params}
    a = gpt.load(weights=arrays)(tokens=x).logits
    b = gpt.load(weights=dict(arrays))(tokens=x).logits
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, expected)


def test_errors_are_exceptions(gpt, tmp_path):
    model = gpt.load(random_weights=0)
    with pytest.raises(ValueError, match="dtype f32 does not match"):
        model(tokens=np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError, match="rank"):
        model(tokens=np.zeros((4,), np.int32))
    with pytest.raises(ValueError, match="outside"):
        model(tokens=np.full((1, 4), 64, np.int32))
    with pytest.raises(ValueError, match="missing input"):
        model()
    with pytest.raises(ValueError, match="has no input 'x'"):
        model(tokens=tokens(), x=tokens())
    with pytest.raises(ValueError, match="is not one seqc takes"):
        model(tokens=np.zeros((1, 4), np.uint8))
    unbound = gpt.load()
    with pytest.raises(seqc.RuntimeError) as info:
        unbound(tokens=tokens())
    assert not isinstance(info.value, ValueError)
    with pytest.raises(OSError, match="No such file"):
        gpt.load(weights=tmp_path / "missing.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(ValueError):
        gpt.load(weights=bad)
    # The instance stays usable after every error above.
    assert model(tokens=tokens()).logits.shape == (2, 7, 64)
    model.close()
    with pytest.raises(seqc.RuntimeError, match="closed"):
        model(tokens=tokens())


def test_dims(gpt):
    model = gpt.load(random_weights=0)
    model.dims["n"] = 7
    assert model(tokens=tokens(2, 7)).logits.shape == (2, 7, 64)
    with pytest.raises(ValueError, match="'n'"):
        model(tokens=tokens(2, 5))


def test_instances_run_in_parallel_threads(gpt):
    x = tokens(2, 16)
    first = gpt.load(random_weights=1)
    expected = first(tokens=x).logits
    # Clones share the first instance's weights (the same bytes).
    models = [first.clone() for _ in range(3)]
    name = first.params[0].name
    assert len({m.param_pointer(name) for m in models + [first]}) == 1
    results = [None] * len(models)

    def work(i):
        for _ in range(3):
            results[i] = models[i](tokens=x).logits

    threads = [threading.Thread(target=work, args=(i,))
               for i in range(len(models))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for result in results:
        np.testing.assert_array_equal(result, expected)


def test_generate_matches_the_full_forward(gpt_forward, gpt_decode):
    cached = gpt_decode.load(random_weights=11)
    full = gpt_forward.load(random_weights=11)
    assert [s.name for s in cached.state][:2] == [
        "layers.0.attn.k_cache", "layers.0.attn.v_cache"]
    prompts = [[1, 2, 3], [4, 5, 6, 7, 8]]
    greedy = cached.generate(prompts, max_new_tokens=6)
    assert cached.last_generate_stats["cached"] == 1
    assert greedy == full.generate(prompts, max_new_tokens=6)
    assert full.last_generate_stats["cached"] == 0
    # Greedy is the argmax of the full forward's last logits.
    logits = full(tokens=np.array([prompts[1]], np.int32)).logits
    assert greedy[1][0] == int(np.argmax(logits[0, -1]))
    # One prompt gives one list; a seed reproduces a sampled run.
    sampled = cached.generate([1, 2, 3], 8, temperature=0.8, top_k=10, seed=4)
    assert sampled == cached.generate([1, 2, 3], 8, temperature=0.8,
                                      top_k=10, seed=4)
    assert len(sampled) == 8


def test_generate_streams_and_stops(gpt_decode):
    model = gpt_decode.load(random_weights=2)
    tokens_all = model.generate([3, 1, 4], max_new_tokens=6)
    seen = []
    streamed = model.generate([3, 1, 4], max_new_tokens=6,
                              stream=lambda row, token: seen.append(token))
    assert seen == streamed == tokens_all
    stopped = model.generate([3, 1, 4], max_new_tokens=6,
                             stop=[tokens_all[2]])
    assert stopped == tokens_all[:tokens_all.index(tokens_all[2]) + 1]
    cut = model.generate([3, 1, 4], max_new_tokens=6,
                         stream=lambda row, token: True)
    assert cut == tokens_all[:1]

    def boom(row, token):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        model.generate([3, 1, 4], max_new_tokens=3, stream=boom)
    with pytest.raises(ValueError, match="top_p|top-p"):
        model.generate([3], 2, temperature=1.0, top_p=1.5)
    with pytest.raises(ValueError, match="empty|no tokens|at least one"):
        model.generate([[3], []], 2)


def test_state_reset_and_copy(gpt_decode):
    model = gpt_decode.load(random_weights=2)
    x = tokens(2, 4)
    pos = np.zeros(2, np.int32)
    first = model(tokens=x, pos=pos).logits.copy()
    step = model(tokens=x[:, :1], pos=np.full(2, 4, np.int32)).logits.copy()
    model.reset_state()
    np.testing.assert_array_equal(model(tokens=x, pos=pos).logits, first)
    model.copy_state_row(0, 1)
    same = model(tokens=x[:1].repeat(2, 0)[:, :1],
                 pos=np.full(2, 4, np.int32)).logits
    np.testing.assert_array_equal(same[0], same[1])
    np.testing.assert_allclose(same[0], step[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="row"):
        model.copy_state_row(0, 5)


def prefill_then_decode(model, seqs, lengths, total):
    """Logits of every real position of `seqs` (rows of `total` tokens):
    the prompts (`lengths[r]` tokens of row r, right-padded) through
    model.prefill, then each further token through model.entry("decode") at
    its row's own position. Positions past a row's prompt in the prefill are
    padding, overwritten by decode."""
    b = len(seqs)
    width = max(lengths)
    logits = np.zeros((b, total, 64), np.float32)
    first = model.prefill(tokens=np.ascontiguousarray(seqs[:, :width]),
                          pos=np.zeros(b, np.int32)).logits
    for r in range(b):
        logits[r, :lengths[r]] = first[r, :lengths[r]]
    decode = model.entry("decode")
    pos = np.array(lengths, np.int32)
    while (pos < total).any():
        at = np.minimum(pos, total - 1)
        step = decode(tokens=seqs[np.arange(b), at][:, None].astype(np.int32),
                      pos=at.astype(np.int32)).logits
        for r in range(b):
            if pos[r] < total:
                logits[r, pos[r]] = step[r, 0]
        pos += 1
    return logits


def test_entries_share_weights_and_state(gpt, gpt_forward):
    model = gpt.load(random_weights=5)
    assert model.selected_entry == "forward"
    decode = model.entry("decode")
    assert decode is model.entry("decode") is model.decode
    assert decode.model is model and decode.name == "decode"
    assert decode.inputs == [seqc.ValueInfo("tokens", "i32", ("b", 1)),
                             seqc.ValueInfo("pos", "i32", ("b",))]
    assert decode.outputs == [seqc.ValueInfo("logits", "f32", ("b", 1, 64))]
    assert model.prefill.inputs == [
        seqc.ValueInfo("tokens", "i32", ("b", "n")),
        seqc.ValueInfo("pos", "i32", ("b",))]
    assert {"forward", "prefill", "decode"} <= set(dir(model))
    seqs = tokens(3, 12, seed=4)
    lengths = [5, 1, 8]
    cached = prefill_then_decode(model, seqs, lengths, 12)
    # The forward entry of the same instance, of a forward-only library and
    # of the decoding instance's clone (the same weights) on the whole
    # sequences.
    whole = model(tokens=seqs).logits
    alone = gpt_forward.load(random_weights=5)(tokens=seqs).logits
    np.testing.assert_array_equal(whole, alone)
    scale = np.abs(whole).max()
    assert np.abs(cached - whole).max() <= 1e-5 * scale
    # One instance: a second prefill on a clone (own state, same weights)
    # gives the same; reset_state starts over.
    clone = model.clone()
    np.testing.assert_allclose(prefill_then_decode(clone, seqs, lengths, 12),
                               cached, rtol=0, atol=1e-6 * scale)
    model.reset_state()
    np.testing.assert_allclose(prefill_then_decode(model, seqs, lengths, 12),
                               cached, rtol=0, atol=1e-6 * scale)


# One cached attention layer with forward, prefill and decode entries, small
# enough for a NumPy reference.
KV_SOURCE = """model kv(dim: int = 8, heads: int = 2, max_len: int = 16) {
  attn = MultiHeadAttention(dim, heads, bias=False, causal=True, cache=max_len)
  def forward(x: f32[b, n, dim]) -> (y: f32[b, n, dim]) { return attn(x) }
  def prefill(x: f32[b, n, dim], pos: i32[b] in [0, max_len - 1])
      -> (y: f32[b, n, dim]) {
    return attn(x, pos=pos)
  }
  def decode(x: f32[b, 1, dim], pos: i32[b] in [0, max_len - 1])
      -> (y: f32[b, 1, dim]) {
    return attn(x, pos=pos)
  }
}
"""


def attention_reference(x, w, heads):
    """Causal multi-head self-attention in float64 (PyTorch's layout:
    y = o @ wo^T with q = x @ wq^T, ...)."""
    b, n, dim = x.shape
    d = dim // heads

    def split(t):
        return t.reshape(b, n, heads, d).transpose(0, 2, 1, 3)

    q, k, v = (split(x @ w["attn." + p].T.astype(np.float64))
               for p in ("wq", "wk", "wv"))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    scores = np.where(np.tril(np.ones((n, n), bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(b, n, dim)
    return o @ w["attn.wo"].T.astype(np.float64)


def test_entries_against_numpy():
    model = seqc.compile(KV_SOURCE).load()
    assert model.entries == ("forward", "prefill", "decode")
    assert [s.name for s in model.state] == ["attn.k_cache", "attn.v_cache"]
    rng = np.random.default_rng(7)
    weights = {p.name: (rng.standard_normal(p.shape) * 0.5).astype(np.float32)
               for p in model.params}
    model.set_params(weights)
    x = rng.standard_normal((3, 10, 8)).astype(np.float32)
    want = attention_reference(x.astype(np.float64), weights, 2)
    scale = np.abs(want).max()
    np.testing.assert_allclose(model(x).y, want, rtol=0, atol=1e-5 * scale)
    # Prompts of 4, 1 and 7 positions (right-padded) through prefill, then
    # one position per decode call at each row's own position: the caches
    # that prefill wrote are the ones decode reads and extends.
    lengths = [4, 1, 7]
    got = np.zeros_like(want)
    first = model.prefill(x=np.ascontiguousarray(x[:, :7]),
                          pos=np.zeros(3, np.int32)).y
    for r, n in enumerate(lengths):
        got[r, :n] = first[r, :n]
    decode = model.entry("decode")
    pos = np.array(lengths, np.int32)
    while (pos < 10).any():
        at = np.minimum(pos, 9).astype(np.int32)
        step = decode(x=np.ascontiguousarray(x[np.arange(3), at][:, None]),
                      pos=at).y
        for r in range(3):
            if pos[r] < 10:
                got[r, pos[r]] = step[r, 0]
        pos += 1
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale)
    # Without the prefill (a new state), decode attends to its own position
    # only: the value projection of the token, through wo.
    model.reset_state()
    alone = decode(x=np.ascontiguousarray(x[:, :1]),
                   pos=np.zeros(3, np.int32)).y
    np.testing.assert_allclose(alone, want[:, :1], rtol=0, atol=1e-5 * scale)


def test_select_entry(gpt):
    model = gpt.load(random_weights=5)
    x = tokens(2, 4)
    pos = np.zeros(2, np.int32)
    expected = model.prefill(tokens=x, pos=pos).logits.copy()
    model.reset_state()
    model.select_entry("prefill")
    assert model.selected_entry == "prefill"
    assert [i.name for i in model.inputs] == ["tokens", "pos"]
    assert model.outputs == model.prefill.outputs
    np.testing.assert_array_equal(model(x, pos).logits, expected)
    # The low-level calls run the selected entry too, and each entry keeps
    # its own bound inputs and outputs while another one runs.
    model.reset_state()
    assert model.set_input("tokens", x)
    model.set_input("pos", pos)
    model.decode(tokens=x[:, :1], pos=np.full(2, 7, np.int32))
    assert model.input_pointer("tokens") == x.ctypes.data
    model.run()
    np.testing.assert_array_equal(model.output("logits"), expected)
    assert model.decode.output("logits").shape == (2, 1, 64)
    # Its clone runs the same entry; the messages name the entry.
    assert model.clone().selected_entry == "prefill"
    with pytest.raises(ValueError, match="missing input\\(s\\) pos of "
                                         "gpt.prefill"):
        model(tokens=x)
    with pytest.raises(ValueError, match="missing input\\(s\\) pos of "
                                         "gpt.decode"):
        model.decode(tokens=x[:, :1])
    model.select_entry("forward")
    assert model.inputs == [seqc.ValueInfo("tokens", "i32", ("b", "n"))]
    assert model(x).logits.shape == (2, 4, 64)


TWO_ENTRIES = """model two() {
  def forward(x: f32[n]) -> (y: f32[n]) { return x + x }
  def square(x: f32[n]) -> (y: f32[n]) { return x * x }
}
"""


def test_select_entry_while_other_threads_call():
    """A call keeps the entry it began with while another thread selects
    another one; each entry's view always runs its own."""
    model = seqc.compile(TWO_ENTRIES, opt_level=1).load()
    square = model.square
    assert model.entries == ("forward", "square")
    assert model.dims is not square.dims
    model.select_entry("square")
    assert model.dims is square.dims and model.Outputs is square.Outputs
    model.select_entry("forward")
    x = np.full(1000, 3, np.float32)
    errors = []
    stop = threading.Event()

    def call(f, allowed):
        try:
            while not stop.is_set():
                y = f(x).y
                assert y[0] in allowed and (y == y[0]).all(), y[0]
        except BaseException as error:
            errors.append(error)
            stop.set()

    threads = [threading.Thread(target=call, args=(model, (6, 9))),
               threading.Thread(target=call, args=(square, (9,))),
               threading.Thread(target=call, args=(model.forward, (6,)))]
    for t in threads:
        t.start()
    for i in range(300):
        model.select_entry(("square", "forward")[i % 2])
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert model.selected_entry == "forward" and model(x).y[0] == 6


def test_unknown_entry(gpt):
    model = gpt.load(random_weights=5)
    message = ("model 'gpt' has no entry 'decoder' \\(its entries: forward, "
               "prefill, decode\\)")
    with pytest.raises(seqc.InvalidArgumentError, match=message):
        model.entry("decoder")
    with pytest.raises(seqc.InvalidArgumentError, match=message):
        model.select_entry("decoder")
    with pytest.raises(AttributeError, match="decoder.*entries: forward, "
                                             "prefill, decode"):
        model.decoder
    with pytest.raises(TypeError, match="str"):
        model.entry(1)
    # Nothing changed: the selected entry still runs.
    assert model.selected_entry == "forward"
    assert model(tokens=tokens()).logits.shape == (2, 7, 64)
    # A view of a closed model is closed.
    decode = model.decode
    model.close()
    with pytest.raises(seqc.RuntimeError, match="closed"):
        decode(tokens=tokens(2, 1), pos=np.zeros(2, np.int32))


def test_generate_through_prefill_and_decode(gpt, gpt_forward):
    cached = gpt.load(random_weights=11)
    full = gpt_forward.load(random_weights=11)
    prompts = [[1, 2, 3], [4, 5, 6, 7, 8]]
    greedy = cached.generate(prompts, max_new_tokens=6)
    assert cached.last_generate_stats["cached"] == 1
    assert cached.last_generate_stats["decode_tokens"] > 0
    assert greedy == full.generate(prompts, max_new_tokens=6)
    sampled = cached.generate([1, 2, 3], 8, temperature=0.8, top_k=10, seed=4)
    assert sampled == full.generate([1, 2, 3], 8, temperature=0.8, top_k=10,
                                    seed=4)
    # The selected entry is kept.
    cached.select_entry("decode")
    assert cached.generate(prompts, max_new_tokens=6) == greedy
    assert cached.selected_entry == "decode"


def test_emit_an_entry():
    both = seqc.emit(GPT, "manifest", defines=TINY)
    assert [e["name"] for e in json.loads(both)["entries"]] == [
        "forward", "prefill", "decode"]
    decode = json.loads(seqc.emit(GPT, "manifest", defines=TINY,
                                  entry="decode"))
    assert "entries" not in decode
    assert decode["inputs"][0]["shape"] == ["b", 1]
    assert "// entry 'decode'" in seqc.emit(GPT, "seq", defines=TINY)
    with pytest.raises(seqc.CompileError, match="no entry 'nope'"):
        seqc.emit(GPT, "seq", defines=TINY, entry="nope")
    with pytest.raises(TypeError, match="entry"):
        seqc.emit(GPT, "seq", defines=TINY, entry=1)


def test_command_line_entry(capsys):
    from seqc.__main__ import main
    args = [GPT, "--emit", "manifest", "-D", "vocab=64", "--entry", "decode"]
    assert main(args) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert "entries" not in manifest
    assert manifest["inputs"][0]["shape"] == ["b", 1]
    assert main([GPT, "--emit", "manifest", "--entry", "nope"]) == 1
    assert ("model 'gpt' has no entry 'nope' (it has forward, prefill, "
            "decode)") in capsys.readouterr().err


def test_torch_tensors_without_copies(gpt):
    torch = pytest.importorskip("torch")
    model = gpt.load(random_weights=0)
    x = torch.from_numpy(tokens())
    assert model.set_input("tokens", x)
    assert model.input_pointer("tokens") == x.data_ptr()
    out = model(tokens=x, as_torch=True).logits
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 7, 64)
    assert out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(),
                                  model(tokens=x.numpy()).logits)
    # The tensor is the output array's memory (no copy), and outlives the
    # instance.
    kept = out.clone()
    one = model.output("logits", as_torch=True)
    assert one.data_ptr() == model.output("logits").ctypes.data
    # A strided tensor is copied; a tensor that needs its gradient, or of
    # a dtype the input does not take, is refused.
    strided = torch.from_numpy(np.ascontiguousarray(tokens().T)).t()
    assert not strided.is_contiguous()
    assert not model.set_input("tokens", strided)
    np.testing.assert_array_equal(
        model(tokens=strided).logits,
        model(tokens=strided.contiguous().numpy()).logits)
    with pytest.raises(ValueError, match="detach"):
        model(tokens=torch.zeros(2, 3, requires_grad=True))
    with pytest.raises(ValueError, match="dtype i64 does not match"):
        model(tokens=x.long())
    # Parameters from a dict of tensors.
    rng = np.random.default_rng(0)
    arrays = {p.name: rng.standard_normal(p.shape).astype(np.float32)
              for p in model.params}
    tensors = {name: torch.from_numpy(a) for name, a in arrays.items()}
    np.testing.assert_array_equal(
        gpt.load(weights=tensors)(tokens=x).logits,
        gpt.load(weights=arrays)(tokens=x).logits)
    del model
    assert torch.equal(out, kept)


LLAMA_CONFIG = {
    "model_type": "llama", "architectures": ["LlamaForCausalLM"],
    "vocab_size": 96, "hidden_size": 32, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 64,
    "num_hidden_layers": 2, "rope_theta": 50000.0, "rms_norm_eps": 1e-5,
    "tie_word_embeddings": True, "hidden_act": "silu",
}


def test_hugging_face_directory(tmp_path):
    example, defines = seqc.hf.defines_from_config(LLAMA_CONFIG)
    assert os.path.basename(example) == "llama.seq"
    assert defines == {"vocab": 96, "dim": 32, "heads": 4, "kv_heads": 2,
                       "hidden": 64, "depth": 2, "theta": 50000.0,
                       "eps": 1e-5, "tied": 1}
    # A checkpoint with Hugging Face's key names: the example's own.
    reference = seqc.compile(example, defines=defines).load(random_weights=9)
    assert "lm_head.weight" not in [p.name for p in reference.params]
    reference.save_weights(tmp_path / "model.safetensors")
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    pretrained = seqc.hf.load(tmp_path)
    assert pretrained.defines == defines
    prompts = [[5, 6, 7], [8, 9]]
    assert pretrained.generate(prompts, 5) == reference.generate(prompts, 5)
    # examples/llama.seq's prefill and decode entries, compiled with it.
    assert pretrained.model.entries == ("forward", "prefill", "decode")
    assert pretrained.model.last_generate_stats["cached"] == 1
    x = np.array([[1, 2, 3]], np.int32)
    np.testing.assert_array_equal(pretrained(input_ids=x).logits,
                                  reference(input_ids=x).logits)
    if pretrained.tokenizer is None:
        with pytest.raises(seqc.Error, match="tokenizers"):
            pretrained.generate("hello", 3)


def test_hugging_face_configs_we_cannot_read(tmp_path):
    with pytest.raises(seqc.Error, match="model_type 'gpt_neox'"):
        seqc.hf.defines_from_config({"model_type": "gpt_neox"})
    with pytest.raises(seqc.Error, match="rope_scaling"):
        seqc.hf.defines_from_config(
            dict(LLAMA_CONFIG, rope_scaling={"rope_type": "llama3"}))
    config = dict(LLAMA_CONFIG)
    del config["intermediate_size"]
    with pytest.raises(seqc.Error, match="no field 'intermediate_size'"):
        seqc.hf.defines_from_config(config)
    with pytest.raises(seqc.Error, match="cannot read .*config.json"):
        seqc.hf.load(tmp_path)
    (tmp_path / "config.json").write_text("{")
    with pytest.raises(seqc.Error, match="not JSON"):
        seqc.hf.load(tmp_path)


def test_hugging_face_text(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    words = ["<unk>"] + ["w%d" % i for i in range(95)]
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(
        {w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.decoder = tokenizers.decoders.WordPiece()
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    example, defines = seqc.hf.defines_from_config(LLAMA_CONFIG)
    reference = seqc.compile(example, defines=defines).load(random_weights=9)
    reference.save_weights(tmp_path / "model.safetensors")
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    pretrained = seqc.hf.load(tmp_path)
    assert pretrained.tokenizer is not None
    ids = reference.generate([5, 6, 7], 4)
    text = pretrained.generate("w4 w5 w6", 4)
    assert text == " ".join(words[i] for i in ids)
    assert pretrained.generate(["w4 w5 w6", "w7"], 2)[0] == \
        " ".join(words[i] for i in ids[:2])


EXAMPLES = sorted(name for name in os.listdir(os.path.join(ROOT, "examples"))
                  if name.endswith(".seq"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_runs(example):
    """Each bundled example compiles and runs from Python on random inputs
    within their declared ranges; its outputs have the declared shapes and
    are finite."""
    module = seqc.compile(os.path.join(ROOT, "examples", example),
                          opt_level=1)
    model = module.load(random_weights=1)
    manifest = json.loads(model.manifest)
    dims = {"b": 2}
    rng = np.random.default_rng(0)

    def size(dim):
        return dim if isinstance(dim, int) else dims.setdefault(dim, 8)

    def bound(value):
        return value if isinstance(value, int) else size(value)

    inputs = {}
    for spec in manifest["inputs"]:
        shape = [size(d) for d in spec["shape"]]
        if spec["dtype"] == "i32":
            lo, hi = (bound(v) for v in spec["range"])
            hi = min(hi, 64)  # positions leave room for the tokens after
            inputs[spec["name"]] = rng.integers(lo, hi + 1, shape,
                                                dtype=np.int32)
        else:
            inputs[spec["name"]] = rng.standard_normal(shape).astype(
                np.float32)
    outputs = model(**inputs)
    for spec, value in zip(manifest["outputs"], outputs):
        assert list(value.shape) == [size(d) for d in spec["shape"]]
        assert np.isfinite(value).all(), spec["name"]
