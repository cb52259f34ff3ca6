"""gguf_checkpoint.py: GGUF files for the runtime's GGUF tests, written with
struct and numpy only (no gguf package), as llama.cpp's convert_hf_to_gguf.py
writes a LlamaForCausalLM checkpoint.

  gguf_checkpoint.py random OUT.safetensors VOCAB DIM HEADS KV_HEADS HIDDEN DEPTH
      A random f32 LlamaForCausalLM checkpoint (untied) of those sizes, for
      the block formats, whose rows must be multiples of 32.
  gguf_checkpoint.py convert SRC.safetensors OUT.gguf TYPE [--heads H KV]
                     [--arch NAME] [--extra] [--dequantized F]
      The Hugging Face tensors of SRC (examples/llama.seq's names, written by
      hf_checkpoint.py) as a GGUF v3 file: llama.cpp's names, Q and K rows
      permuted for its RoPE, ne reversed, the 2-D weights in TYPE (f32, f16,
      bf16, q8_0, q4_0, q4_1) and the norms in F32, with a tokenizer's
      arrays and metadata of every value type. --dequantized writes, as
      safetensors with the Hugging Face names and layout, the values a
      dequantizer must produce from the file (numpy's reference).
  gguf_checkpoint.py compare SAVED.safetensors EXPECTED.safetensors
      Prints "ok" if both hold the same tensors, bit for bit.
  gguf_checkpoint.py tensors FILE.gguf
      Reads a GGUF v3 file (checking its layout: offsets aligned, in order,
      inside the file) and prints its architecture, its integer and float
      hyperparameters and one line per tensor, sorted by name: name, ggml
      type, ne and a hash of its bytes.
  gguf_checkpoint.py malformed SRC.safetensors MODEL DIR
      Writes one malformed variant of the converted file per case into DIR,
      runs the model executable on each and checks that it fails with the
      case's message; prints "ok" when every case did.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np

# hf_checkpoint.py's LLAMA sizes; `random` and --heads change them.
HEADS, KV_HEADS = 6, 2
# general.architecture; only "llama" files have their Q and K rows permuted
# (--arch changes it).
ARCH = "llama"
# --extra: a rope_freqs.weight tensor, as Llama 3's files have.
EXTRA = False

# gguf value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
# ggml types
GGML = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 8, "bf16": 30}
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i",
          F32: "<f", BOOL: "<B", U64: "<Q", I64: "<q", F64: "<d"}

NAMES = [
    ("model.embed_tokens.weight", "token_embd.weight"),
    ("model.norm.weight", "output_norm.weight"),
    ("lm_head.weight", "output.weight"),
]
LAYER_NAMES = [
    ("input_layernorm.weight", "attn_norm.weight"),
    ("self_attn.q_proj.weight", "attn_q.weight"),
    ("self_attn.k_proj.weight", "attn_k.weight"),
    ("self_attn.v_proj.weight", "attn_v.weight"),
    ("self_attn.o_proj.weight", "attn_output.weight"),
    ("post_attention_layernorm.weight", "ffn_norm.weight"),
    ("mlp.gate_proj.weight", "ffn_gate.weight"),
    ("mlp.up_proj.weight", "ffn_up.weight"),
    ("mlp.down_proj.weight", "ffn_down.weight"),
]


def gguf_name(hf):
    for a, b in NAMES:
        if hf == a:
            return b
    parts = hf.split(".")
    layer, rest = parts[2], ".".join(parts[3:])
    for a, b in LAYER_NAMES:
        if rest == a:
            return "blk.%s.%s" % (layer, b)
    raise KeyError(hf)


# --- safetensors -------------------------------------------------------------

def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        b, e = entry["data_offsets"]
        raw = data[8 + n + b:8 + n + e]
        if entry["dtype"] == "BF16":
            bits = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
            values = bits.view(np.float32)
        else:
            values = np.frombuffer(raw, kinds[entry["dtype"]])
        out[name] = values.reshape(entry["shape"]).astype(np.float32)
    return out


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, x in tensors.items():
        raw = np.ascontiguousarray(x, np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(x.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# --- ggml's block formats (ggml-quants.c's reference quantizers) -------------

def quantize(x, kind):
    """Rows of x (float32, the last axis a multiple of 32) -> (bytes, the
    dequantized values as float32)."""
    blocks = x.reshape(-1, 32).astype(np.float32)
    if kind == "q8_0":
        amax = np.abs(blocks).max(axis=1)
        d = (amax / 127).astype(np.float32)
        inv = np.where(d != 0, 1 / np.where(d != 0, d, 1), 0).astype(np.float32)
        q = np.round(blocks * inv[:, None]).astype(np.int8)
        dh = d.astype(np.float16)
        raw = np.empty((len(blocks), 34), np.uint8)
        raw[:, :2] = dh.view(np.uint8).reshape(-1, 2)
        raw[:, 2:] = q.view(np.uint8)
        values = q.astype(np.float32) * dh.astype(np.float32)[:, None]
    elif kind == "q4_0":
        index = np.abs(blocks).argmax(axis=1)
        peak = blocks[np.arange(len(blocks)), index]
        d = (peak / -8).astype(np.float32)
        inv = np.where(d != 0, 1 / np.where(d != 0, d, 1), 0).astype(np.float32)
        q = np.minimum(15, (blocks * inv[:, None] + 8.5).astype(np.int8))
        q = q.astype(np.uint8)
        dh = d.astype(np.float16)
        raw = np.empty((len(blocks), 18), np.uint8)
        raw[:, :2] = dh.view(np.uint8).reshape(-1, 2)
        raw[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
        values = ((q.astype(np.int32) - 8).astype(np.float32) *
                  dh.astype(np.float32)[:, None])
    else:  # q4_1
        lo, hi = blocks.min(axis=1), blocks.max(axis=1)
        d = ((hi - lo) / 15).astype(np.float32)
        inv = np.where(d != 0, 1 / np.where(d != 0, d, 1), 0).astype(np.float32)
        q = np.minimum(15, ((blocks - lo[:, None]) * inv[:, None] + 0.5)
                       .astype(np.int8)).astype(np.uint8)
        dh, mh = d.astype(np.float16), lo.astype(np.float16)
        raw = np.empty((len(blocks), 20), np.uint8)
        raw[:, :2] = dh.view(np.uint8).reshape(-1, 2)
        raw[:, 2:4] = mh.view(np.uint8).reshape(-1, 2)
        raw[:, 4:] = q[:, :16] | (q[:, 16:] << 4)
        product = (q.astype(np.float32) *
                   dh.astype(np.float32)[:, None]).astype(np.float32)
        values = product + mh.astype(np.float32)[:, None]
    return raw.tobytes(), values.astype(np.float32).reshape(x.shape)


def encode(x, kind):
    """(ggml type, bytes, the values a loader reads, in float32)."""
    if kind in ("q8_0", "q4_0", "q4_1"):
        raw, values = quantize(x, kind)
        return GGML[kind], raw, values
    if kind == "f16":
        h = x.astype(np.float16)
        return GGML[kind], h.tobytes(), h.astype(np.float32)
    if kind == "bf16":
        u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        return (GGML[kind], bits.tobytes(),
                (bits.astype(np.uint32) << 16).view(np.float32))
    return GGML["f32"], x.astype(np.float32).tobytes(), x.astype(np.float32)


def permute(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def unpermute(w, n_head):
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


# --- GGUF ---------------------------------------------------------------------

def gstr(text):
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def gvalue(kind, value):
    if kind == STRING:
        return gstr(value)
    if kind == ARRAY:
        element, items = value
        out = struct.pack("<IQ", element, len(items))
        return out + b"".join(gvalue(element, item) for item in items)
    return struct.pack(SCALAR[kind], value)


class Gguf:
    """A GGUF file as parts that the malformed cases change."""

    def __init__(self):
        self.magic, self.version, self.alignment = b"GGUF", 3, 32
        self.kvs = []      # (key, type, value) or raw bytes
        self.tensors = []  # dicts: name, ne, type, data, [offset]
        self.tensor_count = self.kv_count = None

    def kv(self, key, kind, value):
        self.kvs.append((key, kind, value))

    def tensor(self, name, ne, kind, data):
        self.tensors.append(dict(name=name, ne=list(ne), type=kind, data=data))

    def bytes(self):
        out = self.magic + struct.pack("<I", self.version)
        out += struct.pack("<QQ", len(self.tensors) if self.tensor_count is None
                           else self.tensor_count,
                           len(self.kvs) if self.kv_count is None
                           else self.kv_count)
        for entry in self.kvs:
            if isinstance(entry, bytes):
                out += entry
            else:
                key, kind, value = entry
                out += gstr(key) + struct.pack("<I", kind) + gvalue(kind, value)
        offset = 0
        for t in self.tensors:
            if "offset" not in t:
                t["offset"] = offset
            if not t.get("phantom"):
                offset = -(-(t["offset"] + len(t["data"])) //
                           self.alignment) * self.alignment
            out += gstr(t["name"]) + struct.pack("<I", len(t["ne"]))
            out += b"".join(struct.pack("<Q", n) for n in t["ne"])
            out += struct.pack("<IQ", t["type"], t["offset"])
        out += b"\0" * (-len(out) % self.alignment)
        data = bytearray()
        for t in self.tensors:
            if t.get("phantom"):  # an offset past the end, no data
                continue
            end = t["offset"] + len(t["data"])
            if len(data) < end:
                data += b"\0" * (end - len(data))
            data[t["offset"]:end] = t["data"]
        return out + bytes(data)


def convert(source, kind):
    """The Gguf of the Hugging Face tensors `source` and the values a
    loader must bind to each parameter (Hugging Face layout)."""
    g = Gguf()
    depth = 1 + max(int(n.split(".")[2]) for n in source
                    if n.startswith("model.layers."))
    vocab, dim = source["model.embed_tokens.weight"].shape
    g.kv("general.architecture", STRING, ARCH)
    g.kv("general.name", STRING, "tiny llama")
    g.kv("general.alignment", U32, 32)
    g.kv("llama.block_count", U32, depth)
    g.kv("llama.context_length", U32, 64)
    g.kv("llama.embedding_length", U32, dim)
    g.kv(ARCH + ".attention.head_count", U32, HEADS)
    g.kv(ARCH + ".attention.head_count_kv", U32, KV_HEADS)
    g.kv("llama.rope.freq_base", F32, 100000.0)
    g.kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5)
    g.kv("tokenizer.ggml.model", STRING, "llama")
    g.kv("tokenizer.ggml.tokens", ARRAY, (STRING, ["<t%d>" % i
                                                   for i in range(vocab)]))
    g.kv("tokenizer.ggml.scores", ARRAY, (F32, [-float(i)
                                                for i in range(vocab)]))
    g.kv("tokenizer.ggml.token_type", ARRAY, (I32, [1] * vocab))
    # Every other value type, and arrays of arrays.
    g.kv("seqc.test.u8", U8, 200)
    g.kv("seqc.test.i8", I8, -100)
    g.kv("seqc.test.u16", U16, 60000)
    g.kv("seqc.test.i16", I16, -30000)
    g.kv("seqc.test.i32", I32, -7)
    g.kv("seqc.test.u64", U64, 1 << 40)
    g.kv("seqc.test.i64", I64, -(1 << 40))
    g.kv("seqc.test.f64", F64, 0.25)
    g.kv("seqc.test.bool", BOOL, 1)
    g.kv("seqc.test.bools", ARRAY, (BOOL, [0, 1, 1]))
    g.kv("seqc.test.nested", ARRAY,
         (ARRAY, [(U16, [1, 2]), (STRING, ["a", "bc"]), (ARRAY, [])]))
    expected = {}
    for name, x in source.items():
        gname = gguf_name(name)
        w, heads = x, 0
        if ARCH == "llama" and gname.endswith("attn_q.weight"):
            heads = HEADS
        elif ARCH == "llama" and gname.endswith("attn_k.weight"):
            heads = KV_HEADS
        if heads:
            w = permute(x, heads)
        ggml, raw, stored = encode(w, kind if w.ndim == 2 else "f32")
        if heads:
            stored = unpermute(stored, heads)
        g.tensor(gname, reversed(w.shape), ggml, raw)
        expected[name] = stored
    if EXTRA:
        g.tensor("rope_freqs.weight", [4], GGML["f32"],
                 np.ones(4, np.float32).tobytes())
    return g, expected


def write(path, g):
    with open(path, "wb") as f:
        f.write(g.bytes())


def read_tensors(path):
    """Prints what the `tensors` command promises."""
    import hashlib
    data = open(path, "rb").read()
    at = 0

    def take(fmt):
        nonlocal at
        values = struct.unpack_from(fmt, data, at)
        at += struct.calcsize(fmt)
        return values if len(values) > 1 else values[0]

    def string():
        nonlocal at
        n = take("<Q")
        at += n
        return data[at - n:at].decode()

    def value(kind):
        if kind == STRING:
            return string()
        if kind == ARRAY:
            element, count = take("<IQ")
            return [value(element) for _ in range(count)]
        return take(SCALAR[kind])

    assert data[:4] == b"GGUF" and take("<4xI") == 3
    n_tensors, n_kv = take("<QQ")
    kv = {}
    for _ in range(n_kv):
        key = string()
        kv[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        ne = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, ne, *take("<IQ")))
    start = -(-at // 32) * 32
    print("architecture", kv["general.architecture"])
    for key in sorted(kv):
        if key.startswith(kv["general.architecture"] + "."):
            print(key, kv[key] if isinstance(kv[key], int) else
                  "%.6g" % kv[key])
    block = {0: (1, 4), 1: (1, 2), 30: (1, 2), 8: (32, 34), 2: (32, 18),
             3: (32, 20)}
    lines, end = [], 0
    for name, ne, kind, offset in infos:
        elements, size = block[kind]
        nbytes = int(np.prod(ne)) // elements * size
        assert offset % 32 == 0 and offset >= end, (name, offset)
        end = offset + nbytes
        assert start + end <= len(data), name
        raw = data[start + offset:start + end]
        lines.append("%s %d %s %s" % (name, kind, ne,
                                      hashlib.sha1(raw).hexdigest()[:12]))
    for line in sorted(lines):
        print(line)


# --- malformed files ---------------------------------------------------------

def cases(source):
    """(name, how to break a valid file, the message the loader must give)."""
    def kv_raw(g, raw):
        g.kvs.append(raw)

    def find(g, name):
        return next(t for t in g.tensors if t["name"] == name)

    def set_kv(g, key, kind, value):
        g.kvs = [e if isinstance(e, bytes) or e[0] != key else (key, kind, value)
                 for e in g.kvs]

    q = "blk.0.attn_q.weight"
    return [
        ("version2", lambda g: setattr(g, "version", 2),
         "GGUF version 2 is not supported: seqc reads version 3"),
        ("big-endian", lambda g: setattr(g, "version", 3 << 24),
         "the file is big-endian"),
        ("truncated", None, "runs past the end of the file"),
        ("kv-count", lambda g: setattr(g, "kv_count", 1 << 60),
         "metadata count 1152921504606846976 is more than the file"),
        ("tensor-count", lambda g: setattr(g, "tensor_count", 1 << 61),
         "tensor count 2305843009213693952 is more than the file"),
        ("value-type", lambda g: kv_raw(g, gstr("seqc.bad") +
                                        struct.pack("<I", 13)),
         "metadata 'seqc.bad': unknown value type 13"),
        ("array-type", lambda g: kv_raw(g, gstr("seqc.bad") +
                                        struct.pack("<IIQ", ARRAY, 77, 0)),
         "metadata 'seqc.bad': unknown array element type 77"),
        ("array-count", lambda g: kv_raw(g, gstr("seqc.bad") +
                                         struct.pack("<IIQ", ARRAY, U32,
                                                     1 << 62)),
         "metadata 'seqc.bad': an array of 4611686018427387904 u32 values "
         "runs past the end of the file"),
        ("string-length", lambda g: kv_raw(g, gstr("seqc.bad") +
                                           struct.pack("<IQ", STRING,
                                                       1 << 40)),
         "metadata 'seqc.bad': the string runs past the end of the file"),
        ("nested", lambda g: kv_raw(g, gstr("seqc.deep") + struct.pack(
            "<I", ARRAY) + struct.pack("<IQ", ARRAY, 1) * 9 +
            struct.pack("<IQ", U8, 0)),
         "metadata 'seqc.deep': arrays nested deeper than 8"),
        ("bool", lambda g: g.kv("seqc.bad", BOOL, 2),
         "metadata 'seqc.bad': bool value 2 is neither 0 nor 1"),
        ("duplicate-key", lambda g: g.kv("general.name", STRING, "again"),
         "metadata key 'general.name' appears twice"),
        ("alignment", lambda g: set_kv(g, "general.alignment", U32, 48),
         "metadata 'general.alignment' is 48, not a power of two"),
        ("alignment-type", lambda g: set_kv(g, "general.alignment", U64, 32),
         "metadata 'general.alignment' is u64, not u32"),
        ("dims", lambda g: find(g, q)["ne"].extend([1, 1, 1]),
         "tensor 'blk.0.attn_q.weight': 5 dimensions, more than GGUF's 4"),
        ("ggml-type", lambda g: find(g, q).update(type=99),
         "tensor 'blk.0.attn_q.weight': unknown ggml type 99"),
        ("unsupported-type", lambda g: find(g, q).update(
            type=12, ne=[256, 1], data=b"\0" * 144),
         "tensor 'blk.0.attn_q.weight' (parameter "
         "'model.layers.0.self_attn.q_proj.weight') is of ggml type Q4_K, "
         "which seqc does not load"),
        ("block", lambda g: find(g, q).update(type=GGML["q8_0"], ne=[48, 1]),
         "tensor 'blk.0.attn_q.weight': its innermost dimension ne[0] = 48 "
         "is not a multiple of Q8_0's block of 32"),
        ("overflow", lambda g: find(g, q).update(ne=[1 << 32, 1 << 32]),
         "tensor 'blk.0.attn_q.weight': dimensions (ne) [4294967296, "
         "4294967296] are too large"),
        ("misaligned", lambda g: find(g, q).update(offset=8),
         "tensor 'blk.0.attn_q.weight': offset 8 is not a multiple of the "
         "alignment 32"),
        ("past-end", lambda g: find(g, q).update(offset=1 << 40, phantom=True),
         "tensor 'blk.0.attn_q.weight': 9216 bytes of F32 at offset "
         "1099511627776 run past the end of the data section"),
        ("overlap", lambda g: g.bytes() and find(
            g, "blk.0.attn_k.weight").update(offset=find(g, q)["offset"] + 32),
         "and 'blk.0.attn_k.weight' ["),
        ("duplicate-name", lambda g: find(g, "blk.0.attn_k.weight").update(
            name=q), "tensor 'blk.0.attn_q.weight' appears twice"),
        ("shape", lambda g: find(g, "blk.0.attn_v.weight").update(
            ne=[16, 48], data=find(g, "blk.0.attn_v.weight")["data"][:3072]),
         "tensor 'blk.0.attn_v.weight' (parameter "
         "'model.layers.0.self_attn.v_proj.weight') has shape [48, 16] (GGUF "
         "ne [16, 48], innermost first) but the model expects [16, 48]"),
        ("heads", lambda g: setattr(g, "kvs", [
            e for e in g.kvs if isinstance(e, bytes) or
            e[0] != "llama.attention.head_count"]),
         "tensor 'blk.0.attn_q.weight' needs metadata "
         "'llama.attention.head_count'"),
        ("head-size", lambda g: set_kv(g, "llama.attention.head_count", U32, 5),
         "cannot hold 5 heads of an even size"),
        ("extra", lambda g: g.tensor("rope_freqs.weight", [4], 0, b"\0" * 16),
         "tensor 'rope_freqs.weight' is not a parameter of the model (it is "
         "F32 [4])"),
        ("missing", lambda g: setattr(g, "tensors", [
            t for t in g.tensors if t["name"] != "output_norm.weight"]),
         "is missing 1 of the model's 21 parameters: 'model.norm.weight'"),
    ]


def malformed(source_path, model, folder):
    source = read_safetensors(source_path)
    os.makedirs(folder, exist_ok=True)
    failures = 0
    for name, breaks, message in cases(source):
        g, _ = convert(source, "f32")
        path = os.path.join(folder, name + ".gguf")
        if breaks is None:  # cut inside the metadata
            with open(path, "wb") as f:
                f.write(g.bytes()[:1000])
        else:
            breaks(g)
            write(path, g)
        run = subprocess.run([model, "--weights", path], capture_output=True,
                             text=True)
        if run.returncode == 0 or message not in run.stderr:
            print("%s: expected an error with \"%s\", got (exit %d) %s" %
                  (name, message, run.returncode, run.stderr.strip()))
            failures += 1
    print("ok" if not failures else "%d failures" % failures)


def random_llama(path, vocab, dim, heads, kv_heads, hidden, depth):
    rng = np.random.default_rng(7)
    head_dim = dim // heads

    def uniform(*shape):
        return rng.uniform(-1, 1, shape).astype(np.float32) / np.sqrt(shape[-1])

    tensors = {"model.embed_tokens.weight": uniform(vocab, dim)}
    for i in range(depth):
        p = "model.layers.%d." % i
        tensors[p + "input_layernorm.weight"] = 1 + uniform(dim) / 4
        tensors[p + "self_attn.q_proj.weight"] = uniform(heads * head_dim, dim)
        tensors[p + "self_attn.k_proj.weight"] = uniform(kv_heads * head_dim,
                                                         dim)
        tensors[p + "self_attn.v_proj.weight"] = uniform(kv_heads * head_dim,
                                                         dim)
        tensors[p + "self_attn.o_proj.weight"] = uniform(dim, heads * head_dim)
        tensors[p + "post_attention_layernorm.weight"] = 1 + uniform(dim) / 4
        tensors[p + "mlp.gate_proj.weight"] = uniform(hidden, dim)
        tensors[p + "mlp.up_proj.weight"] = uniform(hidden, dim)
        tensors[p + "mlp.down_proj.weight"] = uniform(dim, hidden)
    tensors["model.norm.weight"] = 1 + uniform(dim) / 4
    tensors["lm_head.weight"] = uniform(vocab, dim)
    write_safetensors(path, tensors)


def main():
    global HEADS, KV_HEADS, ARCH, EXTRA
    command, args = sys.argv[1], sys.argv[2:]
    if "--extra" in args:
        EXTRA = True
        args.remove("--extra")
    if "--arch" in args:
        at = args.index("--arch")
        ARCH = args[at + 1]
        del args[at:at + 2]
    if "--heads" in args:
        at = args.index("--heads")
        HEADS, KV_HEADS = int(args[at + 1]), int(args[at + 2])
        del args[at:at + 3]
    if command == "random":
        random_llama(args[0], *map(int, args[1:7]))
    elif command == "convert":
        source, out, kind = args[0:3]
        g, expected = convert(read_safetensors(source), kind)
        write(out, g)
        if len(args) > 4 and args[3] == "--dequantized":
            write_safetensors(args[4], expected)
    elif command == "compare":
        a, b = read_safetensors(args[0]), read_safetensors(args[1])
        bad = [n for n in b if n not in a or a[n].shape != b[n].shape or
               a[n].tobytes() != b[n].tobytes()]
        bad += [n for n in a if n not in b]
        print("ok" if not bad else "differ: " + ", ".join(sorted(bad)))
    elif command == "tensors":
        read_tensors(args[0])
    elif command == "malformed":
        malformed(*args[0:3])
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
