//===- CliTest.cpp - Tests of a model executable's command line -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Runs seqc_fake_model_cli (the add model of FakeModels.c linked with
// libseqc_runtime_main.a, exactly as seqc links a compiled model) as a child
// process, so exit codes, stdout and stderr are observed as a user sees them.
//
//===----------------------------------------------------------------------===//

#include "FakeModels.h"
#include "TestUtil.h"

#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEQC_TEST_ASAN 1
#endif
#endif

using namespace seqc;
using namespace seqc::test;

namespace {

using Result = ProcessResult;

class Cli : public ::testing::Test {
protected:
  TempDir dir;

  /// Starts `executable` with `args`, its stdout and stderr going to files
  /// that finish() reads; -1 if it cannot be spawned.
  pid_t start(const std::vector<std::string> &args,
              const char *executable = SEQC_FAKE_MODEL_CLI) {
    std::vector<std::string> argv = {executable};
    argv.insert(argv.end(), args.begin(), args.end());
    return spawnProcess(argv, dir.file("stdout"), dir.file("stderr"));
  }

  /// Waits for a process of start().
  Result finish(pid_t pid) {
    return waitProcess(pid, dir.file("stdout"), dir.file("stderr"));
  }

  Result run(const std::vector<std::string> &args,
             const char *executable = SEQC_FAKE_MODEL_CLI) {
    return finish(start(args, executable));
  }

  /// Runs a /bin/sh script (to set limits for the model executable).
  Result runShell(const std::string &script) {
    return run({"-c", script}, "/bin/sh");
  }

  /// The contract for every user error: exit status 1 (not a signal), one
  /// "error: " line on stderr that contains `part`, nothing on stdout.
  ::testing::AssertionResult
  failsWith(const std::vector<std::string> &args, const std::string &part,
            const char *executable = SEQC_FAKE_MODEL_CLI) {
    Result r = run(args, executable);
    std::string command;
    for (const std::string &arg : args)
      command += " " + arg;
    if (!r.exited)
      return ::testing::AssertionFailure() << "crashed:" << command << "\n"
                                           << r.err;
    if (r.exitCode != 1)
      return ::testing::AssertionFailure()
             << "exit code " << r.exitCode << ":" << command << "\n"
             << r.err;
    if (r.err.compare(0, 7, "error: ") != 0 ||
        r.err.find('\n') != r.err.size() - 1)
      return ::testing::AssertionFailure()
             << "stderr is not one error line:" << command << "\n"
             << r.err;
    if (r.err.find(part) == std::string::npos)
      return ::testing::AssertionFailure()
             << "stderr lacks '" << part << "':" << command << "\n"
             << r.err;
    if (!r.out.empty())
      return ::testing::AssertionFailure()
             << "unexpected stdout:" << command << "\n"
             << r.out;
    return ::testing::AssertionSuccess();
  }

  std::string writeNpy(const std::string &name, seqc_dtype dtype,
                       std::vector<int64_t> shape, void *data) {
    std::string path = dir.file(name);
    seqc_tensor t = makeTensor(dtype, shape, data);
    EXPECT_TRUE(isOk(seqc_npy_write(path.c_str(), &t)));
    return path;
  }

  /// Writes a weights file for the add model with scale = `scale`.
  std::string writeWeights(std::vector<float> scale) {
    seqc_model *model = nullptr;
    EXPECT_TRUE(
        isOk(seqc_model_load_from(FAKE_ADD_MANIFEST, fake_add_invoke, &model)));
    seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {4}, scale.data());
    EXPECT_TRUE(isOk(seqc_model_set_param(model, "scale", &t)));
    std::string path = dir.file("w.safetensors");
    EXPECT_TRUE(isOk(seqc_model_save_weights(model, path.c_str())));
    seqc_model_free(model);
    return path;
  }
};

