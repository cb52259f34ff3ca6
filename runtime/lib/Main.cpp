//===- Main.cpp - The main function of a compiled model -------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// `seqc` links this (libseqc_runtime_main.a) with the model object to make a
// standalone executable:
//
//   ./model --weights w.safetensors --input tokens=in.npy --output logits=o.npy
//   ./model --random-weights 0 --random-inputs 0 --dim n=128 --bench 10
//   ./model generate --weights w.safetensors --prompt-ids 1,2,3
//
// It uses only the public C API, so it doubles as an example of it. Every
// user error ends in one "error: ..." line on stderr and exit status 1.
//
// A tensor-parallel model (seqc --tensor-parallel=N) runs as N processes
// under mpirun; every rank computes the same outputs, and rank 0 alone
// writes and prints them. An error on any rank is printed with its rank
// ("rank 1: error: ...") and aborts the whole job (MPI_Abort), so that the
// other ranks do not wait forever in the model's next collective.
//
// A data-parallel model (seqc --data-parallel) runs as any number of
// processes under mpirun, each on a contiguous block of the batch: every
// rank builds the whole inputs as one process would, keeps its block of
// rows (the leading dimension the inputs share), runs the model on it, and
// rank 0 gathers the outputs' rows in rank order and writes and prints
// them; `generate` splits its prompts the same way.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"
#include "Support.h"
#include "seqc_runtime.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

using namespace seqc;

namespace {

/// Releases a model on scope exit.
struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

/// This process's rank and the job's rank count, once the model is loaded
/// (seqc_model_rank): 0 and 1 for a model that runs on one process.
int32_t gRank = 0;
int32_t gRanks = 1;
/// Whether the model is data-parallel (seqc_model_data_parallel): the
/// ranks run different rows of the batch.
bool gDataParallel = false;

/// Whether this process writes the outputs and prints the results: all
/// ranks have them, one prints them.
bool isLeader() { return gRank == 0; }

void noteRanks(const seqc_model *model) {
  gRank = seqc_model_rank(model);
  gRanks = seqc_model_num_ranks(model);
  gDataParallel = seqc_model_data_parallel(model) != 0;
}

/// "rank 1: " on a rank of a tensor-parallel job, else "".
std::string rankPrefix() {
  return gRanks > 1 ? "rank " + std::to_string(gRank) + ": " : "";
}

/// Prints `line`, then the formatted message and a newline, to stderr in one
/// write: stderr is unbuffered, and under mpirun the ranks' lines, written
/// piecewise, would interleave ("rank 1: error: rank 0: error: ...").
void printLine(std::string line, const char *fmt, va_list args)
    SEQC_PRINTF(2, 0);
void printLine(std::string line, const char *fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (length > 0) {
    size_t start = line.size();
    line.resize(start + static_cast<size_t>(length) + 1);
    std::vsnprintf(&line[start], static_cast<size_t>(length) + 1, fmt, args);
    line.resize(start + static_cast<size_t>(length));
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void warning(const char *fmt, ...) SEQC_PRINTF(1, 2);
void warning(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  printLine("warning: ", fmt, args);
  va_end(args);
}

int error(const char *fmt, ...) SEQC_PRINTF(1, 2);
int error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  printLine(rankPrefix() + "error: ", fmt, args);
  va_end(args);
  return 1;
}

/// Reports a failed status with a context prefix; returns the exit code.
int statusError(const std::string &context, seqc_status *status) {
  StatusPtr owned(status);
  if (context.empty())
    return error("%s", seqc_status_message(status));
  return error("%s: %s", context.c_str(), seqc_status_message(status));
}

/// The flags that the run and the generate command share: where the weights
/// come from, the thread count and the memory limit.
struct ModelFlags {
  const char *weights = nullptr;
  bool randomWeights = false;
  uint64_t weightSeed = 0;
  int32_t threads = 0;
  bool maxMemory = false;
  uint64_t maxMemoryBytes = 0;
  /// --gguf-names: a file of GGUF name rules (seqc_weights_options).
  const char *ggufNames = nullptr;
};

struct Options : ModelFlags {
  bool skipUnused = false;
  std::vector<const char *> skipPatterns;
  bool randomInputs = false;
  uint64_t inputSeed = 0;
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::pair<std::string, std::string>> outputs;
  std::vector<std::pair<std::string, int64_t>> dims;
  const char *saveWeights = nullptr;
  int64_t benchRuns = 0;
  /// --entry: the entry function to run (seqc_model_select_entry).
  const char *entry = nullptr;
};

bool parseUnsigned(const char *text, uint64_t max, uint64_t *out) {
  if (!*text)
    return false;
  uint64_t value = 0;
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9')
      return false;
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(*p - '0'), &value))
      return false;
  }
  if (value > max)
    return false;
  *out = value;
  return true;
}

/// Splits "NAME=VALUE"; false if there is no '=' or either side is empty.
bool splitAssignment(const char *text, std::string *name, std::string *value) {
  const char *eq = std::strchr(text, '=');
  if (!eq || eq == text || !eq[1])
    return false;
  name->assign(text, static_cast<size_t>(eq - text));
  value->assign(eq + 1);
  return true;
}

/// Parses `flag` when it is one of the shared model flags: returns 0 when it
/// was and is valid, the exit code after printing the error when it is not
/// valid, and -1 when `flag` is another flag.
int parseModelFlag(const std::string &flag, const char *value,
                   ModelFlags &opts) {
  uint64_t number;
  if (flag == "--weights") {
    opts.weights = value;
  } else if (flag == "--random-weights") {
    if (!parseUnsigned(value, UINT64_MAX, &number))
      return error("--random-weights: '%s' is not a seed (a non-negative "
                   "integer below 2^64)",
                   value);
    opts.randomWeights = true;
    opts.weightSeed = number;
  } else if (flag == "--threads") {
    if (!parseUnsigned(value, 1 << 20, &number) || number == 0)
      return error("--threads: '%s' is not a positive thread count", value);
    opts.threads = static_cast<int32_t>(number);
  } else if (flag == "--gguf-names") {
    opts.ggufNames = value;
  } else if (flag == "--max-memory") {
    if (!parseByteSize(value, &number) || number == 0)
      return error("--max-memory: '%s' is not a size (bytes, or a number "
                   "with a suffix K, M, G or T: 512M, 4G)",
                   value);
    opts.maxMemory = true;
    opts.maxMemoryBytes = number;
  } else {
    return -1;
  }
  return 0;
}

