//===- Instance.h - running compiled models from Python ---------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The per-call path of the Python package: binding NumPy arrays as a model's
// inputs in place, running it with the GIL released, and handing its outputs
// out as NumPy arrays over the runtime's storage, with every runtime status
// raised as the package's exception. The runtime's functions are resolved
// from the model library that ctypes opened (each library carries its own
// runtime), so the extension links no runtime of its own.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_PYTHON_INSTANCE_H
#define SEQC_PYTHON_INSTANCE_H

#include <pybind11/pybind11.h>

namespace seqc::python {

/// Adds `Runtime` (the C API of one model library) and `Instance` (the
/// per-call path of one seqc_model, the base class of seqc.Model) to the
/// extension module `m` (seqc._instance). Looks up
/// NumPy's C API, so NumPy must be importable.
void registerInstance(pybind11::module_ &m);

} // namespace seqc::python

#endif // SEQC_PYTHON_INSTANCE_H