TEST_F(Cli, HelpListsTheModel) {
  for (const char *flag : {"--help", "-h"}) {
    Result r = run({"--random-weights", "1", flag});
    EXPECT_EQ(r.exitCode, 0);
    EXPECT_NE(r.out.find("usage: seqc_fake_model_cli [options]"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Runs the model 'add'"), std::string::npos);
    EXPECT_NE(r.out.find("--random-inputs SEED"), std::string::npos);
    EXPECT_NE(r.out.find("inputs:\n  x  f32 [n, 4]\n  y  f32 [n, 4]\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  sum_t        f32 [4, n]\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  rows         i64 []\n"), std::string::npos);
    EXPECT_NE(r.out.find("parameters (1, 4 elements):\n  scale  f32 [4]\n"),
              std::string::npos)
        << r.out;
    EXPECT_TRUE(r.err.empty());
  }
}

TEST_F(Cli, RandomRunPrintsASummary) {
  Result r =
      run({"--random-weights", "1", "--random-inputs", "2", "--dim", "n=3"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("sum: f32 [3, 4] = ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", ...]  sum="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mean="), std::string::npos);
  EXPECT_NE(r.out.find("scale_alias: f32 [4] = [1, 1, 1, 1]  sum=4 mean=1"),
            std::string::npos)
      << r.out; // "scale" is initialized to ones.
  EXPECT_NE(r.out.find("rows: i64 [] = [3]  sum=3 mean=3"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("time: "), std::string::npos);
  // Deterministic: the same seeds print the same values.
  Result again =
      run({"--random-weights", "1", "--random-inputs", "2", "--dim=n=3"});
  EXPECT_EQ(again.out.substr(0, again.out.find("time:")),
            r.out.substr(0, r.out.find("time:")));
}

TEST_F(Cli, RunsOnFilesAndWritesOutputs) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> y(12, 1.0f);
  std::string xPath = writeNpy("x.npy", SEQC_DTYPE_F32, {3, 4}, x.data());
  std::string yPath = writeNpy("y.npy", SEQC_DTYPE_F32, {3, 4}, y.data());
  std::string weights = writeWeights({1, 10, 100, 1000});
  std::string sumPath = dir.file("sum.npy"), tPath = dir.file("t.npy");
  Result r = run({"--weights=" + weights, "--input", "x=" + xPath, "--input",
                  "y=" + yPath, "--output", "sum=" + sumPath, "--output",
                  "sum_t=" + tPath, "--threads", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  seqc_tensor sum = {}, t = {};
  ASSERT_TRUE(isOk(seqc_npy_read(sumPath.c_str(), &sum)));
  ASSERT_TRUE(isOk(seqc_npy_read(tPath.c_str(), &t)));
  ASSERT_EQ(sum.rank, 2);
  EXPECT_EQ(t.shape[0], 4);
  EXPECT_EQ(t.shape[1], 3);
  const float scale[4] = {1, 10, 100, 1000};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      float expected = (x[i * 4 + j] + 1.0f) * scale[j];
      EXPECT_EQ(static_cast<float *>(sum.data)[i * 4 + j], expected);
      EXPECT_EQ(static_cast<float *>(t.data)[j * 3 + i], expected);
    }
  }
  std::free(sum.data);
  std::free(t.data);
}

TEST_F(Cli, SavesWeightsWithoutRunning) {
  std::string path = dir.file("random.safetensors");
  Result r = run({"--random-weights", "5", "--save-weights", path});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  // The saved file holds exactly what --random-weights 5 gives.
  seqc_model *a = nullptr, *b = nullptr;
  ASSERT_TRUE(
      isOk(seqc_model_load_from(FAKE_ADD_MANIFEST, fake_add_invoke, &a)));
  ASSERT_TRUE(
      isOk(seqc_model_load_from(FAKE_ADD_MANIFEST, fake_add_invoke, &b)));
  ASSERT_TRUE(isOk(seqc_model_load_weights(a, path.c_str())));
  ASSERT_TRUE(isOk(seqc_model_random_weights(b, 5)));
  seqc_tensor ta, tb;
  ASSERT_TRUE(isOk(seqc_model_get_param(a, "scale", &ta)));
  ASSERT_TRUE(isOk(seqc_model_get_param(b, "scale", &tb)));
  EXPECT_EQ(std::memcmp(ta.data, tb.data, 16), 0);
  seqc_model_free(a);
  seqc_model_free(b);
  // And it loads back on the command line.
  r = run({"--weights", path, "--random-inputs", "1", "--dim", "n=2"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST_F(Cli, Benchmarks) {
  Result r = run({"--random-weights", "1", "--random-inputs", "1", "--dim",
                  "n=2", "--bench", "3"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("bench: 3 runs after 1 warm-up: min "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" ms, median "), std::string::npos);
  EXPECT_NE(r.out.find("sum: f32 [2, 4]"), std::string::npos);
}

TEST_F(Cli, RejectsBadCommandLines) {
  EXPECT_TRUE(failsWith({"--bogus"}, "unknown option '--bogus'"));
  EXPECT_TRUE(failsWith({"--bogus=1"}, "unknown option '--bogus'"));
  EXPECT_TRUE(failsWith({"stray"}, "unexpected argument 'stray'"));
  EXPECT_TRUE(failsWith({"-x"}, "unexpected argument '-x'"));
  EXPECT_TRUE(failsWith({"--weights"}, "--weights needs a value"));
  EXPECT_TRUE(failsWith({"--dim", "n"}, "--dim expects NAME=SIZE, got 'n'"));
  EXPECT_TRUE(failsWith({"--dim", "=3"}, "--dim expects NAME=SIZE"));
  EXPECT_TRUE(failsWith({"--dim", "n=abc"}, "--dim n: 'abc' is not a size"));
  EXPECT_TRUE(failsWith({"--dim", "n=-1"}, "--dim n: '-1' is not a size"));
  EXPECT_TRUE(failsWith({"--dim", "n=99999999999999999999"}, "not a size"));
  EXPECT_TRUE(failsWith({"--dim", "n=1", "--dim", "n=2"},
                        "--dim n is given more than once"));
  EXPECT_TRUE(failsWith({"--random-weights", "x"},
                        "--random-weights: 'x' is not a seed"));
  EXPECT_TRUE(failsWith({"--random-inputs", "18446744073709551616"},
                        "--random-inputs: '18446744073709551616' is not a "
                        "seed"));
  EXPECT_TRUE(failsWith({"--random-weights", "1", "--random-weights", "2"},
                        "--random-weights is given more than once"));
  EXPECT_TRUE(failsWith({"--weights", "a", "--random-weights", "1"},
                        "--weights and --random-weights are mutually "
                        "exclusive"));
  EXPECT_TRUE(failsWith({"--input", "x"}, "--input expects NAME=FILE.npy, "
                                          "got 'x'"));
  EXPECT_TRUE(failsWith({"--output", "sum="}, "--output expects NAME=FILE"));
  EXPECT_TRUE(failsWith({"--input", "x=a.npy", "--input", "x=b.npy"},
                        "--input x is given more than once"));
  EXPECT_TRUE(failsWith({"--bench", "0"}, "--bench: '0' is not a positive"));
  EXPECT_TRUE(failsWith({"--threads", "-1"},
                        "--threads: '-1' is not a positive thread count"));
  EXPECT_TRUE(failsWith({"--threads", "two"}, "--threads: 'two'"));
}

TEST_F(Cli, RejectsIncompleteRuns) {
  EXPECT_TRUE(failsWith({"--random-inputs", "1", "--dim", "n=2"},
                        "the model needs weights: pass --weights FILE or "
                        "--random-weights SEED"));
  EXPECT_TRUE(failsWith({"--random-weights", "1"},
                        "input 'x' (f32 [n, 4]) is not given: pass --input "
                        "x=FILE.npy or --random-inputs SEED"));
  EXPECT_TRUE(failsWith({"--random-weights", "1", "--random-inputs", "1"},
                        "--random-inputs: cannot generate input 'x': "
                        "dimension 'n' has no size"));
  EXPECT_TRUE(failsWith({"--random-weights", "1", "--dim", "q=3"},
                        "--dim q: the model has no symbolic dimension 'q' "
                        "(dimensions: n)"));
  EXPECT_TRUE(failsWith({"--random-weights", "1", "--random-inputs", "1",
                         "--dim", "n=2", "--output", "nope=o.npy"},
                        "--output nope=o.npy: the model has no output 'nope' "
                        "(outputs: sum, sum_t, x_alias, scale_alias, rows)"));
}

TEST_F(Cli, SkipsTensorsThatAreNotParametersOnRequest) {
  std::string path = dir.file("extra.safetensors");
  writeFile(path,
            safetensorsBytes(R"({"scale": {"dtype": "BF16", "shape": [4], )"
                             R"("data_offsets": [0, 8]}, "position_ids": )"
                             R"({"dtype": "I64", "shape": [1, 2], )"
                             R"("data_offsets": [8, 24]}})",
                             std::string(24, '\0')));
  EXPECT_TRUE(failsWith({"--weights", path},
                        "tensor 'position_ids' is not a parameter of the "
                        "model (it is I64 [1, 2]); to skip the tensors the "
                        "model does not declare, pass --skip-unused or "
                        "--skip-weights PATTERN"));
  EXPECT_TRUE(failsWith({"--skip-unused", "--random-weights", "1"},
                        "--skip-unused and --skip-weights apply to "
                        "--weights, which is not given"));
  EXPECT_TRUE(failsWith({"--skip-unused=yes"}, "--skip-unused takes no value"));
  for (const char *flag : {"--skip-unused", "--skip-weights=*_ids"}) {
    Result r = run({"--weights", path, flag, "--save-weights",
                    dir.file("out.safetensors")});
    EXPECT_EQ(r.exitCode, 0) << flag << ": " << r.err;
    EXPECT_EQ(r.err, "note: --weights: skipped 'position_ids' (I64 [1, 2]), "
                     "not a parameter of the model\n")
        << flag;
  }
}

TEST_F(Cli, RejectsBadWeightFiles) {
  std::string missing = dir.file("missing.safetensors");
  EXPECT_TRUE(failsWith({"--weights", missing},
                        "--weights: cannot open '" + missing + "'"));
  EXPECT_TRUE(failsWith({"--weights", dir.path()},
                        "is a directory without model.safetensors.index.json "
                        "or model.safetensors"));
  std::string garbage = dir.file("garbage.safetensors");
  writeFile(garbage, "this is not a safetensors file at all");
  EXPECT_TRUE(failsWith({"--weights", garbage},
                        "--weights: '" + garbage + "': header length"));
  std::string wrong = dir.file("wrong.safetensors");
  writeFile(wrong,
            safetensorsBytes(R"({"scale": {"dtype": "F32", )"
                             R"("shape": [5], "data_offsets": [0, 20]}})",
                             std::string(20, '\0')));
  EXPECT_TRUE(failsWith({"--weights", wrong},
                        "parameter 'scale' has shape [5] in the file but the "
                        "model expects [4]"));
  EXPECT_TRUE(failsWith({"--random-weights", "1", "--save-weights",
                         "/nonexistent-dir/w.safetensors"},
                        "--save-weights: cannot create"));
}

TEST_F(Cli, RejectsBadInputFiles) {
  std::vector<std::string> base = {"--random-weights", "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  EXPECT_TRUE(failsWith(with({"--input", "z=a.npy"}),
                        "--input z=a.npy: the model has no input 'z' "
                        "(inputs: x, y)"));
  std::string missing = dir.file("missing.npy");
  EXPECT_TRUE(failsWith(with({"--input", "x=" + missing}),
                        "--input x=" + missing + ": cannot open"));
  std::string garbage = dir.file("garbage.npy");
  writeFile(garbage, "PK\x03\x04 definitely a zip");
  EXPECT_TRUE(failsWith(with({"--input", "x=" + garbage}), "bad magic"));

  std::vector<int64_t> ints(12);
  std::string i64 = writeNpy("i64.npy", SEQC_DTYPE_I64, {3, 4}, ints.data());
  EXPECT_TRUE(failsWith(with({"--input", "x=" + i64}),
                        "input 'x': dtype i64 does not match the model's "
                        "f32"));
  std::vector<float> f(15);
  std::string wide = writeNpy("wide.npy", SEQC_DTYPE_F32, {3, 5}, f.data());
  EXPECT_TRUE(failsWith(with({"--input", "x=" + wide}),
                        "input 'x': dim 1 has size 5 but the model expects "
                        "4"));
  std::string three = writeNpy("three.npy", SEQC_DTYPE_F32, {3, 4}, f.data());
  std::string two = writeNpy("two.npy", SEQC_DTYPE_F32, {2, 4}, f.data());
  EXPECT_TRUE(failsWith(with({"--input", "x=" + three, "--input", "y=" + two}),
                        "input 'y': dim 0 ('n') has size 2, but 'n' is 3 "
                        "(from input 'x')"));
  EXPECT_TRUE(failsWith(with({"--dim", "n=2", "--input", "x=" + three}),
                        "input 'x': dim 0 ('n') has size 3, but 'n' is 2 "
                        "(from --dim"));
  EXPECT_TRUE(failsWith(with({"--input", "x=" + three, "--random-inputs", "1",
                              "--output", "sum=/nonexistent-dir/o.npy"}),
                        "--output sum: cannot create"));
}

TEST_F(Cli, HandlesWeightlessModelsAndRareDtypes) {
  Result help = run({"--help"}, SEQC_FAKE_MISC_CLI);
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("parameters (0, 0 elements):\n  (none)\n"),
            std::string::npos)
      << help.out;

  // No weights flag is needed; i32 scalars and non-finite values print.
  Result r = run({"--random-inputs", "1", "--dim", "n=3"}, SEQC_FAKE_MISC_CLI);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("half: bf16 [3] = ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("count: i32 [] = [3]  sum=3 mean=3"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("non-finite=3 (excluded)"), std::string::npos) << r.out;

  // bf16 outputs are widened to f32 .npy files, with a note.
  std::string path = dir.file("half.npy");
  r = run({"--random-weights", "0", "--random-inputs", "1", "--dim", "n=3",
           "--output", "half=" + path},
          SEQC_FAKE_MISC_CLI);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "note: output 'half' is bf16; writing it as f32\n");
  seqc_tensor t = {};
  ASSERT_TRUE(isOk(seqc_npy_read(path.c_str(), &t)));
  EXPECT_EQ(t.dtype, SEQC_DTYPE_F32);
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.shape[0], 3);
  std::free(t.data);
}

TEST_F(Cli, GenerateNeedsALanguageModel) {
  // The add and misc models map no tokens to logits: the generate command
  // says what generation needs (generate.test runs it on a compiled gpt).
  EXPECT_TRUE(
      failsWith({"generate", "--random-weights", "0", "--prompt-ids", "1,2"},
                "error: generate: generation needs an input 'tokens' "
                "(i32 [b, n]): the model has no input 'tokens' "
                "(inputs: x, y)"));
  EXPECT_TRUE(failsWith({"generate", "--prompt-ids", "1"},
                        "generation needs an input 'tokens'",
                        SEQC_FAKE_MISC_CLI));
  Result help = run({"generate", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("usage: seqc_fake_model_cli generate --prompt-ids "
                          "IDS [options]"),
            std::string::npos)
      << help.out;
}

TEST_F(Cli, ReportsModelErrors) {
  std::vector<float> v = {-1000, 1, 2};
  std::string path = writeNpy("v.npy", SEQC_DTYPE_F32, {3}, v.data());
  EXPECT_TRUE(failsWith({"--input", "v=" + path},
                        "run: output 'half': dim 0 ('n') has size 4, but 'n' "
                        "is 3 (from input 'v')",
                        SEQC_FAKE_MISC_CLI));
  EXPECT_TRUE(failsWith({"--input", "v=" + path, "--bench", "2"},
                        "run: output 'half'", SEQC_FAKE_MISC_CLI));
}

/// Sets an environment variable for the scope (the children inherit it).
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name); }

private:
  const char *name;
};

TEST_F(Cli, GpuModelWithoutADriver) {
  ScopedEnv driver("SEQC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--random-weights", "1", "--random-inputs",
                                 "2", "--dim", "n=5"},
        std::vector<std::string>{"--help"}})
    EXPECT_TRUE(failsWith(
        args,
        "this model was compiled for NVIDIA GPUs (--target=nvptx), but the "
        "CUDA driver cannot be loaded (/nonexistent/libcuda.so.1: cannot open "
        "shared object file: No such file or directory); run it on a machine "
        "with an NVIDIA GPU and driver, or compile it with --target=cpu",
        SEQC_FAKE_GPU_CLI));
}