/// Checks the shared flags together once the command line is parsed.
int checkModelFlags(const ModelFlags &opts) {
  if (opts.weights && opts.randomWeights)
    return error("--weights and --random-weights are mutually exclusive");
  if (opts.ggufNames && !opts.weights)
    return error("--gguf-names applies to --weights, which is not given");
  return 0;
}

/// Parses the command line; returns 0 on success, else the exit code after
/// printing the error.
int parseArgs(int argc, char **argv, Options &opts) {
  bool seen[17] = {};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
      return error("unexpected argument '%s' (see --help)", argv[i]);
    std::string flag = arg;
    const char *value = nullptr;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) { // --flag=value
      flag = arg.substr(0, eq);
      value = argv[i] + eq + 1;
    }
    static const char *const kFlags[] = {
        "--weights", "--random-weights", "--input",        "--random-inputs",
        "--dim",     "--output",         "--save-weights", "--bench",
        "--threads", "--max-memory",     "--skip-unused",  "--skip-weights",
        "--gguf-names", "--entry"};
    int which = -1;
    for (int f = 0; f < static_cast<int>(std::size(kFlags)); ++f)
      if (flag == kFlags[f])
        which = f;
    if (which < 0)
      return error("unknown option '%s' (see --help)", flag.c_str());
    if (flag == "--skip-unused") {
      if (value)
        return error("--skip-unused takes no value");
      if (seen[which])
        return error("--skip-unused is given more than once");
      seen[which] = true;
      opts.skipUnused = true;
      continue;
    }
    if (!value) {
      if (i + 1 >= argc)
        return error("%s needs a value (see --help)", flag.c_str());
      value = argv[++i];
    }
    bool repeatable = flag == "--input" || flag == "--output" ||
                      flag == "--dim" || flag == "--skip-weights";
    if (seen[which] && !repeatable)
      return error("%s is given more than once", flag.c_str());
    seen[which] = true;

    if (int code = parseModelFlag(flag, value, opts); code >= 0) {
      if (code)
        return code;
      continue;
    }
    std::string name, rhs;
    uint64_t number;
    if (flag == "--skip-weights") {
      if (!*value)
        return error("--skip-weights needs a pattern (fnmatch: "
                     "'*.position_ids')");
      opts.skipPatterns.push_back(value);
    } else if (flag == "--random-inputs") {
      if (!parseUnsigned(value, UINT64_MAX, &number))
        return error("--random-inputs: '%s' is not a seed (a non-negative "
                     "integer below 2^64)",
                     value);
      opts.randomInputs = true;
      opts.inputSeed = number;
    } else if (flag == "--input" || flag == "--output") {
      if (!splitAssignment(value, &name, &rhs))
        return error("%s expects NAME=FILE.npy, got '%s'", flag.c_str(), value);
      auto &list = flag == "--input" ? opts.inputs : opts.outputs;
      for (const auto &entry : list)
        if (entry.first == name)
          return error("%s %s is given more than once", flag.c_str(),
                       name.c_str());
      list.emplace_back(name, rhs);
    } else if (flag == "--dim") {
      if (!splitAssignment(value, &name, &rhs))
        return error("--dim expects NAME=SIZE, got '%s'", value);
      if (!parseUnsigned(rhs.c_str(), INT64_MAX, &number))
        return error("--dim %s: '%s' is not a size (a non-negative integer)",
                     name.c_str(), rhs.c_str());
      for (const auto &entry : opts.dims)
        if (entry.first == name)
          return error("--dim %s is given more than once", name.c_str());
      opts.dims.emplace_back(name, static_cast<int64_t>(number));
    } else if (flag == "--save-weights") {
      opts.saveWeights = value;
    } else if (flag == "--entry") {
      opts.entry = value;
    } else if (flag == "--bench") {
      if (!parseUnsigned(value, 1000000000, &number) || number == 0)
        return error("--bench: '%s' is not a positive run count", value);
      opts.benchRuns = static_cast<int64_t>(number);
    }
  }
  if (int code = checkModelFlags(opts))
    return code;
  if ((opts.skipUnused || !opts.skipPatterns.empty()) && !opts.weights)
    return error("--skip-unused and --skip-weights apply to --weights, "
                 "which is not given");
  return 0;
}

std::string describe(const seqc_value_info &info) {
  std::string text = seqc_dtype_name(info.dtype);
  text += " [";
  for (int d = 0; d < info.rank; ++d) {
    if (d)
      text += ", ";
    text += info.shape[d] < 0 ? std::string(info.dim_names[d])
                              : std::to_string(info.shape[d]);
  }
  return text + "]";
}

std::vector<seqc_value_info> listValues(const seqc_model *model,
                                        seqc_value_kind kind) {
  std::vector<seqc_value_info> infos(seqc_model_count(model, kind));
  for (size_t i = 0; i < infos.size(); ++i)
    seqc_status_free(seqc_model_info(model, kind, i, &infos[i]));
  return infos;
}

