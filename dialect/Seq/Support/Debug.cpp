//===- Debug.cpp - -debug and -debug-only with a release LLVM -------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"

#if !SEQC_LLVM_HAS_DEBUG_OPTIONS

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

using namespace llvm;

namespace mlir {
namespace seq {

bool debugFlag = false;

namespace {
/// The DEBUG_TYPEs `-debug-only` names; empty with `-debug`.
std::vector<std::string> &debugTypes() {
  static std::vector<std::string> types;
  return types;
}

struct DebugOnlyParser {
  void operator=(const std::string &value) const {
    if (value.empty())
      return;
    debugFlag = true;
    SmallVector<StringRef> names;
    StringRef(value).split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (StringRef name : names)
      debugTypes().push_back(name.trim().str());
  }
};
DebugOnlyParser debugOnlyParser;

cl::opt<bool, /*ExternalStorage=*/true>
    debugOption("debug", cl::desc("Print the debug trace of every pass"),
                cl::location(debugFlag), cl::Hidden);

cl::opt<DebugOnlyParser, /*ExternalStorage=*/true, cl::parser<std::string>>
    debugOnlyOption(
        "debug-only",
        cl::desc("Print the debug trace of the passes whose DEBUG_TYPE is in "
                 "this comma-separated list"),
        cl::value_desc("debug string"), cl::location(debugOnlyParser),
        cl::ValueRequired, cl::Hidden);
} // namespace

bool isDebugTypeEnabled(const char *type) {
  if (debugTypes().empty())
    return true;
  return llvm::is_contained(debugTypes(), type);
}

} // namespace seq
} // namespace mlir

#endif // !SEQC_LLVM_HAS_DEBUG_OPTIONS
