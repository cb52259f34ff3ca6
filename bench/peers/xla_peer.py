"""XLA's CPU backend through jax.jit on one work: the same math as
torch_peer.py written in jax.numpy (attention through
jax.nn.dot_product_attention, the scans through jax.lax.scan), compiled once
by jax.jit and timed on its compiled executable.

  xla_peer.py --work JSON --size JSON [--threads 2]

Weights and activations are arguments of the jitted function (not constants
of its trace), so that XLA cannot fold them. Layouts are JAX's own:
attention takes [batch, seq, heads, d].

Threads: XLA's CPU client has no option for its intra-op thread count; it
sizes its pool from the CPUs the process may run on. So --threads N (below the
CPUs available) restricts the process's CPU affinity to N of them before jax
is imported, and --threads 1 also sets XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
(single-threaded Eigen contractions). --threads 0 leaves XLA's default (all
CPUs).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import XLA_WORKS, parse_args, report, time_runs, unsupported  # noqa: E402

import numpy as np  # noqa: E402


def pin_threads(threads):
    """Restricts this process to `threads` CPUs; returns what was pinned."""
    if threads <= 0:
        return "XLA's default threads"
    cpus = sorted(os.sched_getaffinity(0))
    what = []
    if threads < len(cpus):
        os.sched_setaffinity(0, cpus[:threads])
        what.append(f"affinity {threads} of {len(cpus)} CPUs")
    if threads == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false").strip()
        what.append("Eigen single-threaded")
    return ", ".join(what) or f"all {len(cpus)} CPUs"


def build(work, dims, rng):
    """Returns (function, argument list) for the work, or calls unsupported."""
    import jax
    import jax.numpy as jnp
    name, h = work["name"], work["hyper"]
    f32 = np.float32

    def rnd(*shape, scale=1.0):
        return (rng.standard_normal(shape, dtype=f32) * scale).astype(f32)

    def layer_norm(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * w + b

    def attend(q, k, v, causal=False, mask=None):
        """q [b, n, h, d], k and v [b, nk, hkv, d]."""
        if hasattr(jax.nn, "dot_product_attention"):
            return jax.nn.dot_product_attention(q, k, v, is_causal=causal, mask=mask)
        groups = q.shape[2] // k.shape[2]
        k, v = jnp.repeat(k, groups, 2), jnp.repeat(v, groups, 2)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
        if causal:
            mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), bool))
        if mask is not None:
            s = jnp.where(mask, s, -jnp.inf)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v)

    def phi(x):
        return jax.nn.elu(x) + 1.0

    if name.startswith("attention_"):
        heads, hkv, d = h["heads"], h.get("kv_heads", h["heads"]), h["d"]
        b, nq, nk = dims["b"], dims.get("nq", dims.get("n")), dims.get("nk", dims.get("n"))
        causal, window = h.get("causal", False), h.get("window", 0)
        mask = None
        if window > 0:
            i, j = np.arange(nq)[:, None], np.arange(nk)[None, :]
            allowed = np.abs(i - j) < window
            if causal:
                allowed &= j <= i
            mask, causal = jnp.asarray(allowed[None, None]), False
        args = [rnd(b, nq, heads, d), rnd(b, nk, hkv, d), rnd(b, nk, hkv, d)]
        return (lambda q, k, v: attend(q, k, v, causal=causal, mask=mask)), args
    if name in ("linear", "linear_bf16", "linear_f16"):
        dtype = {"bf16": jnp.bfloat16, "f16": jnp.float16}.get(h.get("dtype"), jnp.float32)
        args = [jnp.asarray(rnd(dims["b"], dims["m"], h["in_features"]), dtype),
                jnp.asarray(rnd(h["out_features"], h["in_features"]), dtype)]
        return (lambda x, w: x @ w.T), args
    if name == "bmm":
        args = [rnd(dims["g"], dims["m"], h["kdim"]), rnd(dims["g"], dims["n"], h["kdim"])]
        return (lambda a, bt: jnp.einsum("gmk,gnk->gmn", a, bt)), args
    if name == "layer_norm":
        e = h["dim"]
        args = [rnd(dims["b"], dims["n"], e), np.ones(e, f32), np.zeros(e, f32)]
        return layer_norm, args
    if name == "softmax":
        return (lambda x: jax.nn.softmax(x, -1)), [rnd(dims["rows"], dims["cols"])]
    if name == "rope":
        half, n = h["d"] // 2, dims["n"]

        def rope(x):
            inv = 1.0 / (10000.0 ** (jnp.arange(0, half, dtype=jnp.float32) / half))
            ang = jnp.arange(n, dtype=jnp.float32)[:, None] * inv[None, :]
            cos, sin = jnp.tile(jnp.cos(ang), (1, 2)), jnp.tile(jnp.sin(ang), (1, 2))
            return x * cos + jnp.concatenate([-x[..., half:], x[..., :half]], -1) * sin
        return rope, [rnd(dims["b"], h["heads"], n, h["d"])]
    if name == "conv1d":
        C, K, L = h["channels"], h["kernel"], dims["L"]

        def conv(x, w, bias):  # x [b, L, C], w [K, C]: causal depthwise
            # K shifted products: jax.lax.conv_general_dilated with
            # feature_group_count=C took 0.9 s here on XLA's CPU backend.
            xp = jnp.pad(x, ((0, 0), (K - 1, 0), (0, 0)))
            return sum(xp[:, k:k + L, :] * w[k] for k in range(K)) + bias
        return conv, [rnd(dims["b"], L, C), rnd(K, C), rnd(C)]
    if name == "linear_attention_quadratic":
        def quadratic(q, k, v):
            a = phi(q) @ jnp.swapaxes(phi(k), -1, -2)
            return (a @ v) / (a.sum(-1, keepdims=True) + 1e-6)
        return quadratic, [rnd(dims["b"], h["heads"], dims["n"], h["d"]) for _ in range(3)]
    if name == "linear_attention":
        def reassociated(q, k, v):
            fk, fq = phi(k), phi(q)
            kv = jnp.swapaxes(fk, -1, -2) @ v
            z = fk.sum(2, keepdims=True)
            return (fq @ kv) / (fq @ jnp.swapaxes(z, -1, -2) + 1e-6)
        return reassociated, [rnd(dims["b"], h["heads"], dims["n"], h["d"]) for _ in range(3)]
    if name == "selective_scan":
        D, N, L, b = h["channels"], h["state"], dims["L"], dims["b"]

        def scan(u, delta, z, B, C, A, Dskip, dbias):
            dt = jax.nn.softplus(delta + dbias)

            def step(x, t):
                dt_t, u_t, B_t, C_t = t
                x = jnp.exp(dt_t[:, :, None] * A) * x + (dt_t[:, :, None] * B_t[:, None, :]) * u_t[:, :, None]
                return x, (x * C_t[:, None, :]).sum(-1)
            xs = tuple(jnp.swapaxes(t, 0, 1) for t in (dt, u, B, C))
            _, ys = jax.lax.scan(step, jnp.zeros((b, D, N), jnp.float32), xs)
            return (jnp.swapaxes(ys, 0, 1) + u * Dskip) * jax.nn.silu(z)
        args = [rnd(b, L, D), rnd(b, L, D), rnd(b, L, D), rnd(b, L, N), rnd(b, L, N),
                -np.exp(rng.random((D, N), dtype=f32)), rng.random(D, dtype=f32),
                rng.random(D, dtype=f32)]
        return scan, args
    if name == "s4":
        H, N, L, b = h["channels"], h["state"], dims["L"], dims["b"]
        from scipy.linalg import expm
        n = np.arange(N, dtype=np.float64)
        A = -np.where(n[:, None] > n[None, :], np.sqrt(2 * n[:, None] + 1) * np.sqrt(2 * n[None, :] + 1),
                      np.diag(n + 1))
        Ab = expm(0.01 * A)
        Bfac = np.linalg.solve(A, Ab - np.eye(N))
        Bb = (rnd(H, N).astype(np.float64) @ Bfac.T).astype(f32)

        def s4(u, AbT, Bb, Cc, Dc):
            def step(x, u_t):
                x = x @ AbT + u_t[:, :, None] * Bb
                return x, (x * Cc).sum(-1)
            _, ys = jax.lax.scan(step, jnp.zeros((b, H, N), jnp.float32), jnp.swapaxes(u, 0, 1))
            return jnp.swapaxes(ys, 0, 1) + u * Dc
        return s4, [rnd(b, L, H), np.ascontiguousarray(Ab.T.astype(f32)), Bb, rnd(H, N), rnd(H)]
    if name == "encoder":
        # nn.TransformerEncoderLayer(norm_first=True, activation="relu"),
        # biases everywhere, no final norm.
        e, heads, hidden, depth = h["dim"], h["heads"], h["hidden"], h["depth"]
        b, n, hd = dims["b"], dims["n"], e // heads
        layers = [dict(ln1w=np.ones(e, f32), ln1b=np.zeros(e, f32),
                       wqkv=rnd(e, 3 * e, scale=e ** -0.5), bqkv=rnd(3 * e, scale=0.02),
                       wo=rnd(e, e, scale=e ** -0.5), bo=rnd(e, scale=0.02),
                       ln2w=np.ones(e, f32), ln2b=np.zeros(e, f32),
                       w1=rnd(e, hidden, scale=e ** -0.5), b1=rnd(hidden, scale=0.02),
                       w2=rnd(hidden, e, scale=hidden ** -0.5), b2=rnd(e, scale=0.02))
                  for _ in range(depth)]

        def encoder(x, layers):
            for p in layers:
                y = layer_norm(x, p["ln1w"], p["ln1b"])
                q, k, v = jnp.split(y @ p["wqkv"] + p["bqkv"], 3, -1)
                split = lambda t: t.reshape(b, n, heads, hd)
                a = attend(split(q), split(k), split(v)).reshape(b, n, e)
                x = x + a @ p["wo"] + p["bo"]
                y = layer_norm(x, p["ln2w"], p["ln2b"])
                x = x + jax.nn.relu(y @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
            return x
        return encoder, [rnd(b, n, e), layers]
    if name == "gpt2_small":
        # examples/gpt.seq as torch_peer.make_gpt: Pre-LN, causal attention
        # with rotate-half RoPE and no projection biases, tanh-GELU MLP with
        # biases, final LayerNorm, LM head without bias.
        e, heads, depth, vocab = h["dim"], h["heads"], h["depth"], h["vocab"]
        b, n, hd = dims["b"], dims["n"], e // heads
        half = hd // 2
        params = dict(
            emb=rnd(vocab, e, scale=0.02), lnfw=np.ones(e, f32), lnfb=np.zeros(e, f32),
            head=rnd(e, vocab, scale=e ** -0.5),
            blocks=[dict(ln1w=np.ones(e, f32), ln1b=np.zeros(e, f32),
                         wq=rnd(e, e, scale=e ** -0.5), wk=rnd(e, e, scale=e ** -0.5),
                         wv=rnd(e, e, scale=e ** -0.5), wo=rnd(e, e, scale=e ** -0.5),
                         ln2w=np.ones(e, f32), ln2b=np.zeros(e, f32),
                         fc1=rnd(e, 4 * e, scale=e ** -0.5), b1=rnd(4 * e, scale=0.02),
                         fc2=rnd(4 * e, e, scale=(4 * e) ** -0.5), b2=rnd(e, scale=0.02))
                    for _ in range(depth)])
        tokens = rng.integers(0, vocab, (b, n), dtype=np.int32)

        def gpt(tokens, p):
            inv = 1.0 / (10000.0 ** (jnp.arange(0, half, dtype=jnp.float32) / half))
            ang = jnp.arange(n, dtype=jnp.float32)[:, None] * inv[None, :]
            cos = jnp.tile(jnp.cos(ang), (1, 2))[None, :, None, :]
            sin = jnp.tile(jnp.sin(ang), (1, 2))[None, :, None, :]

            def rope(x):  # x [b, n, heads, hd]
                return x * cos + jnp.concatenate([-x[..., half:], x[..., :half]], -1) * sin
            x = p["emb"][tokens]
            for q_ in p["blocks"]:
                y = layer_norm(x, q_["ln1w"], q_["ln1b"])
                split = lambda t: t.reshape(b, n, heads, hd)
                q, k, v = rope(split(y @ q_["wq"])), rope(split(y @ q_["wk"])), split(y @ q_["wv"])
                x = x + attend(q, k, v, causal=True).reshape(b, n, e) @ q_["wo"]
                y = layer_norm(x, q_["ln2w"], q_["ln2b"])
                x = x + jax.nn.gelu(y @ q_["fc1"] + q_["b1"], approximate=True) @ q_["fc2"] + q_["b2"]
            return layer_norm(x, p["lnfw"], p["lnfb"]) @ p["head"]
        return gpt, [tokens, params]
    if name == "bert_encoder":
        # examples/bert.seq as torch_peer.make_bert: embeddings and LayerNorm,
        # Post-LN layers (attention with the mask's additive bias, erf-GELU
        # MLP), mean pooling over the unmasked tokens, L2 normalization.
        e, heads, hidden, depth = h["dim"], h["heads"], h["hidden"], h["depth"]
        b, n, hd = dims["b"], dims["n"], e // heads
        ones, zeros = np.ones(e, f32), np.zeros(e, f32)
        params = dict(
            words=rnd(h["vocab"], e), pos=rnd(h["max_positions"], e), types=rnd(h["types"], e),
            lnw=ones, lnb=zeros,
            layers=[dict(wq=rnd(e, e, scale=e ** -0.5), bq=rnd(e, scale=0.02),
                         wk=rnd(e, e, scale=e ** -0.5), bk=rnd(e, scale=0.02),
                         wv=rnd(e, e, scale=e ** -0.5), bv=rnd(e, scale=0.02),
                         wo=rnd(e, e, scale=e ** -0.5), bo=rnd(e, scale=0.02),
                         ln1w=ones, ln1b=zeros, ln2w=ones, ln2b=zeros,
                         w1=rnd(e, hidden, scale=e ** -0.5), b1=rnd(hidden, scale=0.02),
                         w2=rnd(hidden, e, scale=hidden ** -0.5), b2=rnd(e, scale=0.02))
                    for _ in range(depth)])
        ids = rng.integers(0, h["vocab"], (b, n), dtype=np.int32)
        type_ids = rng.integers(0, h["types"], (b, n), dtype=np.int32)
        mask = rng.integers(0, 2, (b, n), dtype=np.int32)

        def bert(ids, type_ids, mask, p):
            def norm(x, w, bias):  # BertModel's eps
                mu = x.mean(-1, keepdims=True)
                var = ((x - mu) ** 2).mean(-1, keepdims=True)
                return (x - mu) * jax.lax.rsqrt(var + 1e-12) * w + bias
            m = mask.astype(jnp.float32)
            bias = ((1.0 - m) * jnp.finfo(jnp.float32).min)[:, None, None, :]
            x = norm(p["words"][ids] + p["types"][type_ids] + p["pos"][:n], p["lnw"], p["lnb"])
            split = lambda t: t.reshape(b, n, heads, hd)
            for q_ in p["layers"]:
                q, k, v = (split(x @ q_[w] + q_[c]) for w, c in (("wq", "bq"), ("wk", "bk"),
                                                                ("wv", "bv")))
                s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(hd) + bias
                a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v).reshape(b, n, e)
                x = norm(a @ q_["wo"] + q_["bo"] + x, q_["ln1w"], q_["ln1b"])
                f = jax.nn.gelu(x @ q_["w1"] + q_["b1"], approximate=False) @ q_["w2"] + q_["b2"]
                x = norm(f + x, q_["ln2w"], q_["ln2b"])
            pooled = (x * m[:, :, None]).sum(1) / jnp.maximum(m.sum(1, keepdims=True), 1e-9)
            length = jnp.sqrt((pooled * pooled).sum(1, keepdims=True))
            return pooled / jnp.maximum(length, 1e-12)
        return bert, [ids, type_ids, mask, params]
    unsupported(f"no JAX formulation of '{name}' in this harness")


def main():
    args = parse_args(__doc__)
    pinned = pin_threads(args.threads)
    try:
        import jax
    except ImportError as e:
        unsupported(f"jax is not installed: {e}")
    if jax.default_backend() != "cpu":
        jax.config.update("jax_platforms", "cpu")
    name = args.work["name"]
    if name not in XLA_WORKS:
        if name.startswith("matvec_"):
            unsupported("the quantized weight formats (q8_0, q4_0, int8 blocks) have no JAX formulation here")
        unsupported(f"no JAX formulation of '{name}' in this harness")
    fn, host_args = build(args.work, args.size["dims"], np.random.default_rng(0))
    dev_args = jax.device_put(host_args, jax.devices("cpu")[0])
    jitted = jax.jit(fn)
    min_ms, med_ms, runs = time_runs(lambda: jax.block_until_ready(jitted(*dev_args)), args.min_time)
    note = f"jax.jit, {pinned}"
    if name.startswith("attention_") or name in ("encoder", "gpt2_small"):
        note += "; attention " + ("jax.nn.dot_product_attention" if hasattr(jax.nn, "dot_product_attention")
                                  else "jnp einsum + softmax")
    report(min_ms, med_ms, runs, f"jax {jax.__version__}", note)


if __name__ == "__main__":
    main()
