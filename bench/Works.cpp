//===- Works.cpp - What bench/ measures -----------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "bench/Works.h"

#include <algorithm>
#include <sstream>

using namespace seqc::bench;

namespace {

using Dims = std::vector<std::pair<std::string, int64_t>>;

/// Query-key pairs a mask lets through for n queries over n keys.
double visiblePairs(int64_t n, bool causal, int64_t window) {
  double pairs = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t lo = 0, hi = causal ? i : n - 1;
    if (window > 0) {
      lo = std::max<int64_t>(0, i - (window - 1));
      hi = std::min<int64_t>(hi, i + (window - 1));
    }
    pairs += static_cast<double>(hi - lo + 1);
  }
  return pairs;
}

Size attentionSize(int64_t b, int64_t h, int64_t hkv, int64_t d, int64_t nq,
                   int64_t nk, bool causal, int64_t window, bool quick) {
  Size s;
  s.label = nq == 1 ? "nk=" + std::to_string(nk) : "n=" + std::to_string(nq);
  if (nq == nk)
    s.dims = {{"b", b}, {"n", nq}};
  else
    s.dims = {{"b", b}, {"nq", nq}, {"nk", nk}};
  double pairs = nq == nk ? visiblePairs(nq, causal, window)
                          : static_cast<double>(nq) * nk;
  s.flops = 4.0 * b * h * d * pairs; // QK^T and PV
  s.bytes = 4.0 * (b * h * nq * d * 2 + b * hkv * nk * d * 2);
  s.quick = quick;
  return s;
}

