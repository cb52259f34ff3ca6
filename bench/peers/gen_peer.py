"""bench/generate's peers, run with the bench venv's python (bench/setup-peers.sh
--generate), one (tool, prompt batch, new tokens) per process:

  gen_peer.py gguf CKPT_DIR OUT.gguf TYPE
      The Hugging Face checkpoint CKPT_DIR (model.safetensors and config.json
      of a LlamaForCausalLM, as bench/generate writes it) as a GGUF v3 file
      written with the `gguf` package the way llama.cpp's
      convert_hf_to_gguf.py writes a Llama: its tensor names, the Q and K
      rows permuted for its RoPE, the 2-D weights in TYPE (f32, f16, q8_0,
      q4_0) and the norms in F32, and a stand-in SentencePiece vocabulary of
      the checkpoint's size (the benchmark feeds token ids).
  gen_peer.py logits llamacpp|hf MODEL --prompts FILE --out OUT.npy --threads T
      The logits at every position of the first prompt of FILE, f32 [n,
      vocab], from llama.cpp (MODEL a GGUF file) or transformers in f32
      (MODEL the checkpoint's directory, eager attention), for bench/generate's
      comparison of each format's logits with f32's. Prints {} or {"error"}.
  gen_peer.py llamacpp MODEL.gguf --prompts FILE --new-tokens N --threads T
  gen_peer.py hf CKPT_DIR --prompts FILE --new-tokens N --threads T [--compile]
      Greedy generation with llama.cpp (llama-cpp-python) or Hugging Face
      transformers (eager attention, the default dynamic cache; --compile:
      the static cache and torch.compile). FILE holds the prompts as JSON,
      a list of equal-length lists of token ids. Prints one JSON object:
      {"prefill_s", "prefill_tokens", "decode_s", "decode_tokens",
       "tokens": [[...] per prompt], "version"}, or {"error"} (exit 3).

The timings follow `./model generate`'s: prefill is the first call over the
prompts; decode the steps after it (the tokens they choose, summed over the
rows, and their seconds, sampling included).
"""

import argparse
import json
import os
import sys
import time


def fail(reason):
    print(json.dumps({"error": reason}))
    sys.exit(3)


# --- GGUF ---------------------------------------------------------------------

LAYER_NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


def gguf_name(hf):
    top = {"model.embed_tokens.weight": "token_embd.weight",
           "model.norm.weight": "output_norm.weight", "lm_head.weight": "output.weight"}
    if hf in top:
        return top[hf]
    parts = hf.split(".")
    return "blk.%s.%s" % (parts[2], LAYER_NAMES[".".join(parts[3:])])


def read_safetensors(path):
    import numpy as np
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", entry["dtype"]
        b, e = entry["data_offsets"]
        out[name] = data[b:e].view(np.float32).reshape(entry["shape"])
    return out


def permute(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: HF's rotate-half Q/K rows
    to the interleaved pairs of llama.cpp's RoPE (seqc's GGUF reader undoes it)."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_gguf(args):
    import numpy as np
    import gguf
    with open(os.path.join(args.ckpt, "config.json")) as f:
        cfg = json.load(f)
    tensors = read_safetensors(os.path.join(args.ckpt, "model.safetensors"))
    qtypes = {"f32": gguf.GGMLQuantizationType.F32, "f16": gguf.GGMLQuantizationType.F16,
              "q8_0": gguf.GGMLQuantizationType.Q8_0, "q4_0": gguf.GGMLQuantizationType.Q4_0}
    ftypes = {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
              "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0, "q4_0": gguf.LlamaFileType.MOSTLY_Q4_0}
    heads, kv_heads = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dim = cfg["hidden_size"]
    tmp = args.out + ".part"
    w = gguf.GGUFWriter(tmp, "llama")
    w.add_name("seqc bench/generate (random weights, %s)" % args.type)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(dim)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_rope_dimension_count(dim // heads)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(cfg["rope_theta"])
    w.add_vocab_size(cfg["vocab_size"])
    w.add_file_type(ftypes[args.type])
    # A SentencePiece vocabulary of the right size: <unk>, <s>, </s>, the 256
    # byte tokens llama.cpp looks up, then placeholders.
    vocab = cfg["vocab_size"]
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    tokens += ["t%d" % i for i in range(len(tokens), vocab)]
    types = ([gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] +
             [gguf.TokenType.BYTE] * 256 + [gguf.TokenType.NORMAL] * (vocab - 259))
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([-float(i) for i in range(vocab)])
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(False)
    for name, x in tensors.items():
        x = np.asarray(x, np.float32)
        if name.endswith("q_proj.weight"):
            x = permute(x, heads)
        elif name.endswith("k_proj.weight"):
            x = permute(x, kv_heads)
        kind = args.type if x.ndim == 2 else "f32"
        qt = qtypes[kind]
        if kind == "f32":
            data = np.ascontiguousarray(x)
        elif kind == "f16":
            data = x.astype(np.float16)
        else:
            data = gguf.quants.quantize(x, qt)
        w.add_tensor(gguf_name(name), data, raw_dtype=qt if kind in ("q8_0", "q4_0") else None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, args.out)
    print(json.dumps({"ok": args.out, "version": "gguf " + _version("gguf")}))


def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001 - only for the report
        return "?"


# --- llama.cpp ----------------------------------------------------------------

def load_llamacpp(args, n_ctx, logits_all):
    try:
        from llama_cpp import Llama
    except ImportError as e:
        fail("llama-cpp-python is not installed (bench/setup-peers.sh --generate): %s" % e)
    return Llama(model_path=args.model, n_ctx=n_ctx, n_batch=512, n_ubatch=512,
                 n_threads=args.threads, n_threads_batch=args.threads,
                 logits_all=logits_all, verbose=False)


def run_llamacpp(args, prompts):
    import numpy as np
    if len(prompts) != 1:
        fail("batch %d: llama-cpp-python's Llama runs one sequence" % len(prompts))
    prompt = prompts[0]
    llm = load_llamacpp(args, len(prompt) + args.new_tokens + 8, logits_all=False)
    n_vocab = llm.n_vocab()

    def last_logits():
        return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,))

    # Warm-up, like ./model generate's: the first token, then a clean cache.
    llm.eval(prompt[:1])
    llm.reset()  # the next eval drops the cache from position 0
    t0 = time.perf_counter()
    llm.eval(prompt)
    tok = int(np.argmax(last_logits()))
    t1 = time.perf_counter()
    out = [tok]
    for _ in range(args.new_tokens - 1):
        llm.eval([tok])
        tok = int(np.argmax(last_logits()))
        out.append(tok)
    t2 = time.perf_counter()
    import llama_cpp
    return {"prefill_s": t1 - t0, "prefill_tokens": len(prompt),
            "decode_s": t2 - t1, "decode_tokens": len(out) - 1, "tokens": [out],
            "version": "llama-cpp-python " + getattr(llama_cpp, "__version__", "?")}


