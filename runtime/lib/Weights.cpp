//===- Weights.cpp - Binding, generating and saving parameters -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_model_load_weights (a checkpoint, one safetensors file or the shards
// of an index, checked against the manifest, bound in place where aligned
// and converted where the dtypes differ and the values stay exact; tensors
// that are not parameters skipped on request), seqc_model_random_weights,
// seqc_model_set_param/get_param and seqc_model_save_weights.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "Gguf.h"
#include "Json.h"
#include "Model.h"
#include "Quantize.h"
#include "Random.h"
#include "Safetensors.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <fnmatch.h>
#include <iterator>
#include <memory>
#include <strings.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace seqc;

namespace {

/// Lists up to a few names for "missing N parameters: 'a', 'b', ...".
std::string listSome(const std::vector<std::string> &names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i == 5) {
      text += ", ... (" + std::to_string(names.size() - 5) + " more)";
      break;
    }
    text += (i ? ", '" : "'") + names[i] + "'";
  }
  return text;
}

/// Whether `name`, a tensor that is not a parameter, is to be skipped.
bool shouldSkip(const seqc_weights_options &options, const std::string &name) {
  if (options.skip_unused)
    return true;
  for (size_t i = 0; i < options.num_skip_patterns; ++i)
    if (::fnmatch(options.skip_patterns[i], name.c_str(), 0) == 0)
      return true;
  return false;
}

/// The conversions on load that keep every value exact: narrower floats to
/// wider ones, I32 to I64.
bool isExactConversion(seqc_dtype from, seqc_dtype to) {
  bool toWide = to == SEQC_DTYPE_F32 || to == SEQC_DTYPE_F64;
  switch (from) {
  case SEQC_DTYPE_BF16:
  case SEQC_DTYPE_F16:
    return toWide;
  case SEQC_DTYPE_F32:
    return to == SEQC_DTYPE_F64;
  case SEQC_DTYPE_I32:
    return to == SEQC_DTYPE_I64;
  default:
    return false;
  }
}

/// Converts `numel` elements (`isExactConversion`); `source` may be
/// unaligned (a tensor in the mapped file).
void convertElements(const uint8_t *source, seqc_dtype from, void *dest,
                     seqc_dtype to, size_t numel) {
  size_t fromSize = seqc_dtype_size(from);
  for (size_t i = 0; i < numel; ++i) {
    const uint8_t *element = source + i * fromSize;
    if (from == SEQC_DTYPE_I32) {
      int32_t v;
      std::memcpy(&v, element, sizeof(v));
      static_cast<int64_t *>(dest)[i] = v;
      continue;
    }
    double v;
    if (from == SEQC_DTYPE_F32) {
      float f;
      std::memcpy(&f, element, sizeof(f));
      v = f;
    } else {
      uint16_t bits;
      std::memcpy(&bits, element, sizeof(bits));
      v = from == SEQC_DTYPE_BF16 ? bfloat16ToFloat(bits) : halfToFloat(bits);
    }
    if (to == SEQC_DTYPE_F32)
      static_cast<float *>(dest)[i] = static_cast<float>(v);
    else
      static_cast<double *>(dest)[i] = v;
  }
}


/// A tensor of a checkpoint, whatever its format, under the name of the
/// parameter it binds to.
struct SourceTensor {
  /// The parameter name it binds to, and its name in the file (the two
  /// differ for GGUF files, whose names are mapped).
  std::string name, fileName;
  const char *file = "";
  /// The dtype as the file spells it ("BF16", "Q8_0").
  std::string dtypeName;
  /// False for a dtype or ggml type seqc does not load.
  bool supported = true;
  /// The element type, unless `ggmlType` names a block format.
  seqc_dtype dtype = SEQC_DTYPE_F32;
  uint32_t ggmlType = kNoGgmlType;
  std::vector<int64_t> shape; ///< Row-major.
  const uint8_t *data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<void> mapping;
  /// > 0: the rows are in llama.cpp's RoPE order for this many heads
  /// (convert_hf_to_gguf.py's permute), to be undone.
  int64_t ropeHeads = 0;
  /// What the message about a wrong shape adds (GGUF's ne).
  std::string shapeNote;
  bool fromGguf = false;
  /// A sharded parameter's slice (tensor parallelism; sliceForRank):
  /// `shape` and `bytes` are this rank's slice, `whole*` the file's
  /// tensor. Where the slice is one run of the tensor's bytes (along axis
  /// 0), `data` points to it, and `rowOffset` is its first row (RoPE's
  /// order is over the whole tensor's rows). Otherwise (`gatherAxis` >= 0)
  /// `data` is the whole tensor's, and gatherSlice copies the slice: on
  /// each index before the axis, `shape[gatherAxis]` indices from
  /// `gatherBegin`.
  bool sliced = false;
  const uint8_t *wholeData = nullptr;
  size_t wholeBytes = 0;
  std::vector<int64_t> wholeShape;
  int64_t rowOffset = 0;
  int gatherAxis = -1;
  int64_t gatherBegin = 0;

  static constexpr uint32_t kNoGgmlType = UINT32_MAX;
  bool isBlockFormat() const { return ggmlType != kNoGgmlType; }
  /// "'blk.0.attn_q.weight' (parameter 'model...')" or "'name'".
  std::string describe() const {
    std::string text = "'" + printableText(fileName) + "'";
    if (fileName != name)
      text += " (parameter '" + printableText(name) + "')";
    return text;
  }
};

/// How a tensor becomes a parameter's bytes.
enum class Binding {
  /// The file's bytes, in place (the mapping stays alive).
  InPlace,
  /// The file's bytes, copied (unaligned in the file).
  Copy,
  /// Converted element by element: a wider dtype, a block format
  /// dequantized, or rows reordered.
  Convert,
  /// A float tensor quantized into the blocks of the parameter's format.
  Quantize,
};

