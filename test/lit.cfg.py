# -*- Python -*- lit configuration of the seqc test suite.

import glob
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SEQC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".seq", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "Unit", "Fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.seqc_obj_root, "test")

# libomp registers each process in /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>
# and removes the file when the process ends. A process killed while it
# registers (a timeout, an interrupted run) leaves the file empty, and any
# later process that gets the same pid then aborts with "OMP: Error #15:
# Initializing libomp.so.5, but found unknown library already initialized"
# (pids wrap at 32768: a run of the suite starts more processes than that).
# Remove such files of processes that are gone before the tests start.
for path in glob.glob("/dev/shm/__KMP_REGISTERED_LIB_*_%d" % os.getuid()):
    try:
        pid = int(os.path.basename(path).rsplit("_", 2)[1])
        with open(path, "rb") as registration:
            empty = not registration.read().strip(b"\0")
        if empty and not os.path.exists("/proc/%d" % pid):
            os.remove(path)
    except (ValueError, IndexError, OSError):
        pass

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%seqc_src_root", config.seqc_src_root))
config.substitutions.append(("%seqc_lib_dir", config.seqc_lib_dir))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
# The fake CUDA driver of test/Unit/Runtime (FakeCuda.c), for GPU models.
config.substitutions.append(
    ("%fake_cuda", os.path.join(config.seqc_lib_dir, "fake-cuda", "libcuda.so.1")))
# Debian's torch/numpy live under the system interpreter, not pyenv's.
python = "/usr/bin/python3"
config.substitutions.append(("%python", python))

# `REQUIRES: torch`: the few tests that check PyTorch code itself (the
# benchmark's eager peers). The default bootstrap installs numpy, not torch;
# every other test's reference is NumPy. Suite/script-dependencies.test keeps
# each test's scripts within what the bootstrap installs or the test requires.
if subprocess.run([python, "-c", "import torch"], stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torch")

# `REQUIRES: host-<flag>`: the host CPU runs that ISA extension (the flags of
# /proc/cpuinfo: host-avx512f, host-avx512_bf16, host-avx512_vnni, ...), for
# run tests of kernels compiled for it; tests that only compile name the
# features with --mattr and run on every host.
cpu_flags = set()
try:
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("flags"):
                cpu_flags = set(line.split(":", 1)[1].split())
                break
except OSError:
    pass
for flag in cpu_flags:
    config.available_features.add("host-" + flag)

# SEQC_CXX: the sanitized build links models through a wrapper (runtime/).
# The Python package (tools/python), built where pybind11 was found and not
# in the sanitizer build (its extension would need ASan loaded first), and
# pytest to run its suite.
if (not os.environ.get("SEQC_CXX")
        and glob.glob(os.path.join(config.seqc_obj_root, "python", "seqc",
                                   "_seqc*.so"))
        and subprocess.run([python, "-c", "import pytest"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL).returncode == 0):
    config.available_features.add("python-package")
config.substitutions.append(("%seqc_obj_root", config.seqc_obj_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "SEQC_CXX"])
llvm_config.use_default_substitutions()

# `make test-sanitize` links models through $SEQC_CXX: executables there carry
# the static ASan runtime and model libraries the shared one, which cannot
# meet in one process (seqc-bench dlopens model libraries).
if os.environ.get("SEQC_CXX"):
    config.available_features.add("sanitized-models")
# The C++ driver that links programs against the runtime libraries, as seqc
# links models: the sanitized runtime needs the sanitizers' flags.
config.substitutions.append(("%seqc_cxx", os.environ.get("SEQC_CXX") or "clang++"))

# `REQUIRES: vnni`: tests that run VNNI's vpdpbusd on 256-bit vectors (the
# int8-activation kernels of quantized contractions): x86 hosts with
# AVX-VNNI, or with AVX512_VNNI and AVX512VL. The tests that only compile
# those kernels name the features with --mattr and run on any x86 host.
if "avx_vnni" in cpu_flags or {"avx512_vnni", "avx512vl"} <= cpu_flags:
    config.available_features.add("vnni")
# `REQUIRES: avx-vnni`: the VEX-encoded AVX-VNNI, which the kernels use on
# AVX2 targets (--mattr=-avx512f); Zen 4 and Ice Lake have AVX512_VNNI only.
if "avx_vnni" in cpu_flags:
    config.available_features.add("avx-vnni")

# The NVPTX target's tests assemble the PTX seqc emits with the CUDA
# toolkit's ptxas (there is no GPU to run it on: docs/gpu.md).
cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if os.path.exists(ptxas) and os.path.exists(
        os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%ptxas", ptxas))
    config.environment["CUDA_HOME"] = cuda_home

# `REQUIRES: mpi`: tensor-parallel models run under Open MPI's mpirun (the
# default bootstrap installs openmpi-bin and libopenmpi-dev). `%mpirun` runs
# N ranks on this machine whatever its cores (--oversubscribe), as root too
# (Open MPI refuses root without these two variables), and never waits
# forever on a job whose rank hangs.
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    config.substitutions.append(
        ("%mpirun", "timeout 300 " + mpirun + " --oversubscribe"))

tool_dirs = [config.seqc_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("seq-opt", unresolved="fatal"),
    ToolSubst("seqc", unresolved="fatal"),
    ToolSubst("mlir-runner", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.seqc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
