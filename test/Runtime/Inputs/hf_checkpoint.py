"""hf_checkpoint.py: tiny random Hugging Face checkpoints for examples/llama.seq,
examples/bert.seq, Inputs/gpt2.seq and Inputs/mamba_hf.seq, and float64
NumPy re-implementations of the models they hold (LlamaForCausalLM,
BertModel with mean pooling, GPT2LMHeadModel, MambaForCausalLM), with numpy
only.

  hf_checkpoint.py write llama DIR [--tied 0|1] [--shards N] [--extra] [--dtype bf16|f16|f32]
  hf_checkpoint.py write bert|gpt2|mamba DIR [--shards N] [--dtype ...]
  hf_checkpoint.py check llama|bert|gpt2|mamba DIR OUTPUT.npy

`write` puts the checkpoint in DIR/ckpt (model.safetensors, or N shards and
model.safetensors.index.json), with the tensors, names, dtypes and extra
buffers of a published checkpoint, and the inputs in DIR/*.npy. `check`
recomputes the model in float64 from the same (rounded) weights and compares
the output seqc wrote. The sizes are those of the lit tests' -D flags.
"""
import json
import os
import sys

import numpy as np

LLAMA = dict(vocab=96, dim=48, heads=6, kv_heads=2, hidden=80, depth=2,
             theta=100000.0, eps=1e-5)
BERT = dict(vocab=96, dim=48, heads=4, hidden=72, depth=2, max_positions=32,
            types=2, eps=1e-12)
GPT2 = dict(vocab=96, positions=32, dim=48, heads=4, depth=2, eps=1e-5)
MAMBA = dict(vocab=96, dim=32, depth=2, d_state=8, d_conv=4, expand=2,
             dt_rank=2, eps=1e-5)
BATCH, LENGTH = 3, 9


# --- safetensors, by hand ---------------------------------------------------

def to_bf16_bits(x):
    """float32 -> bfloat16 bits, rounding to nearest even."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = u.astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def encode(x, dtype):
    """(safetensors dtype, raw bytes, the values as stored, in float64)."""
    if dtype == "I64":
        x = np.ascontiguousarray(x, dtype=np.int64)
        return dtype, x.tobytes(), x
    if dtype == "BF16":
        bits = to_bf16_bits(x)
        return dtype, bits.tobytes(), from_bf16_bits(bits).astype(np.float64)
    if dtype == "F16":
        h = np.ascontiguousarray(x, dtype=np.float16)
        return dtype, h.tobytes(), h.astype(np.float64)
    f = np.ascontiguousarray(x, dtype=np.float32)
    return "F32", f.tobytes(), f.astype(np.float64)


def write_safetensors(path, tensors):
    """tensors: [(name, dtype, shape, bytes)], packed in order."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


def write_checkpoint(folder, tensors, shards):
    os.makedirs(folder, exist_ok=True)
    if shards <= 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
        return
    weight_map = {}
    per = -(-len(tensors) // shards)
    for s in range(shards):
        name = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        part = tensors[s * per:(s + 1) * per]
        write_safetensors(os.path.join(folder, name), part)
        weight_map.update({t[0]: name for t in part})
    total = sum(len(t[3]) for t in tensors)
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total},
                   "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)


# --- random weights with Hugging Face's names --------------------------------

def llama_weights(rng, tied):
    c = LLAMA
    d, hd = c["dim"], c["dim"] // c["heads"]
    shapes = [("model.embed_tokens.weight", (c["vocab"], d))]
    for i in range(c["depth"]):
        p = "model.layers.%d." % i
        shapes += [
            (p + "self_attn.q_proj.weight", (c["heads"] * hd, d)),
            (p + "self_attn.k_proj.weight", (c["kv_heads"] * hd, d)),
            (p + "self_attn.v_proj.weight", (c["kv_heads"] * hd, d)),
            (p + "self_attn.o_proj.weight", (d, c["heads"] * hd)),
            (p + "mlp.gate_proj.weight", (c["hidden"], d)),
            (p + "mlp.up_proj.weight", (c["hidden"], d)),
            (p + "mlp.down_proj.weight", (d, c["hidden"])),
            (p + "input_layernorm.weight", (d,)),
            (p + "post_attention_layernorm.weight", (d,)),
        ]
    shapes.append(("model.norm.weight", (d,)))
    if not tied:
        shapes.append(("lm_head.weight", (c["vocab"], d)))
    return {name: random_tensor(rng, name, shape) for name, shape in shapes}