/// The one place that decides how `tensor` binds to `spec`'s parameter,
/// after the shapes matched: its bytes as they are where the parameter
/// stores the same format, else a conversion that is exact (a wider
/// float) or a dequantization into a float parameter; anything else is an
/// error naming both.
seqc_status *chooseBinding(const SourceTensor &tensor, const ValueSpec &spec,
                           Binding *out) {
  if (!tensor.supported && !tensor.fromGguf)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': parameter '%s' is %s in the file, a dtype "
                      "seqc does not compute with (it loads F32, F64, "
                      "F16, BF16, I32 and I64)",
                      tensor.file, spec.name.c_str(),
                      printableText(tensor.dtypeName).c_str());
  if (!tensor.supported)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': tensor %s is of ggml type %s, which seqc does "
                      "not load (it loads F32, F16, BF16, F64, I32 and I64, "
                      "and dequantizes Q8_0, Q4_0 and Q4_1 into float "
                      "parameters)",
                      tensor.file, tensor.describe().c_str(),
                      tensor.dtypeName.c_str());
  if (isBlockDType(spec.dtype)) {
    // A parameter stored in blocks (`weight_format=`): a GGUF tensor of
    // the same format binds as it is; a float tensor is quantized.
    if (tensor.isBlockFormat()) {
      if (ggmlTypeOfDType(spec.dtype) != tensor.ggmlType)
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': tensor %s is %s, but the model stores "
                          "parameter '%s' as %s; seqc does not convert "
                          "between block formats (declare "
                          "weight_format=\"%s\" or use another file)",
                          tensor.file, tensor.describe().c_str(),
                          tensor.dtypeName.c_str(), spec.name.c_str(),
                          seqc_dtype_name(spec.dtype),
                          tensor.dtypeName == "Q8_0"   ? "q8_0"
                          : tensor.dtypeName == "Q4_0" ? "q4_0"
                                                       : "q4_1");
      *out = tensor.ropeHeads > 0                  ? Binding::Convert
             : tensor.bytes && tensor.gatherAxis < 0 ? Binding::InPlace
                                                     : Binding::Copy;
      return nullptr;
    }
    if (tensor.dtype != SEQC_DTYPE_F32 && tensor.dtype != SEQC_DTYPE_BF16 &&
        tensor.dtype != SEQC_DTYPE_F16)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': parameter '%s' is stored as %s by the model "
                        "and is quantized on load from an F32, BF16 or F16 "
                        "tensor, but the file has %s",
                        tensor.file, spec.name.c_str(),
                        seqc_dtype_name(spec.dtype),
                        safetensorsDTypeName(tensor.dtype));
    *out = Binding::Quantize;
    return nullptr;
  }
  if (tensor.isBlockFormat()) {
    if (!isFloatDType(spec.dtype))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': tensor %s is %s, which seqc dequantizes only "
                        "into float parameters, but the model declares %s",
                        tensor.file, tensor.describe().c_str(),
                        tensor.dtypeName.c_str(), seqc_dtype_name(spec.dtype));
    *out = Binding::Convert;
    return nullptr;
  }
  if (tensor.dtype != spec.dtype) {
    if (!isExactConversion(tensor.dtype, spec.dtype))
      return makeStatus(
          SEQC_STATUS_INVALID_FILE,
          "'%s': parameter '%s' is %s in the file but the model expects "
          "%s, and seqc converts only where the values stay exact (BF16 "
          "and F16 to F32 or F64, F32 to F64, I32 to I64): declare the "
          "parameter with dtype=\"%s\" or convert the file",
          tensor.file, spec.name.c_str(), safetensorsDTypeName(tensor.dtype),
          safetensorsDTypeName(spec.dtype), seqc_dtype_name(tensor.dtype));
    *out = Binding::Convert;
    return nullptr;
  }
  auto address = reinterpret_cast<uintptr_t>(tensor.data);
  if (tensor.ropeHeads > 0)
    *out = Binding::Convert;
  else if (tensor.bytes && tensor.gatherAxis < 0 &&
           address % seqc_dtype_size(tensor.dtype) == 0)
    *out = Binding::InPlace; // The generated code assumes element alignment.
  else
    *out = Binding::Copy;
  return nullptr;
}

/// The source row of destination row `row` of a tensor whose rows
/// llama.cpp's converter permuted for RoPE: it reshapes the rows to
/// [heads, 2, head_dim / 2] and swaps the last two axes, so that row
/// h * head_dim + j * head_dim / 2 + i of the Hugging Face tensor is row
/// h * head_dim + 2 * i + j of the file.
int64_t ropeSourceRow(int64_t row, int64_t rows, int64_t heads) {
  if (heads <= 0)
    return row;
  int64_t headDim = rows / heads, half = headDim / 2;
  int64_t h = row / headDim, within = row % headDim;
  int64_t j = within / half, i = within % half;
  return h * headDim + 2 * i + j;
}

/// Stores `count` floats as `to` elements at `dest`.
void storeFloats(const float *values, seqc_dtype to, uint8_t *dest,
                 size_t count) {
  for (size_t i = 0; i < count; ++i) {
    switch (to) {
    case SEQC_DTYPE_F32:
      std::memcpy(dest + 4 * i, &values[i], 4);
      break;
    case SEQC_DTYPE_F64: {
      double v = values[i];
      std::memcpy(dest + 8 * i, &v, 8);
      break;
    }
    case SEQC_DTYPE_F16: {
      uint16_t bits = floatToHalf(values[i]);
      std::memcpy(dest + 2 * i, &bits, 2);
      break;
    }
    default: {
      uint16_t bits = floatToBFloat16(values[i]);
      std::memcpy(dest + 2 * i, &bits, 2);
      break;
    }
    }
  }
}

/// Fills `dest`, a `to` buffer of the tensor's shape, from the tensor:
/// row by row (the innermost dimension), converting each row and taking
/// the rows in RoPE source order when the tensor has them permuted.
void convertTensor(const SourceTensor &tensor, seqc_dtype to, uint8_t *dest,
                   size_t numel) {
  if (numel == 0)
    return;
  if (tensor.ropeHeads > 0 && tensor.shape.size() == 1) {
    // A bias: its elements are the rows. Converted in the file's order,
    // then reordered; a slice's elements are among the whole bias' (RoPE's
    // order is over its rows, not the slice's).
    SourceTensor inOrder = tensor;
    inOrder.ropeHeads = 0;
    size_t wholeNumel = numel;
    if (tensor.sliced) {
      inOrder.sliced = false;
      inOrder.data = tensor.wholeData;
      inOrder.bytes = tensor.wholeBytes;
      inOrder.shape = tensor.wholeShape;
      wholeNumel = static_cast<size_t>(tensor.wholeShape[0]);
    }
    size_t elementSize = seqc_dtype_size(to);
    std::vector<uint8_t> converted(wholeNumel * elementSize);
    convertTensor(inOrder, to, converted.data(), wholeNumel);
    for (size_t i = 0; i < numel; ++i)
      std::memcpy(dest + i * elementSize,
                  converted.data() +
                      static_cast<size_t>(ropeSourceRow(
                          tensor.rowOffset + static_cast<int64_t>(i),
                          static_cast<int64_t>(wholeNumel), tensor.ropeHeads)) *
                          elementSize,
                  elementSize);
    return;
  }
  size_t rowElems = tensor.shape.empty()
                        ? 1
                        : static_cast<size_t>(tensor.shape.back());
  if (rowElems == 0)
    return;
  size_t rows = numel / rowElems;
  size_t sourceRowBytes = tensor.bytes / rows;
  size_t destRowBytes = isBlockDType(to) ? sourceRowBytes
                                         : rowElems * seqc_dtype_size(to);
  std::vector<float> scratch(tensor.isBlockFormat() ? rowElems : 0);
  // A slice along axis 0 takes its rows in RoPE's order over the whole
  // tensor's: row `row` is the whole tensor's row rowOffset + row, which
  // may come from a row outside the slice (still in the mapping).
  int64_t wholeRows = tensor.sliced && tensor.gatherAxis < 0 &&
                              !tensor.wholeShape.empty()
                          ? tensor.wholeShape[0]
                          : static_cast<int64_t>(rows);
  for (size_t row = 0; row < rows; ++row) {
    int64_t from =
        ropeSourceRow(tensor.rowOffset + static_cast<int64_t>(row), wholeRows,
                      tensor.ropeHeads) -
        tensor.rowOffset;
    const uint8_t *source =
        tensor.data + static_cast<ptrdiff_t>(from) *
                          static_cast<ptrdiff_t>(sourceRowBytes);
    uint8_t *target = dest + row * destRowBytes;
    if (tensor.isBlockFormat() && isBlockDType(to)) {
      std::memcpy(target, source, sourceRowBytes);
    } else if (tensor.isBlockFormat()) {
      dequantizeGgmlRow(tensor.ggmlType, source, scratch.data(), rowElems);
      storeFloats(scratch.data(), to, target, rowElems);
    } else if (tensor.dtype == to) {
      std::memcpy(target, source, destRowBytes);
    } else {
      convertElements(source, tensor.dtype, target, to, rowElems);
    }
  }
}

