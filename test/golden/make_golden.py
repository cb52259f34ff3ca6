#!/usr/bin/python3
"""Generates the golden data of seqc's end-to-end numerics tests.

For every model in examples/*.seq (and the small models under test/golden/)
this script holds a PyTorch nn.Module that computes exactly what the .seq file
computes, with parameters named exactly as seqc names them. It draws seeded
random weights and inputs, runs the reference in float64 (so that the golden
outputs are the exact answer rounded to float32, not another float32
implementation's rounding) and writes, under test/golden/<case>/:

  weights.safetensors       the parameters, float32
  <len>.in.<name>.npy       the inputs of one sequence length
  <len>.out.<name>.npy      the expected outputs (float32)

plus test/golden/cases.json (the manifest the tests read) and one lit test
per example, test/golden/<case>.test.

Run with Debian's interpreter, which has torch and numpy:

  scripts/bootstrap.sh --golden
  /usr/bin/python3 test/golden/make_golden.py            # regenerate all
  /usr/bin/python3 test/golden/make_golden.py gpt mha    # only these
  /usr/bin/python3 test/golden/make_golden.py --check    # self-checks only

It also runs every model in float32 and reports the error of that float32
run against the golden data, which is the error level a correct float32
compiler is expected to reach (and so a check of the tolerance of compare.py).
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BATCH = 2
# 1: a single token; 7 and 37: not a multiple of any tile or vector width;
# 64: a larger one.
LENGTHS = [1, 7, 37, 64]


def rel(path):
    return os.path.relpath(path, ROOT)


#===----------------------------------------------------------------------===#
# safetensors (no package for it on Debian): 8-byte little-endian header
# length, a JSON header {name: {dtype, shape, data_offsets}}, raw data.
#===----------------------------------------------------------------------===#

_ST_DTYPES = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64",
              np.dtype("<i4"): "I32", np.dtype("<i8"): "I64"}


def write_safetensors(path, tensors):
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        data = a.tobytes()
        header[name] = {"dtype": _ST_DTYPES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    inv = {v: k for k, v in _ST_DTYPES.items()}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(raw[base + lo:base + hi],
                                  dtype=inv[info["dtype"]]).reshape(info["shape"])
    return out


#===----------------------------------------------------------------------===#
# The .seq builtins, in PyTorch. Parameter names are the builtin modules'.
#===----------------------------------------------------------------------===#

def P(*shape):
    return nn.Parameter(torch.zeros(*shape))


class Linear(nn.Module):
    """Linear(in, out, bias=True): weight [out, in], bias [out]."""

    def __init__(self, n_in, n_out, bias=True):
        super().__init__()
        self.weight = P(n_out, n_in)
        self.bias = P(n_out) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class LayerNorm(nn.LayerNorm):
    """LayerNorm(d, eps=1e-5): torch's own, weight and bias [d]."""

    def __init__(self, d, eps=1e-5):
        super().__init__(d, eps=eps)


class RMSNorm(nn.Module):
    """RMSNorm(d, eps): x / sqrt(mean(x^2) + eps) * weight."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = P(d)
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Embedding(nn.Embedding):
    """Embedding(vocab, dim): torch's own, weight [vocab, dim]."""


class CausalConv1d(nn.Module):
    """CausalConv1d(C, K): depthwise causal conv, weight [C, 1, K] (nn.Conv1d's
    layout with groups = C), bias [C]."""

    def __init__(self, channels, kernel, bias=True):
        super().__init__()
        self.weight = P(channels, 1, kernel)
        self.bias = P(channels) if bias else None

    def forward(self, x):  # [b, L, C]
        c, _, k = self.weight.shape
        y = F.conv1d(x.transpose(1, 2), self.weight, self.bias,
                     padding=k - 1, groups=c)
        return y[..., :x.shape[1]].transpose(1, 2)


def split_heads(x, heads):  # [b, n, h*d] -> [b, h, n, d]
    b, n, hd = x.shape
    return x.view(b, n, heads, hd // heads).transpose(1, 2)


def merge_heads(x):  # [b, h, n, d] -> [b, n, h*d]
    b, h, n, d = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d)


def alibi_slopes(heads):
    """The slopes of Press et al.'s reference code."""
    def pow2(n):
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]
    if math.log2(heads).is_integer():
        return pow2(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return pow2(closest) + alibi_slopes(2 * closest)[0::2][:heads - closest]


def rope(x, theta):
    """Rotate-half RoPE on [b, h, n, d]: features i and i + d/2 at position p
    are rotated by the angle p * theta^(-2i/d)."""
    n, d = x.shape[-2], x.shape[-1]
    half = d // 2
    inv = theta ** (-2.0 * torch.arange(half, dtype=torch.float64) / d)
    ang = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def sinusoidal_pe(n, d, base=10000.0, dtype=torch.float64):
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d, 2, dtype=torch.float64)[None, :]
    ang = pos / base ** (i2 / d)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = ang.sin()
    pe[:, 1::2] = ang.cos()
    return pe.to(dtype)