def bert_weights(rng):
    c = BERT
    d, h = c["dim"], c["hidden"]
    shapes = [
        ("embeddings.word_embeddings.weight", (c["vocab"], d)),
        ("embeddings.position_embeddings.weight", (c["max_positions"], d)),
        ("embeddings.token_type_embeddings.weight", (c["types"], d)),
        ("embeddings.LayerNorm.weight", (d,)),
        ("embeddings.LayerNorm.bias", (d,)),
    ]
    for i in range(c["depth"]):
        p = "encoder.layer.%d." % i
        for name in ("query", "key", "value"):
            shapes += [(p + "attention.self.%s.weight" % name, (d, d)),
                       (p + "attention.self.%s.bias" % name, (d,))]
        shapes += [
            (p + "attention.output.dense.weight", (d, d)),
            (p + "attention.output.dense.bias", (d,)),
            (p + "attention.output.LayerNorm.weight", (d,)),
            (p + "attention.output.LayerNorm.bias", (d,)),
            (p + "intermediate.dense.weight", (h, d)),
            (p + "intermediate.dense.bias", (h,)),
            (p + "output.dense.weight", (d, h)),
            (p + "output.dense.bias", (d,)),
            (p + "output.LayerNorm.weight", (d,)),
            (p + "output.LayerNorm.bias", (d,)),
        ]
    shapes += [("pooler.dense.weight", (d, d)), ("pooler.dense.bias", (d,))]
    return {name: random_tensor(rng, name, shape) for name, shape in shapes}


def gpt2_weights(rng):
    c = GPT2
    d = c["dim"]
    shapes = [("wte.weight", (c["vocab"], d)),
              ("wpe.weight", (c["positions"], d))]
    for i in range(c["depth"]):
        p = "h.%d." % i
        # Conv1D weights are [in, out].
        shapes += [
            (p + "ln_1.weight", (d,)), (p + "ln_1.bias", (d,)),
            (p + "attn.c_attn.weight", (d, 3 * d)),
            (p + "attn.c_attn.bias", (3 * d,)),
            (p + "attn.c_proj.weight", (d, d)), (p + "attn.c_proj.bias", (d,)),
            (p + "ln_2.weight", (d,)), (p + "ln_2.bias", (d,)),
            (p + "mlp.c_fc.weight", (d, 4 * d)),
            (p + "mlp.c_fc.bias", (4 * d,)),
            (p + "mlp.c_proj.weight", (4 * d, d)),
            (p + "mlp.c_proj.bias", (d,)),
        ]
    shapes.append(("ln_f.weight", (d,)))
    shapes.append(("ln_f.bias", (d,)))
    return {name: random_tensor(rng, name, shape) for name, shape in shapes}


def mamba_weights(rng):
    c = MAMBA
    d, di, ns, r = c["dim"], c["expand"] * c["dim"], c["d_state"], c["dt_rank"]
    w = {"backbone.embeddings.weight": rng.normal(0, 0.5, (c["vocab"], d))}
    for i in range(c["depth"]):
        p = "backbone.layers.%d." % i
        m = p + "mixer."
        w[p + "norm.weight"] = 1 + rng.normal(0, 0.1, d)
        w[m + "in_proj.weight"] = rng.normal(0, d ** -0.5, (2 * di, d))
        w[m + "conv1d.weight"] = rng.normal(0, c["d_conv"] ** -0.5,
                                            (di, 1, c["d_conv"]))
        w[m + "conv1d.bias"] = rng.normal(0, 0.05, di)
        w[m + "x_proj.weight"] = rng.normal(0, di ** -0.5, (r + 2 * ns, di))
        w[m + "dt_proj.weight"] = rng.normal(0, r ** -0.5, (di, r))
        step = np.exp(rng.uniform(np.log(1e-3), np.log(1e-1), di))
        w[m + "dt_proj.bias"] = step + np.log(-np.expm1(-step))
        w[m + "A_log"] = np.log(np.tile(np.arange(1, ns + 1), (di, 1)))
        w[m + "D"] = np.ones(di)
        w[m + "out_proj.weight"] = rng.normal(0, di ** -0.5, (d, di))
    w["backbone.norm_f.weight"] = 1 + rng.normal(0, 0.1, d)
    return w