/// Quantizes `tensor` (F32, BF16 or F16, `numel` elements whose rows are a
/// multiple of 32 long for the GGUF formats, as the shape check against the
/// manifest ensures) into `dest`, `bytes` holding `to`'s blocks, row by
/// row, with llama.cpp's reference rounding (int8: per-row symmetric,
/// Quantize.h).
void quantizeTensor(const SourceTensor &tensor, seqc_dtype to, int64_t numel,
                    size_t bytes, uint8_t *dest) {
  size_t row = tensor.shape.empty() ? 0 : static_cast<size_t>(tensor.shape.back());
  if (numel == 0 || row == 0)
    return;
  std::vector<float> values(static_cast<size_t>(numel));
  convertTensor(tensor, SEQC_DTYPE_F32,
                reinterpret_cast<uint8_t *>(values.data()),
                static_cast<size_t>(numel));
  size_t rows = static_cast<size_t>(numel) / row;
  size_t rowBytes = bytes / rows;
  for (size_t r = 0; r < rows; ++r)
    quantizeRows(to, values.data() + r * row, dest + r * rowBytes, row, row);
}

/// Copies `count` of the `units` units (`unitBytes` each) from unit `begin`
/// of each of `outer` runs of `source` into `dest`, one after another: a
/// slice along one axis of a row-major tensor.
void gatherRuns(const uint8_t *source, int64_t outer, int64_t units,
                int64_t begin, int64_t count, size_t unitBytes,
                uint8_t *dest) {
  size_t run = static_cast<size_t>(count) * unitBytes;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dest + static_cast<size_t>(o) * run,
                source + static_cast<size_t>(o * units + begin) * unitBytes,
                run);
}

/// How a tensor's bytes divide along `axis` (row-major, `bytes` in all):
/// `outer` runs (the product of the dimensions before it), each of
/// `units` units of `unitBytes`, a unit being `unit` indices along the
/// axis: 32 on a block format's last axis (its blocks), else 1.
struct AxisLayout {
  int64_t outer = 1, units = 0, unit = 1;
  size_t unitBytes = 0;
};

AxisLayout axisLayout(const std::vector<int64_t> &shape, size_t bytes,
                      bool blocks, int axis) {
  AxisLayout layout;
  for (int d = 0; d < axis; ++d)
    layout.outer *= shape[static_cast<size_t>(d)];
  layout.unit = blocks && axis + 1 == static_cast<int>(shape.size()) ? 32 : 1;
  layout.units = shape[static_cast<size_t>(axis)] / layout.unit;
  if (layout.outer * layout.units > 0)
    layout.unitBytes =
        bytes / static_cast<size_t>(layout.outer * layout.units);
  return layout;
}

/// Copies the bytes of a strided slice (`gatherAxis` >= 0), in the file's
/// format, into `dest` (`tensor.bytes`).
void copySlice(const SourceTensor &tensor, uint8_t *dest) {
  AxisLayout layout = axisLayout(tensor.wholeShape, tensor.wholeBytes,
                                 tensor.isBlockFormat(), tensor.gatherAxis);
  gatherRuns(tensor.wholeData, layout.outer, layout.units,
             tensor.gatherBegin / layout.unit,
             tensor.shape[static_cast<size_t>(tensor.gatherAxis)] / layout.unit,
             layout.unitBytes, dest);
}

/// The bytes of a strided slice (`gatherAxis` >= 0) in the file's format,
/// as a tensor of the slice's shape that owns them.
SourceTensor gatherSlice(const SourceTensor &tensor,
                         std::vector<uint8_t> *storage) {
  storage->resize(tensor.bytes);
  copySlice(tensor, storage->data());
  SourceTensor gathered = tensor;
  gathered.sliced = false;
  gathered.gatherAxis = -1;
  gathered.rowOffset = 0;
  gathered.data = storage->data();
  return gathered;
}

/// Fills `dest` (`bytes`) with the parameter of `to` the tensor binds to
/// by `binding` (not in place): copied, converted or quantized. Then the
/// tensor's pages leave the resident set (the mapping stays for the next
/// time: RecomputableBytes). A sharded parameter's tensor is its rank's
/// slice: only that is copied or computed, again each time.
void fillFromTensor(const SourceTensor &tensor, Binding binding, seqc_dtype to,
                    int64_t numel, size_t bytes, uint8_t *dest) {
  if (tensor.gatherAxis >= 0) {
    // The slice's bytes in the file's format (straight into `dest` when
    // that is all), then converted or quantized as a tensor of its own.
    std::vector<uint8_t> storage;
    if (binding == Binding::Copy) {
      copySlice(tensor, dest);
    } else {
      fillFromTensor(gatherSlice(tensor, &storage), binding, to, numel, bytes,
                     dest);
    }
    dropMappedPages(tensor.wholeData, tensor.wholeBytes);
    return;
  }
  switch (binding) {
  case Binding::InPlace:
  case Binding::Copy:
    if (tensor.bytes)
      std::memcpy(dest, tensor.data, tensor.bytes);
    break;
  case Binding::Convert:
    convertTensor(tensor, to, dest, static_cast<size_t>(numel));
    break;
  case Binding::Quantize:
    quantizeTensor(tensor, to, numel, bytes, dest);
    break;
  }
  dropMappedPages(tensor.data, tensor.bytes);
}

/// A tensor reported to on_dequantized once the load succeeded.
struct Dequantized {
  const SourceTensor *tensor;
  seqc_dtype dtype;
};

