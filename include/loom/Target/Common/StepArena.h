//===- StepArena.h - The static memory plan of one emitted step -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What the host and CUDA emitters share about the arena of a step function
// (docs/Codegen.md, "Memory"): while an emitter prints the step, it records
// each buffer it places in the arena (add), each value that names another's
// buffer (alias), and asks whether an optimizer update may write into the
// buffer of the argument it updates (updatesInPlace). After the function it
// prints the tables the step reads (printTables): every buffer's offset
// (emit::planArena over the buffers' lifetimes), every stage's arena size,
// and the liveness peak the compiler predicts for a rank of that stage
// (dist::analyzeMemory), which `--report-memory` prints beside the arena.
// The step function reads the tables by name; they follow it because the
// plan needs the whole body, so printDeclarations declares them before it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_COMMON_STEPARENA_H
#define LOOM_TARGET_COMMON_STEPARENA_H

#include "loom/Analysis/Cost/InPlaceReuse.h"
#include "loom/Target/Common/ArenaPlan.h"
#include "loom/Target/Common/EmitterSupport.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::loom::emit {

class StepArena {
public:
  explicit StepArena(const EntryInfo &entry);

  /// Records the arena buffer of `value`, a result of `op`, and returns the
  /// C++ expression of its byte offset for the step's element type `T`
  /// (negative: a block of its own, for a buffer the step returns).
  std::string add(Value value, Operation *op);
  /// Records that `result` names `operand`'s buffer (a reshape, an
  /// annotation, an in-place update): reading it keeps that buffer alive.
  void alias(Value result, Value operand) { aliasOf[result] = operand; }
  /// Whether `result` of the optimizer update `op` is written into the
  /// buffer of `operand`, the state it updates, by the in-place rule
  /// (dist::InPlaceReuse): `operand` is the argument `result` is carried
  /// into and `op` is the last op that reads its buffer. The update kernels
  /// read each element before they write it, so the step then holds one
  /// copy of that state, not the old and the new.
  bool updatesInPlace(Operation *op, Value result, Value operand);
  /// The argument whose buffer `result` of `op` is computed in, by the same
  /// rule, where `op` does not read it: the argument `result` is carried
  /// into, when no op from `op` on reads that argument (its old value is
  /// dead). A gathered ZeRO parameter so takes the place of the parameter
  /// it replaces instead of a second copy.
  std::optional<unsigned> freeCarriedArgument(Operation *op, Value result);
  /// The result index carried into argument `arg`, if any.
  std::optional<size_t> carriedResultOf(size_t arg) const;

  /// `kArena<what>_<entry>`: the tables' names.
  std::string table(StringRef what) const;
  static std::string table(StringRef what, StringRef entryName);
  /// The C++ expressions of the arena's size in bytes and of the predicted
  /// liveness peak for the rank's stage (`stage`: a C++ expression).
  std::string bytesOf(StringRef stage) const;
  std::string predictedPeakOf(StringRef stage) const;

  /// Declares the tables (`extern const`), before the step function.
  void printDeclarations(raw_ostream &os) const;
  /// Plans the buffers add() recorded and prints the tables, after the step
  /// function.
  void printTables(raw_ostream &os);

private:
  /// The buffer `value` names, following aliases.
  std::optional<size_t> bufferOf(Value value) const;

  const EntryInfo &entry;
  std::vector<ArenaBuffer> buffers;
  llvm::DenseMap<Value, size_t> bufferIndex;
  llvm::DenseMap<Value, Value> aliasOf;
  /// Loop-carried pairs: argument -> result (carriedPairs).
  std::map<size_t, size_t> carried;
  /// The in-place rule's decisions for the entry.
  dist::InPlaceReuse inPlace;
};

} // namespace mlir::loom::emit

#endif // LOOM_TARGET_COMMON_STEPARENA_H