TEST_F(Cli, GpuModelWithTheFakeDriver) {
  ScopedEnv driver("SEQC_CUDA_DRIVER", SEQC_FAKE_CUDA);
  {
    ScopedEnv trace("FAKE_CUDA_TRACE", "1");
    Result r =
        run({"--random-weights", "1", "--random-inputs", "2", "--dim", "n=300"},
            SEQC_FAKE_GPU_CLI);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("y: f32 [300] = ["), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("fake-cuda: launch fake_scale_by grid 3x1x1 block "
                         "128x1x1 smem 0\n"),
              std::string::npos)
        << r.err;
    // The module is loaded at its first use and unloaded at exit.
    EXPECT_NE(r.err.find("fake-cuda: 1 cuInit, 1 modules loaded, 1 unloaded, "
                         "1 launches"),
              std::string::npos)
        << r.err;
  }
  ScopedEnv fail("FAKE_CUDA_FAIL", "cuLaunchKernel=719");
  EXPECT_TRUE(failsWith(
      {"--random-weights", "1", "--random-inputs", "2", "--dim", "n=5"},
      "run: model 'gpu_scale' failed on the GPU: "
      "cuLaunchKernel of 'fake_scale_by' (grid 1x1x1, block "
      "128x1x1, 0 bytes of shared memory) failed: "
      "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)",
      SEQC_FAKE_GPU_CLI));
}

