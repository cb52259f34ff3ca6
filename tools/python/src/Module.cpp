//===- Module.cpp - the seqc._seqc extension module ----------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The compiler half of the Python package: `seqc._seqc.compile` runs the
// frontend and the lowering in process (Compiler.h) with the GIL released.
// Running a compiled model goes through the C API of the runtime that the
// model's shared library carries (the seqc._instance module and
// tools/python/seqc/_runtime.py), so that this module needs no runtime of its
// own.
//
//===----------------------------------------------------------------------===//

#include "tools/python/src/Compiler.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using seqc::python::CompileRequest;
using seqc::python::CompileResult;

#ifndef SEQC_DEFAULT_RUNTIME_DIR
#define SEQC_DEFAULT_RUNTIME_DIR ""
#endif
#ifndef SEQC_EXAMPLES_DIR
#define SEQC_EXAMPLES_DIR ""
#endif

static py::dict
compileEntry(const std::string &source, const std::string &sourceName,
             const std::string &emit, const std::string &outputPath,
             const std::string &target, int optLevel,
             const std::vector<std::pair<std::string, std::string>> &defines,
             const std::string &mcpu, const std::string &mattr, bool remarks,
             bool gpuInterpret, const std::string &runtimeDir,
             const std::string &entry) {
  CompileRequest request;
  request.source = source;
  request.sourceName = sourceName;
  request.emit = emit;
  request.outputPath = outputPath;
  request.target = target;
  request.optLevel = optLevel;
  request.defines = defines;
  request.mcpu = mcpu;
  request.mattr = mattr;
  request.remarks = remarks;
  request.gpuInterpret = gpuInterpret;
  request.runtimeDir = runtimeDir;
  request.entry = entry;
  CompileResult result;
  {
    py::gil_scoped_release release;
    result = seqc::python::compile(request);
  }
  py::list diagnostics;
  for (const seqc::python::Diagnostic &diag : result.diagnostics)
    diagnostics.append(py::make_tuple(diag.severity, diag.file, diag.line,
                                      diag.column, diag.message));
  py::dict out;
  out["ok"] = result.ok;
  out["text"] = py::bytes(result.text);
  out["log"] = result.log;
  out["diagnostics"] = diagnostics;
  return out;
}

PYBIND11_MODULE(_seqc, m) {
  m.doc() = "seqc's compiler, in process (use the seqc package, not this "
            "module)";
  // The build tree's runtime libraries and examples; an installed package
  // has its own copies beside it (seqc/lib, seqc/examples).
  m.attr("DEFAULT_RUNTIME_DIR") = SEQC_DEFAULT_RUNTIME_DIR;
  m.attr("EXAMPLES_DIR") = SEQC_EXAMPLES_DIR;
  m.def("compile", &compileEntry, py::arg("source"), py::arg("source_name"),
        py::arg("emit"), py::arg("output_path"), py::arg("target"),
        py::arg("opt_level"), py::arg("defines"), py::arg("mcpu"),
        py::arg("mattr"), py::arg("remarks"), py::arg("gpu_interpret"),
        py::arg("runtime_dir"), py::arg("entry") = "",
        "Compiles .seq source; returns {'ok', 'text', 'log', "
        "'diagnostics'}.");
}