def attention(q, k, v, causal=False, window=0, global_tokens=0, lengths=None,
              alibi=None, scale=None):
    """Scaled dot-product attention, the textbook way: masked scores are set
    to -inf, softmax, and rows that see no key are defined as zeros.
    q: [b, h, nq, d], k/v: [b, hk, nk, d] (grouped-query when hk < h)."""
    b, h, nq, d = q.shape
    hk, nk = k.shape[1], k.shape[2]
    if hk != h:
        k = k.repeat_interleave(h // hk, dim=1)
        v = v.repeat_interleave(h // hk, dim=1)
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    s = (q @ k.transpose(-1, -2)) * scale
    i = torch.arange(nq)[:, None]
    j = torch.arange(nk)[None, :]
    if alibi is not None:
        slopes = torch.tensor(alibi, dtype=s.dtype).view(1, h, 1, 1)
        s = s - slopes * (i - j).abs().to(s.dtype)
    allowed = torch.ones(nq, nk, dtype=torch.bool)
    if causal:
        allowed &= j <= i
    if window:
        allowed &= ((i - j).abs() < window) | (i < global_tokens) | (j < global_tokens)
    allowed = allowed.view(1, 1, nq, nk)
    if lengths is not None:
        allowed = allowed & (j.view(1, 1, 1, nk) < lengths.view(b, 1, 1, 1).long())
    allowed = allowed.expand(b, h, nq, nk)
    p = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
    p = torch.where(allowed.any(-1, keepdim=True), p, torch.zeros((), dtype=p.dtype))
    return p @ v


class MultiHeadAttention(nn.Module):
    """MultiHeadAttention(dim, heads, kv_heads=heads, bias=True, causal=False,
    rope_theta=None, window=0, global_tokens=0): wq [heads*d, dim],
    wk/wv [kv_heads*d, dim], wo [dim, heads*d], bq, bk, bv, bo."""

    def __init__(self, dim, heads, kv_heads=None, bias=True, causal=False,
                 rope_theta=None, window=0, global_tokens=0):
        super().__init__()
        kv_heads = kv_heads or heads
        d = dim // heads
        self.heads, self.kv_heads = heads, kv_heads
        self.causal, self.rope_theta = causal, rope_theta
        self.window, self.global_tokens = window, global_tokens
        self.wq = P(heads * d, dim)
        self.wk = P(kv_heads * d, dim)
        self.wv = P(kv_heads * d, dim)
        self.wo = P(dim, heads * d)
        if bias:
            self.bq, self.bk = P(heads * d), P(kv_heads * d)
            self.bv, self.bo = P(kv_heads * d), P(dim)
        else:
            self.bq = self.bk = self.bv = self.bo = None

    def forward(self, x, kv=None, lengths=None):
        kv = x if kv is None else kv
        q = split_heads(F.linear(x, self.wq, self.bq), self.heads)
        k = split_heads(F.linear(kv, self.wk, self.bk), self.kv_heads)
        v = split_heads(F.linear(kv, self.wv, self.bv), self.kv_heads)
        if self.rope_theta is not None:
            q, k = rope(q, self.rope_theta), rope(k, self.rope_theta)
        o = attention(q, k, v, causal=self.causal, window=self.window,
                      global_tokens=self.global_tokens, lengths=lengths)
        return F.linear(merge_heads(o), self.wo, self.bo)


def hippo(n):
    """HiPPO-LegS: A[n,k] = -sqrt(2n+1) sqrt(2k+1) (n > k), -(n+1) (n = k)."""
    r = torch.sqrt(2 * torch.arange(n, dtype=torch.float64) + 1)
    a = -(r[:, None] * r[None, :])
    a = torch.tril(a, -1) - torch.diag(torch.arange(n, dtype=torch.float64) + 1)
    return a, r


def ssm_zoh(u, a, b, c, d, step):
    """seq.ssm with zero-order hold, as a plain recurrence.
    u [batch, L, H], a [N, N], b/c [H, N], d [H]."""
    n = a.shape[0]
    ab = torch.matrix_exp(step * a)
    # Bb_h = A^-1 (exp(step A) - I) B_h, solved rather than inverted.
    bb = torch.linalg.solve(a, (ab - torch.eye(n, dtype=a.dtype)) @ b.T).T  # [H, N]
    batch, length, h = u.shape
    x = torch.zeros(batch, h, n, dtype=u.dtype)
    ys = []
    for t in range(length):
        x = x @ ab.T + bb * u[:, t, :, None]
        ys.append((x * c).sum(-1) + d * u[:, t])
    return torch.stack(ys, dim=1)


def selective_scan(u, delta, a, b, c, d=None):
    """Mamba's scan as a plain loop. u, delta [batch, L, D], a [D, N],
    b, c [batch, L, N], d [D]."""
    batch, length, dd = u.shape
    x = torch.zeros(batch, dd, a.shape[1], dtype=u.dtype)
    ys = []
    for t in range(length):
        dt = delta[:, t, :, None]                               # [batch, D, 1]
        x = torch.exp(dt * a) * x + dt * b[:, t, None, :] * u[:, t, :, None]
        y = (x * c[:, t, None, :]).sum(-1)
        if d is not None:
            y = y + d * u[:, t]
        ys.append(y)
    return torch.stack(ys, dim=1)


def phi(x):
    return F.elu(x) + 1.0


def linear_attention_causal(q, k, v, eps=1e-6):
    """Causal linear attention as the recurrence S_i = S_{i-1} + phi(k_i) v_i^T."""
    fq, fk = phi(q), phi(k)
    b, h, n, d = q.shape
    s = torch.zeros(b, h, d, v.shape[-1], dtype=q.dtype)
    z = torch.zeros(b, h, d, dtype=q.dtype)
    outs = []
    for i in range(n):
        s = s + fk[:, :, i, :, None] * v[:, :, i, None, :]
        z = z + fk[:, :, i]
        num = (fq[:, :, i, :, None] * s).sum(-2)
        den = (fq[:, :, i] * z).sum(-1, keepdim=True) + eps
        outs.append(num / den)
    return torch.stack(outs, dim=2)


def linear_attention_quadratic(q, k, v, causal, eps=1e-6):
    """The same as an explicitly masked n x n product (the check)."""
    a = phi(q) @ phi(k).transpose(-1, -2)
    if causal:
        n = q.shape[2]
        a = a * torch.tril(torch.ones(n, n, dtype=a.dtype))
    return (a @ v) / (a.sum(-1, keepdim=True) + eps)


#===----------------------------------------------------------------------===#
# The examples
#===----------------------------------------------------------------------===#

class AttentionModel(nn.Module):  # examples/attention.seq
    def __init__(self, dim, d_k):
        super().__init__()
        self.d_k = d_k
        self.wq, self.wk, self.wv = P(d_k, dim), P(d_k, dim), P(d_k, dim)

    def forward(self, x):
        q, k, v = x @ self.wq.T, x @ self.wk.T, x @ self.wv.T
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_k)
        return {"y": torch.softmax(scores, dim=-1) @ v}


class SelfAttention(nn.Module):  # examples/mha.seq
    def __init__(self, dim, heads):
        super().__init__()
        self.dim, self.heads = dim, heads
        self.wq, self.wk, self.wv, self.wo = (P(dim, dim) for _ in range(4))

    def forward(self, x):
        q = split_heads(F.linear(x, self.wq), self.heads)
        k = split_heads(F.linear(x, self.wk), self.heads)
        v = split_heads(F.linear(x, self.wv), self.heads)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dim / self.heads)
        o = torch.softmax(scores, dim=-1) @ v
        return F.linear(merge_heads(o), self.wo)


