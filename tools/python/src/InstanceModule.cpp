//===- InstanceModule.cpp - the seqc._instance extension module -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The per-call path of a compiled model (Instance.h) in a module of its own,
// without the compiler: `import seqc` loads this one, and seqc._seqc (which
// loads libMLIR and libLLVM) only when something compiles, so that running a
// model library costs neither LLVM's load time nor its memory.
//
//===----------------------------------------------------------------------===//

#include "tools/python/src/Instance.h"

PYBIND11_MODULE(_instance, m) {
  m.doc() = "The per-call path of seqc models (use the seqc package, not "
            "this module)";
  seqc::python::registerInstance(m);
}
