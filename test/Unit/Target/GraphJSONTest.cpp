//===- GraphJSONTest.cpp - Graph JSON import and export -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The lit tests check the tools end to end; these check the library API:
// that the round-trip graph covers every registered `loom` op, that export
// after import gives back the same JSON document (compared as JSON values,
// so key order and number spelling do not matter), and that failures report
// the JSON path and write nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/GraphJSON/GraphJSON.h"
#include "loom/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"
#include <nlohmann/json.hpp>

using namespace mlir;

namespace {

std::string readInput(StringRef name) {
  auto buffer = llvm::MemoryBuffer::getFile(
      (Twine(LOOM_GRAPH_JSON_INPUTS) + "/" + name).str());
  EXPECT_TRUE(bool(buffer)) << "cannot read " << name.str();
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

struct GraphJSONTest : ::testing::Test {
  GraphJSONTest() {
    DialectRegistry registry;
    loom::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Exports `module`; returns the text, or nothing on failure.
  std::optional<std::string> exportText(ModuleOp module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (failed(loom::exportGraphJson(module, os)))
      return std::nullopt;
    return text;
  }

  MLIRContext context;
};

TEST_F(GraphJSONTest, RoundTripGraphCoversEveryLoomOp) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(readInput("every-op.mlir"), &context);
  ASSERT_TRUE(module);
  llvm::StringSet<> used;
  module->walk(
      [&](Operation *op) { used.insert(op->getName().getStringRef()); });
  unsigned loomOps = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "loom")
      continue;
    ++loomOps;
    EXPECT_TRUE(used.contains(name.getStringRef()))
        << name.getStringRef().str() << " is missing from every-op.mlir";
  }
  EXPECT_GT(loomOps, 40u);
  EXPECT_TRUE(used.contains("arith.constant"));
}

TEST_F(GraphJSONTest, ExportAfterImportGivesTheSameDocument) {
  std::string text = readInput("tiny.json");
  OwningOpRef<ModuleOp> module =
      loom::importGraphJson(text, "tiny.json", &context);
  ASSERT_TRUE(module);
  std::optional<std::string> exported = exportText(*module);
  ASSERT_TRUE(exported);
  nlohmann::json original =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  nlohmann::json back =
      nlohmann::json::parse(*exported, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(original.is_discarded());
  ASSERT_FALSE(back.is_discarded());
  EXPECT_EQ(original, back) << *exported;
}

TEST_F(GraphJSONTest, IrSurvivesExportAndImport) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(readInput("every-op.mlir"), &context);
  ASSERT_TRUE(module);
  std::optional<std::string> exported = exportText(*module);
  ASSERT_TRUE(exported);
  OwningOpRef<ModuleOp> back =
      loom::importGraphJson(*exported, "every-op.json", &context);
  ASSERT_TRUE(back);
  std::string before, after;
  llvm::raw_string_ostream beforeOs(before), afterOs(after);
  module->print(beforeOs);
  back->print(afterOs);
  EXPECT_EQ(before, after);
}

TEST_F(GraphJSONTest, ImportErrorNamesFileAndJsonPath) {
  std::string text = readInput("tiny.json");
  // Make `eps` of the layer norm a string.
  size_t at = text.find("\"eps\": 1e-06");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "\"eps\": \"x\"");
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    errors.push_back(diag.str());
    return success();
  });
  OwningOpRef<ModuleOp> module =
      loom::importGraphJson(text, "graph.json", &context);
  EXPECT_FALSE(module);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "graph.json: ops[3].attributes.eps: expected a number "
                       "(or \"inf\", \"-inf\", \"nan\"), found \"x\"");
}

TEST_F(GraphJSONTest, ExportOfInexpressibleIrFailsAndWritesNothing) {
  // An argument that is neither a parameter nor an input has no JSON form.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @forward(%x: tensor<f32>) -> tensor<f32> {
      return %x : tensor<f32>
    })mlir",
                                                             &context);
  ASSERT_TRUE(module);
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    errors.push_back(diag.str());
    return success();
  });
  std::string text;
  llvm::raw_string_ostream os(text);
  EXPECT_TRUE(failed(loom::exportGraphJson(*module, os)));
  EXPECT_TRUE(text.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("neither a parameter"), std::string::npos)
      << errors[0];
}

} // namespace
