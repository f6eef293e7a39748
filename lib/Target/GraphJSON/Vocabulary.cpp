//===- Vocabulary.cpp - Names shared by graph JSON import and export ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "Vocabulary.h"

#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::graph_json;

Type graph_json::parseDType(StringRef name, MLIRContext *context) {
  Builder b(context);
  return llvm::StringSwitch<Type>(name)
      .Case("f64", b.getF64Type())
      .Case("f32", b.getF32Type())
      .Case("bf16", b.getBF16Type())
      .Case("f16", b.getF16Type())
      .Case("i64", b.getI64Type())
      .Case("i32", b.getI32Type())
      .Case("i1", b.getI1Type())
      .Default(Type());
}

std::optional<StringRef> graph_json::getDTypeName(Type type) {
  if (type.isF64())
    return StringRef("f64");
  if (type.isF32())
    return StringRef("f32");
  if (type.isBF16())
    return StringRef("bf16");
  if (type.isF16())
    return StringRef("f16");
  if (type.isSignlessInteger(64))
    return StringRef("i64");
  if (type.isSignlessInteger(32))
    return StringRef("i32");
  if (type.isSignlessInteger(1))
    return StringRef("i1");
  return std::nullopt;
}

ArrayRef<EnumCodec> graph_json::getEnumCodecs() {
  static const EnumCodec codecs[] = {
      {/*fromString=*/
       [](MLIRContext *context, StringRef name) -> Attribute {
         std::optional<GeluApproximation> value =
             symbolizeGeluApproximation(name);
         if (!value)
           return {};
         return GeluApproximationAttr::get(context, *value);
       },
       /*toString=*/
       [](Attribute attr) -> std::optional<StringRef> {
         if (auto gelu = dyn_cast<GeluApproximationAttr>(attr))
           return stringifyGeluApproximation(gelu.getValue());
         return std::nullopt;
       },
       /*sample=*/
       [](MLIRContext *context) -> Attribute {
         return GeluApproximationAttr::get(context, GeluApproximation::None);
       },
       /*cases=*/"none or tanh"},
  };
  return codecs;
}