/// The slice of `tensor` (the whole of a sharded parameter, in the file)
/// that rank `rank` of `ranks` binds to `spec`: along the parameter's shard
/// axis, `spec.shape[axis]` indices from rank * that. Along axis 0 (or
/// where only unit dimensions precede the axis) the slice is one run of
/// the tensor's bytes, bound in place like a whole tensor; along another,
/// fillFromTensor gathers it. A block format's last axis divides only
/// into whole blocks.
seqc_status *sliceForRank(const SourceTensor &tensor, const ValueSpec &spec,
                          int rank, int ranks, SourceTensor *out) {
  int axis = spec.shardAxis;
  int64_t count = spec.shape[axis];
  AxisLayout layout =
      axisLayout(tensor.shape, tensor.bytes, tensor.isBlockFormat(), axis);
  if (count % layout.unit != 0)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': tensor %s is %s, whose last axis holds blocks "
                      "of 32 values, but parameter '%s' is split along it "
                      "over %d ranks into slices of %lld, not a whole "
                      "number of blocks",
                      tensor.file, tensor.describe().c_str(),
                      tensor.dtypeName.c_str(), spec.name.c_str(), ranks,
                      static_cast<long long>(count));
  int64_t begin = count * rank;
  SourceTensor slice = tensor;
  slice.sliced = true;
  slice.wholeData = tensor.data;
  slice.wholeBytes = tensor.bytes;
  slice.wholeShape = tensor.shape;
  slice.shape.assign(spec.shape, spec.shape + spec.rank);
  size_t run = static_cast<size_t>(count / layout.unit) * layout.unitBytes;
  slice.bytes = static_cast<size_t>(layout.outer) * run;
  if (layout.outer == 1) {
    slice.data = tensor.data
                     ? tensor.data + static_cast<size_t>(begin / layout.unit) *
                                         layout.unitBytes
                     : nullptr;
    slice.rowOffset = axis == 0 ? begin : 0;
  } else {
    slice.gatherAxis = axis;
    slice.gatherBegin = begin;
  }
  *out = std::move(slice);
  return nullptr;
}

/// Binds `tensors` to the model's parameters (as `path` names the
/// checkpoint), with the skipping rules of `options`, into `params`; the
/// tensors skipped and dequantized are listed for the caller to report.
seqc_status *bindTensors(const seqc_model *model, const char *path,
                         const std::vector<SourceTensor> &tensors,
                         const seqc_weights_options &options,
                         std::vector<BoundValue> *params,
                         std::vector<const SourceTensor *> *skipped,
                         std::vector<Dequantized> *dequantized) {
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  params->assign(specs.size(), BoundValue());
  for (const SourceTensor &tensor : tensors) {
    const char *file = tensor.file;
    size_t index;
    const ValueSpec *spec =
        model->manifest.find(SEQC_VALUE_PARAM, tensor.name, &index);
    if (!spec) {
      if (shouldSkip(options, tensor.fileName) ||
          (tensor.name != tensor.fileName && shouldSkip(options, tensor.name))) {
        skipped->push_back(&tensor);
        continue;
      }
      std::string what = "'" + printableText(tensor.fileName) + "'";
      if (tensor.name != tensor.fileName)
        what += " (mapped to '" + printableText(tensor.name) + "')";
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': tensor %s is not a parameter of the "
                        "model (it is %s %s); to skip the tensors the "
                        "model does not declare, pass --skip-unused or "
                        "--skip-weights PATTERN to the model executable "
                        "(skip_unused or skip_patterns in "
                        "seqc_weights_options)",
                        file, what.c_str(),
                        printableText(tensor.dtypeName).c_str(),
                        formatShape(tensor.shape.data(),
                                    static_cast<int>(tensor.shape.size()))
                            .c_str());
    }
    BoundValue &value = (*params)[index];
    if (value.bound)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': parameter '%s' is in the checkpoint twice%s",
                        file, spec->name.c_str(),
                        tensor.name != tensor.fileName
                            ? " (two tensors map to it)"
                            : "");
    Binding binding;
    SEQC_RETURN_IF_ERROR(chooseBinding(tensor, *spec, &binding));
    int rank = static_cast<int>(tensor.shape.size());
    // A sharded parameter (tensor parallelism): the file holds the whole
    // tensor, `ranks` slices of the manifest's shape along the axis.
    int ranks = model->manifest.tensorParallel;
    std::vector<int64_t> whole(spec->shape, spec->shape + spec->rank);
    if (spec->shardAxis >= 0)
      whole[static_cast<size_t>(spec->shardAxis)] *= ranks;
    if (spec->shardAxis >= 0 && tensor.shape != whole)
      return makeStatus(
          SEQC_STATUS_INVALID_FILE,
          "'%s': tensor %s has shape %s%s in the file, but the model, split "
          "over %d ranks (--tensor-parallel=%d), expects the whole tensor "
          "%s: each rank binds a slice %s of it along axis %d",
          file, tensor.describe().c_str(),
          formatShape(tensor.shape.data(), rank).c_str(),
          tensor.shapeNote.c_str(), ranks, ranks,
          formatShape(whole.data(), spec->rank).c_str(),
          spec->shapeText().c_str(), spec->shardAxis);
    if (spec->shardAxis < 0 &&
        (rank != spec->rank ||
         !std::equal(tensor.shape.begin(), tensor.shape.end(), spec->shape))) {
      if (tensor.name != tensor.fileName)
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': tensor %s has shape %s%s but the model "
                          "expects %s",
                          file, tensor.describe().c_str(),
                          formatShape(tensor.shape.data(), rank).c_str(),
                          tensor.shapeNote.c_str(),
                          spec->shapeText().c_str());
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': parameter '%s' has shape %s%s in the file but "
                        "the model expects %s",
                        file, spec->name.c_str(),
                        formatShape(tensor.shape.data(), rank).c_str(),
                        tensor.shapeNote.c_str(), spec->shapeText().c_str());
    }
    if (tensor.ropeHeads > 0) {
      // The whole tensor's rows: a slice takes its rows in their order.
      int64_t rows = rank ? tensor.shape[0] : 1;
      if (rank < 1 || rank > 2 || rows % tensor.ropeHeads != 0 ||
          (rows / tensor.ropeHeads) % 2 != 0)
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': tensor %s of shape %s cannot hold %lld heads "
                          "of an even size, as the RoPE order of llama.cpp's "
                          "conversion needs (check the file's "
                          "attention.head_count)",
                          file, tensor.describe().c_str(),
                          formatShape(tensor.shape.data(), rank).c_str(),
                          static_cast<long long>(tensor.ropeHeads));
    }
    // From here on `source` is what the parameter binds: the tensor, or
    // this rank's slice of it.
    SourceTensor slice;
    const SourceTensor *source = &tensor;
    if (spec->shardAxis >= 0) {
      SEQC_RETURN_IF_ERROR(sliceForRank(tensor, *spec, model->parallelRank,
                                        ranks, &slice));
      source = &slice;
      SEQC_RETURN_IF_ERROR(chooseBinding(slice, *spec, &binding));
    }
    int64_t numel;
    size_t bytes;
    if (!checkedNumel(spec->shape, spec->rank, &numel) ||
        !checkedTensorBytes(spec->dtype, spec->shape, spec->rank, &bytes))
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "parameter '%s': shape %s is too large",
                        spec->name.c_str(), spec->shapeText().c_str());
    if (binding == Binding::InPlace) {
      value.buffer.data = const_cast<uint8_t *>(source->data);
      value.buffer.bytes = source->bytes;
      value.buffer.owner = source->mapping;
      value.inFileMapping = true;
    } else {
      // A copy on the heap, which the runtime can compute again from the
      // mapping, kept for that (docs/runtime.md, "Memory of the
      // parameters").
      size_t size = binding == Binding::Copy ? source->bytes : bytes;
      SEQC_RETURN_IF_ERROR(annotate(allocateBuffer(size, &value.buffer),
                                    "parameter '%s'", spec->name.c_str()));
      auto *dest = static_cast<uint8_t *>(value.buffer.data);
      fillFromTensor(*source, binding, spec->dtype, numel, size, dest);
      if (binding == Binding::Convert && tensor.isBlockFormat() &&
          !isBlockDType(spec->dtype))
        dequantized->push_back({&tensor, spec->dtype});
      SourceTensor again = *source;
      again.file = ""; // The checkpoint's path, gone after the load.
      seqc_dtype to = spec->dtype;
      value.recomputable = std::make_shared<RecomputableBytes>(
          dest, size,
          [source = std::move(again), binding, to, numel, size](void *data) {
            fillFromTensor(source, binding, to, numel, size,
                           static_cast<uint8_t *>(data));
          });
    }
    for (int d = 0; d < rank; ++d)
      value.shape[d] = spec->shape[d];
    value.bound = true;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < params->size(); ++i)
    if (!(*params)[i].bound)
      missing.push_back(specs[i].name);
  if (!missing.empty())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s' is missing %zu of the model's %zu parameters: %s",
                      path, missing.size(), specs.size(),
                      listSome(missing).c_str());
  return nullptr;
}

