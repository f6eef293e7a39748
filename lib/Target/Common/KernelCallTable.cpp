//===- KernelCallTable.cpp - The registry of op -> kernel call entries ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The KernelCall builders and the table every target reads. Each dialect
// adds its entries in its own file (LoomKernelCalls.cpp,
// DistKernelCalls.cpp); get() builds the table once.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/KernelCallTable.h"
#include "loom/Target/Common/EmitterSupport.h"

#include "llvm/Support/ErrorHandling.h"

namespace mlir::loom::emit {

KernelCall &KernelCall::buffer(Value v) {
  args.push_back({CallArg::Kind::Buffer, v, "", {}});
  return *this;
}
KernelCall &KernelCall::shape(Value v) {
  args.push_back({CallArg::Kind::Shape, v, "", {}});
  return *this;
}
KernelCall &KernelCall::count(Value v) {
  args.push_back({CallArg::Kind::Count, v, "", {}});
  return *this;
}
KernelCall &KernelCall::scalar(Value v) {
  args.push_back({CallArg::Kind::Scalar, v, "", {}});
  return *this;
}
KernelCall &KernelCall::learningRate(double rate, Value factor) {
  args.push_back(
      {CallArg::Kind::LearningRate, factor, doubleLiteral(rate), {}});
  return *this;
}
KernelCall &KernelCall::enumerator(StringRef type, StringRef value) {
  args.push_back(
      {CallArg::Kind::Enumerator, Value(), (type + "::" + value).str(), {}});
  return *this;
}
KernelCall &KernelCall::communicatorEnumerator(StringRef type,
                                               StringRef value) {
  args.push_back({CallArg::Kind::CommunicatorEnumerator,
                  Value(),
                  (type + "::" + value).str(),
                  {}});
  return *this;
}
KernelCall &KernelCall::runPrecisionCastTarget() {
  args.push_back({CallArg::Kind::RunPrecisionCastTarget, Value(), "", {}});
  return *this;
}
KernelCall &KernelCall::text(std::string text) {
  args.push_back({CallArg::Kind::Text, Value(), std::move(text), {}});
  return *this;
}
KernelCall &KernelCall::integer(int64_t value) {
  return text(std::to_string(value));
}
KernelCall &KernelCall::real(double value) {
  return text(doubleLiteral(value));
}
KernelCall &KernelCall::boolean(bool value) { return text(boolLiteral(value)); }
KernelCall &KernelCall::ints(ArrayRef<int64_t> values) {
  return text(shapeLiteral(values));
}
KernelCall &KernelCall::inputList(ValueRange inputs, Value result) {
  args.push_back({CallArg::Kind::InputList, result, "",
                  SmallVector<Value>(inputs.begin(), inputs.end())});
  return *this;
}
KernelCall &KernelCall::outputList(ValueRange outputs) {
  args.push_back({CallArg::Kind::OutputList, Value(), "",
                  SmallVector<Value>(outputs.begin(), outputs.end())});
  return *this;
}
KernelCall &KernelCall::shapeList(ValueRange values) {
  args.push_back({CallArg::Kind::ShapeList, Value(), "",
                  SmallVector<Value>(values.begin(), values.end())});
  return *this;
}
KernelCall &KernelCall::storageOf(Value v) {
  templateArgs.push_back({TemplateArg::Kind::StorageOf, v});
  return *this;
}
KernelCall &KernelCall::runType() {
  templateArgs.push_back({TemplateArg::Kind::RunType, Value()});
  return *this;
}
KernelCall &KernelCall::scalarStorageOf(Value v) {
  templateArgs.push_back({TemplateArg::Kind::ScalarStorageOf, v});
  return *this;
}
KernelCall &KernelCall::allocates(Value result, Value updates) {
  results.push_back({result, updates});
  return *this;
}

const KernelCallTable::Entry *KernelCallTable::lookup(Operation *op) const {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  auto it = entries.find(name->getTypeID());
  return it == entries.end() ? nullptr : &it->second;
}

void KernelCallTable::insert(TypeID op, Entry entry) {
  // Two entries for one op would make the emission depend on the order of
  // registration: a programming error in the table, not user input.
  if (!entries.try_emplace(op, std::move(entry)).second)
    llvm::report_fatal_error("an op has two kernel call table entries");
}

const KernelCallTable &KernelCallTable::get() {
  static const KernelCallTable table = [] {
    KernelCallTable built;
    addLoomKernelCalls(built);
    addDistKernelCalls(built);
    return built;
  }();
  return table;
}

} // namespace mlir::loom::emit
