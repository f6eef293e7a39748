//===- DistAttrsTest.cpp - #dist.layout and the layout library ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Passes move between `#dist.layout` and the layout library's `Layout`; these
// tests check that the conversion is exact both ways, that it reports what
// the mesh rejects, and that a mesh op yields the mesh it declares.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/InitAllDialects.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom::dist;

namespace {

class DistAttrsTest : public ::testing::Test {
protected:
  DistAttrsTest() {
    DialectRegistry registry;
    mlir::loom::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  Mesh dpTp() { return *Mesh::get({{"dp", 2}, {"tp", 4}}); }

  MLIRContext context;
};

TEST_F(DistAttrsTest, LayoutRoundTripsThroughTheLibrary) {
  Mesh mesh = dpTp();
  Layout layout = *Layout::get(mesh, {{"tp", "dp"}, {}}, {});
  auto meshRef = FlatSymbolRefAttr::get(&context, "m");
  LayoutAttr attr = LayoutAttr::get(meshRef, layout);
  EXPECT_EQ(attr.getMesh(), meshRef);
  EXPECT_EQ(attr.getRank(), 2u);
  EXPECT_EQ(attr.getDimAxes(0), (SmallVector<StringRef>{"tp", "dp"}));
  EXPECT_TRUE(attr.getDimAxes(1).empty());
  ValueOrError<Layout> back = attr.toLayout(mesh);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, layout);
}

TEST_F(DistAttrsTest, ParsedLayoutConvertsToTheCanonicalLayout) {
  // Written partial order is kept by the attribute (the op verifiers reject
  // it), while the library's layout is canonical.
  auto attr = cast<LayoutAttr>(parseAttribute(
      R"(#dist.layout<@m, [["dp"], []], partial = ["tp"]>)", &context));
  Mesh mesh = dpTp();
  EXPECT_EQ(*attr.toLayout(mesh), *Layout::get(mesh, {{"dp"}, {}}, {"tp"}));
  EXPECT_EQ(attr.getPartialAxes(), (SmallVector<StringRef>{"tp"}));
}

TEST_F(DistAttrsTest, ConversionReportsAxesTheMeshLacks) {
  auto attr = cast<LayoutAttr>(
      parseAttribute(R"(#dist.layout<@m, [["sp"]]>)", &context));
  EXPECT_EQ(attr.toLayout(dpTp()).error(),
            "layout names `sp`, which is not an axis of mesh {dp:2, tp:4}");
}

TEST_F(DistAttrsTest, MeshOpYieldsItsMesh) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      R"(dist.mesh @m shape [2, 4] axes ["dp", "tp"])", &context);
  ASSERT_TRUE(module);
  auto meshOp = cast<MeshOp>(module->getBody()->front());
  ValueOrError<Mesh> mesh = meshOp.getMesh();
  ASSERT_TRUE(mesh.ok()) << mesh.error();
  EXPECT_EQ(*mesh, dpTp());

  SymbolTableCollection tables;
  FailureOr<Mesh> found =
      lookupMesh(meshOp, FlatSymbolRefAttr::get(&context, "m"), tables);
  ASSERT_TRUE(succeeded(found));
  EXPECT_EQ(*found, dpTp());
}

} // namespace
