# seqc: the two entry points of the README, plus the steps they chain.
#   make demo   compile examples/gpt.seq to a native binary and run it
#   make test   the whole test suite (lit + ctest)
#   make bench  the benchmark programs and model libraries (bench/); then
#               bench/compare runs seqc against its peers (docs/performance.md)
# Both install what is missing (scripts/bootstrap.sh), configure and build.

BUILD_DIR ?= build
BUILD_TYPE ?= Release
LLVM_PREFIX ?= /usr/lib/llvm-22
JOBS ?= $(shell nproc)

CMAKE_FLAGS = -G Ninja \
  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
  -DLLVM_DIR=$(LLVM_PREFIX)/lib/cmake/llvm \
  -DCMAKE_C_COMPILER=$(LLVM_PREFIX)/bin/clang \
  -DCMAKE_CXX_COMPILER=$(LLVM_PREFIX)/bin/clang++ \
  -DLLVM_USE_LINKER=lld

.PHONY: all bootstrap configure build test check-lit check-unit demo docs bench clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

$(BUILD_DIR)/build.ninja: | bootstrap
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

configure: bootstrap $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

check-lit: build
	ninja -C $(BUILD_DIR) check-seqc

check-unit: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# lit first, then ctest, whose summary line closes the run.
test: build
	ninja -C $(BUILD_DIR) check-seqc
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# Also what bench/compare's Debian peers need (PyTorch 1.13, OpenBLAS, BLIS,
# tcmalloc, matplotlib); the PyPI peers come from bench/setup-peers.sh.
bench: build
	@bash scripts/bootstrap.sh --bench
	ninja -C $(BUILD_DIR) bench

demo: build
	@bash scripts/demo.sh $(BUILD_DIR)

docs: build
	ninja -C $(BUILD_DIR) seqc-doc

clean:
	rm -rf $(BUILD_DIR)