def random_tensor(rng, name, shape):
    """Well-conditioned values: projections N(0, 1/fan_in), norm gains
    1 + N(0, 0.1^2), biases N(0, 0.05^2), embeddings N(0, 0.5^2)."""
    if len(shape) == 1:
        if name.endswith("bias"):
            return rng.normal(0, 0.05, shape)
        return 1 + rng.normal(0, 0.1, shape)
    if "embed" in name or name in ("wte.weight", "wpe.weight"):
        return rng.normal(0, 0.5, shape)
    if ".c_" in name:                              # Conv1D: [in, out]
        return rng.normal(0, shape[0] ** -0.5, shape)
    return rng.normal(0, shape[1] ** -0.5, shape)


# --- the float64 references -------------------------------------------------

def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def layer_norm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def split_heads(x, heads):
    b, n, hd = x.shape
    return x.reshape(b, n, heads, hd // heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    b, h, n, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, n, h * d)


def rope(x, theta):
    """transformers' apply_rotary_pos_emb: rotate_half, default rope type."""
    n, d = x.shape[-2:]
    inv_freq = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.int64) / d)
    angles = np.outer(np.arange(n), inv_freq)
    emb = np.concatenate([angles, angles], axis=-1)
    rotated = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * np.cos(emb) + rotated * np.sin(emb)


def llama_forward(w, ids):
    c = LLAMA
    x = w["model.embed_tokens.weight"][ids]
    n = ids.shape[1]
    causal = np.triu(np.full((n, n), -np.inf), 1)
    for i in range(c["depth"]):
        p = "model.layers.%d." % i
        h = rms_norm(x, w[p + "input_layernorm.weight"], c["eps"])
        q = rope(split_heads(h @ w[p + "self_attn.q_proj.weight"].T,
                             c["heads"]), c["theta"])
        k = rope(split_heads(h @ w[p + "self_attn.k_proj.weight"].T,
                             c["kv_heads"]), c["theta"])
        v = split_heads(h @ w[p + "self_attn.v_proj.weight"].T, c["kv_heads"])
        rep = c["heads"] // c["kv_heads"]          # repeat_kv
        k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1]) + causal
        x = x + merge_heads(softmax(scores) @ v) @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], c["eps"])
        gate = h @ w[p + "mlp.gate_proj.weight"].T
        up = h @ w[p + "mlp.up_proj.weight"].T
        silu = gate / (1 + np.exp(-gate))
        x = x + (silu * up) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], c["eps"])
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return x @ head.T


def gpt2_forward(w, ids):
    c = GPT2
    n = ids.shape[1]
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    causal = np.triu(np.full((n, n), -np.inf), 1)

    def conv1d(h, name):
        return h @ w[name + ".weight"] + w[name + ".bias"]

    def ln(h, name):
        return layer_norm(h, w[name + ".weight"], w[name + ".bias"], c["eps"])

    for i in range(c["depth"]):
        p = "h.%d." % i
        qkv = conv1d(ln(x, p + "ln_1"), p + "attn.c_attn")
        q, k, v = (split_heads(t, c["heads"]) for t in np.split(qkv, 3, -1))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1]) + causal
        x = x + conv1d(merge_heads(softmax(scores) @ v), p + "attn.c_proj")
        h = conv1d(ln(x, p + "ln_2"), p + "mlp.c_fc")
        h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
        x = x + conv1d(h, p + "mlp.c_proj")
    return ln(x, "ln_f") @ w["wte.weight"].T


