//===- EntrySignature.h - Names and initial values of arguments -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// How `loom-run` names the arguments and results of an entry function, so
// that tensors in safetensors files find their argument, and how an argument
// without data gets its initial value.
//
// Argument names, first match wins:
//   1. a `loom.name` string attribute (optimizer states: `<param>.exp_avg`,
//      `step`; any argument a program wants to name);
//   2. the ecosystem name of its `#loom.param` (`transformer.wte.weight`);
//   3. the role of its `#loom.input` (`input_ids`, `labels`, ...);
//   4. `arg<N>`.
// Result names: a `loom.name` result attribute; else `loss` when the
// function has a single result that is a rank-0 float; else `result<N>`.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_ENTRYSIGNATURE_H
#define LOOM_INTERPRETER_ENTRYSIGNATURE_H

#include "loom/Interpreter/HostTensor.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Runtime/IO/TensorFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace mlir::loom::interp {

/// The argument and result attribute naming a tensor.
using ::mlir::loom::kNameAttrName;

/// The name of argument `index` (see the file comment).
std::string getArgumentName(func::FuncOp func, unsigned index);

/// The name of result `index` (see the file comment).
std::string getResultName(func::FuncOp func, unsigned index);

/// The shape argument / result `index` has in tensor files when the IR
/// holds it as a row-major view of that shape (`loom.file_shape`, e.g.
/// GPT-2's `c_attn.weight`: [3H, H] in files, [3, 1, H, H] in the IR), or
/// nullopt. Readers accept a file tensor of either shape; writers give it
/// the file shape.
std::optional<Shape> getArgumentFileShape(func::FuncOp func, unsigned index);
std::optional<Shape> getResultFileShape(func::FuncOp func, unsigned index);

/// Builds the initial global value of argument `index`, which has no data
/// in the inputs: its `#loom.param` initializer, zeros for an argument with
/// a `loom.name` (an optimizer state starts at zero), otherwise an error
/// saying the argument needs data.
std::optional<std::string> initializeArgument(func::FuncOp func, unsigned index,
                                              const Shape &globalShape,
                                              StorageKind floatKind,
                                              uint64_t seed, HostTensor &out);

/// The file dtype of a declared element type (f64 f32 bf16 f16 i64 i32 i1;
/// index as i64), or nullopt for other types.
std::optional<::loom::runtime::io::DType> fileDTypeOf(Type elementType);

/// Converts file data to a tensor in `kind`, checking that the file's dtype
/// may feed an argument declared as `declared` in a run computing floats in
/// `floatKind`: float arguments take the declared dtype or the run's,
/// integer arguments I64 or I32, i1 arguments BOOL. `what` names the tensor
/// in errors.
std::optional<std::string>
tensorFromFile(const ::loom::runtime::io::TensorData &data, Type declared,
               StorageKind floatKind, const std::string &what, HostTensor &out);

/// Converts a result to file data: floats in the run's dtype (an f64 run
/// writes F64 even for f32 results), integers and i1 in their declared
/// dtype.
::loom::runtime::io::TensorData tensorToFile(const HostTensor &tensor,
                                             Type declared);

} // namespace mlir::loom::interp

#endif // LOOM_INTERPRETER_ENTRYSIGNATURE_H
