//===- Compiler.h - seqc's compiler for the Python package ------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The frontend and the lowering behind a plain C++ interface (standard types
// only), so that the Python binding (Module.cpp, built with RTTI and
// exceptions as pybind11 needs) never includes MLIR or LLVM headers, which
// are built without them.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_PYTHON_COMPILER_H
#define SEQC_PYTHON_COMPILER_H

#include <string>
#include <utility>
#include <vector>

namespace seqc::python {

/// One diagnostic the compiler reported, at its location in the source
/// (line and column 0 when it has none).
struct Diagnostic {
  std::string severity; // "error", "warning", "remark" or "note"
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
};

/// What to compile and how: the fields of seqc's command line.
struct CompileRequest {
  /// The .seq text and the name diagnostics give it.
  std::string source;
  std::string sourceName = "<string>";
  /// `--emit`'s spelling ("seq", "manifest", "linalg", "llvm-mlir", "ptx",
  /// "memory-plan", "llvm-ir", "asm", "header") or "shared-library".
  std::string emit = "shared-library";
  /// The library to write for "shared-library".
  std::string outputPath;
  std::string target = "cpu";
  int optLevel = 3;
  std::vector<std::pair<std::string, std::string>> defines;
  /// `--entry`: compile this entry of a model alone, as its one function;
  /// empty for every entry (the default entry first).
  std::string entry;
  std::string mcpu;
  std::string mattr;
  bool remarks = false;
  bool gpuInterpret = false;
  /// Where libseqc_runtime.a is (the link of "shared-library").
  std::string runtimeDir;
};

struct CompileResult {
  bool ok = false;
  /// The stage's text; empty for "shared-library".
  std::string text;
  std::vector<Diagnostic> diagnostics;
  /// Everything the compiler printed, as the CLI prints it: the diagnostics
  /// with their source lines, then messages from outside the IR (a bad
  /// `mcpu`, a failed link).
  std::string log;
};

/// Compiles `request`. Thread-safe (compilations run one at a time: the
/// messages of the link step are read from the process's stderr).
CompileResult compile(const CompileRequest &request);

} // namespace seqc::python

#endif // SEQC_PYTHON_COMPILER_H
