//===- OpCensus.cpp - Count the ops of each function ----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/OpCensus/OpCensus.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json.hpp>

#include <map>

using namespace mlir;

LogicalResult mlir::loom::writeOpCensus(ModuleOp module, raw_ostream &os) {
  nlohmann::ordered_json functions = nlohmann::ordered_json::array();
  for (auto func : module.getOps<func::FuncOp>()) {
    // std::map keeps the op names sorted, so the output is deterministic.
    std::map<std::string, int64_t> counts;
    int64_t total = 0;
    func.walk([&](Operation *op) {
      if (op == func.getOperation())
        return;
      ++counts[op->getName().getStringRef().str()];
      ++total;
    });
    nlohmann::ordered_json entry;
    entry["name"] = func.getSymName().str();
    entry["arguments"] = func.getNumArguments();
    entry["results"] = func.getNumResults();
    entry["total"] = total;
    entry["ops"] = counts;
    functions.push_back(std::move(entry));
  }
  nlohmann::ordered_json census;
  census["functions"] = std::move(functions);
  // Symbol names may hold any bytes; replace invalid UTF-8 instead of failing.
  os << census.dump(2, ' ', /*ensure_ascii=*/false,
                    nlohmann::ordered_json::error_handler_t::replace)
     << "\n";
  return success();
}
