//===- Status.h - Outcome of a host kernel that checks its data -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Some kernels read integers that index into another operand (token ids,
// labels). A value out of range is an error in the *data*, which the compiler
// cannot rule out, so those kernels return a Status instead of aborting: the
// interpreter turns it into a diagnostic naming the op, and emitted programs
// report it through the runtime's failure path.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_STATUS_H
#define LOOM_RUNTIME_HOST_STATUS_H

#include <string>
#include <utility>

namespace loom::runtime::host {

/// Success, or a failure with a message in the house style (lowercase, no
/// trailing period, with the offending values), e.g.
/// "id 70000 at index 5 is outside [0, 50257)".
class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status failure(std::string message) {
    Status status;
    status.failed = true;
    status.text = std::move(message);
    return status;
  }

  bool ok() const { return !failed; }
  explicit operator bool() const { return ok(); }
  /// The failure message; empty on success.
  const std::string &message() const { return text; }

private:
  bool failed = false;
  std::string text;
};

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_STATUS_H
