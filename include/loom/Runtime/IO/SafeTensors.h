//===- SafeTensors.h - Read and write safetensors files ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The safetensors format (Hugging Face): an 8-byte little-endian header
// length N, N bytes of JSON `{name: {"dtype", "shape", "data_offsets":
// [begin, end]}, "__metadata__": {str: str}}`, then the raw data, offsets
// relative to its start. Debian ships no C++ safetensors library, so this is
// a small implementation over nlohmann::json that checks everything a
// corrupt file can get wrong: header length, JSON, dtypes, shapes, offsets
// inside the data and agreeing with dtype and shape, overlaps.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_IO_SAFETENSORS_H
#define LOOM_RUNTIME_IO_SAFETENSORS_H

#include "loom/Runtime/IO/TensorFile.h"

namespace loom::runtime::io {

/// Parses safetensors `contents`; `path` only names the file in errors. On
/// failure returns a message naming the file (and tensor, when one is at
/// fault) and leaves `tensors` unspecified.
std::optional<std::string>
parseSafeTensors(const std::string &path, const std::string &contents,
                 TensorMap &tensors,
                 std::map<std::string, std::string> *metadata = nullptr);

/// A tensor a safetensors header describes, before its data is read.
struct StoredTensor {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  /// Where its data starts, in bytes from the start of the file.
  uint64_t offset = 0;

  int64_t byteSize() const;
};

/// Reads and checks only the header of the safetensors file `path` (as
/// parseSafeTensors checks it, against the file's size): what a reader that
/// takes slices of large files needs (io::WeightFile).
std::optional<std::string>
readSafeTensorsHeader(const std::string &path,
                      std::map<std::string, StoredTensor> &tensors,
                      std::map<std::string, std::string> *metadata = nullptr);

/// Reads the safetensors file `path`.
std::optional<std::string>
readSafeTensors(const std::string &path, TensorMap &tensors,
                std::map<std::string, std::string> *metadata = nullptr);

/// Serializes `tensors` (data in name order, header padded with spaces to a
/// multiple of 8 bytes as the reference implementation does).
std::string
serializeSafeTensors(const TensorMap &tensors,
                     const std::map<std::string, std::string> &metadata = {});

/// Writes `tensors` to `path` atomically (see writeFileAtomically).
std::optional<std::string>
writeSafeTensors(const std::string &path, const TensorMap &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace loom::runtime::io

#endif // LOOM_RUNTIME_IO_SAFETENSORS_H