class MHAModel(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = SelfAttention(dim, heads)

    def forward(self, x):
        return {"y": self.attn(x)}


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, act):
        super().__init__()
        self.fc1, self.fc2 = Linear(dim, hidden), Linear(hidden, dim)
        self.act = act

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class PostLNBlock(nn.Module):
    def __init__(self, dim, heads, hidden, eps):
        super().__init__()
        self.attn = MultiHeadAttention(dim, heads)
        self.ln1 = LayerNorm(dim, eps=eps)
        self.ffn = FeedForward(dim, hidden, F.relu)
        self.ln2 = LayerNorm(dim, eps=eps)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ffn(x))


class PostLNModel(nn.Module):  # examples/post_ln_block.seq
    def __init__(self, dim, heads, hidden, depth, eps=1e-5):
        super().__init__()
        self.layers = nn.ModuleList(PostLNBlock(dim, heads, hidden, eps) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return {"y": x}


class PreLNBlock(nn.Module):
    def __init__(self, dim, heads, hidden, eps):
        super().__init__()
        self.ln1 = LayerNorm(dim, eps=eps)
        self.attn = MultiHeadAttention(dim, heads)
        self.ln2 = LayerNorm(dim, eps=eps)
        self.ffn = FeedForward(dim, hidden, F.gelu)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class PreLNModel(nn.Module):  # examples/pre_ln_block.seq
    def __init__(self, dim, heads, hidden, depth, eps=1e-5):
        super().__init__()
        self.layers = nn.ModuleList(PreLNBlock(dim, heads, hidden, eps) for _ in range(depth))
        self.norm = LayerNorm(dim, eps=eps)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return {"y": self.norm(x)}


class EncoderLayer(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.self_attn = MultiHeadAttention(dim, heads)
        self.ln1 = LayerNorm(dim)
        self.ffn = FeedForward(dim, hidden, F.relu)
        self.ln2 = LayerNorm(dim)

    def forward(self, x, src_len):
        x = self.ln1(x + self.self_attn(x, lengths=src_len))
        return self.ln2(x + self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.self_attn = MultiHeadAttention(dim, heads, causal=True)
        self.ln1 = LayerNorm(dim)
        self.cross_attn = MultiHeadAttention(dim, heads)
        self.ln2 = LayerNorm(dim)
        self.ffn = FeedForward(dim, hidden, F.relu)
        self.ln3 = LayerNorm(dim)

    def forward(self, x, memory, src_len):
        x = self.ln1(x + self.self_attn(x))
        x = self.ln2(x + self.cross_attn(x, memory, lengths=src_len))
        return self.ln3(x + self.ffn(x))


class EncoderDecoderModel(nn.Module):  # examples/encoder_decoder.seq
    def __init__(self, vocab, dim, heads, hidden, depth):
        super().__init__()
        self.dim = dim
        self.src_emb, self.tgt_emb = Embedding(vocab, dim), Embedding(vocab, dim)
        self.encoder = nn.ModuleList(EncoderLayer(dim, heads, hidden) for _ in range(depth))
        self.decoder = nn.ModuleList(DecoderLayer(dim, heads, hidden) for _ in range(depth))
        self.lm_head = Linear(dim, vocab, bias=False)

    def forward(self, src, src_len, tgt):
        dt = self.lm_head.weight.dtype
        s, t = src.shape[1], tgt.shape[1]
        memory = self.src_emb(src) * math.sqrt(self.dim) + sinusoidal_pe(s, self.dim, dtype=dt)
        for layer in self.encoder:
            memory = layer(memory, src_len)
        y = self.tgt_emb(tgt) * math.sqrt(self.dim) + sinusoidal_pe(t, self.dim, dtype=dt)
        for layer in self.decoder:
            y = layer(y, memory, src_len)
        return {"logits": self.lm_head(y)}


class GPTBlock(nn.Module):
    def __init__(self, dim, heads, kv_heads, eps):
        super().__init__()
        self.ln1 = LayerNorm(dim, eps=eps)
        self.attn = MultiHeadAttention(dim, heads, kv_heads=kv_heads, bias=False,
                                       causal=True, rope_theta=10000.0)
        self.ln2 = LayerNorm(dim, eps=eps)
        self.mlp = FeedForward(dim, 4 * dim, lambda x: F.gelu(x, approximate="tanh"))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class LMModel(nn.Module):
    """tok_emb -> layers -> norm -> lm_head (gpt, alibi)."""

    def __init__(self, vocab, dim, layers, eps=1e-5):
        super().__init__()
        self.tok_emb = Embedding(vocab, dim)
        self.layers = nn.ModuleList(layers)
        self.norm = LayerNorm(dim, eps=eps)
        self.lm_head = Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.tok_emb(tokens)
        for layer in self.layers:
            x = layer(x)
        return {"logits": self.lm_head(self.norm(x))}


class AlibiAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = (P(dim, dim) for _ in range(4))

    def forward(self, x):
        q = split_heads(F.linear(x, self.wq), self.heads)
        k = split_heads(F.linear(x, self.wk), self.heads)
        v = split_heads(F.linear(x, self.wv), self.heads)
        o = attention(q, k, v, causal=True, alibi=alibi_slopes(self.heads))
        return F.linear(merge_heads(o), self.wo)


class AlibiBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = LayerNorm(dim)
        self.attn = AlibiAttention(dim, heads)
        self.ln2 = LayerNorm(dim)
        self.fc1, self.fc2 = Linear(dim, 4 * dim), Linear(4 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LearnedPosBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, heads, causal=True)
        self.ln2 = LayerNorm(dim)
        self.fc1, self.fc2 = Linear(dim, 4 * dim), Linear(4 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class LearnedPosModel(nn.Module):  # examples/learned_pos.seq
    def __init__(self, vocab, max_len, dim, heads, depth):
        super().__init__()
        self.tok_emb = Embedding(vocab, dim)
        self.pos_emb = Embedding(max_len, dim)
        self.layers = nn.ModuleList(LearnedPosBlock(dim, heads) for _ in range(depth))
        self.norm = LayerNorm(dim)
        self.lm_head = Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
        for layer in self.layers:
            x = layer(x)
        return {"logits": self.lm_head(self.norm(x))}


class LinearSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = (P(dim, dim) for _ in range(4))

    def forward(self, x):
        q = split_heads(F.linear(x, self.wq), self.heads)
        k = split_heads(F.linear(x, self.wk), self.heads)
        v = split_heads(F.linear(x, self.wv), self.heads)
        causal = linear_attention_causal(q, k, v)
        kv = phi(k).transpose(-1, -2) @ v
        z = phi(k).sum(dim=2, keepdim=True)
        full = (phi(q) @ kv) / (phi(q) @ z.transpose(-1, -2) + 1e-6)
        return F.linear(merge_heads(causal), self.wo), F.linear(merge_heads(full), self.wo)


class LinearAttentionModel(nn.Module):  # examples/linear_attention.seq
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = LinearSelfAttention(dim, heads)

    def forward(self, x):
        causal, full = self.attn(x)
        return {"causal": causal, "full": full}


class LongformerLayer(nn.Module):
    def __init__(self, dim, heads, window, global_tokens):
        super().__init__()
        self.attn = MultiHeadAttention(dim, heads, window=window, global_tokens=global_tokens)
        self.ln1 = LayerNorm(dim)
        self.fc1, self.fc2 = Linear(dim, 4 * dim), Linear(4 * dim, dim)
        self.ln2 = LayerNorm(dim)

    def forward(self, x, lengths):
        x = self.ln1(x + self.attn(x, lengths=lengths))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class LongformerModel(nn.Module):  # examples/longformer.seq
    def __init__(self, vocab, max_len, dim, heads, depth, window, global_tokens):
        super().__init__()
        self.tok_emb = Embedding(vocab, dim)
        self.pos_emb = Embedding(max_len, dim)
        self.ln = LayerNorm(dim)
        self.layers = nn.ModuleList(LongformerLayer(dim, heads, window, global_tokens)
                                    for _ in range(depth))
        self.lm_head = Linear(dim, vocab, bias=False)

    def forward(self, tokens, lengths):
        x = self.ln(self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1])))
        for layer in self.layers:
            x = layer(x, lengths)
        return {"logits": self.lm_head(x)}


class S4Layer(nn.Module):
    def __init__(self, dim, state, step):
        super().__init__()
        self.state, self.step = state, step
        self.norm = LayerNorm(dim)
        self.B, self.C, self.D = P(dim, state), P(dim, state), P(dim)
        self.out_proj = Linear(dim, dim)

    def forward(self, x):
        a, _ = hippo(self.state)
        y = ssm_zoh(self.norm(x), a.to(x.dtype), self.B, self.C, self.D, self.step)
        return x + self.out_proj(F.gelu(y))


class S4Model(nn.Module):  # examples/s4.seq
    def __init__(self, dim, state, depth, step):
        super().__init__()
        self.layers = nn.ModuleList(S4Layer(dim, state, step) for _ in range(depth))
        self.norm = LayerNorm(dim)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return {"y": self.norm(x)}


class MambaMixer(nn.Module):
    def __init__(self, dim, d_state, d_conv, expand, dt_rank):
        super().__init__()
        d_inner = expand * dim
        self.d_inner, self.d_state, self.dt_rank = d_inner, d_state, dt_rank
        self.in_proj = Linear(dim, 2 * d_inner, bias=False)
        self.conv1d = CausalConv1d(d_inner, d_conv)
        self.x_proj = Linear(d_inner, dt_rank + 2 * d_state, bias=False)
        self.dt_proj = Linear(dt_rank, d_inner)
        self.A_log = P(d_inner, d_state)
        self.D = P(d_inner)
        self.out_proj = Linear(d_inner, dim, bias=False)

    def forward(self, hidden):
        x, z = torch.split(self.in_proj(hidden), self.d_inner, dim=-1)
        x = F.silu(self.conv1d(x))
        dt, b, c = torch.split(self.x_proj(x), [self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        a = -torch.exp(self.A_log)
        y = selective_scan(x, delta, a, b, c, d=self.D)
        return self.out_proj(y * F.silu(z))


class MambaBlock(nn.Module):
    def __init__(self, dim, d_state, d_conv, expand, dt_rank):
        super().__init__()
        self.norm = RMSNorm(dim, eps=1e-5)
        self.mixer = MambaMixer(dim, d_state, d_conv, expand, dt_rank)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class MambaModel(nn.Module):  # examples/mamba.seq
    def __init__(self, vocab, dim, depth, d_state, d_conv, expand, dt_rank):
        super().__init__()
        self.tok_emb = Embedding(vocab, dim)
        self.layers = nn.ModuleList(MambaBlock(dim, d_state, d_conv, expand, dt_rank)
                                    for _ in range(depth))
        self.norm_f = RMSNorm(dim, eps=1e-5)
        self.lm_head = Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.tok_emb(tokens)
        for layer in self.layers:
            x = layer(x)
        return {"logits": self.lm_head(self.norm_f(x))}


#===----------------------------------------------------------------------===#
# The golden-only models (test/golden/*/*.seq)
#===----------------------------------------------------------------------===#

class TextbookModel(nn.Module):  # textbook/textbook.seq
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.wq, self.wk, self.wv = P(dim, dim), P(dim, dim), P(dim, dim)

    def forward(self, x):
        q, k, v = x @ self.wq.T, x @ self.wk.T, x @ self.wv.T
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dim), dim=-1)
        return {"y": a @ v, "attn": a}


class SoftmaxModel(nn.Module):  # softmax_safety/softmax.seq
    def forward(self, x):
        # Rows of only -inf give zeros (seq.softmax), not torch's NaN.
        p = torch.softmax(x, dim=-1)
        return {"y": torch.where(torch.isinf(x).all(-1, keepdim=True) & (x < 0).all(-1, keepdim=True),
                                 torch.zeros((), dtype=x.dtype), p)}


class HugeAttentionModel(nn.Module):  # attention_huge/attention_huge.seq
    def forward(self, q, k, v, lengths):
        return {"full": attention(q, k, v),
                "causal": attention(q, k, v, causal=True),
                "padded": attention(q, k, v, lengths=lengths)}


class MaskedRowsModel(nn.Module):  # masked_rows/masked_rows.seq
    def __init__(self, window):
        super().__init__()
        self.window = window

    def forward(self, q, k, v, lengths):
        return {"o": attention(q, k, v, window=self.window, lengths=lengths)}


class EmptyLengthsModel(nn.Module):  # empty_lengths/empty_lengths.seq
    def forward(self, q, k, v, lengths):
        return {"o": attention(q, k, v, lengths=lengths),
                "oc": attention(q, k, v, causal=True, lengths=lengths)}


#===----------------------------------------------------------------------===#
# Weights and inputs
#===----------------------------------------------------------------------===#

def init_weights(model, gen):
    """Seeded, well-conditioned float32 weights: projections ~ N(0, 1/fan_in),
    norms' gammas near 1, small biases, Mamba's A_log = log(1..N), D = 1."""
    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    norm_types = (nn.LayerNorm, RMSNorm)
    modules = dict(model.named_modules())
    weights = {}
    for name, p in model.named_parameters():
        owner = modules[name.rpartition(".")[0]] if "." in name else model
        leaf = name.rpartition(".")[2]
        shape = tuple(p.shape)
        if isinstance(owner, norm_types):
            w = 1.0 + 0.1 * randn(*shape) if leaf == "weight" else 0.05 * randn(*shape)
        elif isinstance(owner, nn.Embedding):
            w = 0.5 * randn(*shape)
        elif isinstance(owner, MambaMixer) and leaf == "A_log":
            w = torch.log(torch.arange(1, shape[1] + 1, dtype=torch.float32)).repeat(shape[0], 1)
        elif isinstance(owner, MambaMixer) and leaf == "D":
            w = torch.ones(shape)
        elif isinstance(owner, Linear) and name.endswith("dt_proj.bias"):
            # softplus(bias) log-uniform in [1e-3, 1e-1], as Mamba's init.
            dt = torch.exp(torch.rand(*shape, generator=gen) * (math.log(0.1) - math.log(1e-3))
                           + math.log(1e-3))
            w = dt + torch.log(-torch.expm1(-dt))
        elif isinstance(owner, CausalConv1d):
            w = (0.3 if leaf == "weight" else 0.05) * randn(*shape)
        elif isinstance(owner, S4Layer):
            w = {"B": 0.5, "C": 1.0 / math.sqrt(shape[-1]), "D": 0.5}[leaf] * randn(*shape)
        elif len(shape) == 1:  # biases
            w = 0.05 * randn(*shape)
        else:  # [out, in] projections
            w = randn(*shape) / math.sqrt(shape[-1])
        weights[name] = w.float().contiguous()
    return weights


def run(model, weights, inputs, dtype):
    """Runs `model` with `weights` (float32 numpy/torch) in `dtype`."""
    m = model.to(dtype)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(weights[name].to(dtype))
        args = {k: (torch.from_numpy(v).to(dtype) if v.dtype.kind == "f" else torch.from_numpy(v))
                for k, v in inputs.items()}
        out = m(**args)
    return {k: v.detach() for k, v in out.items()}


def tokens(gen, vocab, n):
    return torch.randint(0, vocab, (BATCH, n), generator=gen).numpy().astype(np.int32)


def pad_lengths(gen, n, lo=1):
    """[n, l] with l < n when n > 1: one full row and one shorter row."""
    short = int(torch.randint(lo, n, (1,), generator=gen)) if n > lo else n
    return np.array([n, short], dtype=np.int32)


def floats(gen, *shape, scale=1.0):
    return (scale * torch.randn(*shape, generator=gen)).numpy().astype(np.float32)


#===----------------------------------------------------------------------===#
# The cases
#===----------------------------------------------------------------------===#

class Spec:
    """One model: its .seq file, -D overrides, reference module and inputs.
    `make_inputs(gen, length)` returns ({input: array}, {dim: size})."""

    def __init__(self, name, seq, defines, module, make_inputs, lengths=LENGTHS,
                 seed=0, opt=("-O2",), note="", example=None):
        self.name, self.seq, self.defines = name, seq, defines
        # Data sets of one model share its lit test (one compilation).
        self.example = example or name
        self.module, self.make_inputs = module, make_inputs
        self.lengths, self.seed, self.opt, self.note = lengths, seed, opt, note


def x_input(dim):
    def make(gen, n):
        return {"x": floats(gen, BATCH, n, dim)}, {"b": BATCH, "n": n}
    return make


def token_input(vocab):
    def make(gen, n):
        return {"tokens": tokens(gen, vocab, n)}, {"b": BATCH, "n": n}
    return make


V, D, H = 64, 32, 4  # the vocabulary, width and heads of every small example


def specs():
    out = []
    ex = "examples/"
    out.append(Spec("attention", ex + "attention.seq", {"dim": D, "d_k": 16},
                    lambda: AttentionModel(D, 16), x_input(D),
                    note="softmax(q k^T / sqrt(d_k)) v spelled out, d_k != dim"))
    out.append(Spec("mha", ex + "mha.seq", {"dim": D, "heads": H},
                    lambda: MHAModel(D, H), x_input(D),
                    note="split_heads / merge_heads, matmul, softmax; also the shared library"))
    out.append(Spec("post_ln_block", ex + "post_ln_block.seq",
                    {"dim": D, "heads": H, "hidden": 4 * D, "depth": 2},
                    lambda: PostLNModel(D, H, 4 * D, 2), x_input(D),
                    note="MultiHeadAttention with biases, LayerNorm, relu FFN, dropout removed"))
    out.append(Spec("pre_ln_block", ex + "pre_ln_block.seq",
                    {"dim": D, "heads": H, "hidden": 4 * D, "depth": 2},
                    lambda: PreLNModel(D, H, 4 * D, 2), x_input(D),
                    note="Pre-LN residuals, exact (erf) gelu"))

    def enc_dec_inputs(gen, n):
        s, t = n
        return ({"src": tokens(gen, V, s), "src_len": pad_lengths(gen, s),
                 "tgt": tokens(gen, V, t)}, {"b": BATCH, "s": s, "t": t})
    out.append(Spec("encoder_decoder", ex + "encoder_decoder.seq",
                    {"vocab": V, "dim": D, "heads": H, "hidden": 4 * D, "depth": 2},
                    lambda: EncoderDecoderModel(V, D, H, 4 * D, 2), enc_dec_inputs,
                    lengths=[(1, 1), (7, 9), (37, 7), (64, 64)],
                    note="padding lengths, causal self-attention, cross-attention "
                         "with s != t, sinusoidal_pe"))
    out.append(Spec("gpt", ex + "gpt.seq",
                    {"vocab": V, "dim": D, "heads": H, "kv_heads": 2, "depth": 2},
                    lambda: LMModel(V, D, [GPTBlock(D, H, 2, 1e-5) for _ in range(2)]),
                    token_input(V), opt=("-O2", "-O0"),
                    note="RoPE (rotate half), grouped-query attention, causal, tanh gelu; "
                         "compiled at -O2 and -O0"))
    out.append(Spec("alibi", ex + "alibi.seq",
                    {"vocab": V, "dim": D, "heads": H, "depth": 2},
                    lambda: LMModel(V, D, [AlibiBlock(D, H) for _ in range(2)]),
                    token_input(V), note="ALiBi slopes and bias, causal"))
    out.append(Spec("learned_pos", ex + "learned_pos.seq",
                    {"vocab": V, "max_len": 64, "dim": D, "heads": H, "depth": 2},
                    lambda: LearnedPosModel(V, 64, D, H, 2), token_input(V),
                    note="arange + position embedding, causal MultiHeadAttention"))
    out.append(Spec("linear_attention", ex + "linear_attention.seq", {"dim": D, "heads": H},
                    lambda: LinearAttentionModel(D, H), x_input(D),
                    note="causal linear_attention (recurrence) and the non-causal form "
                         "spelled out (elu, sum, transpose, division)"))

    def longformer_inputs(gen, n):
        return ({"tokens": tokens(gen, V, n), "lengths": pad_lengths(gen, n)},
                {"b": BATCH, "n": n})
    out.append(Spec("longformer", ex + "longformer.seq",
                    {"vocab": V, "max_len": 64, "dim": D, "heads": H, "depth": 2,
                     "window": 4, "global_tokens": 2},
                    lambda: LongformerModel(V, 64, D, H, 2, 4, 2), longformer_inputs,
                    note="sliding window + global tokens + padding lengths"))
    out.append(Spec("s4", ex + "s4.seq", {"dim": D, "state": 16, "depth": 2, "step": 0.01},
                    lambda: S4Model(D, 16, 2, 0.01), x_input(D),
                    note="HiPPO-LegS, zoh discretization (matrix_exp / solve), ssm recurrence"))
    out.append(Spec("mamba", ex + "mamba.seq",
                    {"vocab": V, "dim": D, "depth": 2, "d_state": 8, "d_conv": 4,
                     "expand": 2, "dt_rank": 2},
                    lambda: MambaModel(V, D, 2, 8, 4, 2, 2), token_input(V),
                    note="RMSNorm, split, causal conv1d, softplus, selective scan, silu gate"))

    # Golden-only models.
    def textbook_inputs(gen, n):
        x = np.array([[[1, 0], [0, 1], [1, 1]]], dtype=np.float32)  # cat, sat, mat
        return {"x": x}, {"b": 1, "n": 3}
    out.append(Spec("textbook", "test/golden/textbook/textbook.seq", {},
                    lambda: TextbookModel(2), textbook_inputs, lengths=[3],
                    note="the hand-computed example: W_Q = W_K = W_V = I, d = 2"))

    def softmax_inputs(gen, n):
        big, inf = 1e30, np.inf
        rows = [
            [big, -big, 0, 1, -1, 2, -2, 0.5],         # one-hot at 1e30
            [big] * 8,                                  # uniform
            [-big] * 8,                                 # uniform, not NaN
            [big, big, -big, -big, 0, 0, 0, 0],         # two halves
            [3e38, -3e38, 0, 0, 0, 0, 0, 0],            # x - max overflows to -inf
            [-inf] * 8,                                 # fully masked: zeros
            [-inf, big, -inf, -inf, -inf, -inf, -inf, -inf],
            [-inf] * 7 + [-big],
            [-big, -big + 1e24, -big, -big, -big, -big, -big, -big],
            [1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0],
        ]
        x = np.array(rows, dtype=np.float32).reshape(BATCH, 5, 8)
        return {"x": x}, {"b": BATCH, "n": 5}
    out.append(Spec("softmax_safety", "test/golden/softmax_safety/softmax_safety.seq", {},
                    SoftmaxModel, softmax_inputs, lengths=[5],
                    note="softmax of +-1e30, +-3e38 and -inf rows: no NaN/Inf, "
                         "-inf rows give zeros"))

    def huge_inputs(sign):
        def make(gen, n):
            h, d = 2, 4
            while True:
                q = floats(gen, BATCH, h, n, d).astype(np.float64)
                k = floats(gen, BATCH, h, n, d).astype(np.float64)
                if sign < 0:  # every score hugely negative
                    q, k = np.abs(q) + 0.1, -(np.abs(k) + 0.1)
                q, k = (q * 1e15).astype(np.float32), (k * 1e15).astype(np.float32)
                s = q.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64)
                srt = np.sort(s, axis=-1)
                # every row's best key (and every causal prefix's) clearly ahead
                ok = n == 1 or np.all(srt[..., -1] - srt[..., -2] > 1e-3 * np.abs(srt[..., -1]))
                for i in range(1, n):
                    p = np.sort(s[..., i, :i + 1], axis=-1)
                    ok = ok and np.all(p[..., -1] - p[..., -2] > 1e-3 * np.abs(p[..., -1]))
                if ok:
                    break
            v = floats(gen, BATCH, h, n, d)
            return ({"q": q, "k": k, "v": v, "lengths": pad_lengths(gen, n)},
                    {"b": BATCH, "n": n})
        return make
    out.append(Spec("attention_huge", "test/golden/attention_huge/attention_huge.seq", {},
                    HugeAttentionModel, huge_inputs(+1), lengths=[1, 7, 37],
                    note="attention scores ~ +-1e30 (q, k ~ 1e15): full, causal and padded "
                         "attention saturate to one-hot, no NaN/Inf"))
    out.append(Spec("attention_huge_neg", "test/golden/attention_huge/attention_huge.seq", {},
                    HugeAttentionModel, huge_inputs(-1), lengths=[1, 7, 37], seed=1,
                    example="attention_huge",
                    note="every score ~ -1e30: padded keys must stay excluded (masking "
                         "with a finite sentinel such as -1e30 fails this)"))

    def masked_rows_inputs(gen, n):
        h, d = 2, 8
        q, k, v = (floats(gen, BATCH, h, n, d) for _ in range(3))
        lengths = np.array([n, 3 if n >= 8 else 1], dtype=np.int32)
        return ({"q": q, "k": k, "v": v, "lengths": lengths},
                {"b": BATCH, "n": n})
    out.append(Spec("masked_rows", "test/golden/masked_rows/masked_rows.seq", {"window": 2},
                    lambda: MaskedRowsModel(2), masked_rows_inputs, lengths=[8, 37],
                    note="window 2 with padding length 3: queries 4.. of the short row see "
                         "no key and give zeros"))

    def empty_inputs(gen, n):
        h, d = 2, 8
        q, k, v = (floats(gen, BATCH, h, n, d) for _ in range(3))
        lengths = np.array([0, min(n, 5)], dtype=np.int32)
        return ({"q": q, "k": k, "v": v, "lengths": lengths},
                {"b": BATCH, "n": n})
    out.append(Spec("empty_lengths", "test/golden/empty_lengths/empty_lengths.seq", {},
                    EmptyLengthsModel, empty_inputs, lengths=[1, 7, 37],
                    note="padding length 0: every row of that batch row gives zeros "
                         "(plain and causal)"))
    return out


