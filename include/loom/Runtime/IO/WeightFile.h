//===- WeightFile.h - Pretrained weights read a slice at a time -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Model weights as the ecosystem publishes them: one safetensors file
// (`model.safetensors`), or Hugging Face's sharded form, an index
// `model.safetensors.index.json` (`{"metadata": {...}, "weight_map": {tensor:
// shard file}}`) next to its shards. Opening reads the headers only; each
// shard is memory-mapped on first use, so a reader that takes a block of a
// tensor (every rank of a training run, `--init-from`) touches only the
// pages of that block and never holds the whole model.
//
// Opening checks what a damaged or mismatched set of files can get wrong:
// every header (SafeTensors.h), every tensor the index names present in its
// shard, no shard tensor the index does not name, no tensor in two shards.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_IO_WEIGHTFILE_H
#define LOOM_RUNTIME_IO_WEIGHTFILE_H

#include "loom/Runtime/IO/SafeTensors.h"

#include <memory>

namespace loom::runtime::io {

class WeightFile {
public:
  /// A tensor of the set: where it is and what the header says.
  struct Entry {
    StoredTensor stored;
    size_t shard = 0;
  };

  /// Opens `path`: a safetensors file, an index JSON (`*.index.json`), or
  /// a directory holding `model.safetensors.index.json` or
  /// `model.safetensors`. Returns the error naming the file at fault.
  static std::optional<std::string> open(const std::string &path,
                                         WeightFile &out);

  const std::map<std::string, Entry> &entries() const { return tensors; }
  /// The path given to open, and the shards' paths.
  const std::string &getPath() const { return path; }
  const std::vector<std::string> &getShards() const { return shards; }

  /// The stored bytes of tensor `name` (mapped, valid while this file
  /// lives), or an error.
  std::optional<std::string> bytes(const std::string &name,
                                   const uint8_t *&data) const;

  /// Reads tensor `name` whole, as stored.
  std::optional<std::string> read(const std::string &name,
                                  TensorData &out) const;

  /// Reads every tensor, as stored.
  std::optional<std::string> readAll(TensorMap &out) const;

private:
  struct Mapping;
  std::string path;
  std::vector<std::string> shards;
  std::map<std::string, Entry> tensors;
  /// One per shard, mapped on first use.
  mutable std::vector<std::shared_ptr<Mapping>> mappings;
};

/// Element `index` of `dtype` data at `data`, as a double (exact: every
/// float dtype widens to double without rounding).
double loadElement(const uint8_t *data, DType dtype, int64_t index);

/// Copies the block at `offset` of extent `localShape` of the row-major
/// tensor `viewShape` into `out` (row-major, converted to T), from `data`,
/// which holds the same elements in the same order, or, when `transposed`,
/// holds the [cols, rows] transpose of the [rows, cols] matrix whose
/// row-major view `viewShape` is (Hugging Face's Conv1D weights).
template <typename T>
void gatherBlock(const uint8_t *data, DType dtype,
                 const std::vector<int64_t> &viewShape, bool transposed,
                 int64_t rows, int64_t cols, const std::vector<int64_t> &offset,
                 const std::vector<int64_t> &localShape, T *out) {
  size_t rank = viewShape.size();
  int64_t count = 1;
  for (int64_t d : localShape)
    count *= d;
  if (count == 0)
    return;
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * viewShape[d];
  std::vector<int64_t> index(rank, 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t linear = 0;
    for (size_t d = 0; d < rank; ++d)
      linear += (offset[d] + index[d]) * strides[d];
    if (transposed)
      linear = (linear % cols) * rows + linear / cols;
    out[k] = static_cast<T>(loadElement(data, dtype, linear));
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < localShape[d])
        break;
      index[d] = 0;
    }
  }
}

} // namespace loom::runtime::io

#endif // LOOM_RUNTIME_IO_WEIGHTFILE_H