void printHelp(const char *argv0, const seqc_model *model) {
  const char *slash = std::strrchr(argv0, '/');
  const char *program = slash ? slash + 1 : argv0;
  std::printf(
      "usage: %s [options]\n\n"
      "Runs the model '%s' compiled by seqc.\n\n"
      "options:\n"
      "  --weights PATH          load the parameters from a safetensors file,\n"
      "                          a sharded checkpoint's index (.json), a\n"
      "                          directory holding either, or a GGUF file\n"
      "  --gguf-names FILE       map a GGUF file's tensor names to the\n"
      "                          parameters' ('blk.{i}.attn_q.weight =\n"
      "                          model.layers.{i}.self_attn.q_proj.weight')\n"
      "  --skip-unused           skip the tensors of --weights that are not\n"
      "                          parameters (a note names each one)\n"
      "  --skip-weights PATTERN  skip those whose names match PATTERN\n"
      "                          (fnmatch; repeatable)\n"
      "  --random-weights SEED   use deterministic random parameters instead\n"
      "  --input NAME=FILE       bind an input to a .npy file (repeatable)\n"
      "  --random-inputs SEED    deterministic random values for the inputs\n"
      "                          not given with --input\n"
      "  --dim NAME=SIZE         size of a symbolic dimension (repeatable)\n"
      "  --output NAME=FILE      write an output to a .npy file (repeatable);\n"
      "                          without --output every output is summarized\n"
      "  --save-weights FILE     write the parameters in use (safetensors,\n"
      "                          or GGUF when FILE ends in .gguf); without\n"
      "                          any input the model is not run\n"
      "  --entry NAME            run the model's entry NAME (default: the\n"
      "                          first listed below); the inputs and outputs\n"
      "                          are that entry's\n"
      "  --bench N               time N runs after one warm-up\n"
      "  --threads T             number of OpenMP threads (at most the\n"
      "                          processors available)\n"
      "  --max-memory SIZE       fail the run rather than let the model hold\n"
      "                          more than SIZE (bytes, or 512M, 4G; default\n"
      "                          $SEQC_MAX_MEMORY, else no limit)\n"
      "  --help                  show this help\n\n"
      "commands:\n"
      "  generate [options]      continue token prompts with the model\n"
      "                          (see '%s generate --help')\n",
      program, seqc_model_name(model), program);
  static const char *const kTitles[3] = {"inputs", "outputs", "parameters"};
  if (seqc_model_num_entries(model) > 1) {
    std::printf("\nentries (--entry; the inputs and outputs below are "
                "the first's):\n");
    for (int64_t i = 0; i < seqc_model_num_entries(model); ++i)
      std::printf("  %s\n", seqc_model_entry_name(model, i));
  }
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<seqc_value_info> infos =
        listValues(model, static_cast<seqc_value_kind>(kind));
    size_t width = 0;
    for (const seqc_value_info &info : infos)
      width = std::max(width, std::strlen(info.name));
    if (kind == SEQC_VALUE_PARAM) {
      int64_t total = 0;
      for (const seqc_value_info &info : infos) {
        int64_t numel = 1;
        for (int d = 0; d < info.rank; ++d)
          numel *= info.shape[d];
        total += numel;
      }
      std::printf("\n%s (%zu, %" PRId64 " elements):\n", kTitles[kind],
                  infos.size(), total);
    } else {
      std::printf("\n%s:\n", kTitles[kind]);
    }
    if (infos.empty())
      std::printf("  (none)\n");
    for (const seqc_value_info &info : infos)
      std::printf("  %-*s  %s\n", static_cast<int>(width), info.name,
                  describe(info).c_str());
  }
}

/// Prints "name: f32 [2, 3] = [v0, v1, ...]  sum=... mean=...".
void printSummary(const char *name, const seqc_tensor &tensor) {
  int64_t numel = seqc_tensor_numel(&tensor);
  std::printf("%s: %s %s", name, seqc_dtype_name(tensor.dtype),
              formatShape(tensor.shape, tensor.rank).c_str());
  bool isFloat =
      tensor.dtype != SEQC_DTYPE_I32 && tensor.dtype != SEQC_DTYPE_I64;
  std::printf(" = [");
  const int64_t kShown = 6;
  for (int64_t i = 0; i < numel && i < kShown; ++i) {
    if (i)
      std::printf(", ");
    if (isFloat)
      std::printf("%.6g", loadAsDouble(tensor.data, tensor.dtype,
                                       static_cast<size_t>(i)));
    else if (tensor.dtype == SEQC_DTYPE_I32)
      std::printf("%" PRId32, static_cast<const int32_t *>(tensor.data)[i]);
    else
      std::printf("%" PRId64, static_cast<const int64_t *>(tensor.data)[i]);
  }
  std::printf("%s]", numel > kShown ? ", ..." : "");
  double sum = 0;
  int64_t nonFinite = 0;
  for (int64_t i = 0; i < numel; ++i) {
    double value =
        loadAsDouble(tensor.data, tensor.dtype, static_cast<size_t>(i));
    if (std::isfinite(value))
      sum += value;
    else
      ++nonFinite;
  }
  std::printf("  sum=%.6g mean=%.6g", sum,
              numel ? sum / static_cast<double>(numel) : 0.0);
  if (nonFinite)
    std::printf("  non-finite=%" PRId64 " (excluded)", nonFinite);
  std::printf("\n");
}

/// Writes an output to .npy; bf16 is widened to f32 (numpy has no bf16).
seqc_status *writeOutput(const char *name, const char *path,
                         const seqc_tensor &tensor) {
  if (tensor.dtype != SEQC_DTYPE_BF16)
    return seqc_npy_write(path, &tensor);
  int64_t numel = seqc_tensor_numel(&tensor);
  std::vector<float> widened(static_cast<size_t>(numel));
  for (size_t i = 0; i < widened.size(); ++i)
    widened[i] = static_cast<float>(loadAsDouble(tensor.data, tensor.dtype, i));
  seqc_tensor copy = tensor;
  copy.dtype = SEQC_DTYPE_F32;
  copy.data = widened.data();
  std::fprintf(stderr, "note: output '%s' is bf16; writing it as f32\n", name);
  return seqc_npy_write(path, &copy);
}

/// libomp aborts on an OMP_NUM_THREADS that is not a list of positive
/// counts ("abc", "", "-1", "3x"): such a value is dropped, with a warning,
/// before anything starts the OpenMP runtime. Returns the first count, or 0
/// when there is none.
int64_t checkThreadEnvironment() {
  const char *text = std::getenv("OMP_NUM_THREADS");
  if (!text)
    return 0;
  int64_t first = 0;
  bool valid = true;
  const char *p = text;
  do {
    const char *start = p;
    uint64_t count = 0;
    for (; *p >= '0' && *p <= '9'; ++p)
      if (count < (uint64_t(1) << 40))
        count = count * 10 + static_cast<uint64_t>(*p - '0');
    valid = p != start && count > 0 && (*p == ',' || *p == '\0');
    if (valid && first == 0)
      first = static_cast<int64_t>(count);
  } while (valid && *p++ == ',');
  if (valid)
    return first;
  warning("ignoring OMP_NUM_THREADS='%s': it is not a positive thread count "
          "(or a comma-separated list of them)",
          printableText(text).c_str());
  unsetenv("OMP_NUM_THREADS");
  return 0;
}

/// Sets the thread count of --threads, or lowers that of OMP_NUM_THREADS,
/// to what the machine allows, with a warning when it is more.
int setThreadCount(int32_t requested, int64_t fromEnvironment) {
  int32_t max = seqc_max_threads();
  if (requested > max) {
    warning("--threads %d is more than the %d processors this process may "
            "run on; using %d",
            requested, max, max);
    requested = max;
  } else if (!requested && fromEnvironment > max) {
    warning("OMP_NUM_THREADS=%lld is more than the %d processors this "
            "process may run on; using %d",
            static_cast<long long>(fromEnvironment), max, max);
    requested = max;
  }
  if (requested)
    if (seqc_status *status = seqc_set_num_threads(requested))
      return statusError("--threads", status);
  return 0;
}

