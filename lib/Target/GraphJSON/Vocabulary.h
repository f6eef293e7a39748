//===- Vocabulary.h - Names shared by graph JSON import and export -*- C++ -*-//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The words graph JSON spells the same way in both directions: the format's
// name and version, element-type names, the argument attributes, and the
// enum attributes the format writes as strings. Keeping them in one place is
// what makes import and export inverse to each other.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_GRAPHJSON_VOCABULARY_H
#define LOOM_LIB_TARGET_GRAPHJSON_VOCABULARY_H

#include "mlir/IR/Attributes.h"
#include "loom/Dialect/AttributeNames.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace mlir {
namespace loom {
namespace graph_json {

inline constexpr llvm::StringLiteral kFormatName = "loom-graph";
inline constexpr int64_t kFormatVersion = 1;
inline constexpr llvm::StringLiteral kEntryName = "forward";
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kInputAttrName;
/// The pseudo-op that stands for `arith.constant`.
inline constexpr llvm::StringLiteral kConstantOpName = "constant";
inline constexpr llvm::StringLiteral kDTypeList =
    "f64, f32, bf16, f16, i64, i32 or i1";

/// The element type called `name` (`f32`, `bf16`, `i1`, ...), or null.
Type parseDType(StringRef name, MLIRContext *context);

/// The graph-JSON name of `type`, or nothing when the format lacks it.
std::optional<StringRef> getDTypeName(Type type);

/// An enum attribute that graph JSON writes as its case name (`"tanh"`).
/// Adding an enum attribute to the `loom` dialect adds one entry to
/// `getEnumCodecs()`; the importer finds which one an op attribute expects
/// by asking the op (see Import.cpp).
struct EnumCodec {
  /// The attribute of case `name`, or null when no case has that name.
  Attribute (*fromString)(MLIRContext *context, StringRef name);
  /// The case name of `attr`, or nothing when `attr` is not this enum.
  std::optional<StringRef> (*toString)(Attribute attr);
  /// Any attribute of this enum (used to ask an op what it accepts).
  Attribute (*sample)(MLIRContext *context);
  /// The case names, for messages: "none or tanh".
  StringRef cases;
};

/// Every enum attribute an op attribute may hold.
ArrayRef<EnumCodec> getEnumCodecs();

} // namespace graph_json
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_TARGET_GRAPHJSON_VOCABULARY_H
