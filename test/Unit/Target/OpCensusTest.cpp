//===- OpCensusTest.cpp - The op census exporter --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/OpCensus/OpCensus.h"
#include "loom/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"
#include <nlohmann/json.hpp>

using namespace mlir;

namespace {

/// Parses `source`, takes its census and parses the JSON back.
nlohmann::json censusOf(StringRef source) {
  DialectRegistry registry;
  loom::registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  EXPECT_TRUE(module);
  if (!module)
    return {};
  std::string text;
  llvm::raw_string_ostream os(text);
  EXPECT_TRUE(succeeded(loom::writeOpCensus(*module, os)));
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

TEST(OpCensusTest, CountsEveryOpPerFunctionInModuleOrder) {
  nlohmann::json census = censusOf(R"mlir(
    func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = loom.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %1 = loom.add %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %1 : tensor<4xf32>
    }
    func.func @first(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<f32> {
      %0 = loom.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
      %1 = loom.reduce_sum %0 {axes = array<i64: 0, 1>} : (tensor<2x5xf32>) -> tensor<f32>
      return %1 : tensor<f32>
    }
  )mlir");
  ASSERT_TRUE(census.is_object());
  const nlohmann::json &functions = census["functions"];
  ASSERT_EQ(functions.size(), 2u);

  EXPECT_EQ(functions[0]["name"], "second");
  EXPECT_EQ(functions[0]["arguments"], 1);
  EXPECT_EQ(functions[0]["total"], 3);
  EXPECT_EQ(functions[0]["ops"]["loom.add"], 2);
  EXPECT_EQ(functions[0]["ops"]["func.return"], 1);

  EXPECT_EQ(functions[1]["name"], "first");
  EXPECT_EQ(functions[1]["arguments"], 2);
  EXPECT_EQ(functions[1]["results"], 1);
  EXPECT_EQ(functions[1]["total"], 3);
  EXPECT_EQ(functions[1]["ops"]["loom.matmul"], 1);
  EXPECT_EQ(functions[1]["ops"]["loom.reduce_sum"], 1);
  EXPECT_FALSE(functions[1]["ops"].contains("loom.add"));
}

TEST(OpCensusTest, EmptyModuleHasNoFunctions) {
  nlohmann::json census = censusOf("module {}");
  ASSERT_TRUE(census.is_object());
  EXPECT_TRUE(census["functions"].is_array());
  EXPECT_TRUE(census["functions"].empty());
}

} // namespace