/// The tensors of a safetensors checkpoint, under their own names.
std::vector<SourceTensor> safetensorsSources(const Checkpoint &checkpoint) {
  std::vector<SourceTensor> sources;
  for (const CheckpointFile &checkpointFile : checkpoint.files) {
    std::shared_ptr<void> mapping(checkpointFile.file.file,
                                  checkpointFile.file.file.get());
    for (const SafetensorsTensor &tensor : checkpointFile.file.tensors) {
      SourceTensor source;
      source.name = source.fileName = tensor.name;
      source.file = checkpointFile.path.c_str();
      source.dtypeName = tensor.dtypeName;
      source.supported = tensor.supported;
      source.dtype = tensor.dtype;
      source.shape = tensor.shape;
      source.data = tensor.data;
      source.bytes = static_cast<size_t>(tensor.end - tensor.begin);
      source.mapping = mapping;
      sources.push_back(std::move(source));
    }
  }
  return sources;
}

//===----------------------------------------------------------------------===//
// GGUF names
//===----------------------------------------------------------------------===//

/// One "gguf name = parameter name" rule; "{i}" (at most once per side, on
/// both sides or neither) matches a layer number.
struct NameRule {
  std::string from, to;
};

/// llama.cpp's names for the Llama family (gguf-py's tensor_mapping.py)
/// against Hugging Face's LlamaForCausalLM names, as examples/llama.seq
/// declares them.
const NameRule kLlamaNames[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
    {"blk.{i}.attn_norm.weight", "model.layers.{i}.input_layernorm.weight"},
    {"blk.{i}.attn_q.weight", "model.layers.{i}.self_attn.q_proj.weight"},
    {"blk.{i}.attn_k.weight", "model.layers.{i}.self_attn.k_proj.weight"},
    {"blk.{i}.attn_v.weight", "model.layers.{i}.self_attn.v_proj.weight"},
    {"blk.{i}.attn_output.weight", "model.layers.{i}.self_attn.o_proj.weight"},
    {"blk.{i}.attn_q.bias", "model.layers.{i}.self_attn.q_proj.bias"},
    {"blk.{i}.attn_k.bias", "model.layers.{i}.self_attn.k_proj.bias"},
    {"blk.{i}.attn_v.bias", "model.layers.{i}.self_attn.v_proj.bias"},
    {"blk.{i}.attn_output.bias", "model.layers.{i}.self_attn.o_proj.bias"},
    {"blk.{i}.ffn_norm.weight",
     "model.layers.{i}.post_attention_layernorm.weight"},
    {"blk.{i}.ffn_gate.weight", "model.layers.{i}.mlp.gate_proj.weight"},
    {"blk.{i}.ffn_up.weight", "model.layers.{i}.mlp.up_proj.weight"},
    {"blk.{i}.ffn_down.weight", "model.layers.{i}.mlp.down_proj.weight"},
};

/// The architectures whose llama.cpp conversion uses the Llama names and
/// permutes the Q and K rows for RoPE (LlamaModel in convert_hf_to_gguf.py).
bool isLlamaFamily(const std::string &architecture) {
  return architecture == "llama";
}

/// If `name` matches `pattern`, sets *layer to the number "{i}" matched
/// ("" when the pattern has none).
bool matchName(const std::string &pattern, const std::string &name,
               std::string *layer) {
  size_t at = pattern.find("{i}");
  if (at == std::string::npos) {
    layer->clear();
    return pattern == name;
  }
  std::string prefix = pattern.substr(0, at), suffix = pattern.substr(at + 3);
  if (name.size() <= prefix.size() + suffix.size() ||
      name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    return false;
  *layer = digits;
  return true;
}

std::string substituteLayer(const std::string &pattern,
                            const std::string &layer) {
  size_t at = pattern.find("{i}");
  if (at == std::string::npos)
    return pattern;
  return pattern.substr(0, at) + layer + pattern.substr(at + 3);
}

std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos)
    return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

size_t countLayers(const std::string &text) {
  size_t count = 0;
  for (size_t at = text.find("{i}"); at != std::string::npos;
       at = text.find("{i}", at + 3))
    ++count;
  return count;
}

/// Parses seqc_weights_options.name_table.
seqc_status *parseNameTable(const char *text, std::vector<NameRule> *out) {
  std::string table = text;
  size_t lineNumber = 0;
  for (size_t begin = 0; begin <= table.size();) {
    size_t end = table.find('\n', begin);
    if (end == std::string::npos)
      end = table.size();
    std::string line = table.substr(begin, end - begin);
    begin = end + 1;
    ++lineNumber;
    size_t comment = line.find('#');
    if (comment != std::string::npos)
      line.resize(comment);
    line = trim(line);
    if (line.empty())
      continue;
    size_t equals = line.find('=');
    NameRule rule;
    if (equals != std::string::npos) {
      rule.from = trim(line.substr(0, equals));
      rule.to = trim(line.substr(equals + 1));
    }
    if (equals == std::string::npos || rule.from.empty() || rule.to.empty() ||
        rule.to.find('=') != std::string::npos)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "GGUF name table, line %zu: expected 'gguf name = "
                        "parameter name', got '%s'",
                        lineNumber, printableText(line).c_str());
    size_t fromLayers = countLayers(rule.from), toLayers = countLayers(rule.to);
    if (fromLayers > 1 || fromLayers != toLayers)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "GGUF name table, line %zu: '{i}' must appear once on "
                        "both sides or on neither, in '%s'",
                        lineNumber, printableText(line).c_str());
    out->push_back(std::move(rule));
  }
  return nullptr;
}

