//===- KernelCallEmission.cpp - Print a kernel call table entry -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// StepEmitterBase::emitKernelCall: one op through the emission table.
// 1. Check that the op's values are tensors the runtimes hold.
// 2. Look the op up (an op without an entry is an error naming it and the
//    target) and describe its call; the target may refine it.
// 3. Declare its results in the table's order (the target places them:
//    arena, caller's buffer, the updated state's buffer), after a
//    collective's group comment.
// 4. Write each argument in the target's syntax and let the target print
//    the statement with its runtime's checks (a send's or receive's inside
//    the test that its peer is another rank).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterSupport.h"
#include "loom/Target/Common/KernelCallTable.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::loom::emit {

std::string StepEmitterBase::storageType(Value value) {
  return isIntegerStorage(value.getType()) ? "int64_t" : "T";
}

std::string StepEmitterBase::inputListArgument(ArrayRef<Value> inputs,
                                               Value result) {
  SmallVector<std::string> names;
  for (Value v : inputs)
    names.push_back(name(v));
  return "{" + llvm::join(names, ", ") + "}";
}

LogicalResult StepEmitterBase::emitKernelCall(Operation *op) {
  const KernelCallTable::Entry *tableEntry = KernelCallTable::get().lookup(op);
  if (!tableEntry)
    return op->emitError() << "no " << emitter.target << " emission for '"
                           << op->getName() << "'";
  if (tableEntry->checksTensorTypes) {
    // Every value but an index scalar is a tensor the runtime holds.
    for (Value v : op->getOperands())
      if (!isScalar(v) &&
          failed(checkTensorType(op, v.getType(), "an operand", emitter)))
        return failure();
    for (Value v : op->getResults())
      if (failed(checkTensorType(op, v.getType(), "a result", emitter)))
        return failure();
  }
  FailureOr<KernelCall> described = tableEntry->describe(op, *this);
  if (failed(described))
    return failure();
  KernelCall &call = *described;
  if (failed(refineKernelCall(op, call)))
    return failure();

  if (call.aliasOf) {
    alias(call.results.front().result, call.aliasOf);
    return success();
  }
  if (call.groupComment)
    groupComment(op);
  for (const ResultBuffer &result : call.results) {
    if (result.updates)
      allocateUpdate(result.result, result.updates);
    else
      allocate(result.result);
  }

  bool onCommunicator = call.executor == Executor::Communicator;
  std::string ns =
      (call.executor == Executor::CommunicatorKernel ? communicatorNamespace()
                                                     : kernelNamespace())
          .str();
  SmallVector<std::string> templateArgs;
  for (const TemplateArg &arg : call.templateArgs) {
    switch (arg.kind) {
    case TemplateArg::Kind::StorageOf:
      templateArgs.push_back(storageType(arg.value));
      break;
    case TemplateArg::Kind::RunType:
      templateArgs.push_back("T");
      break;
    case TemplateArg::Kind::ScalarStorageOf:
      if (std::optional<std::string> type = scalarTemplateArgument(arg.value))
        templateArgs.push_back(*type);
      break;
    }
  }
  std::string callee = onCommunicator
                           ? communicatorObject().str() + "." + call.kernel
                           : ns + "::" + call.kernel;
  if (!templateArgs.empty())
    callee += "<" + llvm::join(templateArgs, ", ") + ">";

  std::vector<std::string> arguments;
  switch (call.executor) {
  case Executor::Stream:
  case Executor::Blas:
    if (std::string executor = executorArgument(call); !executor.empty())
      arguments.push_back(executor);
    break;
  case Executor::Communicator:
    break; // A method of the communicator, which knows its stream.
  case Executor::CommunicatorKernel:
    arguments.push_back(communicatorObject().str());
    break;
  }
  for (const CallArg &arg : call.args) {
    switch (arg.kind) {
    case CallArg::Kind::Buffer:
      arguments.push_back(arg.value ? name(arg.value) : "nullptr");
      break;
    case CallArg::Kind::Shape:
      arguments.push_back(arg.value ? shape(arg.value) : "{}");
      break;
    case CallArg::Kind::Count:
      arguments.push_back(std::to_string(numElements(arg.value)));
      break;
    case CallArg::Kind::Scalar:
      arguments.push_back(scalarArgument(arg.value));
      break;
    case CallArg::Kind::LearningRate:
      arguments.push_back(learningRateArgument(arg.text, arg.value));
      break;
    case CallArg::Kind::Enumerator:
      arguments.push_back(ns + "::" + arg.text);
      break;
    case CallArg::Kind::CommunicatorEnumerator:
      arguments.push_back(communicatorNamespace().str() + "::" + arg.text);
      break;
    case CallArg::Kind::RunPrecisionCastTarget:
      arguments.push_back("(std::is_same_v<T, double> ? " + ns +
                          "::CastTarget::F64 : " + ns + "::CastTarget::F32)");
      break;
    case CallArg::Kind::Text:
      arguments.push_back(arg.text);
      break;
    case CallArg::Kind::InputList:
      arguments.push_back(inputListArgument(arg.values, arg.value));
      break;
    case CallArg::Kind::OutputList:
    case CallArg::Kind::ShapeList: {
      SmallVector<std::string> items;
      for (Value v : arg.values)
        items.push_back(arg.kind == CallArg::Kind::OutputList ? name(v)
                                                              : shape(v));
      arguments.push_back("{" + llvm::join(items, ", ") + "}");
      break;
    }
    }
  }
  if (call.peer.variable.empty()) {
    printCall(op, call, callee, std::move(arguments));
    return success();
  }
  // Every rank runs one instruction stream: a transfer with itself does
  // nothing (a receive's buffer stays zero), as in the interpreter.
  const std::string &peer = call.peer.variable;
  os << "  if (const int64_t " << peer << " = " << call.peer.expression << "; "
     << peer << " != loomRank) {\n  ";
  printCall(op, call, callee, std::move(arguments));
  os << "  }\n";
  return success();
}

} // namespace mlir::loom::emit
