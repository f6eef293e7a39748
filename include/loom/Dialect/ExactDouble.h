//===- ExactDouble.h - A double pass option printed exactly -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// MLIR prints a `double` pass option with raw_ostream's default precision
// (7 significant digits), so the textual pipeline `loomc
// --dump-pass-pipeline` prints would replay `--lr 1.23456789e-4` as
// 1.234568e-04, and `loom-opt --pass-pipeline=...` would not reproduce
// loomc's output. Options of type `ExactDouble` print the shortest text
// that reads back to the same double, and convert to and from `double`, so
// pass code reads them as before.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_EXACTDOUBLE_H
#define LOOM_DIALECT_EXACTDOUBLE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace mlir::loom {

/// A double that prints with as many digits as reading it back needs.
struct ExactDouble {
  double value = 0;

  ExactDouble() = default;
  ExactDouble(double value) : value(value) {}
  operator double() const { return value; }

  /// The shortest of %.15g, %.16g and %.17g that reads back to `value`.
  std::string str() const {
    char text[40];
    for (int digits = 15; digits <= 17; ++digits) {
      std::snprintf(text, sizeof(text), "%.*g", digits, value);
      if (std::strtod(text, nullptr) == value)
        break;
    }
    return text;
  }
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     ExactDouble value) {
  return os << value.str();
}

} // namespace mlir::loom

namespace llvm::cl {

/// Parses an `ExactDouble` option as llvm::cl parses a double.
template <>
class parser<mlir::loom::ExactDouble>
    : public basic_parser<mlir::loom::ExactDouble> {
public:
  parser(Option &option) : basic_parser(option) {}

  bool parse(Option &option, StringRef argName, StringRef arg,
             mlir::loom::ExactDouble &value) {
    double parsed = 0;
    if (arg.trim().getAsDouble(parsed))
      return option.error("'" + arg + "' value invalid for number argument!");
    value = parsed;
    return false;
  }
  StringRef getValueName() const override { return "number"; }
  void printOptionDiff(const Option &option, mlir::loom::ExactDouble value,
                       const OptVal &defaultValue, size_t globalWidth) const {
    printOptionName(option, globalWidth);
    outs() << "= " << value.str() << "\n";
  }
};

} // namespace llvm::cl

#endif // LOOM_DIALECT_EXACTDOUBLE_H
