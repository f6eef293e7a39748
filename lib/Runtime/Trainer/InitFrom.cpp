//===- InitFrom.cpp - Pretrained weights into a partitioned program -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Pick the parameters out of the model state (optimizer states are named
//    after their parameter).
// 2. Bind the file's headers to Loom's names (io::bindWeights) and hold the
//    set and each shape to the program's parameters.
// 3. Per owned parameter, copy this rank's block (its layout's offset and
//    local shape over the program's view of the tensor) out of the mapped
//    file; a tied head is compared with wte on the same block.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/InitFrom.h"

#include "loom/Runtime/MPI/DeviceMesh.h"

#include <set>

namespace loom::runtime::trainer {

using harness::TensorSpec;

static constexpr const char *kWte = "transformer.wte.weight";
static constexpr const char *kHead = "lm_head.weight";

std::vector<size_t> parameterArguments(const PretrainedTarget &target) {
  std::set<std::string> names;
  for (size_t i : target.state)
    names.insert(target.spec->arguments[i].name);
  std::vector<size_t> params;
  for (size_t i : target.state) {
    const TensorSpec &arg = target.spec->arguments[i];
    if (arg.isInteger)
      continue;
    bool optimizerState = false;
    for (const char *suffix : {".exp_avg", ".exp_avg_sq", ".momentum_buffer"}) {
      std::string s = suffix;
      if (arg.name.size() > s.size() &&
          arg.name.compare(arg.name.size() - s.size(), s.size(), s) == 0 &&
          names.count(arg.name.substr(0, arg.name.size() - s.size())))
        optimizerState = true;
    }
    if (!optimizerState)
      params.push_back(i);
  }
  return params;
}

/// The shape a parameter has in files: its file shape, else its own.
static const std::vector<int64_t> &fileShapeOf(const TensorSpec &arg) {
  return arg.fileShape.empty() ? arg.globalShape : arg.fileShape;
}

/// Whether the program ties GPT-2's head to wte while the file lists a head.
static bool tiedHeadInFile(const PretrainedTarget &target,
                           const std::vector<size_t> &params,
                           const io::WeightBindings &bindings) {
  bool hasWte = false, hasHead = false;
  for (size_t i : params) {
    hasWte = hasWte || target.spec->arguments[i].name == kWte;
    hasHead = hasHead || target.spec->arguments[i].name == kHead;
  }
  return hasWte && !hasHead && bindings.params.count(kHead) &&
         bindings.params.count(kWte);
}

std::optional<std::string> bindPretrained(const PretrainedTarget &target,
                                          const io::WeightFile &file,
                                          io::WeightFormat format,
                                          io::WeightBindings &bindings) {
  io::HeaderMap headers;
  for (const auto &[name, entry] : file.entries())
    headers[name] = io::TensorHeader{entry.stored.dtype, entry.stored.shape};
  if (auto error = io::bindWeights(headers, format, bindings))
    return error;

  std::vector<size_t> params = parameterArguments(target);
  std::set<std::string> programNames;
  for (size_t i : params) {
    const TensorSpec &arg = target.spec->arguments[i];
    programNames.insert(arg.name);
    auto it = bindings.params.find(arg.name);
    const std::vector<int64_t> &want = fileShapeOf(arg);
    if (it == bindings.params.end())
      return "missing tensor `" + bindings.fileName(arg.name) +
             "`: this program trains `" + arg.name + "` " +
             mpi::formatShape(want) +
             (arg.name == kHead ? " (an untied head: a file whose head is tied "
                                  "to the embedding needs a program built "
                                  "with --tie-embeddings true)"
                                : "");
    const io::WeightBinding &binding = it->second;
    std::vector<int64_t> found = binding.loomShape();
    // A Loom file may hold a viewed parameter in the view's shape (the
    // bytes agree); a transposed one must be the 2-D file shape's.
    bool fits =
        found == want || (!binding.transposed && found == arg.globalShape);
    if (!fits) {
      std::vector<int64_t> expected = want;
      if (binding.transposed && expected.size() == 2)
        std::swap(expected[0], expected[1]);
      return "tensor `" + binding.fileName + "` has shape " +
             mpi::formatShape(binding.file.shape) + ", expected " +
             mpi::formatShape(expected) +
             (binding.transposed ? " (Conv1D: [in, out])" : "") +
             " for this program's `" + arg.name + "`";
    }
  }
  bool tied = tiedHeadInFile(target, params, bindings);
  for (const auto &[name, binding] : bindings.params) {
    if (programNames.count(name) || (tied && name == kHead))
      continue;
    return "tensor `" + binding.fileName +
           "` is not a parameter of this program (" +
           std::to_string(params.size()) +
           " parameters; is the file of another model size or family?)";
  }
  if (tied && bindings.params.at(kHead).file.shape !=
                  bindings.params.at(kWte).file.shape)
    return "tensor `" + bindings.params.at(kHead).fileName + "` has shape " +
           mpi::formatShape(bindings.params.at(kHead).file.shape) +
           ", but this program ties the head to `" +
           bindings.params.at(kWte).fileName + "` " +
           mpi::formatShape(bindings.params.at(kWte).file.shape);
  return std::nullopt;
}

template <typename T>
std::optional<std::string>
readPretrainedBlocks(const PretrainedTarget &target, const io::WeightFile &file,
                     const io::WeightBindings &bindings,
                     std::vector<harness::Buffer<T>> &args) {
  std::vector<size_t> params = parameterArguments(target);
  std::set<size_t> owned(target.owned.begin(), target.owned.end());
  bool tied = tiedHeadInFile(target, params, bindings);
  for (size_t i : params) {
    if (!owned.count(i))
      continue;
    const TensorSpec &arg = target.spec->arguments[i];
    const io::WeightBinding &binding = bindings.params.at(arg.name);
    std::vector<int64_t> offset = (*target.layouts)[i].getBlockOffset(
        *target.mesh, arg.globalShape, target.rank);
    std::vector<int64_t> loom = binding.loomShape();
    int64_t rows = loom.size() == 2 ? loom[0] : 1;
    int64_t cols = loom.size() == 2 ? loom[1] : 1;
    auto gather = [&](const io::WeightBinding &source,
                      std::vector<T> &out) -> std::optional<std::string> {
      const uint8_t *data = nullptr;
      if (auto error = file.bytes(source.fileName, data))
        return error;
      int64_t n = 1;
      for (int64_t d : arg.localShape)
        n *= d;
      out.assign(n, T(0));
      io::gatherBlock<T>(data, source.file.dtype, arg.globalShape,
                         source.transposed, rows, cols, offset, arg.localShape,
                         out.data());
      return std::nullopt;
    };
    if (auto error = gather(binding, args[i].floats))
      return error;
    if (tied && arg.name == kWte) {
      std::vector<T> head;
      if (auto error = gather(bindings.params.at(kHead), head))
        return error;
      if (head != args[i].floats)
        return "tensor `" + bindings.params.at(kHead).fileName +
               "` differs from `" + binding.fileName +
               "`: the file's head is untied, but this program ties it to "
               "the embedding (build the model with --tie-embeddings false)";
    }
  }
  return std::nullopt;
}

template std::optional<std::string>
readPretrainedBlocks<float>(const PretrainedTarget &, const io::WeightFile &,
                            const io::WeightBindings &,
                            std::vector<harness::Buffer<float>> &);
template std::optional<std::string>
readPretrainedBlocks<double>(const PretrainedTarget &, const io::WeightFile &,
                             const io::WeightBindings &,
                             std::vector<harness::Buffer<double>> &);

} // namespace loom::runtime::trainer