/// Says on stderr which tensor of --weights was skipped.
void noteSkipped(void *, const char *name, const char *dtype, int32_t rank,
                 const int64_t *shape) {
  if (!isLeader()) // Every rank skips the same tensors.
    return;
  std::fprintf(stderr,
               "note: --weights: skipped '%s' (%s %s), not a "
               "parameter of the model\n",
               printableText(name).c_str(), dtype,
               formatShape(shape, rank).c_str());
}

/// The GGUF tensors of --weights that were dequantized, for one note.
struct DequantizedNotes {
  std::vector<std::string> names;
  std::string types;
};

void noteDequantized(void *userData, const char *tensor, const char *,
                     const char *type, seqc_dtype dtype) {
  auto *notes = static_cast<DequantizedNotes *>(userData);
  notes->names.push_back(printableText(tensor));
  std::string kind = std::string(type) + " to " + seqc_dtype_name(dtype);
  if (notes->types.find(kind) == std::string::npos)
    notes->types += (notes->types.empty() ? "" : ", ") + kind;
}

/// Applies the shared flags' thread count and memory limit.
int applyRunLimits(const ModelFlags &opts, int64_t environmentThreads) {
  if (int code = setThreadCount(opts.threads, environmentThreads))
    return code;
  if (opts.maxMemory)
    seqc_set_memory_limit(opts.maxMemoryBytes);
  return 0;
}