std::vector<Work> buildWorks() {
  std::vector<Work> works;
  const int64_t h = 8, d = 64;
  auto attention = [&](std::string name, std::string library, std::string what,
                       int64_t hkv, bool causal, int64_t window,
                       std::vector<int64_t> ns, int64_t quickN) {
    Work w{std::move(name), "attention", std::move(library), std::move(what),
           {{"heads", std::to_string(h)},
            {"kv_heads", std::to_string(hkv)},
            {"d", std::to_string(d)},
            {"causal", causal ? "true" : "false"},
            {"window", std::to_string(window)}},
           {}};
    for (int64_t n : ns)
      w.sizes.push_back(
          attentionSize(1, h, hkv, d, n, n, causal, window, n == quickN));
    works.push_back(std::move(w));
  };
  attention("attention_full", "attention_full", "softmax attention, h=8 d=64",
            h, false, 0, {256, 512, 1024, 2048, 4096}, 1024);
  {
    // The smoke test's shape: enough to run every stage of the harness.
    Size tiny = attentionSize(1, h, h, d, 32, 32, false, 0, false);
    tiny.smoke = true;
    works.back().sizes.push_back(tiny);
  }
  attention("attention_causal", "attention_causal",
            "causal softmax attention, h=8 d=64", h, true, 0,
            {256, 512, 1024, 2048, 4096}, 1024);
  attention("attention_window", "attention_window",
            "sliding-window attention (256), h=8 d=64", h, false, 256,
            {256, 512, 1024, 2048, 4096}, 1024);
  attention("attention_gqa", "attention_gqa",
            "grouped-query attention, h=8 kv_heads=2 d=64", 2, false, 0,
            {1024, 2048}, 1024);
  {
    Work w{"attention_decode", "decode", "attention_decode",
           "decode: one query against nk keys, h=8 d=64",
           {{"heads", "8"}, {"kv_heads", "8"}, {"d", "64"}},
           {}};
    for (int64_t nk : {1024, 4096, 16384})
      w.sizes.push_back(
          attentionSize(1, h, h, d, 1, nk, false, 0, nk == 4096));
    works.push_back(std::move(w));
  }
  {
    // One head: the (batch, head) pairs alone leave a core idle, so only a
    // split of the keys (flash-decoding) can use both.
    Work w{"attention_decode_h1", "decode", "attention_decode_h1",
           "decode: one query against nk keys, one head, d=64",
           {{"heads", "1"}, {"kv_heads", "1"}, {"d", "64"}},
           {}};
    for (int64_t nk : {8192, 65536})
      w.sizes.push_back(attentionSize(1, 1, 1, d, 1, nk, false, 0, nk == 8192));
    works.push_back(std::move(w));
  }
  {
    Work w{"linear", "matmul", "linear", "x @ W^T, W [1024, 1024]",
           {{"in_features", "1024"}, {"out_features", "1024"}},
           {}};
    for (int64_t m : {128, 512, 2048}) {
      Size s{"m=" + std::to_string(m), {{"b", 1}, {"m", m}},
             2.0 * m * 1024 * 1024, 4.0 * (2 * m * 1024 + 1024 * 1024),
             m == 512};
      w.sizes.push_back(s);
    }
    works.push_back(std::move(w));
  }
  // The same product with bf16 and f16 weights and activations (f32
  // accumulation): half the bytes.
  for (const char *dtype : {"bf16", "f16"}) {
    Work w{std::string("linear_") + dtype, "matmul",
           std::string("linear_") + dtype,
           std::string("x @ W^T in ") + dtype + ", W [1024, 1024]",
           {{"in_features", "1024"},
            {"out_features", "1024"},
            {"dtype", std::string("\"") + dtype + "\""}},
           {}};
    // f16 is widened and multiplied by FMAs on every CPU seqc targets.
    if (std::string(dtype) == "bf16")
      w.precision = "bf16";
    for (int64_t m : {128, 512, 2048}) {
      Size s{"m=" + std::to_string(m), {{"b", 1}, {"m", m}},
             2.0 * m * 1024 * 1024, 2.0 * (2 * m * 1024 + 1024 * 1024),
             m == 512};
      w.sizes.push_back(s);
    }
    works.push_back(std::move(w));
  }
  // Decode: x @ W^T on m = 1 and 4 rows with W stored in f32, bf16,
  // GGUF's q8_0 and q4_0 blocks and per-output-channel int8; the figure of
  // merit is the weight's bytes per second against the memory bandwidth.
  for (auto [out, in] : {std::pair<int64_t, int64_t>{1536, 576}, {4096, 4096}}) {
    std::string shape = std::to_string(out) + "x" + std::to_string(in);
    for (const char *format : {"f32", "bf16", "q8_0", "q4_0", "int8"}) {
      std::string name = std::string("matvec_") + format + "_" + shape;
      std::string f = format;
      double weightBytes = f == "f32"    ? 4.0 * out * in
                           : f == "bf16" ? 2.0 * out * in
                           : f == "q8_0" ? 34.0 * out * in / 32
                           : f == "int8" ? (in + 4.0) * out
                                         : 18.0 * out * in / 32;
      double activation = f == "bf16" ? 2.0 : 4.0;
      Work w{name, "matvec", name,
             "x @ W^T, W [" + std::to_string(out) + ", " + std::to_string(in) +
                 "] in " + f,
             {{"in_features", std::to_string(in)},
              {"out_features", std::to_string(out)},
              {"weight_format", "\"" + f + "\""}},
             {}};
      if (f == "bf16")
        w.precision = "bf16";
      for (int64_t m : {1, 4}) {
        Dims dims = f == "bf16" ? Dims{{"b", 1}, {"m", m}} : Dims{{"m", m}};
        w.sizes.push_back({"m=" + std::to_string(m), dims, 0,
                           weightBytes + activation * m * (in + out), m == 1});
      }
      works.push_back(std::move(w));
    }
  }
  {
    Work w{"bmm", "matmul", "bmm", "batched a @ b^T, 8 x [n, 64] @ [64, n]",
           {{"kdim", "64"}},
           {}};
    for (int64_t n : {512, 1024, 2048})
      w.sizes.push_back({"n=" + std::to_string(n),
                         {{"g", 8}, {"m", n}, {"n", n}},
                         2.0 * 8 * n * n * 64,
                         4.0 * 8 * (2 * n * 64 + n * n), n == 1024});
    works.push_back(std::move(w));
  }
  auto rowWork = [&](std::string name, std::string what,
                     std::vector<std::pair<std::string, std::string>> hyper,
                     std::vector<std::pair<std::string, Dims>> sizes,
                     auto numel, size_t quickIndex) {
    Work w{name, "memory", name, std::move(what), std::move(hyper), {}};
    for (size_t i = 0; i < sizes.size(); ++i) {
      double elems = numel(sizes[i].second);
      w.sizes.push_back({sizes[i].first, sizes[i].second, 0, 8.0 * elems,
                         i == quickIndex});
    }
    works.push_back(std::move(w));
  };
  rowWork("layer_norm", "LayerNorm over 1024 features", {{"dim", "1024"}},
          {{"n=512", {{"b", 1}, {"n", 512}}}, {"n=4096", {{"b", 1}, {"n", 4096}}}},
          [](const Dims &s) { return 1024.0 * s[1].second; }, 1);
  rowWork("softmax", "row softmax over 4096 rows", {},
          {{"cols=512", {{"rows", 4096}, {"cols", 512}}},
           {"cols=2048", {{"rows", 4096}, {"cols", 2048}}}},
          [](const Dims &s) { return 1.0 * s[0].second * s[1].second; }, 1);
  rowWork("rope", "RoPE on [1, 8, n, 64]", {{"heads", "8"}, {"d", "64"}},
          {{"n=512", {{"b", 1}, {"n", 512}}}, {"n=4096", {{"b", 1}, {"n", 4096}}}},
          [](const Dims &s) { return 8.0 * 64 * s[1].second; }, 1);
  rowWork("conv1d", "depthwise causal conv1d, 1536 channels, kernel 4",
          {{"channels", "1536"}, {"kernel", "4"}},
          {{"L=2048", {{"b", 1}, {"L", 2048}}}, {"L=8192", {{"b", 1}, {"L", 8192}}}},
          [](const Dims &s) { return 1536.0 * s[1].second; }, 0);
  auto linearAttention = [&](std::string name, std::string library,
                             std::string what, bool causal, bool quadratic,
                             std::vector<int64_t> ns, int64_t quickN) {
    Work w{std::move(name), "linear_attention", std::move(library),
           std::move(what),
           {{"heads", "8"}, {"d", "64"}, {"causal", causal ? "true" : "false"}},
           {}};
    w.asWritten = quadratic;
    for (int64_t n : ns) {
      double flops = quadratic ? 4.0 * 8 * n * n * 64 + 2.0 * 8 * n * n
                               : 4.0 * 8 * n * 64 * 64 + 4.0 * 8 * n * 64;
      w.sizes.push_back({"n=" + std::to_string(n),
                         {{"b", 1}, {"n", n}},
                         flops,
                         4.0 * 4 * 8 * n * 64,
                         n == quickN});
    }
    works.push_back(std::move(w));
  };
  linearAttention("linear_attention", "linear_attention",
                  "linear attention, phi(Q) (phi(K)^T V), h=8 d=64", false,
                  false, {256, 1024, 4096, 16384}, 4096);
  linearAttention("linear_attention_quadratic", "linear_attention_quadratic",
                  "linear attention written (phi(Q) phi(K)^T) V, h=8 d=64",
                  false, true, {256, 1024, 4096}, 1024);
  linearAttention("linear_attention_causal", "linear_attention_causal",
                  "causal linear attention, h=8 d=64", true, false,
                  {256, 1024, 4096}, 4096);
  {
    Work w{"selective_scan", "scan", "selective_scan",
           "Mamba selective scan, D=1536 N=16, D skip, z gate, softplus",
           {{"channels", "1536"}, {"state", "16"}},
           {}};
    for (int64_t L : {512, 2048, 8192}) {
      // u, delta, z [L, 1536] and B, C [L, 16] read, y [L, 1536] written.
      double bytes = 4.0 * L * (4 * 1536 + 2 * 16);
      w.sizes.push_back({"L=" + std::to_string(L), {{"b", 1}, {"L", L}}, 0,
                         bytes, L == 2048});
    }
    works.push_back(std::move(w));
  }
  {
    Work w{"s4", "scan", "s4", "S4 LTI scan (HiPPO-LegS, zoh), H=256 N=64",
           {{"channels", "256"}, {"state", "64"}},
           {}};
    for (int64_t L : {512, 2048})
      w.sizes.push_back({"L=" + std::to_string(L), {{"b", 1}, {"L", L}},
                         2.0 * L * 256 * 64 * (64 + 2), 8.0 * L * 256,
                         L == 512});
    works.push_back(std::move(w));
  }
  {
    const int64_t e = 512, hidden = 2048, depth = 6;
    Work w{"encoder", "model", "encoder",
           "6-layer Pre-LN encoder, E=512 h=8 FFN 2048 (ReLU)",
           {{"dim", "512"}, {"heads", "8"}, {"hidden", "2048"}, {"depth", "6"}},
           {}};
    for (int64_t n : {128, 512, 2048}) {
      double perLayer = 2.0 * n * e * e * 4 + 2.0 * n * e * hidden * 2 +
                        4.0 * n * n * e;
      w.sizes.push_back({"n=" + std::to_string(n), {{"b", 1}, {"n", n}},
                         perLayer * depth, 0, n == 128});
    }
    works.push_back(std::move(w));
  }
  {
    // examples/gpt.seq at GPT-2-small size (RoPE, causal attention, tanh-GELU
    // MLP, untied LM head); a prefill of n tokens.
    const int64_t e = 768, depth = 12, vocab = 50257;
    Work w{"gpt2_small", "model", "gpt2_small",
           "examples/gpt.seq at GPT-2-small size (d 768, 12 heads, 12 layers, "
           "vocab 50257), prefill",
           {{"dim", "768"}, {"heads", "12"}, {"kv_heads", "12"},
            {"depth", "12"}, {"vocab", "50257"}},
           {}};
    for (int64_t n : {128, 512}) {
      // Projections and MLP, causal scores and values (half), LM head.
      double perLayer = 2.0 * n * e * e * 4 + 2.0 * n * e * 4 * e * 2 +
                        2.0 * n * n * e;
      w.sizes.push_back({"n=" + std::to_string(n), {{"b", 1}, {"n", n}},
                         perLayer * depth + 2.0 * n * e * vocab, 0, n == 128});
    }
    works.push_back(std::move(w));
  }
  {
    // examples/bert.seq at all-MiniLM-L6-v2's shape, the sentence encoder
    // issue 22 names: 6 Post-LN layers, width 384, 12 heads, MLP 1536, erf
    // GELU, mean pooling; a batch of b sequences of 128 tokens.
    const int64_t e = 384, hidden = 1536, depth = 6, n = 128;
    Work w{"bert_encoder", "model", "bert_encoder",
           "examples/bert.seq at all-MiniLM-L6-v2's shape (6 Post-LN layers, "
           "d 384, 12 heads, MLP 1536), n=128",
           {{"vocab", "30522"},
            {"dim", "384"},
            {"heads", "12"},
            {"hidden", "1536"},
            {"depth", "6"},
            {"max_positions", "512"},
            {"types", "2"}},
           {}};
    for (int64_t b : {1, 8}) {
      // Projections, MLP, scores and values, per sequence.
      double perLayer = 2.0 * n * e * e * 4 + 2.0 * n * e * hidden * 2 +
                        4.0 * n * n * e;
      w.sizes.push_back({"b=" + std::to_string(b), {{"b", b}, {"n", n}},
                         perLayer * depth * b, 0, true});
    }
    works.push_back(std::move(w));
  }
  {
    // examples/mamba.seq with one residual block at Mamba-130M width
    // (d_model 768, d_inner 1536, N 16, dt_rank 48, conv 4), vocab 256; a
    // prefill of n tokens.
    const int64_t e = 768, di = 1536, state = 16, conv = 4, rank = 48,
                  vocab = 256;
    Work w{"mamba_block", "model", "mamba_block",
           "examples/mamba.seq, one block at d 768 (d_inner 1536, N 16), "
           "vocab 256, prefill",
           {{"dim", "768"},
            {"depth", "1"},
            {"vocab", "256"},
            {"d_state", "16"},
            {"d_conv", "4"},
            {"expand", "2"},
            {"dt_rank", "48"}},
           {}};
    for (int64_t n : {512, 2048}) {
      // Projections, the convolution, the scan (exp(dt A), the update and
      // C . h: 6 per state element) and the LM head, per token.
      double perToken = 2.0 * e * 2 * di + 2.0 * di * conv +
                        2.0 * di * (rank + 2 * state) + 2.0 * rank * di +
                        6.0 * di * state + 2.0 * di * e + 2.0 * e * vocab;
      w.sizes.push_back(
          {"n=" + std::to_string(n), {{"b", 1}, {"n", n}}, perToken * n, 0,
           n == 2048});
    }
    works.push_back(std::move(w));
  }
  // The examples at their default sizes: time only (no FLOP model).
  for (const char *example :
       {"attention", "mha", "pre_ln_block", "post_ln_block", "gpt", "alibi",
        "learned_pos", "longformer", "encoder_decoder", "linear_attention",
        "s4", "mamba", "llama", "bert"}) {
    Work w{std::string("example_") + example, "example",
           std::string("example_") + example,
           std::string("examples/") + example + ".seq, default hyperparameters",
           {},
           {}};
    const bool seq2seq = w.name == "example_encoder_decoder";
    for (int64_t n : {64, 256}) {
      Dims dims = seq2seq ? Dims{{"b", 1}, {"s", n}, {"t", n}}
                          : Dims{{"b", 1}, {"n", n}};
      w.sizes.push_back({"n=" + std::to_string(n), dims, 0, 0, n == 64});
    }
    works.push_back(std::move(w));
  }
  return works;
}

} // namespace

