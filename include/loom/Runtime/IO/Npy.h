//===- Npy.h - Read numpy .npy files ----------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reads the single-tensor `.npy` format numpy writes with `np.save`: magic
// `\x93NUMPY`, version 1.0 (2-byte header length), 2.0 or 3.0 (4-byte), a
// Python dict literal `{'descr': '<f8', 'fortran_order': False, 'shape':
// (2, 3), }`, then the data. Little-endian, C-order arrays of f8 f4 f2 i8 i4
// and b1 are accepted; anything else is reported, never guessed.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_IO_NPY_H
#define LOOM_RUNTIME_IO_NPY_H

#include "loom/Runtime/IO/TensorFile.h"

namespace loom::runtime::io {

/// Parses `.npy` `contents`; `path` only names the file in errors.
std::optional<std::string> parseNpy(const std::string &path,
                                    const std::string &contents,
                                    TensorData &tensor);

/// Reads the `.npy` file `path`.
std::optional<std::string> readNpy(const std::string &path, TensorData &tensor);

/// Serializes `tensor` as a version 1.0 `.npy` (bf16 has no numpy dtype and
/// is refused by returning an empty string).
std::string serializeNpy(const TensorData &tensor);

} // namespace loom::runtime::io

#endif // LOOM_RUNTIME_IO_NPY_H