/// The parameter name of GGUF tensor `name`: the first rule of `user`,
/// then of `builtin`, that matches it; else the name itself.
std::string mapName(const std::string &name, const std::vector<NameRule> &user,
                    const NameRule *builtin, size_t numBuiltin) {
  std::string layer;
  for (const NameRule &rule : user)
    if (matchName(rule.from, name, &layer))
      return substituteLayer(rule.to, layer);
  for (size_t i = 0; i < numBuiltin; ++i)
    if (matchName(builtin[i].from, name, &layer))
      return substituteLayer(builtin[i].to, layer);
  return name;
}

/// Whether llama.cpp's tensor `name` is the weight or bias of a layer's
/// query (`which` 'q') or key ('k') projection, whose rows its converter
/// permutes for RoPE.
bool isRopeProjection(const std::string &name, char which) {
  std::string prefix = std::string("blk.{i}.attn_") + which, layer;
  return matchName(prefix + ".weight", name, &layer) ||
         matchName(prefix + ".bias", name, &layer);
}

/// Reads the integer hyperparameter `key`; false if absent, NOT_FOUND-free.
seqc_status *readHeadCount(const GgufFile &gguf, const char *path,
                           const std::string &key, uint64_t fallback,
                           uint64_t *out) {
  const GgufValue *value = gguf.find(key);
  if (!value) {
    *out = fallback;
    return nullptr;
  }
  if (!value->asUInt64(out) || *out == 0 || *out > (1u << 20))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': metadata '%s' must be a positive integer (a "
                      "head count), but it is %s",
                      path, key.c_str(),
                      ggufValueTypeName(static_cast<uint32_t>(value->type)));
  return nullptr;
}

/// The tensors of a GGUF file under the parameter names they map to.
seqc_status *ggufSources(const char *path, const GgufFile &gguf,
                         const seqc_weights_options &options,
                         std::vector<SourceTensor> *out) {
  std::vector<NameRule> user;
  if (options.name_table)
    SEQC_RETURN_IF_ERROR(parseNameTable(options.name_table, &user));
  std::string architecture;
  if (const GgufValue *value = gguf.find("general.architecture"))
    if (value->type == GgufValueType::String)
      architecture = value->str;
  bool llama = isLlamaFamily(architecture);
  // The head counts are read only when a Q or K projection needs them.
  uint64_t heads = 0, kvHeads = 0;
  bool haveHeads = false;
  std::shared_ptr<void> mapping(gguf.file, gguf.file.get());
  for (const GgufTensor &tensor : gguf.tensors) {
    SourceTensor source;
    source.fileName = tensor.name;
    source.name = mapName(tensor.name, user, llama ? kLlamaNames : nullptr,
                          llama ? std::size(kLlamaNames) : 0);
    source.file = path;
    source.dtypeName = tensor.typeName;
    switch (tensor.type) {
    case kGgmlF32:
      source.dtype = SEQC_DTYPE_F32;
      break;
    case kGgmlF16:
      source.dtype = SEQC_DTYPE_F16;
      break;
    case kGgmlBF16:
      source.dtype = SEQC_DTYPE_BF16;
      break;
    case 28: // F64
      source.dtype = SEQC_DTYPE_F64;
      break;
    case 26: // I32
      source.dtype = SEQC_DTYPE_I32;
      break;
    case 27: // I64
      source.dtype = SEQC_DTYPE_I64;
      break;
    case kGgmlQ8_0:
    case kGgmlQ4_0:
    case kGgmlQ4_1:
      source.ggmlType = tensor.type;
      break;
    default:
      source.supported = false;
      break;
    }
    source.shape = tensor.rowMajorShape();
    source.fromGguf = true;
    source.shapeNote = " (GGUF ne [";
    for (size_t d = 0; d < tensor.ne.size(); ++d)
      source.shapeNote += (d ? ", " : "") + std::to_string(tensor.ne[d]);
    source.shapeNote += "], innermost first)";
    source.data = tensor.data;
    source.bytes = static_cast<size_t>(tensor.bytes);
    source.mapping = mapping;
    bool isQ = llama && isRopeProjection(tensor.name, 'q');
    bool isK = llama && isRopeProjection(tensor.name, 'k');
    if (isQ || isK) {
      if (!haveHeads) {
        std::string prefix = architecture + ".attention.";
        SEQC_RETURN_IF_ERROR(
            readHeadCount(gguf, path, prefix + "head_count", 0, &heads));
        if (!heads)
          return makeStatus(SEQC_STATUS_INVALID_FILE,
                            "'%s': tensor '%s' needs metadata "
                            "'%shead_count' (the RoPE order of llama.cpp's "
                            "conversion depends on it), which is absent",
                            path, printableText(tensor.name).c_str(),
                            prefix.c_str());
        SEQC_RETURN_IF_ERROR(readHeadCount(
            gguf, path, prefix + "head_count_kv", heads, &kvHeads));
        haveHeads = true;
      }
      source.ropeHeads = static_cast<int64_t>(isQ ? heads : kvHeads);
    }
    out->push_back(std::move(source));
  }
  return nullptr;
}

/// Whether `path` is a regular file that starts with GGUF's magic.
bool isGgufPath(const char *path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return false;
  struct stat st;
  uint8_t magic[4];
  bool gguf = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
              ::pread(fd, magic, 4, 0) == 4 && hasGgufMagic(magic, 4);
  ::close(fd);
  return gguf;
}

/// The llama.cpp name of parameter `name` under the Llama table, or "".
std::string llamaGgufName(const std::string &name) {
  std::string layer;
  for (const NameRule &rule : kLlamaNames)
    if (matchName(rule.to, name, &layer))
      return substituteLayer(rule.from, layer);
  return "";
}