const std::vector<Work> &seqc::bench::allWorks() {
  static const std::vector<Work> works = buildWorks();
  return works;
}

std::string seqc::bench::worksToJson() {
  std::ostringstream os;
  os.precision(17);
  os << "[";
  const auto &works = allWorks();
  for (size_t i = 0; i < works.size(); ++i) {
    const Work &w = works[i];
    os << (i ? ",\n" : "\n") << " {\"name\": \"" << w.name
       << "\", \"family\": \"" << w.family << "\", \"library\": \"" << w.library
       << "\", \"what\": \"" << w.what << "\", \"precision\": \"" << w.precision
       << "\", \"as_written\": " << (w.asWritten ? "true" : "false")
       << ", \"hyper\": {";
    for (size_t j = 0; j < w.hyper.size(); ++j)
      os << (j ? ", " : "") << "\"" << w.hyper[j].first
         << "\": " << w.hyper[j].second;
    os << "}, \"sizes\": [";
    for (size_t j = 0; j < w.sizes.size(); ++j) {
      const Size &s = w.sizes[j];
      os << (j ? ", " : "") << "{\"label\": \"" << s.label << "\", \"dims\": {";
      for (size_t k = 0; k < s.dims.size(); ++k)
        os << (k ? ", " : "") << "\"" << s.dims[k].first
           << "\": " << s.dims[k].second;
      os << "}, \"flops\": " << s.flops << ", \"bytes\": " << s.bytes
         << ", \"quick\": " << (s.quick ? "true" : "false")
         << ", \"smoke\": " << (s.smoke ? "true" : "false") << "}";
    }
    os << "]}";
  }
  os << "\n]\n";
  return os.str();
}