#===----------------------------------------------------------------------===#
# Generation
#===----------------------------------------------------------------------===#

def case_tag(n):
    if isinstance(n, tuple):
        return "s%d_t%d" % n
    return "n%d" % n


def override_flags(defines):
    flags = []
    for k, v in defines.items():
        flags += ["-D", "%s=%s" % (k, v)]
    return flags


def self_checks():
    """Checks of the reference against independent formulations."""
    g = torch.Generator().manual_seed(123)
    dt = torch.float64
    # Causal linear attention: recurrence vs masked quadratic form.
    q, k, v = (torch.randn(2, 3, 11, 5, generator=g, dtype=dt) for _ in range(3))
    e = (linear_attention_causal(q, k, v) - linear_attention_quadratic(q, k, v, True)).abs().max()
    assert e < 1e-12, e
    # zoh: solve-based Bb vs the block matrix exponential exp(step [[A, B], [0, 0]]).
    a, _ = hippo(6)
    b = torch.randn(3, 6, generator=g, dtype=dt)
    step = 0.01
    ab = torch.matrix_exp(step * a)
    bb = torch.linalg.solve(a, (ab - torch.eye(6, dtype=dt)) @ b.T).T
    for h in range(3):
        m = torch.zeros(7, 7, dtype=dt)
        m[:6, :6], m[:6, 6] = a, b[h]
        e = (torch.matrix_exp(step * m)[:6, 6] - bb[h]).abs().max()
        assert e < 1e-12, e
    # ssm recurrence vs its convolution kernel K_t = C Ab^t Bb.
    u = torch.randn(2, 9, 3, generator=g, dtype=dt)
    c, d = torch.randn(3, 6, generator=g, dtype=dt), torch.randn(3, generator=g, dtype=dt)
    y = ssm_zoh(u, a, b, c, d, step)
    kern = torch.stack([(c * (torch.linalg.matrix_power(ab, t) @ bb.T).T).sum(-1)
                        for t in range(9)])  # [L, H]
    y2 = torch.stack([sum(kern[j] * u[:, t - j] for j in range(t + 1)) + d * u[:, t]
                      for t in range(9)], dim=1)
    assert (y - y2).abs().max() < 1e-10
    # Selective scan with constant delta/B/C == an ssm with diagonal A, Euler B.
    dd, nn_ = 3, 4
    aa = -torch.rand(dd, nn_, generator=g, dtype=dt)
    delta = torch.full((1, 9, dd), 0.1, dtype=dt)
    bq = torch.randn(nn_, generator=g, dtype=dt).expand(1, 9, nn_)
    cq = torch.randn(nn_, generator=g, dtype=dt).expand(1, 9, nn_)
    uu = torch.randn(1, 9, dd, generator=g, dtype=dt)
    ys = selective_scan(uu, delta, aa, bq, cq)
    for ch in range(dd):
        decay = torch.exp(0.1 * aa[ch])
        for t in range(9):
            ref = sum((cq[0, 0] * decay ** (t - j) * 0.1 * bq[0, 0]).sum() * uu[0, j, ch]
                      for j in range(t + 1))
            assert abs(ys[0, t, ch] - ref) < 1e-12
    # Causal conv1d vs its definition.
    conv = CausalConv1d(3, 4).double()
    with torch.no_grad():
        conv.weight.copy_(torch.randn(3, 1, 4, generator=g, dtype=dt))
        conv.bias.copy_(torch.randn(3, generator=g, dtype=dt))
    xx = torch.randn(2, 6, 3, generator=g, dtype=dt)
    yy = conv(xx)
    for t in range(6):
        ref = conv.bias + sum(conv.weight[:, 0, j] * (xx[:, t - 3 + j] if t - 3 + j >= 0 else 0)
                              for j in range(4))
        assert (yy[:, t] - ref).abs().max() < 1e-12
    # ALiBi slopes: 2^(-8i/h) for powers of two.
    assert alibi_slopes(4) == [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8]
    # RoPE preserves norms and makes q.k depend on relative positions only.
    x = torch.randn(1, 1, 5, 8, generator=g, dtype=dt)
    r = rope(x, 10000.0)
    assert (r.norm(dim=-1) - x.norm(dim=-1)).abs().max() < 1e-12
    same = x[:, :, :1].expand(1, 1, 5, 8)
    rs = rope(same, 10000.0)
    dots = [(rs[0, 0, i] * rs[0, 0, i + 1]).sum() for i in range(4)]
    assert max(dots) - min(dots) < 1e-12
    print("self-checks passed")


