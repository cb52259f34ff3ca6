"""Hugging Face model directories (config.json, safetensors, tokenizer.json)
through the bundled examples (docs/python.md, "Hugging Face directories").

    model = seqc.hf.load("SmolLM2-135M/")
    model.generate("The capital of France is", max_new_tokens=16)   # text
    model.generate([1, 2, 3], max_new_tokens=16)                     # ids

config.json's `model_type` picks the example (`llama`: examples/llama.seq,
`bert`: examples/bert.seq) and its fields give the example's hyperparameters
(the `-D` values the example's header lists). Text in and out needs the
`tokenizers` package and the directory's tokenizer.json; ids work without.
"""

import json
import os

from . import Error, compile as _compile, _extension

__all__ = ["ARCHITECTURES", "Pretrained", "defines_from_config", "load"]


def _llama(config):
    heads = config["num_attention_heads"]
    dim = config["hidden_size"]
    if config.get("rope_scaling"):
        raise Error("config.json: rope_scaling %r is not modelled by "
                    "examples/llama.seq (plain RoPE only)" %
                    (config["rope_scaling"],))
    head_dim = config.get("head_dim")
    if head_dim is not None and head_dim * heads != dim:
        raise Error("config.json: head_dim %d is not hidden_size %d / "
                    "num_attention_heads %d, which examples/llama.seq "
                    "assumes" % (head_dim, dim, heads))
    if config.get("hidden_act", "silu") != "silu":
        raise Error("config.json: hidden_act %r; examples/llama.seq's MLP is "
                    "SwiGLU with SiLU" % config["hidden_act"])
    return {
        "vocab": config["vocab_size"],
        "dim": dim,
        "heads": heads,
        "kv_heads": config.get("num_key_value_heads") or heads,
        "hidden": config["intermediate_size"],
        "depth": config["num_hidden_layers"],
        "theta": float(config.get("rope_theta", 10000.0)),
        "eps": float(config.get("rms_norm_eps", 1e-6)),
        "tied": 1 if config.get("tie_word_embeddings", False) else 0,
    }


def _bert(config):
    if config.get("hidden_act", "gelu") != "gelu":
        raise Error("config.json: hidden_act %r; examples/bert.seq uses the "
                    "exact GELU" % config["hidden_act"])
    return {
        "vocab": config["vocab_size"],
        "dim": config["hidden_size"],
        "heads": config["num_attention_heads"],
        "hidden": config["intermediate_size"],
        "depth": config["num_hidden_layers"],
        "max_positions": config.get("max_position_embeddings", 512),
        "types": config.get("type_vocab_size", 2),
        "eps": float(config.get("layer_norm_eps", 1e-12)),
    }


# model_type -> (example file, config.json -> hyperparameters, tensors of
# the checkpoint that are not parameters and are skipped with a note).
ARCHITECTURES = {
    "llama": ("llama.seq", _llama, ()),
    "bert": ("bert.seq", _bert, ("*.position_ids",)),
}


def _examples_dir():
    packaged = os.path.join(os.path.dirname(__file__), "examples")
    if os.path.isdir(packaged):
        return packaged
    return _extension().EXAMPLES_DIR


def defines_from_config(config):
    """(example path, hyperparameters) for a parsed config.json."""
    model_type = config.get("model_type")
    if model_type not in ARCHITECTURES:
        raise Error("config.json: model_type %r is not one seqc.hf reads "
                    "(%s)" % (model_type, ", ".join(sorted(ARCHITECTURES))))
    example, mapping, _ = ARCHITECTURES[model_type]
    try:
        defines = mapping(config)
    except KeyError as missing:
        raise Error("config.json: %s has no field %s" %
                    (model_type, missing)) from None
    return os.path.join(_examples_dir(), example), defines


class Pretrained:
    """A compiled Hugging Face model with its weights bound: `module`,
    `model` (a seqc.Model), `config`, `defines` and `tokenizer` (None
    without the `tokenizers` package or a tokenizer.json)."""

    def __init__(self, directory, module, model, config, defines, tokenizer):
        self.directory = directory
        self.module = module
        self.model = model
        self.config = config
        self.defines = defines
        self.tokenizer = tokenizer

    def __call__(self, *args, **kwargs):
        return self.model(*args, **kwargs)

    def encode(self, text):
        if self.tokenizer is None:
            raise Error("text needs the `tokenizers` package and %s" %
                        os.path.join(self.directory, "tokenizer.json"))
        return self.tokenizer.encode(text).ids

    def decode(self, ids):
        if self.tokenizer is None:
            raise Error("text needs the `tokenizers` package and %s" %
                        os.path.join(self.directory, "tokenizer.json"))
        return self.tokenizer.decode(ids)

    def generate(self, prompt, max_new_tokens=16, **options):
        """Model.generate on ids (a list, or a list of lists), or on text (a
        string, or a list of strings), which returns text."""
        texts = isinstance(prompt, str) or (
            isinstance(prompt, (list, tuple)) and prompt and
            all(isinstance(p, str) for p in prompt))
        if not texts:
            return self.model.generate(prompt, max_new_tokens, **options)
        single = isinstance(prompt, str)
        prompts = [prompt] if single else list(prompt)
        rows = self.model.generate([self.encode(p) for p in prompts],
                                   max_new_tokens, **options)
        out = [self.decode(row) for row in rows]
        return out[0] if single else out


def load(directory, *, opt_level=3, mattr=None, mcpu=None, weights=None,
         remarks=False):
    """Reads a Hugging Face directory: config.json picks and sizes the
    example, the weights come from its safetensors (model.safetensors or the
    sharded index; or `weights`), tokenizer.json gives the tokenizer."""
    directory = os.fspath(directory)
    path = os.path.join(directory, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except OSError as error:
        raise Error("cannot read %s: %s" % (path, error.strerror)) from None
    except ValueError as error:
        raise Error("%s is not JSON: %s" % (path, error)) from None
    example, defines = defines_from_config(config)
    module = _compile(example, defines=defines, opt_level=opt_level,
                      mattr=mattr, mcpu=mcpu, remarks=remarks)
    skip = ARCHITECTURES[config["model_type"]][2]
    model = module.load(weights if weights is not None else directory,
                        skip=skip)
    tokenizer = None
    tokenizer_path = os.path.join(directory, "tokenizer.json")
    if os.path.exists(tokenizer_path):
        try:
            import tokenizers
        except ImportError:
            tokenizers = None
        if tokenizers is not None:
            tokenizer = tokenizers.Tokenizer.from_file(tokenizer_path)
    return Pretrained(directory, module, model, config, defines, tokenizer)