//===----------------------------------------------------------------------===//
// Output files
//===----------------------------------------------------------------------===//

/// The names in `path` that a replaced output leaves behind, if any.
std::vector<std::string> temporaryFiles(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *d = opendir(path.c_str())) {
    while (dirent *entry = readdir(d))
      if (std::strstr(entry->d_name, ".tmp-"))
        names.push_back(entry->d_name);
    closedir(d);
  }
  return names;
}

bool isKind(const std::string &path, mode_t kind, bool follow = false) {
  struct stat st;
  int rc = follow ? stat(path.c_str(), &st) : lstat(path.c_str(), &st);
  return rc == 0 && (st.st_mode & S_IFMT) == kind;
}

const std::vector<std::string> kRandomRun = {
    "--random-weights", "1", "--random-inputs", "2", "--dim", "n=3"};

std::vector<std::string> withArgs(std::vector<std::string> args,
                                  const std::vector<std::string> &more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_F(Cli, WritesOutputsThroughSymbolicLinks) {
  std::string expectedPath = dir.file("expected.npy");
  ASSERT_EQ(
      run(withArgs(kRandomRun, {"--output", "sum=" + expectedPath})).exitCode,
      0);
  std::string expected = readFile(expectedPath);
  ASSERT_FALSE(expected.empty());

  // A chain of links (the second relative) to a file with its own mode: the
  // file is replaced, keeps its mode, and the links stay links.
  std::string target = dir.file("target.npy");
  writeFile(target, "old");
  ASSERT_EQ(chmod(target.c_str(), 0640), 0);
  ASSERT_EQ(symlink(target.c_str(), dir.file("link").c_str()), 0);
  ASSERT_EQ(symlink("link", dir.file("link2").c_str()), 0);
  Result r =
      run(withArgs(kRandomRun, {"--output", "sum=" + dir.file("link2")}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(isKind(dir.file("link"), S_IFLNK));
  EXPECT_TRUE(isKind(dir.file("link2"), S_IFLNK));
  EXPECT_EQ(readFile(target), expected);
  struct stat st;
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);

  // A link to nothing yet: its target is created.
  ASSERT_EQ(symlink("created.npy", dir.file("dangling").c_str()), 0);
  r = run(withArgs(kRandomRun, {"--output", "sum=" + dir.file("dangling")}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(isKind(dir.file("dangling"), S_IFLNK));
  EXPECT_EQ(readFile(dir.file("created.npy")), expected);
  EXPECT_EQ(temporaryFiles(dir.path()), std::vector<std::string>());
}

TEST_F(Cli, WritesOutputsToAFifoAndToStandardOutputInOrder) {
  std::string sumPath = dir.file("sum.npy"), rowsPath = dir.file("rows.npy");
  ASSERT_EQ(run(withArgs(kRandomRun, {"--output", "sum=" + sumPath, "--output",
                                      "rows=" + rowsPath}))
                .exitCode,
            0);
  std::string sum = readFile(sumPath), rows = readFile(rowsPath);

  // A FIFO, read while the model writes it.
  std::string fifo = dir.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Opened for reading and writing, so that neither side waits for the
  // other to open it, and a child that fails cannot hang the test.
  int fd = open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  pid_t pid = start(withArgs(kRandomRun, {"--output", "sum=" + fifo}));
  std::string received;
  char buffer[4096];
  while (received.size() < sum.size()) {
    pollfd ready = {fd, POLLIN, 0};
    if (poll(&ready, 1, 60000) <= 0)
      break;
    ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got <= 0)
      break;
    received.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  Result r = finish(pid);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(received, sum);
  EXPECT_TRUE(isKind(fifo, S_IFIFO));

  // "-": standard output, in the order given.
  r = run(withArgs(kRandomRun, {"--output", "rows=-", "--output", "sum=-"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(r.out == rows + sum) << "stdout has " << r.out.size() << " bytes";
  r = run({"--random-weights", "5", "--save-weights", "-"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.compare(8, 2, "{\""), 0);
}

TEST_F(Cli, ReportsEveryFailedWrite) {
  // A character device is written in place, and a full one is an error.
  if (isKind("/dev/full", S_IFCHR, true) && access("/dev/full", W_OK) == 0) {
    EXPECT_TRUE(failsWith(withArgs(kRandomRun, {"--output", "sum=/dev/full"}),
                          "--output sum: cannot write '/dev/full': No space "
                          "left on device"));
    std::string link = dir.file("full");
    ASSERT_EQ(symlink("/dev/full", link.c_str()), 0);
    EXPECT_TRUE(failsWith({"--random-weights", "1", "--save-weights", link},
                          "--save-weights: cannot write '" + link +
                              "' (a link to '/dev/full'): No space left on "
                              "device"));
    EXPECT_TRUE(isKind("/dev/full", S_IFCHR));
    EXPECT_TRUE(isKind(link, S_IFLNK));
  }
  // A full disk, injected: past the file size limit (with SIGXFSZ ignored)
  // a write fails with EFBIG. The file keeps its content, and no temporary
  // file is left.
  std::string out = dir.file("out.npy");
  writeFile(out, "old");
  Result r = runShell(std::string("ulimit -f 8 && trap '' XFSZ && exec ") +
                      SEQC_FAKE_MODEL_CLI +
                      " --random-weights 1 --random-inputs 2 --dim n=10000 "
                      "--output sum=" +
                      out);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(r.err, "error: --output sum: cannot write '" + out +
                       "': File too large\n");
  EXPECT_EQ(readFile(out), "old");
  EXPECT_EQ(temporaryFiles(dir.path()), std::vector<std::string>());
  // Neither a directory nor a missing one is written.
  EXPECT_TRUE(failsWith(withArgs(kRandomRun, {"--output", "sum=" + dir.path()}),
                        "cannot write '" + dir.path() +
                            "': it is a directory, not a regular file, a FIFO "
                            "or a character device"));
  EXPECT_TRUE(failsWith(
      withArgs(kRandomRun, {"--output", "sum=" + dir.file("no/such.npy")}),
      "cannot create '" + dir.file("no/such.npy") +
          "': No such file or directory"));
}

//===----------------------------------------------------------------------===//
// Thread counts
//===----------------------------------------------------------------------===//

TEST_F(Cli, LowersThreadCountsToWhatTheMachineAllows) {
  // The alloc model runs an OpenMP loop, where libomp would abort on a
  // thread count it cannot start.
  const std::vector<std::string> args = {
      "--random-weights", "1", "--random-inputs", "2", "--dim", "n=300"};
  std::string max = std::to_string(seqc_max_threads());
  Result r = run(withArgs(args, {"--threads", "100000"}), SEQC_FAKE_ALLOC_CLI);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "warning: --threads 100000 is more than the " + max +
                       " processors this process may run on; using " + max +
                       "\n");
  {
    ScopedEnv threads("OMP_NUM_THREADS", "100000");
    r = run(args, SEQC_FAKE_ALLOC_CLI);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err, "warning: OMP_NUM_THREADS=100000 is more than the " + max +
                         " processors this process may run on; using " + max +
                         "\n");
    // --threads takes precedence.
    r = run(withArgs(args, {"--threads", "1"}), SEQC_FAKE_ALLOC_CLI);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err, "");
  }
  // Values libomp would abort on are dropped.
  for (const char *value : {"abc", "", "-1", "3x", "0", "4,", "2,,1"}) {
    ScopedEnv threads("OMP_NUM_THREADS", value);
    r = run(args, SEQC_FAKE_ALLOC_CLI);
    EXPECT_EQ(r.exitCode, 0) << value << ": " << r.err;
    EXPECT_EQ(r.err, std::string("warning: ignoring OMP_NUM_THREADS='") +
                         value +
                         "': it is not a positive thread count (or a "
                         "comma-separated list of them)\n");
  }
  ScopedEnv threads("OMP_NUM_THREADS", "1,1");
  r = run(args, SEQC_FAKE_ALLOC_CLI);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

//===----------------------------------------------------------------------===//
// Out of memory
//===----------------------------------------------------------------------===//

TEST_F(Cli, ReportsOutOfMemory) {
  const std::vector<std::string> args = {
      "--random-weights", "1", "--random-inputs", "2", "--dim", "n=1000000"};
  const std::string arena =
      "run: model 'alloc' ran out of memory: cannot allocate 7.63 MiB "
      "(8000000 bytes) for its arena (the intermediates its memory plan "
      "places): it would exceed the memory limit of 1.00 MiB (1048576 bytes)";
  EXPECT_TRUE(failsWith(withArgs(args, {"--max-memory", "1M"}), arena,
                        SEQC_FAKE_ALLOC_CLI));
  EXPECT_TRUE(failsWith(withArgs(args, {"--max-memory", "1M", "--bench", "2"}),
                        arena, SEQC_FAKE_ALLOC_CLI));
  {
    ScopedEnv limit("SEQC_MAX_MEMORY", "1MiB");
    EXPECT_TRUE(failsWith(args, arena, SEQC_FAKE_ALLOC_CLI));
    // The flag overrides the environment.
    EXPECT_EQ(run(withArgs(args, {"--max-memory", "1G"}), SEQC_FAKE_ALLOC_CLI)
                  .exitCode,
              0);
  }
  {
    ScopedEnv limit("SEQC_MAX_MEMORY", "lots");
    EXPECT_TRUE(failsWith(args,
                          "SEQC_MAX_MEMORY='lots' is not a size (bytes, or a "
                          "number with a suffix K, M, G or T: 512M, 4G)",
                          SEQC_FAKE_ALLOC_CLI));
  }
  EXPECT_TRUE(failsWith({"--max-memory", "1.5G"},
                        "--max-memory: '1.5G' is not a size"));
  EXPECT_TRUE(failsWith({"--max-memory", "0"}, "--max-memory: '0'"));
  // Scratch in the parallel loop, over the limit.
  ScopedEnv scratch("FAKE_ALLOC_SCRATCH_BYTES", "2097152");
  EXPECT_TRUE(failsWith({"--random-weights", "1", "--random-inputs", "2",
                         "--dim", "n=300", "--max-memory", "1M"},
                        "run: model 'alloc' ran out of memory inside a "
                        "parallel loop",
                        SEQC_FAKE_ALLOC_CLI));
}

TEST_F(Cli, ReportsOutOfMemoryUnderAnAddressSpaceLimit) {
#ifdef SEQC_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory: its "
                  "programs cannot start under ulimit -v";
#endif
  // 160 MB of input fit under 400 MB of address space; its 320 MB arena
  // does not, and is refused by the system.
  Result r =
      runShell(std::string("ulimit -v 400000 && exec ") + SEQC_FAKE_ALLOC_CLI +
               " --random-weights 1 --random-inputs 2 --dim "
               "n=40000000");
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(r.err, "error: run: model 'alloc' ran out of memory: cannot "
                   "allocate 305.18 MiB (320000000 bytes) for its arena (the "
                   "intermediates its memory plan places): the system has "
                   "no memory left for it\n");
}

} // namespace