def check_names(spec, weights):
    """Compares the parameter names and shapes with `seqc --list-params --json`
    when a seqc binary is available."""
    seqc = os.environ.get("SEQC", os.path.join(ROOT, "build-golden", "bin", "seqc"))
    if not os.path.exists(seqc):
        return None
    cmd = [seqc, "--list-params", "--json", os.path.join(ROOT, spec.seq)] + override_flags(spec.defines)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return "seqc --list-params failed: " + r.stderr.strip()[:300]
    try:
        listed = json.loads(r.stdout)
    except json.JSONDecodeError:
        return "seqc --list-params printed no JSON"
    if isinstance(listed, dict):
        listed = listed.get("params", listed)
    theirs = {p["name"]: list(p["shape"]) for p in listed}
    ours = {k: list(v.shape) for k, v in weights.items()}
    if theirs != ours:
        return "names differ: only seqc %s, only here %s, shapes %s" % (
            sorted(set(theirs) - set(ours)), sorted(set(ours) - set(theirs)),
            {k: (theirs[k], ours[k]) for k in set(theirs) & set(ours) if theirs[k] != ours[k]})
    return "ok"


def generate(spec, write=True):
    gen = torch.Generator().manual_seed(1000 + spec.seed)
    model = spec.module()
    weights = init_weights(model, gen)
    if spec.name == "textbook":
        weights = {k: torch.eye(2) for k in weights}
    outdir = os.path.join(HERE, spec.name)
    os.makedirs(outdir, exist_ok=True)
    wpath = os.path.join(outdir, "weights.safetensors")
    if write:
        write_safetensors(wpath, {k: v.numpy() for k, v in weights.items()})
    cases = []
    worst = {}
    for n in spec.lengths:
        inputs, dims = spec.make_inputs(gen, n)
        ref = run(spec.module(), weights, inputs, torch.float64)
        f32 = run(spec.module(), weights, inputs, torch.float32)
        tag = case_tag(n)
        case = {"name": "%s/%s" % (spec.name, tag), "example": spec.example, "seq": spec.seq,
                "defines": spec.defines, "weights": rel(wpath), "dims": dims,
                "inputs": {}, "outputs": {}}
        for name, a in inputs.items():
            path = os.path.join(outdir, "%s.in.%s.npy" % (tag, name))
            if write:
                np.save(path, a)
            case["inputs"][name] = rel(path)
        for name, t in ref.items():
            expected = t.numpy().astype(np.float32)
            path = os.path.join(outdir, "%s.out.%s.npy" % (tag, name))
            if write:
                np.save(path, expected)
            case["outputs"][name] = rel(path)
            res = compare.compare(f32[name].numpy(), expected)
            w = worst.setdefault(name, [0.0, 0.0])
            w[0], w[1] = max(w[0], res.max_abs), max(w[1], res.max_rel)
            if not res.ok:
                print("  WARNING %s %s: a float32 torch run fails the tolerance: %s"
                      % (case["name"], name, res.message))
            if not np.all(np.isfinite(expected)):
                print("  WARNING %s %s: non-finite expected values" % (case["name"], name))
        cases.append(case)
    return cases, weights, worst