/// Binds the weights the shared flags name (`options`, when given, for
/// --weights), or says that a model with parameters needs them.
int bindWeights(seqc_model *m, const ModelFlags &opts,
                const seqc_weights_options *options) {
  if (opts.weights) {
    seqc_weights_options withGguf = {};
    if (options)
      withGguf = *options;
    std::string table;
    if (opts.ggufNames) {
      std::FILE *file = std::fopen(opts.ggufNames, "rb");
      if (!file)
        return error("--gguf-names: cannot open '%s': %s", opts.ggufNames,
                     std::strerror(errno));
      char chunk[4096];
      size_t got;
      while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
        table.append(chunk, got);
      bool failed = std::ferror(file);
      std::fclose(file);
      if (failed)
        return error("--gguf-names: cannot read '%s'", opts.ggufNames);
      withGguf.name_table = table.c_str();
    }
    // noteSkipped ignores its user data.
    DequantizedNotes notes;
    withGguf.on_dequantized = noteDequantized;
    withGguf.user_data = &notes;
    if (seqc_status *status =
            seqc_model_load_weights_with(m, opts.weights, &withGguf))
      return statusError(opts.ggufNames ? "--weights (with --gguf-names)"
                                        : "--weights",
                         status);
    if (!notes.names.empty() && isLeader()) {
      std::string list;
      for (size_t i = 0; i < notes.names.size() && i < 3; ++i)
        list += (i ? ", '" : "'") + notes.names[i] + "'";
      if (notes.names.size() > 3)
        list += ", ... (" + std::to_string(notes.names.size() - 3) + " more)";
      std::fprintf(stderr,
                   "note: --weights: dequantized %zu tensors on load (%s): "
                   "%s\n",
                   notes.names.size(), notes.types.c_str(), list.c_str());
    }
  } else if (opts.randomWeights) {
    if (seqc_status *status = seqc_model_random_weights(m, opts.weightSeed))
      return statusError("--random-weights", status);
  } else if (seqc_model_count(m, SEQC_VALUE_PARAM) > 0) {
    return error("the model needs weights: pass --weights FILE or "
                 "--random-weights SEED");
  }
  return 0;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

/// Whether this process is one rank of several of a data-parallel job: it
/// runs a block of the batch, and rank 0 gathers the rows.
bool splitsBatch() { return gDataParallel && gRanks > 1; }

/// The rows of a batch of `batch` that each rank runs: contiguous blocks in
/// rank order, the first batch % ranks ranks one row more than the others.
std::vector<int64_t> rowsPerRank(int64_t batch, int ranks) {
  std::vector<int64_t> rows(static_cast<size_t>(ranks), batch / ranks);
  for (int64_t r = 0; r < batch % ranks; ++r)
    ++rows[static_cast<size_t>(r)];
  return rows;
}

/// The first row of rank `rank`'s block.
int64_t firstRow(const std::vector<int64_t> &rows, int rank) {
  int64_t first = 0;
  for (int r = 0; r < rank; ++r)
    first += rows[static_cast<size_t>(r)];
  return first;
}

/// Gathers on rank 0, into `recv` (the whole batch, in rank order; read on
/// rank 0 only), the rows each rank holds in `send`: rows[r] rows of
/// `rowBytes` bytes on rank r. Every rank calls it alike. Returns 0, or
/// the exit code after printing the error.
int gatherRows(const std::string &what, const void *send, void *recv,
               const std::vector<int64_t> &rows, int64_t rowBytes) {
  parallel::Functions &mpi = parallel::functions();
  if (!mpi.gatherRows)
    return error("%s: the model runs on %d ranks but the seqc MPI runtime "
                 "is not linked in",
                 what.c_str(), static_cast<int>(gRanks));
  if (rowBytes > INT32_MAX || rows.front() > INT32_MAX)
    return error("%s: rows of %" PRId64 " bytes, %" PRId64 " of them on rank "
                 "0, are too large to gather (at most 2^31 - 1 of each)",
                 what.c_str(), rowBytes, rows.front());
  if (int code = mpi.gatherRows(send, recv, rows.data(), rowBytes))
    return error("%s: gathering the rows on rank 0 failed with MPI error %d",
                 what.c_str(), code);
  return 0;
}

/// The batch of a data-parallel model: the symbolic dimension that leads
/// the shape of every input leading with one ("b" of tokens: i32[b, n]).
/// It must lead wherever an input or an output has it. Returns 0 with
/// *symbol set, or the exit code after printing the error.
int findBatchSymbol(const seqc_model *m, std::string *symbol) {
  std::string first;
  for (const seqc_value_info &info : listValues(m, SEQC_VALUE_INPUT)) {
    if (info.rank == 0 || info.shape[0] >= 0)
      continue;
    if (symbol->empty()) {
      *symbol = info.dim_names[0];
      first = info.name;
    } else if (*symbol != info.dim_names[0]) {
      return error("data parallelism: the inputs lead with different "
                   "dimensions ('%s' of '%s', '%s' of '%s'): which is the "
                   "batch to split across the ranks is ambiguous",
                   symbol->c_str(), first.c_str(), info.dim_names[0],
                   info.name);
    }
  }
  if (symbol->empty())
    return error("data parallelism: no input of model '%s' leads with a "
                 "symbolic dimension, the batch to split across the ranks",
                 seqc_model_name(m));
  for (seqc_value_kind kind : {SEQC_VALUE_INPUT, SEQC_VALUE_OUTPUT})
    for (const seqc_value_info &info : listValues(m, kind))
      for (int d = 1; d < info.rank; ++d)
        if (info.shape[d] < 0 && *symbol == info.dim_names[d])
          return error("data parallelism: %s '%s' (%s) has the batch "
                       "dimension '%s' at axis %d; it must lead, for the "
                       "ranks to split the batch",
                       kind == SEQC_VALUE_INPUT ? "input" : "output", info.name,
                       describe(info).c_str(), symbol->c_str(), d);
  return 0;
}

/// A copy of one bound input, or of rows of it.
struct InputCopy {
  std::string name;
  seqc_tensor tensor;
  std::vector<uint8_t> bytes;
};

/// Replaces the bound inputs, the whole batch of `symbol` as one process
/// would run it, by this rank's block of their rows (every input leading
/// with the batch; the others whole), and fixes `symbol` to the block's
/// size. Sets *rows to every rank's row count. Returns 0, or the exit code
/// after printing the error.
int bindRankRows(seqc_model *m, const Options &opts, const std::string &symbol,
                 std::vector<int64_t> *rows) {
  int64_t batch = 0;
  if (seqc_status *status = seqc_model_get_dim(m, symbol.c_str(), &batch))
    return statusError("data parallelism: the batch '" + symbol + "'", status);
  if (batch < gRanks)
    return error("data parallelism: the batch (%s = %" PRId64 ") is smaller "
                 "than the %d ranks, and each rank runs one row at least: "
                 "run at most %" PRId64 " ranks or a larger batch",
                 symbol.c_str(), batch, static_cast<int>(gRanks), batch);
  *rows = rowsPerRank(batch, gRanks);
  int64_t begin = firstRow(*rows, gRank);
  int64_t count = (*rows)[static_cast<size_t>(gRank)];
  std::vector<InputCopy> copies;
  for (const seqc_value_info &info : listValues(m, SEQC_VALUE_INPUT)) {
    InputCopy copy;
    copy.name = info.name;
    if (seqc_status *status = seqc_model_get_input(m, info.name, &copy.tensor))
      return statusError("data parallelism: input '" + copy.name + "'", status);
    size_t bytes = static_cast<size_t>(seqc_tensor_numel(&copy.tensor)) *
                   seqc_dtype_size(copy.tensor.dtype);
    const auto *data = static_cast<const uint8_t *>(copy.tensor.data);
    if (info.rank > 0 && info.shape[0] < 0) { // The batch (findBatchSymbol).
      size_t rowBytes = bytes / static_cast<size_t>(batch);
      data += static_cast<size_t>(begin) * rowBytes;
      bytes = static_cast<size_t>(count) * rowBytes;
      copy.tensor.shape[0] = count;
    }
    copy.bytes.assign(data, data + bytes);
    copies.push_back(std::move(copy));
  }
  seqc_model_reset_inputs(m);
  for (const auto &dim : opts.dims)
    if (dim.first != symbol)
      if (seqc_status *status =
              seqc_model_set_dim(m, dim.first.c_str(), dim.second))
        return statusError("--dim " + dim.first, status);
  if (seqc_status *status = seqc_model_set_dim(m, symbol.c_str(), count))
    return statusError("data parallelism: the batch '" + symbol + "'", status);
  for (InputCopy &copy : copies) {
    copy.tensor.data = copy.bytes.data();
    if (seqc_status *status =
            seqc_model_set_input(m, copy.name.c_str(), &copy.tensor))
      return statusError("data parallelism: rank " + std::to_string(gRank) +
                             "'s rows of input '" + copy.name + "'",
                         status);
  }
  return 0;
}

/// Output `name` as rank 0 writes it: for a data-parallel model on several
/// ranks (`symbol` not empty) and an output leading with the batch, every
/// rank's rows gathered in rank order (into *storage, on rank 0); else this
/// rank's own output. Every rank calls it for the same outputs in the same
/// order. Returns 0, or the exit code after printing the error.
int collectOutput(const seqc_model *m, const std::string &context,
                  const char *name, const std::string &symbol,
                  const std::vector<int64_t> &rows,
                  std::vector<uint8_t> *storage, seqc_tensor *out) {
  if (seqc_status *status = seqc_model_get_output(m, name, out))
    return statusError(context, status);
  if (symbol.empty())
    return 0;
  bool batched = false;
  for (const seqc_value_info &info : listValues(m, SEQC_VALUE_OUTPUT))
    if (std::strcmp(info.name, name) == 0)
      batched =
          info.rank > 0 && info.shape[0] < 0 && symbol == info.dim_names[0];
  if (!batched)
    return 0; // Rank 0's.
  int64_t rowNumel = 0;
  checkedNumel(out->shape + 1, out->rank - 1, &rowNumel);
  int64_t rowBytes =
      rowNumel * static_cast<int64_t>(seqc_dtype_size(out->dtype));
  int64_t batch = firstRow(rows, gRanks);
  if (isLeader())
    storage->resize(static_cast<size_t>(batch * rowBytes));
  if (int code = gatherRows(context.empty() ? std::string(name) : context,
                            out->data, storage->data(), rows, rowBytes))
    return code;
  out->shape[0] = batch;
  out->data = storage->data();
  return 0;
}

//===----------------------------------------------------------------------===//
// The generate command
//===----------------------------------------------------------------------===//

/// Bounds of the command line, so that the output buffer of
/// batch * max_new_tokens ids (at most 2^36 bytes) can be allocated.
constexpr int64_t kMaxNewTokens = int64_t(1) << 24;
constexpr int64_t kMaxPrompts = int64_t(1) << 10;

struct GenerateOptions : ModelFlags {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<int32_t> stopIds;
  seqc_generate_options generate;
};

/// Parses a signed decimal integer in [min, max].
bool parseSigned(const char *text, int64_t min, int64_t max, int64_t *out) {
  bool negative = *text == '-';
  uint64_t magnitude;
  if (!parseUnsigned(text + negative, uint64_t(INT64_MAX) + negative,
                     &magnitude))
    return false;
  int64_t value = negative ? static_cast<int64_t>(0 - magnitude)
                           : static_cast<int64_t>(magnitude);
  if (value < min || value > max)
    return false;
  *out = value;
  return true;
}

/// Parses a number as strtod does ("0.8", "1e-3", "nan", "inf"); the whole
/// text must be the number.
bool parseNumber(const char *text, double *out) {
  if (!*text || std::isspace(static_cast<unsigned char>(*text)))
    return false;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (*end || errno == ERANGE)
    return false;
  *out = value;
  return true;
}

/// Parses "1,2,3" into 32-bit ids ("" is the empty list); on failure sets
/// *bad to the offending element.
bool parseIdList(const char *text, std::vector<int32_t> *ids,
                 std::string *bad) {
  ids->clear();
  if (!*text)
    return true;
  const char *p = text;
  while (true) {
    const char *comma = std::strchr(p, ',');
    std::string element =
        comma ? std::string(p, static_cast<size_t>(comma - p)) : std::string(p);
    int64_t id;
    if (!parseSigned(element.c_str(), INT32_MIN, INT32_MAX, &id)) {
      *bad = element;
      return false;
    }
    ids->push_back(static_cast<int32_t>(id));
    if (!comma)
      return true;
    p = comma + 1;
  }
}

void printGenerateHelp(const char *argv0, const seqc_model *model) {
  const char *slash = std::strrchr(argv0, '/');
  const char *program = slash ? slash + 1 : argv0;
  std::printf(
      "usage: %s generate --prompt-ids IDS [options]\n\n"
      "Continues token prompts with the model '%s' compiled by seqc and\n"
      "prints the new ids, one line per prompt, on standard output; on\n"
      "standard error, the prefill and decode speeds in tokens per second.\n"
      "The model maps tokens: i32[b, n] to logits: f32[b, n, V]; with an\n"
      "input pos: i32[b] and a cache it decodes one token per call, else\n"
      "each step runs the whole prefix again.\n\n"
      "options:\n"
      "  --weights FILE              load the parameters (safetensors, GGUF)\n"
      "  --gguf-names FILE           map GGUF tensor names to parameters\n"
      "  --random-weights SEED       deterministic random parameters\n"
      "  --prompt-ids 1,2,3          a prompt of token ids; repeat it for a\n"
      "                              batch of prompts (of any lengths)\n"
      "  --max-new-tokens N          tokens to generate per prompt (16)\n"
      "  --temperature T             0 (default) is greedy decoding, the\n"
      "                              argmax; T > 0 samples\n"
      "  --top-k K                   sample from the K most likely (0: all)\n"
      "  --top-p P                   sample from the smallest set of most\n"
      "                              likely tokens of probability P, in\n"
      "                              (0, 1] (1: all)\n"
      "  --repetition-penalty R      divide a positive logit of a token\n"
      "                              already seen by R, multiply a negative\n"
      "                              one (1: off)\n"
      "  --seed S                    the random seed of sampling (0)\n"
      "  --stop-ids 2,3              stop a row after any of these ids\n"
      "  --threads T                 number of OpenMP threads\n"
      "  --max-memory SIZE           fail rather than hold more than SIZE\n"
      "  --help                      show this help\n",
      program, seqc_model_name(model));
}

int parseGenerateArgs(int argc, char **argv, GenerateOptions &opts) {
  static const char *const kFlags[] = {"--weights",     "--random-weights",
                                       "--prompt-ids",  "--max-new-tokens",
                                       "--temperature", "--top-k",
                                       "--top-p",       "--repetition-penalty",
                                       "--seed",        "--stop-ids",
                                       "--threads",     "--max-memory",
                                       "--gguf-names"};
  bool seen[std::size(kFlags)] = {};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
      return error("generate: unexpected argument '%s' (see generate --help)",
                   argv[i]);
    std::string flag = arg;
    const char *value = nullptr;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = argv[i] + eq + 1;
    }
    size_t which = std::size(kFlags);
    for (size_t f = 0; f < std::size(kFlags); ++f)
      if (flag == kFlags[f])
        which = f;
    if (which == std::size(kFlags))
      return error("generate: unknown option '%s' (see generate --help)",
                   flag.c_str());
    if (!value) {
      if (i + 1 >= argc)
        return error("%s needs a value (see generate --help)", flag.c_str());
      value = argv[++i];
    }
    if (seen[which] && flag != "--prompt-ids")
      return error("%s is given more than once", flag.c_str());
    seen[which] = true;

    if (int code = parseModelFlag(flag, value, opts); code >= 0) {
      if (code)
        return code;
      continue;
    }
    uint64_t number;
    int64_t integer;
    double real;
    std::string bad;
    if (flag == "--seed") {
      if (!parseUnsigned(value, UINT64_MAX, &number))
        return error("--seed: '%s' is not a seed (a non-negative integer "
                     "below 2^64)",
                     value);
      opts.generate.seed = number;
    } else if (flag == "--prompt-ids" || flag == "--stop-ids") {
      std::vector<int32_t> ids;
      if (!parseIdList(value, &ids, &bad))
        return error("%s: '%s' is not a token id (a 32-bit integer) in '%s'",
                     flag.c_str(), bad.c_str(), value);
      if (flag == "--prompt-ids")
        opts.prompts.push_back(std::move(ids));
      else
        opts.stopIds = std::move(ids);
    } else if (flag == "--max-new-tokens" || flag == "--top-k") {
      if (!parseSigned(value, INT64_MIN, INT64_MAX, &integer))
        return error("%s: '%s' is not an integer", flag.c_str(), value);
      // The output holds max_new_tokens ids per prompt.
      if (flag == "--max-new-tokens" && integer > kMaxNewTokens)
        return error("--max-new-tokens: %" PRId64 " is more than %" PRId64,
                     integer, kMaxNewTokens);
      (flag == "--top-k" ? opts.generate.top_k : opts.generate.max_new_tokens) =
          integer;
    } else if (flag == "--temperature" || flag == "--top-p" ||
               flag == "--repetition-penalty") {
      if (!parseNumber(value, &real))
        return error("%s: '%s' is not a number", flag.c_str(), value);
      (flag == "--temperature" ? opts.generate.temperature
       : flag == "--top-p"     ? opts.generate.top_p
                               : opts.generate.repetition_penalty) = real;
    }
  }
  if (int code = checkModelFlags(opts))
    return code;
  if (static_cast<int64_t>(opts.prompts.size()) > kMaxPrompts)
    return error("generate: %zu prompts are more than %" PRId64,
                 opts.prompts.size(), kMaxPrompts);
  if (opts.prompts.empty())
    return error("generate: no prompt: pass --prompt-ids 1,2,3 (repeat it "
                 "for a batch)");
  bool sampling = opts.generate.temperature > 0;
  if (!sampling && (seen[5] || seen[6]))
    warning("--top-k and --top-p apply only when sampling (--temperature "
            "above 0); decoding is greedy");
  return 0;
}