def mamba_forward(w, ids):
    c = MAMBA
    ns, r, k = c["d_state"], c["dt_rank"], c["d_conv"]
    x = w["backbone.embeddings.weight"][ids]
    b, n, _ = x.shape
    for i in range(c["depth"]):
        m = "backbone.layers.%d.mixer." % i
        h = rms_norm(x, w["backbone.layers.%d.norm.weight" % i], c["eps"])
        u, z = np.split(h @ w[m + "in_proj.weight"].T, 2, axis=-1)
        di = u.shape[-1]
        padded = np.concatenate([np.zeros((b, k - 1, di)), u], axis=1)
        conv = w[m + "conv1d.weight"][:, 0, :]          # [di, k]
        u = sum(padded[:, j:j + n] * conv[:, j] for j in range(k))
        u = u + w[m + "conv1d.bias"]
        u = u / (1 + np.exp(-u))
        proj = u @ w[m + "x_proj.weight"].T
        dt, B, C = proj[..., :r], proj[..., r:r + ns], proj[..., r + ns:]
        delta = np.logaddexp(0, dt @ w[m + "dt_proj.weight"].T +
                             w[m + "dt_proj.bias"])
        A = -np.exp(w[m + "A_log"])                      # [di, ns]
        state = np.zeros((b, di, ns))
        y = np.zeros_like(u)
        for t in range(n):
            state = (np.exp(delta[:, t, :, None] * A) * state +
                     (delta[:, t] * u[:, t])[:, :, None] * B[:, t, None, :])
            y[:, t] = (state * C[:, t, None, :]).sum(-1) + w[m + "D"] * u[:, t]
        y = y * (z / (1 + np.exp(-z)))
        x = x + y @ w[m + "out_proj.weight"].T
    x = rms_norm(x, w["backbone.norm_f.weight"], c["eps"])
    return x @ w["backbone.embeddings.weight"].T


def erf(x):
    """math.erf elementwise (numpy has none)."""
    import math
    return np.vectorize(math.erf)(x)


def bert_forward(w, ids, types, mask):
    c = BERT
    n = ids.shape[1]
    x = (w["embeddings.word_embeddings.weight"][ids] +
         w["embeddings.token_type_embeddings.weight"][types] +
         w["embeddings.position_embeddings.weight"][:n])
    x = layer_norm(x, w["embeddings.LayerNorm.weight"],
                   w["embeddings.LayerNorm.bias"], c["eps"])
    m = mask.astype(np.float64)
    bias = ((1.0 - m) * np.finfo(np.float32).min)[:, None, None, :]

    def lin(h, name):
        return h @ w[name + ".weight"].T + w[name + ".bias"]

    for i in range(c["depth"]):
        p = "encoder.layer.%d." % i
        q = split_heads(lin(x, p + "attention.self.query"), c["heads"])
        k = split_heads(lin(x, p + "attention.self.key"), c["heads"])
        v = split_heads(lin(x, p + "attention.self.value"), c["heads"])
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1]) + bias
        a = merge_heads(softmax(scores) @ v)
        x = layer_norm(lin(a, p + "attention.output.dense") + x,
                       w[p + "attention.output.LayerNorm.weight"],
                       w[p + "attention.output.LayerNorm.bias"], c["eps"])
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / np.sqrt(2)))
        x = layer_norm(lin(h, p + "output.dense") + x,
                       w[p + "output.LayerNorm.weight"],
                       w[p + "output.LayerNorm.bias"], c["eps"])
    pooled = (x * m[:, :, None]).sum(axis=1) / np.maximum(
        m.sum(axis=1, keepdims=True), 1e-9)
    length = np.sqrt((pooled * pooled).sum(axis=1, keepdims=True))
    return pooled / np.maximum(length, 1e-12)


# --- commands -----------------------------------------------------------------

def parse_flags(args):
    flags = {"--tied": "1", "--shards": "1", "--dtype": "bf16"}
    extra = False
    i = 0
    while i < len(args):
        if args[i] == "--extra":
            extra = True
            i += 1
            continue
        flags[args[i]] = args[i + 1]
        i += 2
    return flags, extra


