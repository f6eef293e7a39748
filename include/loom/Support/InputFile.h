//===- InputFile.h - Read only regular files ---------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Every file a Loom tool or program reads (IR and graph JSON, configs,
// strategy files, cluster specs, token files, safetensors, checkpoints and
// their manifests) goes through checkRegularFile first: a directory reads as
// zero bytes or fails with a misleading message, a FIFO blocks forever, and
// a symlink loop makes std::filesystem throw. The check uses the
// non-throwing std::error_code overloads, so nothing throws.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_INPUTFILE_H
#define LOOM_SUPPORT_INPUTFILE_H

#include <optional>
#include <string>

namespace loom::support {

/// Checks that `path` names a regular file (after following symlinks).
/// Returns why it does not ("cannot read `d`: it is a directory, expected a
/// regular file"), or nullopt.
std::optional<std::string> checkRegularFile(const std::string &path);

/// Reads all of the regular file `path` into `bytes`; returns the error, or
/// nullopt.
std::optional<std::string> readRegularFile(const std::string &path,
                                           std::string &bytes);

/// Whether `path` exists, without throwing: a symlink loop or a permission
/// error count as "exists" (so the reader that follows reports them).
bool pathExists(const std::string &path);

} // namespace loom::support

#endif // LOOM_SUPPORT_INPUTFILE_H