/// Streams a single prompt's tokens to standard output as they come.
int printToken(int64_t, int32_t token, void *user_data) {
  bool *first = static_cast<bool *>(user_data);
  std::printf("%s%" PRId32, *first ? "" : " ", token);
  *first = false;
  std::fflush(stdout);
  return 0;
}

/// "31 tokens in 12.345 ms (2511.1 tokens/s)".
std::string describeRate(int64_t tokens, double seconds) {
  char text[128];
  const char *noun = tokens == 1 ? "token" : "tokens";
  if (seconds > 0)
    std::snprintf(text, sizeof(text),
                  "%" PRId64 " %s in %.3f ms (%.1f tokens/s)", tokens, noun,
                  seconds * 1e3, static_cast<double>(tokens) / seconds);
  else
    std::snprintf(text, sizeof(text), "%" PRId64 " %s", tokens, noun);
  return text;
}

int runGenerate(const char *program, int argc, char **argv,
                int64_t environmentThreads) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 ||
        std::strcmp(argv[i], "-h") == 0) {
      seqc_model *raw = nullptr;
      if (seqc_status *status = seqc_model_load(&raw))
        return statusError("", status);
      ModelPtr model(raw);
      printGenerateHelp(program, model.get());
      return 0;
    }
  }
  GenerateOptions opts;
  seqc_generate_options_init(&opts.generate);
  if (int code = parseGenerateArgs(argc, argv, opts))
    return code;

  seqc_model *raw = nullptr;
  if (seqc_status *status = seqc_model_load(&raw))
    return statusError("", status);
  ModelPtr model(raw);
  seqc_model *m = model.get();
  noteRanks(m);
  if (int code = applyRunLimits(opts, environmentThreads))
    return code;
  if (int code = bindWeights(m, opts, nullptr))
    return code;

  // Data parallelism: each rank continues its block of the prompts (a rank
  // may have none when there are fewer prompts than ranks), and rank 0
  // gathers the rows.
  int64_t total = static_cast<int64_t>(opts.prompts.size());
  std::vector<int64_t> rows =
      splitsBatch() ? rowsPerRank(total, gRanks) : std::vector<int64_t>{total};
  int64_t begin = splitsBatch() ? firstRow(rows, gRank) : 0;
  int64_t batch = rows[splitsBatch() ? static_cast<size_t>(gRank) : 0];
  std::vector<const int32_t *> prompts;
  std::vector<int64_t> lengths;
  for (int64_t r = begin; r < begin + batch; ++r) {
    const std::vector<int32_t> &prompt = opts.prompts[static_cast<size_t>(r)];
    prompts.push_back(prompt.data());
    lengths.push_back(static_cast<int64_t>(prompt.size()));
  }
  opts.generate.stop_ids = opts.stopIds.data();
  opts.generate.num_stop_ids = opts.stopIds.size();
  // A warm-up on each prompt's first token, so that the timings below
  // leave out what the first run alone does (preparing the weights, first
  // touching the buffers). Its errors are the timed call's to report.
  bool warm = opts.generate.max_new_tokens > 0 && batch > 0;
  for (int64_t length : lengths)
    warm &= length > 0;
  if (warm) {
    seqc_generate_options warmUp;
    seqc_generate_options_init(&warmUp);
    warmUp.max_new_tokens = 1;
    std::vector<int64_t> ones(static_cast<size_t>(batch), 1);
    std::vector<int32_t> unusedTokens(static_cast<size_t>(batch));
    std::vector<int64_t> unusedCounts(static_cast<size_t>(batch));
    seqc_status_free(seqc_generate(m, batch, prompts.data(), ones.data(),
                                   &warmUp, unusedTokens.data(),
                                   unusedCounts.data(), nullptr));
  }

  // A single prompt streams its tokens; a batch prints its rows at the end.
  // Every rank of a tensor-parallel job generates the same tokens (rank
  // 0's: seqc_generate broadcasts them); rank 0 prints them.
  bool first = true;
  if (total == 1 && isLeader()) {
    opts.generate.callback = printToken;
    opts.generate.user_data = &first;
  }
  int64_t maxNew = std::max<int64_t>(opts.generate.max_new_tokens, 0);
  std::vector<int32_t> tokens(static_cast<size_t>(batch * maxNew));
  std::vector<int64_t> counts(static_cast<size_t>(batch));
  seqc_generate_stats stats = {};
  seqc_status *status =
      batch == 0
          ? nullptr
          : seqc_generate(m, batch, prompts.data(), lengths.data(),
                          &opts.generate, tokens.data(), counts.data(), &stats);
  if (status) {
    if (!first) // End the streamed line before the error.
      std::printf("\n");
    std::fflush(stdout);
    return statusError("generate", status);
  }
  if (splitsBatch()) {
    std::vector<int32_t> allTokens(
        isLeader() ? static_cast<size_t>(total * maxNew) : 0);
    std::vector<int64_t> allCounts(isLeader() ? static_cast<size_t>(total) : 0);
    if (int code = gatherRows("generate", tokens.data(), allTokens.data(), rows,
                              maxNew * int64_t(sizeof(int32_t))))
      return code;
    if (int code = gatherRows("generate", counts.data(), allCounts.data(), rows,
                              int64_t(sizeof(int64_t))))
      return code;
    tokens = std::move(allTokens);
    counts = std::move(allCounts);
  }
  if (!isLeader())
    return 0;
  if (total == 1) {
    std::printf("\n");
  } else {
    for (int64_t r = 0; r < total; ++r) {
      for (int64_t i = 0; i < counts[static_cast<size_t>(r)]; ++i)
        std::printf("%s%" PRId32, i ? " " : "",
                    tokens[static_cast<size_t>(r * maxNew + i)]);
      std::printf("\n");
    }
  }
  if (std::fflush(stdout) != 0)
    return error("cannot write to standard output: %s", std::strerror(errno));
  if (!stats.cached)
    std::fprintf(stderr,
                 "note: the model has no KV cache (no input 'pos' and no "
                 "state): each step runs the whole prefix again, O(n^2) work "
                 "per sequence\n");
  std::fprintf(
      stderr, "prefill: %s\ndecode: %s\n",
      describeRate(stats.prefill_tokens, stats.prefill_seconds).c_str(),
      describeRate(stats.decode_tokens, stats.decode_seconds).c_str());
  return 0;
}