def write(kind, folder, args):
    flags, extra = parse_flags(args)
    dtype = {"bf16": "BF16", "f16": "F16", "f32": "F32"}[flags["--dtype"]]
    rng = np.random.default_rng(20 if kind == "llama" else 21)
    if kind == "llama":
        weights = llama_weights(rng, flags["--tied"] == "1")
    elif kind == "gpt2":
        weights = gpt2_weights(rng)
    elif kind == "mamba":
        weights = mamba_weights(rng)
    else:
        weights = bert_weights(rng)
    tensors, stored = [], {}
    for name, value in weights.items():
        st, data, values = encode(value, dtype)
        tensors.append((name, st, value.shape, data))
        stored[name] = values
    if kind == "bert":
        # The buffer that BertModel checkpoints carry (and seqc skips).
        ids = np.arange(BERT["max_positions"])[None]
        st, data, _ = encode(ids, "I64")
        tensors.insert(5, ("embeddings.position_ids", st, ids.shape, data))
    if kind == "llama" and extra:
        # Older Llama checkpoints carry RoPE's inverse frequencies.
        d = LLAMA["dim"] // LLAMA["heads"]
        inv = 1.0 / LLAMA["theta"] ** (np.arange(0, d, 2) / d)
        for i in range(LLAMA["depth"]):
            st, data, _ = encode(inv, "F32")
            tensors.append(("model.layers.%d.self_attn.rotary_emb.inv_freq" % i,
                            st, inv.shape, data))
    if kind == "gpt2":
        # openai-community/gpt2's causal-mask buffers, one per block.
        n = GPT2["positions"]
        tril = np.tril(np.ones((1, 1, n, n)))
        for i in range(GPT2["depth"]):
            st, data, _ = encode(tril, "F32")
            tensors.insert(2 + 15 * i, ("h.%d.attn.bias" % i, st, tril.shape,
                                        data))
    write_checkpoint(os.path.join(folder, "ckpt"), tensors,
                     int(flags["--shards"]))
    np.savez(os.path.join(folder, "stored.npz"), **stored)

    vocab = {"llama": LLAMA, "bert": BERT, "gpt2": GPT2,
             "mamba": MAMBA}[kind]["vocab"]
    ids = rng.integers(0, vocab, (BATCH, LENGTH)).astype(np.int32)
    np.save(os.path.join(folder, "input_ids.npy"), ids)
    if kind == "bert":
        types = np.zeros((BATCH, LENGTH), np.int32)
        types[:, LENGTH // 2:] = 1              # a sentence pair
        mask = np.ones((BATCH, LENGTH), np.int32)
        mask[1, :3] = 0                         # left padding
        mask[2, LENGTH - 4:] = 0                # right padding
        np.save(os.path.join(folder, "token_type_ids.npy"), types)
        np.save(os.path.join(folder, "attention_mask.npy"), mask)


def check(kind, folder, output):
    stored = dict(np.load(os.path.join(folder, "stored.npz")))
    ids = np.load(os.path.join(folder, "input_ids.npy")).astype(np.int64)
    if kind == "llama":
        expected = llama_forward(stored, ids)
    elif kind == "gpt2":
        expected = gpt2_forward(stored, ids)
    elif kind == "mamba":
        expected = mamba_forward(stored, ids)
    else:
        types = np.load(os.path.join(folder, "token_type_ids.npy"))
        mask = np.load(os.path.join(folder, "attention_mask.npy"))
        expected = bert_forward(stored, ids, types, mask)
    actual = np.load(output)
    if actual.shape != expected.shape or actual.dtype != np.float32:
        sys.exit("FAIL: %s %s, expected float32 %s" %
                 (actual.dtype, actual.shape, expected.shape))
    err = np.abs(actual - expected)
    rel = (err / np.maximum(np.abs(expected), 1e-2)).max()
    print("%s: max abs err %.3g, max rel err %.3g over %d values" %
          (kind, err.max(), rel, err.size))
    if not np.all(np.isfinite(actual)) or err.max() > 1e-4 or rel > 1e-3:
        sys.exit("FAIL: %s does not match the float64 reference" % kind)
    print("ok")


if __name__ == "__main__":
    command, kind, folder = sys.argv[1:4]
    if command == "write":
        write(kind, folder, sys.argv[4:])
    else:
        check(kind, folder, sys.argv[4])
