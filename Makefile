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

# The compiler, runtime and tests built with AddressSanitizer and
# UndefinedBehaviorSanitizer in $(ASAN_BUILD_DIR), then lit and ctest there;
# compiled models link the sanitized runtime through bin/seqc-sanitized-cxx,
# and seqc verifies the IR after every pass (SEQC_VERIFY_EACH).
# Only our code is instrumented (Debian's libMLIR.so/libLLVM.so are not);
# ASan still intercepts their allocations. See docs/runtime.md.
ASAN_BUILD_DIR ?= build-asan
SANITIZE_ENV = \
  SEQC_CXX=$(abspath $(ASAN_BUILD_DIR))/bin/seqc-sanitized-cxx \
  ASAN_OPTIONS=$(SANITIZE_ASAN_OPTIONS) \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SANITIZE_ASAN_OPTIONS = detect_leaks=1:allow_user_poisoning=0:verify_asan_link_order=0

$(ASAN_BUILD_DIR)/build.ninja: | bootstrap
	cmake -S . -B $(ASAN_BUILD_DIR) $(CMAKE_FLAGS) \
	  "-DLLVM_USE_SANITIZER=Address;Undefined" \
	  "-DLLVM_UBSAN_FLAGS=-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all" \
	  -DSEQC_ENABLE_FUZZER=OFF -DSEQC_VERIFY_EACH=ON

# The fuzzers, sanitized in the ordinary build already, are not built here.
.PHONY: test-sanitize
test-sanitize: bootstrap $(ASAN_BUILD_DIR)/build.ninja
	ninja -C $(ASAN_BUILD_DIR) -j $(JOBS)
	$(SANITIZE_ENV) ninja -C $(ASAN_BUILD_DIR) check-seqc
	$(SANITIZE_ENV) ctest --test-dir $(ASAN_BUILD_DIR) --output-on-failure -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD_DIR)

docs: build
	ninja -C $(BUILD_DIR) seqc-doc

clean:
	rm -rf $(BUILD_DIR)