int runMain(int argc, char **argv) {
  // Outputs may go to pipes: one whose reader is gone is a write error
  // (EPIPE) that names the output, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  int64_t environmentThreads = checkThreadEnvironment();
  if (argc >= 2 && std::strcmp(argv[1], "generate") == 0)
    return runGenerate(argv[0], argc - 1, argv + 1, environmentThreads);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 ||
        std::strcmp(argv[i], "-h") == 0) {
      seqc_model *raw = nullptr;
      if (seqc_status *status = seqc_model_load(&raw))
        return statusError("", status);
      ModelPtr model(raw);
      printHelp(argv[0], model.get());
      return 0;
    }
  }
  Options opts;
  if (int code = parseArgs(argc, argv, opts))
    return code;

  seqc_model *raw = nullptr;
  if (seqc_status *status = seqc_model_load(&raw))
    return statusError("", status);
  ModelPtr model(raw);
  seqc_model *m = model.get();
  noteRanks(m);
  if (opts.entry)
    if (seqc_status *status = seqc_model_select_entry(m, opts.entry))
      return statusError("--entry", status);

  if (int code = applyRunLimits(opts, environmentThreads))
    return code;

  for (const auto &dim : opts.dims)
    if (seqc_status *status =
            seqc_model_set_dim(m, dim.first.c_str(), dim.second))
      return statusError("--dim " + dim.first, status);

  seqc_weights_options options = {};
  options.skip_unused = opts.skipUnused;
  options.skip_patterns = opts.skipPatterns.data();
  options.num_skip_patterns = opts.skipPatterns.size();
  options.on_skipped = noteSkipped;
  if (int code = bindWeights(m, opts, &options))
    return code;

  for (const auto &input : opts.inputs) {
    std::string context = "--input " + input.first + "=" + input.second;
    bool known = false;
    for (const seqc_value_info &info : listValues(m, SEQC_VALUE_INPUT))
      known |= input.first == info.name;
    if (!known) // Checked before reading the file; the message lists
                // the model's inputs.
      return statusError(context,
                         seqc_model_set_input(m, input.first.c_str(), nullptr));
    seqc_tensor tensor = {};
    if (seqc_status *status = seqc_npy_read(input.second.c_str(), &tensor))
      return statusError(context, status);
    seqc_status *status = seqc_model_set_input(m, input.first.c_str(), &tensor);
    std::free(tensor.data);
    if (status)
      return statusError(context, status);
  }

  std::vector<seqc_value_info> outputs = listValues(m, SEQC_VALUE_OUTPUT);
  for (const auto &output : opts.outputs) {
    bool known = false;
    for (const seqc_value_info &info : outputs)
      known |= output.first == info.name;
    if (!known) {
      seqc_tensor unused;
      return statusError(
          "--output " + output.first + "=" + output.second,
          seqc_model_get_output(m, output.first.c_str(), &unused));
    }
  }

  if (opts.saveWeights) {
    // The ranks of a data-parallel job hold the same weights: one writes.
    if (!(gDataParallel && !isLeader()))
      if (seqc_status *status = seqc_model_save_weights(m, opts.saveWeights))
        return statusError("--save-weights", status);
    if (opts.inputs.empty() && !opts.randomInputs)
      return 0;
  }

  if (opts.randomInputs)
    if (seqc_status *status = seqc_model_random_inputs(m, opts.inputSeed))
      return statusError("--random-inputs", status);
  for (const seqc_value_info &info : listValues(m, SEQC_VALUE_INPUT)) {
    bool given = opts.randomInputs;
    for (const auto &input : opts.inputs)
      given |= input.first == info.name;
    if (!given)
      return error("input '%s' (%s) is not given: pass --input %s=FILE.npy "
                   "or --random-inputs SEED",
                   info.name, describe(info).c_str(), info.name);
  }
  // Data parallelism: every rank has bound the whole batch, as one process
  // would; each keeps its block of the rows.
  std::string batchSymbol;
  std::vector<int64_t> rows;
  if (splitsBatch()) {
    if (int code = findBatchSymbol(m, &batchSymbol))
      return code;
    if (int code = bindRankRows(m, opts, batchSymbol, &rows))
      return code;
  }

  double lastMs = 0;
  if (opts.benchRuns > 0) {
    if (seqc_status *status = seqc_model_run(m)) // Warm-up.
      return statusError("run", status);
    std::vector<double> times;
    for (int64_t r = 0; r < opts.benchRuns; ++r) {
      auto start = std::chrono::steady_clock::now();
      if (seqc_status *status = seqc_model_run(m))
        return statusError("run", status);
      times.push_back(millisecondsSince(start));
    }
    lastMs = times.back();
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    double median =
        n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    if (isLeader() && splitsBatch())
      std::printf("bench: %zu runs after 1 warm-up: min %.3f ms, median "
                  "%.3f ms (rank 0: %" PRId64 " of %" PRId64 " rows)\n",
                  n, times.front(), median, rows.front(),
                  firstRow(rows, gRanks));
    else if (isLeader())
      std::printf("bench: %zu runs after 1 warm-up: min %.3f ms, median "
                  "%.3f ms\n",
                  n, times.front(), median);
  } else {
    auto start = std::chrono::steady_clock::now();
    if (seqc_status *status = seqc_model_run(m))
      return statusError("run", status);
    lastMs = millisecondsSince(start);
  }

  // Every rank has the outputs (under data parallelism, its rows of them,
  // which rank 0 gathers); one writes them.
  std::vector<std::pair<std::string, std::string>> written = opts.outputs;
  if (opts.outputs.empty())
    for (const seqc_value_info &info : outputs)
      written.emplace_back(info.name, std::string());
  for (const auto &[name, path] : written) {
    std::string context = path.empty() ? std::string() : "--output " + name;
    std::vector<uint8_t> storage;
    seqc_tensor tensor;
    if (int code = collectOutput(m, context, name.c_str(), batchSymbol, rows,
                                 &storage, &tensor))
      return code;
    if (!isLeader())
      continue;
    if (path.empty())
      printSummary(name.c_str(), tensor);
    else if (seqc_status *status =
                 writeOutput(name.c_str(), path.c_str(), tensor))
      return statusError(context, status);
  }
  if (!isLeader())
    return 0;
  if (opts.outputs.empty() && opts.benchRuns == 0)
    std::printf("time: %.3f ms\n", lastMs);
  if (std::fflush(stdout) != 0)
    return error("cannot write to standard output: %s", std::strerror(errno));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int code = runMain(argc, argv);
  // A rank that fails alone would leave the others in the model's next
  // collective (or MPI_Finalize): end the whole job.
  if (code != 0 && gRanks > 1) {
    std::fflush(stdout);
    if (seqc::parallel::functions().abort)
      seqc::parallel::functions().abort(code);
  }
  return code;
}
