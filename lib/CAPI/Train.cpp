//===- Train.cpp - The training executable's options in the C API ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The flags of `launch.sh` (the emitted training executable) for embedders:
// the table comes from the runtime's own (trainer::trainFlags) and the check
// is the executable's parser (trainer::parseTrainOptions), so a program
// that builds a command line through the C API or Python's `loom.train`
// learns of a bad flag before it starts MPI ranks, in the same words.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "loom/Runtime/Trainer/TrainOptions.h"

using namespace mlir::loom;
namespace trainer = loom::runtime::trainer;

size_t loomTrainOptionGetCount(void) { return trainer::trainFlags().size(); }

const char *loomTrainOptionGetName(size_t index) {
  if (index >= trainer::trainFlags().size())
    return nullptr;
  // Without the leading `--`, as the compile options are named.
  return trainer::trainFlags()[index].name + 2;
}

int loomTrainOptionTakesValue(size_t index) {
  if (index >= trainer::trainFlags().size())
    return 0;
  return trainer::trainFlags()[index].takesValue ? 1 : 0;
}

const char *loomTrainOptionGetDescription(size_t index) {
  if (index >= trainer::trainFlags().size())
    return nullptr;
  return trainer::trainFlags()[index].help;
}

LoomStatus *loomTrainArgsCheck(const char *const *args, size_t numArgs) {
  if (numArgs && !args)
    return capi::makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                            "loomTrainArgsCheck: `args` is NULL");
  std::vector<std::string> list;
  for (size_t i = 0; i < numArgs; ++i) {
    if (!args[i])
      return capi::makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                              "loomTrainArgsCheck: argument " +
                                  std::to_string(i) + " is NULL");
    list.emplace_back(args[i]);
  }
  trainer::TrainOptions options;
  if (auto error = trainer::parseTrainOptions(list, options))
    return capi::makeStatus(LOOM_STATUS_INVALID_ARGUMENT, *error);
  return nullptr;
}