def write_lit_test(spec):
    """test/golden/<name>.test: compile once per optimization level, then run
    every golden case through the executable and compare."""
    flags = "".join(" " + f for f in override_flags(spec.defines))
    seq = "%seqc_src_root/" + spec.seq
    lines = ["# Generated by make_golden.py; do not edit.",
             "# %s: %s" % (spec.name, spec.note),
             "# RUN: rm -rf %t && mkdir -p %t"]
    for opt in spec.opt:
        exe = "%%t/%s%s" % (spec.name, opt)
        lines.append("# RUN: seqc %s %s%s -o %s" % (opt, seq, flags, exe))
        # The first build of the demo model also runs on two OpenMP threads.
        threads = " --threads 2" if spec.name == "gpt" and opt == spec.opt[0] else ""
        lines.append("# RUN: %%python %%S/run_golden.py --exe %s --example %s --workdir %%t/out%s%s"
                     % (exe, spec.example, opt, threads))
    if spec.name == "mha":
        # The same model as a shared library, driven through the C API.
        lines.append("# RUN: seqc -O2 %s%s -o %%t/libmha.so" % (seq, flags))
        lines.append("# RUN: %%python %%S/run_golden.py --shared %%t/libmha.so --example %s "
                     "--workdir %%t/outso" % spec.name)
    if spec.name == "textbook":
        lines.append("# RUN: %%python %%S/check_textbook.py %%t/out%s/textbook_n3.out.y.npy "
                     "%%t/out%s/textbook_n3.out.attn.npy" % (spec.opt[0], spec.opt[0]))
    with open(os.path.join(HERE, spec.name + ".test"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("only", nargs="*", help="regenerate only these cases")
    ap.add_argument("--check", action="store_true",
                    help="self-checks and float32 errors only; write nothing")
    args = ap.parse_args()
    self_checks()
    all_specs = specs()
    manifest_path = os.path.join(HERE, "cases.json")
    old = []
    if os.path.exists(manifest_path) and args.only:
        with open(manifest_path) as f:
            old = json.load(f)["cases"]
    cases = []
    for spec in all_specs:
        if args.only and spec.name not in args.only:
            cases += [c for c in old if c["name"].split("/")[0] == spec.name]
            continue
        got, weights, worst = generate(spec, write=not args.check)
        cases += got
        names = check_names(spec, weights)
        print("%-20s %d cases; float32 torch vs golden: %s%s" % (
            spec.name, len(got),
            ", ".join("%s abs %.2e rel %.2e" % (k, v[0], v[1]) for k, v in worst.items()),
            "; names: " + names if names else ""))
        if not args.check and spec.example == spec.name:
            write_lit_test(spec)
    if not args.check:
        manifest = {"comment": "Generated by test/golden/make_golden.py. Paths are relative "
                               "to the repository root.",
                    "batch": BATCH, "tolerance": {"abs": compare.ABS_TOL, "rel": compare.REL_TOL,
                                                  "rel_floor": compare.REL_FLOOR},
                    "cases": cases}
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