# --- Hugging Face transformers --------------------------------------------------

def load_hf(args):
    """The checkpoint as transformers' LlamaForCausalLM in f32, eager attention."""
    try:
        import torch
        from transformers import LlamaForCausalLM
    except ImportError as e:
        fail("transformers/torch are not installed (bench/setup-peers.sh --generate): %s" % e)
    torch.set_num_threads(args.threads)
    model = LlamaForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32,
                                             attn_implementation="eager")
    model.eval()
    return model


def run_hf(args, prompts):
    model = load_hf(args)
    import torch
    import transformers
    from transformers.generation.streamers import BaseStreamer
    gc = model.generation_config
    gc.eos_token_id = None
    gc.pad_token_id = 0
    gc.do_sample = False
    kwargs = {}
    if args.compile:
        gc.cache_implementation = "static"
        model.forward = torch.compile(model.forward)
        kwargs["cache_implementation"] = "static"

    class Stamps(BaseStreamer):
        """Times each put(): the prompt, then one token per step."""

        def __init__(self):
            self.times = []

        def put(self, value):
            self.times.append(time.perf_counter())

        def end(self):
            pass

    ids = torch.tensor(prompts, dtype=torch.long)
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        # Warm-up over the first token (and, compiled, the compilation).
        model.generate(ids[:, :1], attention_mask=mask[:, :1], max_new_tokens=2,
                       min_new_tokens=2, do_sample=False, **kwargs)
        if args.compile:
            model.generate(ids, attention_mask=mask, max_new_tokens=3, do_sample=False,
                           **kwargs)
        stamps = Stamps()
        t0 = time.perf_counter()
        out = model.generate(ids, attention_mask=mask, max_new_tokens=args.new_tokens,
                             do_sample=False, streamer=stamps, **kwargs)
    # times[0]: the prompt (before the first forward); times[1]: the first
    # new token, after the prefill; times[-1]: the last token.
    t = stamps.times
    new = out[:, ids.shape[1]:].tolist()
    rows = len(prompts)
    return {"prefill_s": t[1] - t0, "prefill_tokens": rows * len(prompts[0]),
            "decode_s": t[-1] - t[1], "decode_tokens": rows * (len(t) - 2), "tokens": new,
            "version": "transformers %s, torch %s%s" % (
                transformers.__version__, torch.__version__,
                ", static cache + torch.compile" if args.compile else ", eager")}


def run_logits(args, prompt):
    import numpy as np
    if args.tool == "llamacpp":
        llm = load_llamacpp(args, len(prompt) + 8, logits_all=True)
        llm.eval(prompt)
        logits = np.array(llm.scores[:len(prompt)], dtype=np.float32)
    else:
        model = load_hf(args)
        import torch
        with torch.inference_mode():
            logits = model(torch.tensor([prompt], dtype=torch.long)).logits[0].float().numpy()
    np.save(args.out, logits)
    return {}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gguf")
    g.add_argument("ckpt")
    g.add_argument("out")
    g.add_argument("type", choices=["f32", "f16", "q8_0", "q4_0"])
    for name in ("llamacpp", "hf"):
        r = sub.add_parser(name)
        r.add_argument("model")
        r.add_argument("--prompts", required=True)
        r.add_argument("--new-tokens", type=int, required=True)
        r.add_argument("--threads", type=int, default=2)
        r.add_argument("--compile", action="store_true")
    lg = sub.add_parser("logits")
    lg.add_argument("tool", choices=["llamacpp", "hf"])
    lg.add_argument("model")
    lg.add_argument("--prompts", required=True)
    lg.add_argument("--out", required=True)
    lg.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    if args.cmd == "gguf":
        try:
            import gguf  # noqa: F401
        except ImportError as e:
            fail("the gguf package is not installed (bench/setup-peers.sh --generate): %s" % e)
        write_gguf(args)
        return
    with open(args.prompts) as f:
        prompts = json.load(f)
    if args.cmd == "logits":
        result = run_logits(args, prompts[0])
    else:
        result = (run_llamacpp if args.cmd == "llamacpp" else run_hf)(args, prompts)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