/// Writes the bound parameters as a GGUF file, each in its stored dtype
/// (block formats as their blocks). A model whose parameters all carry
/// Hugging Face Llama names and whose hyperparameters include `heads` and
/// `kv_heads` (examples/llama.seq) is written as llama.cpp's converter
/// would: architecture "llama", llama.cpp's tensor names, the Q and K rows
/// in its RoPE order and the hyperparameters under its keys; any other
/// model as architecture "seqc" with its own names. seqc reads both back.
seqc_status *saveGguf(const seqc_model *model, const char *path) {
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  JsonValue root;
  SEQC_RETURN_IF_ERROR(
      parseJson(model->manifestText, &root, SEQC_STATUS_INVALID_MANIFEST));
  const JsonValue *hyper = root.find("hyper");
  auto hyperNumber = [&](const char *key) -> const JsonValue * {
    const JsonValue *value = hyper ? hyper->find(key) : nullptr;
    return value && value->isNumber() ? value : nullptr;
  };
  auto positiveInt = [&](const char *key) -> int64_t {
    const JsonValue *value = hyperNumber(key);
    return value && value->isInteger && value->integer > 0 &&
                   value->integer <= UINT32_MAX
               ? value->integer
               : 0;
  };

  bool llama = positiveInt("heads") && positiveInt("kv_heads") &&
               !specs.empty();
  for (const ValueSpec &spec : specs)
    llama = llama && !llamaGgufName(spec.name).empty();

  std::vector<GgufWriteValue> metadata;
  auto addString = [&](std::string key, std::string text) {
    GgufWriteValue value;
    value.key = std::move(key);
    value.str = std::move(text);
    metadata.push_back(std::move(value));
  };
  const std::string architecture = llama ? "llama" : "seqc";
  addString("general.architecture", architecture);
  addString("general.name", model->manifest.name);
  if (llama) {
    // llama.cpp's keys for the hyperparameters examples/llama.seq names.
    const struct {
      const char *key, *hyper;
      bool isFloat;
    } keys[] = {{"context_length", "max_len", false},
                {"embedding_length", "dim", false},
                {"block_count", "depth", false},
                {"feed_forward_length", "hidden", false},
                {"attention.head_count", "heads", false},
                {"attention.head_count_kv", "kv_heads", false},
                {"vocab_size", "vocab", false},
                {"rope.freq_base", "theta", true},
                {"attention.layer_norm_rms_epsilon", "eps", true}};
    for (const auto &k : keys) {
      GgufWriteValue value;
      value.key = architecture + "." + k.key;
      if (k.isFloat) {
        const JsonValue *number = hyperNumber(k.hyper);
        if (!number)
          continue;
        value.type = GgufValueType::F32;
        value.f32 = static_cast<float>(number->number);
      } else {
        int64_t number = positiveInt(k.hyper);
        if (!number)
          continue;
        value.type = GgufValueType::U32;
        value.u32 = static_cast<uint32_t>(number);
      }
      metadata.push_back(std::move(value));
    }
  }

  std::vector<GgufWriteTensor> tensors;
  std::vector<std::vector<uint8_t>> permuted;
  permuted.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    const BoundValue &param = model->params[i];
    if (!param.bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "cannot save weights: parameter '%s' is not bound",
                        spec.name.c_str());
    GgufWriteTensor tensor;
    tensor.name = llama ? llamaGgufName(spec.name) : spec.name;
    tensor.type = ggmlTypeOfDType(spec.dtype);
    if (tensor.type == UINT32_MAX)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': parameter '%s' is %s, which GGUF "
                        "does not store (F32, F16, BF16, F64, I32, I64, Q8_0, Q4_0, "
                        "Q4_1)",
                        path, spec.name.c_str(), seqc_dtype_name(spec.dtype));
    tensor.shape.assign(spec.shape, spec.shape + spec.rank);
    tensor.data = param.buffer.data;
    int64_t numel = 0, blockElements = 1;
    size_t blockBytes = 0;
    checkedNumel(spec.shape, spec.rank, &numel);
    seqc_dtype_block(spec.dtype, &blockElements, &blockBytes);
    tensor.bytes = static_cast<size_t>(numel / blockElements) * blockBytes;
    bool isQ = llama && isRopeProjection(tensor.name, 'q');
    bool isK = llama && isRopeProjection(tensor.name, 'k');
    if ((isQ || isK) && spec.rank >= 1) {
      // llama.cpp's converter permutes these rows for its RoPE kernel; the
      // reader undoes it (ropeSourceRow), so file row ropeSourceRow(r)
      // holds row r.
      int64_t heads = positiveInt(isQ ? "heads" : "kv_heads");
      int64_t rows = spec.shape[0];
      if (rows % heads != 0 || (rows / heads) % 2 != 0)
        return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                          "cannot write '%s': parameter '%s' has %lld rows, "
                          "not %lld heads of an even size",
                          path, spec.name.c_str(), (long long)rows,
                          (long long)heads);
      size_t rowBytes = tensor.bytes / static_cast<size_t>(rows);
      const auto *source = static_cast<const uint8_t *>(tensor.data);
      permuted.emplace_back(tensor.bytes);
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(permuted.back().data() +
                        ropeSourceRow(r, rows, heads) * rowBytes,
                    source + r * rowBytes, rowBytes);
      tensor.data = permuted.back().data();
    }
    tensors.push_back(std::move(tensor));
  }
  return writeGguf(path, metadata, tensors);
}

/// What seqc_model_random_weights binds to a parameter: initParam's values,
/// or for a sharded parameter (`axis` >= 0) rank `rank`'s slice of those
/// the whole tensor gets (`shape` is the slice's, `ranks` slices along the
/// axis), so that N ranks hold between them what one process would. The
/// whole tensor is drawn in f32 for a block format and the slice quantized:
/// its blocks and rows are the whole tensor's (the manifest keeps a block
/// format's slices whole blocks long), except int8's per-row scale on a
/// slice of the last axis, which is the slice's.
void initParamSlice(const std::string &name, seqc_dtype dtype,
                    const std::vector<int64_t> &shape, int axis, int rank,
                    int ranks, uint64_t seed, void *data) {
  int dims = static_cast<int>(shape.size());
  if (axis < 0) {
    initParam(name, dtype, shape.data(), dims, seed, data);
    return;
  }
  std::vector<int64_t> whole = shape;
  whole[static_cast<size_t>(axis)] *= ranks;
  int64_t wholeNumel = 0, numel = 0;
  checkedNumel(whole.data(), dims, &wholeNumel);
  checkedNumel(shape.data(), dims, &numel);
  seqc_dtype drawn = isBlockDType(dtype) ? SEQC_DTYPE_F32 : dtype;
  size_t elementSize = seqc_dtype_size(drawn);
  std::vector<uint8_t> values(static_cast<size_t>(wholeNumel) * elementSize);
  initParam(name, drawn, whole.data(), dims, seed, values.data());
  AxisLayout layout = axisLayout(whole, values.size(), false, axis);
  int64_t count = shape[static_cast<size_t>(axis)];
  if (!isBlockDType(dtype)) {
    gatherRuns(values.data(), layout.outer, layout.units, count * rank, count,
               layout.unitBytes, static_cast<uint8_t *>(data));
    return;
  }
  std::vector<float> slice(static_cast<size_t>(numel));
  gatherRuns(values.data(), layout.outer, layout.units, count * rank, count,
             layout.unitBytes, reinterpret_cast<uint8_t *>(slice.data()));
  quantizeRows(dtype, slice.data(), data, slice.size(),
               static_cast<size_t>(shape.back()));
}

} // namespace

extern "C" seqc_status *seqc_model_load_weights(seqc_model *model,
                                                const char *path) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights: model and path must not be "
                      "NULL");
  return seqc_model_load_weights_with(model, path, nullptr);
}

