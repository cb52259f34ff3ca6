//===- ParallelCliTest.cpp - A tensor-parallel executable under mpirun ----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Runs seqc_fake_parallel_cli (FakeParallelModel.c: y = w @ x split over 2
// ranks, all-reduced with MPI) under mpirun: MPI initialized by the
// runtime, each rank binding its columns of w from the whole tensor, the
// output written once, the job size checked, errors printed with their
// rank and ending the job. Built only where CMake found MPI and mpirun.
//
// In the sanitized build (make test-sanitize) the executable carries ASan
// and LSan: Open MPI's own allocations, which outlive MPI_Finalize, are
// suppressed by test/lsan-mpi.supp, and a rank's stderr must then hold no
// sanitizer report at all, whatever its exit status.
//
//===----------------------------------------------------------------------===//

#include "Safetensors.h"
#include "TestUtil.h"

#include <cstdlib>
#include <fcntl.h>

using namespace seqc;
using namespace seqc::test;

namespace {

using Result = ProcessResult;

class ParallelCli : public ::testing::Test {
protected:
  void SetUp() override {
    // Open MPI's mpirun refuses to run as root (containers, CI) without
    // these; --oversubscribe below lets 3 ranks start on fewer cores.
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    // For the sanitized build; nothing reads it in the ordinary one. Only
    // the processes run here get it, not this test program. The complete
    // stacks of fast_unwind_on_malloc=0 are what the suppressions match:
    // LSan's default unwinder stops inside libmpi (no frame pointers).
    static const std::string lsanOptions = [] {
      const char *given = std::getenv("LSAN_OPTIONS");
      std::string options = given && *given ? std::string(given) + ":" : "";
      return options + "suppressions=\"" SEQC_LSAN_MPI_SUPPRESSIONS
                       "\":fast_unwind_on_malloc=0:print_suppressions=0";
    }();
    setenv("LSAN_OPTIONS", lsanOptions.c_str(), 1);
    std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    weights = dir.file("w.safetensors");
    ASSERT_TRUE(isOk(writeSafetensors(
        weights.c_str(), {{"w", SEQC_DTYPE_F32, {3, 4}, w.data()}}, {})));
    std::vector<float> xs = {1, -1, 0.5f, 2};
    x = dir.file("x.npy");
    seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {4}, xs.data());
    ASSERT_TRUE(isOk(seqc_npy_write(x.c_str(), &tensor)));
  }

  /// Runs the model with `args` on `ranks` processes (0: without mpirun),
  /// bounded in time so that a hung job fails the test instead.
  Result run(int ranks, const std::string &args) {
    std::string command = "timeout 120 ";
    if (ranks > 0)
      command += std::string(SEQC_MPIEXEC) + " --oversubscribe -np " +
                 std::to_string(ranks) + " ";
    command += std::string(SEQC_FAKE_PARALLEL_CLI) + " " + args;
    std::string outPath = dir.file("stdout"), errPath = dir.file("stderr");
    Result result = waitProcess(
        spawnProcess({"/bin/sh", "-c", command}, outPath, errPath), outPath,
        errPath);
    // An expected failure must not hide a leak or an ASan/UBSan error (whose
    // exit status is a failure too).
    EXPECT_EQ(result.err.find("Sanitizer"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("runtime error:"), std::string::npos)
        << result.err;
    return result;
  }

  static size_t count(const std::string &text, const std::string &part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos;
         at = text.find(part, at + 1))
      ++n;
    return n;
  }

  TempDir dir;
  std::string weights, x;
};

TEST_F(ParallelCli, RunsOnTwoRanksAndWritesOnce) {
  std::string y = dir.file("y.npy");
  Result r = run(2, "--weights " + weights + " --input x=" + x +
                        " --output y=" + y);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  seqc_tensor tensor = {};
  ASSERT_TRUE(isOk(seqc_npy_read(y.c_str(), &tensor)));
  ASSERT_EQ(tensor.rank, 1);
  ASSERT_EQ(tensor.shape[0], 3);
  // w @ x, each rank having summed two columns.
  const float *values = static_cast<const float *>(tensor.data);
  EXPECT_EQ(values[0], 1 - 2 + 1.5f + 8);
  EXPECT_EQ(values[1], 5 - 6 + 3.5f + 16);
  EXPECT_EQ(values[2], 9 - 10 + 5.5f + 24);
  std::free(tensor.data);

  // Printed by rank 0 alone.
  r = run(2, "--weights " + weights + " --input x=" + x);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(count(r.out, "y: f32 [3]"), 1u) << r.out;
  EXPECT_EQ(count(r.out, "time: "), 1u) << r.out;
}

TEST_F(ParallelCli, NeedsTheRankCountItWasCompiledFor) {
  Result r = run(3, "--weights " + weights + " --input x=" + x);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("compiled for 2 ranks (--tensor-parallel=2) but runs "
                       "on 3 processes; start it with mpirun -np 2"),
            std::string::npos)
      << r.err;
  r = run(0, "--weights " + weights + " --input x=" + x);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("but runs on 1 process; start it with mpirun -np 2"),
            std::string::npos)
      << r.err;
}

TEST_F(ParallelCli, ErrorsNameTheRankAndEndTheJob) {
  Result r = run(2, "--weights " + weights + " --input x=" +
                        dir.file("missing.npy"));
  EXPECT_TRUE(r.exited);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.exitCode, 124) << "the job hung: " << r.err; // timeout's
  // Both ranks fail, but the first MPI_Abort may end the other rank before
  // it prints ("You may or may not see output from other processes", says
  // Open MPI): at least one rank's line, and every error line names its
  // rank.
  bool rank0 = r.err.find("rank 0: error: --input x=") != std::string::npos;
  bool rank1 = r.err.find("rank 1: error: --input x=") != std::string::npos;
  EXPECT_TRUE(rank0 || rank1) << r.err;
  EXPECT_EQ(r.err.find("\nerror: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.compare(0, 7, "error: "), 0) << r.err;
  // A whole tensor of the wrong shape, as every rank sees it.
  std::vector<float> small = {1, 2, 3, 4, 5, 6};
  std::string bad = dir.file("bad.safetensors");
  ASSERT_TRUE(isOk(writeSafetensors(
      bad.c_str(), {{"w", SEQC_DTYPE_F32, {3, 2}, small.data()}}, {})));
  r = run(2, "--weights " + bad + " --input x=" + x);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.exitCode, 124) << "the job hung: " << r.err;
  EXPECT_NE(r.err.find("expects the whole tensor [3, 4]"), std::string::npos)
      << r.err;
}

} // namespace
