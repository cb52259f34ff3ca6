"""Eager PyTorch (1.13 from Debian, or 2.x from the bench venv) on one work.

  torch_peer.py --work JSON --size JSON [--threads 2] [--mode eager|sdpa|compile]

eager:   the plain formulation an engineer writes with torch ops (1.13 and
         2.x); attention materializes the scores.
sdpa:    2.x only: F.scaled_dot_product_attention (its CPU flash kernel) for
         attention, gpt2_small and bert_encoder, nn.TransformerEncoder's fast
         path for the encoder.
compile: 2.x only: torch.compile of the eager formulation.

Each work's function takes its inputs as default arguments (fn() runs it on
them; fn.__defaults__ lists them) so that onnx_peer.py can export the same
formulation with the activations as graph inputs and the weights as
initializers.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import parse_args, report, time_runs, unsupported  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def attention_mask(n, causal, window):
    """Boolean [n, n] mask of allowed (query, key) pairs, or None."""
    if not causal and window == 0:
        return None
    i = torch.arange(n).view(-1, 1)
    j = torch.arange(n).view(1, -1)
    allowed = torch.ones(n, n, dtype=torch.bool)
    if causal:
        allowed &= j <= i
    if window > 0:
        allowed &= (i - j).abs() < window
    return allowed


def make_attention(h, dims, mode):
    heads, hkv, d = h["heads"], h.get("kv_heads", h["heads"]), h["d"]
    b = dims["b"]
    nq = dims.get("nq", dims.get("n"))
    nk = dims.get("nk", dims.get("n"))
    causal, window = h.get("causal", False), h.get("window", 0)
    q = torch.randn(b, heads, nq, d)
    k = torch.randn(b, hkv, nk, d)
    v = torch.randn(b, hkv, nk, d)
    allowed = attention_mask(nq, causal, window) if nq == nk else None
    scale = 1.0 / math.sqrt(d)
    groups = heads // hkv

    if mode == "sdpa":
        if not hasattr(F, "scaled_dot_product_attention"):
            unsupported("F.scaled_dot_product_attention needs PyTorch >= 2.0")
        kk, vv = (k, v) if groups == 1 else (k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1))
        if causal and window == 0:
            return lambda q=q, kk=kk, vv=vv: F.scaled_dot_product_attention(q, kk, vv, is_causal=True)
        return lambda q=q, kk=kk, vv=vv: F.scaled_dot_product_attention(q, kk, vv, attn_mask=allowed)

    def eager(q=q, k=k, v=v):
        kk, vv = (k, v) if groups == 1 else (k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1))
        s = (q @ kk.transpose(-1, -2)) * scale
        if allowed is not None:
            s = s.masked_fill(~allowed, float("-inf"))
        return torch.softmax(s, dim=-1) @ vv
    return eager


def phi(x):
    return F.elu(x) + 1.0


def make_linear_attention(name, h, dims):
    heads, d, n, b = h["heads"], h["d"], dims["n"], dims["b"]
    q, k, v = (torch.randn(b, heads, n, d) for _ in range(3))
    if name == "linear_attention_quadratic":
        def quadratic(q=q, k=k, v=v):
            a = phi(q) @ phi(k).transpose(-1, -2)
            return (a @ v) / (a.sum(-1, keepdim=True) + 1e-6)
        return quadratic
    if not h.get("causal", False):
        def reassociated(q=q, k=k, v=v):
            fk = phi(k)
            kv = fk.transpose(-1, -2) @ v
            z = fk.sum(2, keepdim=True)
            fq = phi(q)
            return (fq @ kv) / (fq @ z.transpose(-1, -2) + 1e-6)
        return reassociated
    chunk = 64

    def chunked():
        # Quadratic inside each chunk with the causal mask, the running
        # phi(K)^T V state and phi(K) sum carried between chunks.
        fq, fk = phi(q), phi(k)
        state = torch.zeros(b, heads, d, d)
        zsum = torch.zeros(b, heads, 1, d)
        mask = torch.ones(chunk, chunk).tril()
        out = []
        for s in range(0, n, chunk):
            cq, ck, cv = fq[:, :, s:s + chunk], fk[:, :, s:s + chunk], v[:, :, s:s + chunk]
            c = cq.shape[2]
            a = (cq @ ck.transpose(-1, -2)) * mask[:c, :c]
            num = a @ cv + cq @ state
            den = a.sum(-1, keepdim=True) + cq @ zsum.transpose(-1, -2)
            out.append(num / (den + 1e-6))
            state = state + ck.transpose(-1, -2) @ cv
            zsum = zsum + ck.sum(2, keepdim=True)
        return torch.cat(out, dim=2)
    return chunked


def make_selective_scan(h, dims):
    D, N, L, b = h["channels"], h["state"], dims["L"], dims["b"]
    u, delta, z = (torch.randn(b, L, D) for _ in range(3))
    B, C = torch.randn(b, L, N), torch.randn(b, L, N)
    A = -torch.rand(D, N).exp()
    Dskip, dbias = torch.rand(D), torch.rand(D)

    def scan():
        # The plain time-major loop (mamba_ssm's selective_scan_ref).
        dt = F.softplus(delta + dbias)
        x = torch.zeros(b, D, N)
        ys = []
        for t in range(L):
            dA = torch.exp(dt[:, t, :, None] * A)
            x = dA * x + (dt[:, t, :, None] * B[:, t, None, :]) * u[:, t, :, None]
            ys.append((x * C[:, t, None, :]).sum(-1))
        y = torch.stack(ys, dim=1) + u * Dskip
        return y * F.silu(z)
    return scan


def make_s4(h, dims):
    H, N, L, b = h["channels"], h["state"], dims["L"], dims["b"]
    # HiPPO-LegS A, zero-order hold with step 0.01, per-channel B and C.
    n = torch.arange(N, dtype=torch.float64)
    A = -torch.where(n.view(-1, 1) > n.view(1, -1),
                     torch.sqrt(2 * n.view(-1, 1) + 1) * torch.sqrt(2 * n.view(1, -1) + 1),
                     torch.diag(n + 1))
    step = 0.01
    Ab = torch.matrix_exp(step * A)
    Bfac = torch.linalg.solve(A, Ab - torch.eye(N, dtype=torch.float64))
    Bc, Cc, Dc = torch.randn(H, N), torch.randn(H, N), torch.randn(H)
    Bb = (Bc.double() @ Bfac.T).float()
    AbT = Ab.T.float().contiguous()
    u = torch.randn(b, L, H)

    def scan():
        x = torch.zeros(b, H, N)
        ys = []
        for t in range(L):
            x = x @ AbT + u[:, t, :, None] * Bb
            ys.append((x * Cc).sum(-1))
        return torch.stack(ys, 1) + u * Dc
    return scan


def make_encoder(h, dims, mode):
    e, heads, hidden, depth = h["dim"], h["heads"], h["hidden"], h["depth"]
    layer = torch.nn.TransformerEncoderLayer(e, heads, hidden, dropout=0.0, activation="relu",
                                             batch_first=True, norm_first=True)
    kwargs = {"enable_nested_tensor": False} if "enable_nested_tensor" in \
        torch.nn.TransformerEncoder.__init__.__code__.co_varnames else {}
    model = torch.nn.TransformerEncoder(layer, depth, **kwargs).eval()
    x = torch.randn(dims["b"], dims["n"], e)
    if mode == "compile":
        model = torch.compile(model)
    return lambda x=x: model(x)


def make_gpt(h, dims, mode):
    """examples/gpt.seq: token embedding, Pre-LN blocks (causal multi-head
    attention with rotate-half RoPE, no projection biases; tanh-GELU MLP with
    biases), final LayerNorm, LM head without bias. sdpa: the attention
    through F.scaled_dot_product_attention."""
    e, heads, depth, vocab = h["dim"], h["heads"], h["depth"], h["vocab"]
    hd, half, n = e // heads, e // heads // 2, dims["n"]
    lin = lambda i, o, bias: torch.nn.Linear(i, o, bias=bias)
    blocks = [dict(ln1=torch.nn.LayerNorm(e), wq=lin(e, e, False), wk=lin(e, e, False),
                   wv=lin(e, e, False), wo=lin(e, e, False), ln2=torch.nn.LayerNorm(e),
                   fc1=lin(e, 4 * e, True), fc2=lin(4 * e, e, True)) for _ in range(depth)]
    emb, norm, head = torch.nn.Embedding(vocab, e), torch.nn.LayerNorm(e), lin(e, vocab, False)
    tokens = torch.randint(0, vocab, (dims["b"], n))
    inv = 1.0 / (10000.0 ** (torch.arange(0, half, dtype=torch.float32) / half))
    ang = torch.arange(n, dtype=torch.float32)[:, None] * inv[None, :]
    cos, sin = ang.cos().repeat(1, 2), ang.sin().repeat(1, 2)
    causal = torch.ones(n, n, dtype=torch.bool).tril()

    def rope(x):
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin

    def attend(q, k, v):
        if mode == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        return torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1) @ v

    def forward(tokens=tokens):
        x = emb(tokens)
        for p in blocks:
            y = p["ln1"](x)
            split = lambda t: t.view(dims["b"], n, heads, hd).transpose(1, 2)
            q, k, v = rope(split(p["wq"](y))), rope(split(p["wk"](y))), split(p["wv"](y))
            a = attend(q, k, v).transpose(1, 2).reshape(dims["b"], n, e)
            x = x + p["wo"](a)
            x = x + p["fc2"](F.gelu(p["fc1"](p["ln2"](x)), approximate="tanh"))
        return head(norm(x))
    return forward


def make_bert(h, dims, mode):
    """examples/bert.seq (Hugging Face's BertModel as a sentence encoder):
    word + position + token-type embeddings and LayerNorm, Post-LN layers
    (attention with the mask's additive bias, then LayerNorm of the residual
    sum; erf-GELU MLP, then LayerNorm of the residual sum), mean pooling over
    the unmasked tokens and L2 normalization. The inputs are random 0/1
    masks and ids, as seqc-bench's. sdpa: the attention through
    F.scaled_dot_product_attention with the bias as its float mask."""
    e, heads, hidden, depth = h["dim"], h["heads"], h["hidden"], h["depth"]
    vocab, positions, types = h["vocab"], h["max_positions"], h["types"]
    b, n, hd, eps = dims["b"], dims["n"], e // heads, 1e-12
    ln = lambda: torch.nn.LayerNorm(e, eps=eps)
    words, pos, typ = (torch.nn.Embedding(vocab, e), torch.nn.Embedding(positions, e),
                       torch.nn.Embedding(types, e))
    emb_ln = ln()
    layers = [dict(q=torch.nn.Linear(e, e), k=torch.nn.Linear(e, e), v=torch.nn.Linear(e, e),
                   o=torch.nn.Linear(e, e), ln1=ln(), fc1=torch.nn.Linear(e, hidden),
                   fc2=torch.nn.Linear(hidden, e), ln2=ln()) for _ in range(depth)]
    ids = torch.randint(0, vocab, (b, n))
    type_ids = torch.randint(0, types, (b, n))
    mask = torch.randint(0, 2, (b, n))

    def attend(q, k, v, bias):
        if mode == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd) + bias
        return torch.softmax(s, dim=-1) @ v

    def forward(ids=ids, type_ids=type_ids, mask=mask):
        m = mask.to(torch.float32)
        bias = ((1.0 - m) * torch.finfo(torch.float32).min).view(b, 1, 1, n)
        x = emb_ln(words(ids) + typ(type_ids) + pos(torch.arange(n)))
        split = lambda t: t.view(b, n, heads, hd).transpose(1, 2)
        for p in layers:
            a = attend(split(p["q"](x)), split(p["k"](x)), split(p["v"](x)), bias)
            x = p["ln1"](p["o"](a.transpose(1, 2).reshape(b, n, e)) + x)
            x = p["ln2"](p["fc2"](F.gelu(p["fc1"](x))) + x)
        pooled = (x * m[:, :, None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        return F.normalize(pooled, p=2.0, dim=1, eps=1e-12)
    return forward


def mamba_params(h, generator=None):
    """Random parameters of examples/mamba.seq under seqc's names (the shapes
    of `seqc --list-params`), for timing."""
    e, vocab, depth = h["dim"], h["vocab"], h["depth"]
    N, K, di, r = h["d_state"], h["d_conv"], h["expand"] * h["dim"], h["dt_rank"]
    g = generator or torch.Generator().manual_seed(0)
    rnd = lambda *shape, scale=1.0: torch.randn(*shape, generator=g) * scale
    p = {"tok_emb.weight": rnd(vocab, e), "norm_f.weight": torch.ones(e),
         "lm_head.weight": rnd(vocab, e, scale=e ** -0.5)}
    for i in range(depth):
        m = f"layers.{i}.mixer."
        p[f"layers.{i}.norm.weight"] = torch.ones(e)
        p[m + "in_proj.weight"] = rnd(2 * di, e, scale=e ** -0.5)
        p[m + "conv1d.weight"] = rnd(di, 1, K, scale=K ** -0.5)
        p[m + "conv1d.bias"] = rnd(di, scale=0.1)
        p[m + "x_proj.weight"] = rnd(r + 2 * N, di, scale=di ** -0.5)
        p[m + "dt_proj.weight"] = rnd(di, r, scale=r ** -0.5)
        p[m + "dt_proj.bias"] = rnd(di, scale=0.1) - 4.0
        p[m + "A_log"] = torch.log(torch.arange(1, N + 1, dtype=torch.float32)).repeat(di, 1)
        p[m + "D"] = torch.ones(di)
        p[m + "out_proj.weight"] = rnd(e, di, scale=di ** -0.5)
    return p


def mamba_forward(h, p, tokens):
    """examples/mamba.seq in eager PyTorch, on the parameters `p` (seqc's
    names): embedding, Pre-RMSNorm residual blocks of the Mamba mixer
    (in_proj, causal depthwise conv1d + SiLU, x_proj, softplus(dt_proj),
    the selective scan as the plain time-major loop of mamba_ssm's
    selective_scan_ref, the SiLU(z) gate, out_proj), final RMSNorm, LM head."""
    N, di, r = h["d_state"], h["expand"] * h["dim"], h["dt_rank"]
    K = h["d_conv"]

    def rms_norm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w

    def mixer(m, hidden):
        b, L, _ = hidden.shape
        x, z = F.linear(hidden, p[m + "in_proj.weight"]).split(di, dim=-1)
        x = F.conv1d(x.transpose(1, 2), p[m + "conv1d.weight"], p[m + "conv1d.bias"],
                     padding=K - 1, groups=di)[..., :L].transpose(1, 2)
        x = F.silu(x)
        dt, B, C = F.linear(x, p[m + "x_proj.weight"]).split([r, N, N], dim=-1)
        delta = F.softplus(F.linear(dt, p[m + "dt_proj.weight"], p[m + "dt_proj.bias"]))
        A = -torch.exp(p[m + "A_log"])
        state = torch.zeros(b, di, N)
        ys = []
        for t in range(L):
            dA = torch.exp(delta[:, t, :, None] * A)
            state = dA * state + (delta[:, t, :, None] * B[:, t, None, :]) * x[:, t, :, None]
            ys.append((state * C[:, t, None, :]).sum(-1))
        y = torch.stack(ys, dim=1) + x * p[m + "D"]
        return F.linear(y * F.silu(z), p[m + "out_proj.weight"])

    x = F.embedding(tokens.long(), p["tok_emb.weight"])
    for i in range(h["depth"]):
        x = x + mixer(f"layers.{i}.mixer.", rms_norm(x, p[f"layers.{i}.norm.weight"]))
    return F.linear(rms_norm(x, p["norm_f.weight"]), p["lm_head.weight"])


def make(work, dims, mode):
    name, h = work["name"], work["hyper"]
    if name.startswith("attention_"):
        return make_attention(h, dims, mode)
    if name == "encoder":
        return make_encoder(h, dims, mode)
    if name in ("gpt2_small", "bert_encoder"):
        if mode == "sdpa" and not hasattr(F, "scaled_dot_product_attention"):
            unsupported("F.scaled_dot_product_attention needs PyTorch >= 2.0")
        return (make_gpt if name == "gpt2_small" else make_bert)(h, dims, mode)
    if mode == "sdpa":
        unsupported("sdpa mode applies to attention, the encoders and gpt2_small only")
    if name == "linear":
        x = torch.randn(dims["b"], dims["m"], h["in_features"])
        w = torch.randn(h["out_features"], h["in_features"])
        return lambda x=x: F.linear(x, w)
    if name in ("linear_bf16", "linear_f16"):
        dtype = torch.bfloat16 if h["dtype"] == "bf16" else torch.float16
        x = torch.randn(dims["b"], dims["m"], h["in_features"]).to(dtype)
        w = torch.randn(h["out_features"], h["in_features"]).to(dtype)
        return lambda: F.linear(x, w)
    if name == "bmm":
        a = torch.randn(dims["g"], dims["m"], h["kdim"])
        bt = torch.randn(dims["g"], dims["n"], h["kdim"])
        return lambda a=a, bt=bt: torch.bmm(a, bt.transpose(1, 2))
    if name == "layer_norm":
        x = torch.randn(dims["b"], dims["n"], h["dim"])
        wt, bias = torch.ones(h["dim"]), torch.zeros(h["dim"])
        return lambda x=x: F.layer_norm(x, (h["dim"],), wt, bias)
    if name == "softmax":
        x = torch.randn(dims["rows"], dims["cols"])
        return lambda x=x: torch.softmax(x, dim=-1)
    if name == "rope":
        x = torch.randn(dims["b"], h["heads"], dims["n"], h["d"])
        half = h["d"] // 2

        def rope(x=x):
            inv = 1.0 / (10000.0 ** (torch.arange(0, half, dtype=torch.float32) / half))
            ang = torch.arange(dims["n"], dtype=torch.float32)[:, None] * inv[None, :]
            cos, sin = ang.cos().repeat(1, 2), ang.sin().repeat(1, 2)
            rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
            return x * cos + rot * sin
        return rope
    if name == "conv1d":
        C, K = h["channels"], h["kernel"]
        x = torch.randn(dims["b"], dims["L"], C)
        w, bias = torch.randn(C, 1, K), torch.randn(C)
        return lambda x=x: F.conv1d(x.transpose(1, 2), w, bias, padding=K - 1, groups=C)[..., :dims["L"]].transpose(1, 2)
    if name.startswith("linear_attention"):
        return make_linear_attention(name, h, dims)
    if name == "selective_scan":
        return make_selective_scan(h, dims)
    if name == "s4":
        return make_s4(h, dims)
    if name == "mamba_block":
        p = mamba_params(h)
        tokens = torch.randint(0, h["vocab"], (dims["b"], dims["n"]))
        return lambda: mamba_forward(h, p, tokens)
    unsupported(f"no PyTorch formulation of '{name}'")


def main():
    args = parse_args(__doc__)
    if args.threads > 0:  # 0: torch's own default
        torch.set_num_threads(args.threads)
    major = int(torch.__version__.split(".")[0])
    if args.mode in ("sdpa", "compile") and major < 2:
        unsupported(f"mode '{args.mode}' needs PyTorch 2.x (this is {torch.__version__})")
    fn = make(args.work, args.size["dims"], args.mode)
    if args.mode == "compile" and args.work["name"] != "encoder":
        fn = torch.compile(fn)
    note = ""
    with torch.inference_mode():
        try:
            min_ms, med_ms, runs = time_runs(fn, args.min_time)
        except Exception as e:  # torch.compile failing on this machine, say
            unsupported(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300])
    report(min_ms, med_ms, runs, f"torch {torch.__version__}", note)


if __name__ == "__main__":
    main()