extern "C" seqc_status *
seqc_model_load_weights_with(seqc_model *model, const char *path,
                             const seqc_weights_options *options) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights_with: model and path must not "
                      "be NULL");
  seqc_weights_options none = {};
  if (!options)
    options = &none;
  if (options->num_skip_patterns && !options->skip_patterns)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights_with: %zu skip patterns but "
                      "skip_patterns is NULL",
                      options->num_skip_patterns);
  for (size_t i = 0; i < options->num_skip_patterns; ++i)
    if (!options->skip_patterns[i])
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "seqc_model_load_weights_with: skip pattern %zu is "
                        "NULL",
                        i);
  // Both hold the mappings the sources point into.
  Checkpoint checkpoint;
  GgufFile gguf;
  std::vector<SourceTensor> sources;
  if (isGgufPath(path)) {
    SEQC_RETURN_IF_ERROR(readGguf(path, &gguf));
    SEQC_RETURN_IF_ERROR(ggufSources(path, gguf, *options, &sources));
  } else {
    SEQC_RETURN_IF_ERROR(readCheckpoint(path, &checkpoint));
    sources = safetensorsSources(checkpoint);
  }
  std::vector<BoundValue> params;
  // Reported once the whole checkpoint matched, so that a failed load
  // reports nothing.
  std::vector<const SourceTensor *> skipped;
  std::vector<Dequantized> dequantized;
  SEQC_RETURN_IF_ERROR(bindTensors(model, path, sources, *options, &params,
                                   &skipped, &dequantized));
  model->params = std::move(params);
  model->markPreparedStale();
  model->deviceParamsStale = true;
  if (options->on_skipped)
    for (const SourceTensor *tensor : skipped)
      options->on_skipped(options->user_data, tensor->fileName.c_str(),
                          tensor->dtypeName.c_str(),
                          static_cast<int32_t>(tensor->shape.size()),
                          tensor->shape.data());
  if (options->on_dequantized)
    for (const Dequantized &entry : dequantized)
      options->on_dequantized(options->user_data,
                              entry.tensor->fileName.c_str(),
                              entry.tensor->name.c_str(),
                              entry.tensor->dtypeName.c_str(), entry.dtype);
  return nullptr;
}

extern "C" seqc_status *seqc_model_random_weights(seqc_model *model,
                                                  uint64_t seed) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_random_weights: model is NULL");
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  std::vector<BoundValue> params(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    int64_t numel;
    size_t bytes;
    if (!checkedNumel(spec.shape, spec.rank, &numel) ||
        !checkedTensorBytes(spec.dtype, spec.shape, spec.rank, &bytes))
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "parameter '%s': shape %s is too large",
                        spec.name.c_str(), spec.shapeText().c_str());
    SEQC_RETURN_IF_ERROR(annotate(allocateBuffer(bytes, &params[i].buffer),
                                  "parameter '%s'", spec.name.c_str()));
    std::vector<int64_t> shape(spec.shape, spec.shape + spec.rank);
    int rank = model->parallelRank, ranks = model->manifest.tensorParallel;
    initParamSlice(spec.name, spec.dtype, shape, spec.shardAxis, rank, ranks,
                   seed, params[i].buffer.data);
    // The same stream draws the same values again (docs/runtime.md,
    // "Memory of the parameters").
    params[i].recomputable = std::make_shared<RecomputableBytes>(
        params[i].buffer.data, bytes,
        [name = spec.name, dtype = spec.dtype, shape = std::move(shape),
         axis = spec.shardAxis, rank, ranks, seed](void *data) {
          initParamSlice(name, dtype, shape, axis, rank, ranks, seed, data);
        });
    std::copy(spec.shape, spec.shape + spec.rank, params[i].shape);
    params[i].bound = true;
  }
  model->params = std::move(params);
  model->markPreparedStale();
  model->deviceParamsStale = true;
  return nullptr;
}

extern "C" seqc_status *seqc_model_set_param(seqc_model *model,
                                             const char *name,
                                             const seqc_tensor *tensor) {
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_set_param: model and name must not be "
                      "NULL");
  size_t index;
  const ValueSpec *spec = model->manifest.find(SEQC_VALUE_PARAM, name, &index);
  if (!spec)
    return model->manifest.notFound(SEQC_VALUE_PARAM, name);
  std::string what = std::string("parameter '") + name + "'";
  size_t bytes;
  SEQC_RETURN_IF_ERROR(checkTensor(tensor, what.c_str(), &bytes));
  if (tensor->dtype != spec->dtype || tensor->rank != spec->rank ||
      !std::equal(tensor->shape, tensor->shape + tensor->rank, spec->shape))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "parameter '%s': %s %s does not match the model's %s %s",
                      name, seqc_dtype_name(tensor->dtype),
                      formatShape(tensor->shape, tensor->rank).c_str(),
                      seqc_dtype_name(spec->dtype), spec->shapeText().c_str());
  BoundValue value;
  SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &value.buffer));
  if (bytes)
    std::memcpy(value.buffer.data, tensor->data, bytes);
  std::copy(spec->shape, spec->shape + spec->rank, value.shape);
  value.bound = true;
  model->params[index] = std::move(value);
  model->markPreparedStale();
  model->deviceParamsStale = true;
  return nullptr;
}

extern "C" seqc_status *seqc_model_get_param(const seqc_model *model,
                                             const char *name,
                                             seqc_tensor *out_tensor) {
  return getValueView(model, SEQC_VALUE_PARAM, name, out_tensor);
}

extern "C" seqc_status *seqc_model_save_weights(const seqc_model *model,
                                                const char *path) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_save_weights: model and path must not be "
                      "NULL");
  // Each rank holds slices of the sharded parameters; writing them would
  // give a file no model reads whole.
  if (model->manifest.tensorParallel > 1)
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "cannot save the weights of model '%s' to '%s': it was "
                      "compiled with --tensor-parallel=%d, and each rank "
                      "holds only its slice of the sharded parameters",
                      model->manifest.name.c_str(), path,
                      model->manifest.tensorParallel);
  // The parameters computed again if they were dropped, while they are
  // written.
  ParamReaders readers(model);
  size_t length = std::strlen(path);
  if (length > 5 && strcasecmp(path + length - 5, ".gguf") == 0)
    return saveGguf(model, path);
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  std::vector<SafetensorsWriteEntry> entries;
  // Safetensors has no block formats: their parameters are written
  // dequantized, as F32 (docs/runtime.md).
  std::vector<std::vector<float>> dequantized;
  dequantized.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!model->params[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "cannot save weights: parameter '%s' is not bound",
                        specs[i].name.c_str());
    seqc_dtype dtype = specs[i].dtype;
    const void *data = model->params[i].buffer.data;
    if (isBlockDType(dtype)) {
      int64_t numel = 0;
      checkedNumel(specs[i].shape, specs[i].rank, &numel);
      dequantized.emplace_back(static_cast<size_t>(numel));
      dequantizeRows(dtype, data, dequantized.back().data(),
                     static_cast<size_t>(numel),
                     static_cast<size_t>(specs[i].shape[specs[i].rank - 1]));
      data = dequantized.back().data();
      dtype = SEQC_DTYPE_F32;
    }
    entries.push_back(
        {specs[i].name, dtype,
         std::vector<int64_t>(specs[i].shape, specs[i].shape + specs[i].rank),
         data});
  }
  // "format": "pt" lets PyTorch tooling (e.g. transformers) load the file.
  return writeSafetensors(path, entries,
                          {{"format", "pt"}, {"producer", "seqc"}});
}
