//===- Compiler.cpp - seqc's compiler for the Python package -------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "tools/python/src/Compiler.h"

#include "dialect/Seq/IR/SeqDialect.h"
#include "frontend/ImportDSL.h"
#include "lowering/Compile.h"
#include "lowering/TargetInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <unistd.h>

using namespace mlir;
using seqc::python::CompileRequest;
using seqc::python::CompileResult;

namespace {

std::optional<seq::EmitKind> parseEmit(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<seq::EmitKind>>(name)
      .Case("seq", seq::EmitKind::Seq)
      .Case("manifest", seq::EmitKind::Manifest)
      .Case("linalg", seq::EmitKind::Linalg)
      .Case("llvm-mlir", seq::EmitKind::LLVMMLIR)
      .Case("ptx", seq::EmitKind::PTX)
      .Case("memory-plan", seq::EmitKind::MemoryPlan)
      .Case("llvm-ir", seq::EmitKind::LLVMIR)
      .Case("asm", seq::EmitKind::Assembly)
      .Case("header", seq::EmitKind::Header)
      .Case("shared-library", seq::EmitKind::SharedLibrary)
      .Default(std::nullopt);
}

/// Sends what the process writes to its stderr (file descriptor 2: LLVM's
/// errs(), the linker) to a temporary file while it lives, and hands the
/// text back: the messages that are not diagnostics of the IR.
class StderrCapture {
public:
  StderrCapture() {
    std::fflush(stderr);
    file = std::tmpfile();
    saved = file ? ::dup(2) : -1;
    if (saved >= 0)
      ::dup2(::fileno(file), 2);
  }
  std::string finish() {
    std::string text;
    if (saved < 0)
      return text;
    std::fflush(stderr);
    llvm::errs().flush();
    ::dup2(saved, 2);
    ::close(saved);
    saved = -1;
    std::rewind(file);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
      text.append(buffer, n);
    return text;
  }
  ~StderrCapture() {
    finish();
    if (file)
      std::fclose(file);
  }

private:
  std::FILE *file = nullptr;
  int saved = -1;
};

const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  return "error";
}

void recordDiagnostic(mlir::Diagnostic &diag, CompileResult &result) {
  seqc::python::Diagnostic record;
  record.severity = severityName(diag.getSeverity());
  record.message = diag.str();
  if (auto loc = dyn_cast<FileLineColLoc>(diag.getLocation())) {
    record.file = loc.getFilename().str();
    record.line = loc.getLine();
    record.column = loc.getColumn();
  } else if (auto fused = dyn_cast<FusedLoc>(diag.getLocation())) {
    for (Location inner : fused.getLocations())
      if (auto loc = dyn_cast<FileLineColLoc>(inner)) {
        record.file = loc.getFilename().str();
        record.line = loc.getLine();
        record.column = loc.getColumn();
        break;
      }
  }
  result.diagnostics.push_back(std::move(record));
}

} // namespace

CompileResult seqc::python::compile(const CompileRequest &request) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  CompileResult result;
  std::string log;
  llvm::raw_string_ostream logStream(log);
  auto fail = [&](const std::string &message) {
    result.log = "seqc: error: " + message + "\n";
    result.diagnostics.push_back({"error", "", 0, 0, message});
    return result;
  };

  std::optional<seq::EmitKind> emit = parseEmit(request.emit);
  if (!emit)
    return fail("'" + request.emit + "' is not a stage to emit");
  std::optional<seq::SeqTarget> target = seq::parseSeqTarget(request.target);
  if (!target)
    return fail("'" + request.target +
                "' is not a target (expected 'cpu' or 'nvptx')");
  if (request.optLevel < 0 || request.optLevel > 3)
    return fail("opt_level must be 0, 1, 2 or 3, got " +
                std::to_string(request.optLevel));

  seq::FrontendOptions frontend;
  frontend.hyperOverrides = request.defines;
  frontend.entry = request.entry;
  seq::CompileOptions options;
  options.emit = *emit;
  options.outputPath = request.outputPath;
  options.sourceName = request.sourceName;
  options.pipeline.target = *target;
  options.pipeline.optLevel = request.optLevel;
  options.pipeline.remarks = request.remarks;
  options.pipeline.gpuInterpret = request.gpuInterpret;
  options.pipeline.runtimeAllocator = true;
  options.codegen.cpu = request.mcpu;
  options.codegen.features = request.mattr;
  options.link.runtimeDir = request.runtimeDir;

  DialectRegistry registry;
  registry.insert<seq::SeqDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A compilation of a model is already parallel at the level of its
  // callers; MLIR's own thread pool would only add threads per call.
  context.disableMultithreading();

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(request.source, request.sourceName),
      llvm::SMLoc());
  // The handler registered last runs first: record each diagnostic, then
  // let the SourceMgr handler print it as the CLI does.
  SourceMgrDiagnosticHandler printer(sourceMgr, &context, logStream);
  ScopedDiagnosticHandler recorder(&context, [&](mlir::Diagnostic &diag) {
    recordDiagnostic(diag, result);
    return failure();
  });

  std::string text;
  llvm::raw_string_ostream textStream(text);
  StderrCapture capture;
  bool ok = false;
  if (succeeded(seq::verifyCompileOptions(options))) {
    // Every entry of the model (or `request.entry` alone), as seqc does.
    FailureOr<seq::SeqEntryModules> entries =
        seq::importSeqEntries(sourceMgr, context, frontend);
    if (succeeded(entries)) {
      SmallVector<ModuleOp> modules;
      for (OwningOpRef<ModuleOp> &entry : entries->modules)
        modules.push_back(*entry);
      ok = succeeded(
          seq::compileEntries(modules, entries->names, options, textStream));
    }
  }
  std::string other = capture.finish();
  logStream.flush();
  textStream.flush();
  result.ok = ok;
  result.text = std::move(text);
  result.log = log + other;
  // Messages from outside the IR ("seqc: error: ..."), as diagnostics
  // without a location.
  llvm::StringRef rest(other);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    size_t at = line.find("error: ");
    if (at != llvm::StringRef::npos)
      result.diagnostics.push_back(
          {"error", "", 0, 0, line.substr(at + 7).str()});
  }
  if (!ok && result.diagnostics.empty())
    result.diagnostics.push_back({"error", "", 0, 0, "compilation failed"});
  return result;
}
