//===- CommandLine.cpp - The flags rule for llvm::cl tools ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/CommandLine.h"
#include "loom/Support/Flags.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CommandLine.h"

#include <map>

namespace cl = llvm::cl;

namespace loom::support {

std::optional<std::string> findRepeatedFlag() {
  // One option may be registered in several subcommands: count it once.
  llvm::SmallPtrSet<cl::Option *, 32> visited;
  std::map<std::string, int64_t> repeated;
  auto scan = [&](cl::SubCommand &sub) {
    for (auto &entry : cl::getRegisteredOptions(sub)) {
      cl::Option *option = entry.second;
      if (!visited.insert(option).second)
        continue;
      // cl::list and cl::bits default to ZeroOrMore: repeatable.
      cl::NumOccurrencesFlag flag = option->getNumOccurrencesFlag();
      if (flag != cl::Optional && flag != cl::Required)
        continue;
      if (option->isPositional() || option->isConsumeAfter())
        continue;
      if (option->getNumOccurrences() > 1)
        repeated["-" + std::string(option->ArgStr.size() > 1 ? "-" : "") +
                 option->ArgStr.str()] = option->getNumOccurrences();
    }
  };
  scan(cl::SubCommand::getTopLevel());
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
    scan(*sub);
  if (repeated.empty())
    return std::nullopt;
  return describeRepeatedFlag(repeated.begin()->first,
                              repeated.begin()->second);
}

} // namespace loom::support
