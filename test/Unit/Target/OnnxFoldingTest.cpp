//===- OnnxFoldingTest.cpp - The ONNX importer's constant folders ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each folder of lib/Target/ONNX/ConstantFolding.cpp against results worked
// out by hand from the operator's ONNX definition (negative indices and
// bounds, broadcasting, 0 and -1 in Reshape shapes, the diagonal offset of
// Trilu), and the refusals: out-of-range axes, bad permutations, results too
// large to fold.
//
//===----------------------------------------------------------------------===//

#include "Translator.h"

#include "gtest/gtest.h"

using namespace mlir::loom::onnx_import;

namespace {

ConstTensor ints(Shape shape, std::vector<int64_t> values) {
  ConstTensor t;
  t.shape = std::move(shape);
  t.dtype = DType::I64;
  t.ints = std::move(values);
  return t;
}

ConstTensor floats(Shape shape, std::vector<double> values) {
  ConstTensor t;
  t.shape = std::move(shape);
  t.dtype = DType::F64;
  t.floats = std::move(values);
  return t;
}

Node node(const std::string &opType, size_t outputs = 1) {
  Node n;
  n.name = "/" + opType;
  n.opType = opType;
  for (size_t i = 0; i < outputs; ++i)
    n.outputs.push_back("y" + std::to_string(i));
  return n;
}

void setInts(Node &n, const std::string &key, std::vector<int64_t> values) {
  n.attributes[key].kind = Attribute::Ints;
  n.attributes[key].ints = std::move(values);
}

void setInt(Node &n, const std::string &key, int64_t value) {
  n.attributes[key].kind = Attribute::Int;
  n.attributes[key].i = value;
}

/// Folds `n` on `inputs`; the error text, "" on success.
std::string fold(const Node &n, std::vector<const ConstTensor *> inputs,
                 std::vector<ConstTensor> &out) {
  return getFolders().at(n.opType)(n, inputs, out);
}

TEST(OnnxFoldingTest, GatherTakesNegativeIndicesAlongTheAxis) {
  ConstTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  ConstTensor idx = ints({2}, {-1, 0});
  Node n = node("Gather");
  setInt(n, "axis", 1);
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(n, {&data, &idx}, out), "");
  EXPECT_EQ(out[0].shape, (Shape{2, 2}));
  EXPECT_EQ(out[0].ints, (std::vector<int64_t>{3, 1, 6, 4}));
  ConstTensor bad = ints({1}, {3});
  EXPECT_NE(fold(n, {&data, &bad}, out).find("out of range"),
            std::string::npos);
}

TEST(OnnxFoldingTest, SliceClampsBoundsAndSteps) {
  ConstTensor data = ints({6}, {0, 1, 2, 3, 4, 5});
  // starts -5 -> 1, ends 100 -> 6, step 2: 1, 3, 5.
  ConstTensor starts = ints({1}, {-5}), ends = ints({1}, {100}),
              axes = ints({1}, {0}), steps = ints({1}, {2});
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(node("Slice"), {&data, &starts, &ends, &axes, &steps}, out),
            "");
  EXPECT_EQ(out[0].ints, (std::vector<int64_t>{1, 3, 5}));
  ConstTensor back = ints({1}, {-1});
  EXPECT_NE(fold(node("Slice"), {&data, &starts, &ends, &axes, &back}, out),
            "");
}

TEST(OnnxFoldingTest, ReshapeCopiesZeroDimsAndInfersMinusOne) {
  ConstTensor data = ints({2, 3, 4}, std::vector<int64_t>(24, 7));
  ConstTensor target = ints({2}, {0, -1});
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(node("Reshape"), {&data, &target}, out), "");
  EXPECT_EQ(out[0].shape, (Shape{2, 12}));
  ConstTensor wrong = ints({2}, {5, -1});
  EXPECT_NE(fold(node("Reshape"), {&data, &wrong}, out), "");
}

TEST(OnnxFoldingTest, ConcatJoinsAlongTheAxisAndChecksOtherDims) {
  ConstTensor a = ints({2, 1}, {1, 2}), b = ints({2, 2}, {3, 4, 5, 6});
  Node n = node("Concat");
  setInt(n, "axis", -1);
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(n, {&a, &b}, out), "");
  EXPECT_EQ(out[0].shape, (Shape{2, 3}));
  EXPECT_EQ(out[0].ints, (std::vector<int64_t>{1, 3, 4, 2, 5, 6}));
  ConstTensor scalar = ints({}, {9});
  EXPECT_EQ(fold(n, {&a, &scalar}, out), "inputs differ in rank");
}

TEST(OnnxFoldingTest, TransposePermutesAndRefusesNonPermutations) {
  ConstTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  Node n = node("Transpose");
  setInts(n, "perm", {1, 0});
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(n, {&data}, out), "");
  EXPECT_EQ(out[0].shape, (Shape{3, 2}));
  EXPECT_EQ(out[0].ints, (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  setInts(n, "perm", {0, 0});
  EXPECT_NE(fold(n, {&data}, out), "");
}

TEST(OnnxFoldingTest, WhereBroadcastsConditionAndBranches) {
  ConstTensor cond = ints({2, 1}, {1, 0});
  cond.dtype = DType::I1;
  ConstTensor fill = floats({}, {-1.0}), x = floats({3}, {1, 2, 3});
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(node("Where"), {&cond, &fill, &x}, out), "");
  EXPECT_EQ(out[0].shape, (Shape{2, 3}));
  EXPECT_EQ(out[0].floats, (std::vector<double>{-1, -1, -1, 1, 2, 3}));
}

TEST(OnnxFoldingTest, TriluKeepsTheTriangleAroundDiagonalK) {
  ConstTensor ones = floats({3, 3}, std::vector<double>(9, 1.0));
  ConstTensor k = ints({}, {1});
  Node lower = node("Trilu");
  setInt(lower, "upper", 0);
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(lower, {&ones, &k}, out), "");
  // Lower with k = 1: col - row <= 1.
  EXPECT_EQ(out[0].floats, (std::vector<double>{1, 1, 0, 1, 1, 1, 1, 1, 1}));
  out.clear();
  ASSERT_EQ(fold(node("Trilu"), {&ones, nullptr}, out), "");
  EXPECT_EQ(out[0].floats, (std::vector<double>{1, 1, 1, 0, 1, 1, 0, 0, 1}));
}

TEST(OnnxFoldingTest, SplitCutsConsecutivePieces) {
  ConstTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  ConstTensor sizes = ints({2}, {1, 2});
  Node n = node("Split", 2);
  setInt(n, "axis", 1);
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(n, {&data, &sizes}, out), "");
  EXPECT_EQ(out[0].ints, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(out[1].ints, (std::vector<int64_t>{2, 3, 5, 6}));
  ConstTensor wrong = ints({2}, {1, 1});
  out.clear();
  EXPECT_NE(fold(n, {&data, &wrong}, out), "");
}

TEST(OnnxFoldingTest, UnsqueezeAndSqueezeMoveUnitDims) {
  ConstTensor data = ints({3}, {1, 2, 3});
  ConstTensor axes = ints({2}, {0, -1});
  std::vector<ConstTensor> out;
  ASSERT_EQ(fold(node("Unsqueeze"), {&data, &axes}, out), "");
  EXPECT_EQ(out[0].shape, (Shape{1, 3, 1}));
  ConstTensor squeezeAxes = ints({1}, {2});
  ConstTensor unsqueezed = out[0];
  out.clear();
  ASSERT_EQ(fold(node("Squeeze"), {&unsqueezed, &squeezeAxes}, out), "");
  EXPECT_EQ(out[0].shape, (Shape{1, 3}));
  ConstTensor outOfRange = ints({1}, {5});
  EXPECT_EQ(fold(node("Squeeze"), {&unsqueezed, &outOfRange}, out),
            "axis out of range");
}

TEST(OnnxFoldingTest, ResultsTooLargeToFoldAreRefused) {
  ConstTensor shape = ints({2}, {1 << 20, 1 << 20});
  std::vector<ConstTensor> out;
  EXPECT_NE(fold(node("ConstantOfShape"), {&shape}, out).find("too large"),
            std::string::npos);
  ConstTensor start = ints({}, {0}), limit = ints({}, {int64_t(1) << 40}),
              delta = ints({}, {1});
  EXPECT_NE(fold(node("Range"), {&start, &limit, &delta}, out), "");
}

TEST(OnnxFoldingTest, ShapesBroadcastAsNumpyDoes) {
  Shape result;
  ASSERT_TRUE(broadcastShapes({4, 1, 3}, {2, 1}, result));
  EXPECT_EQ(result, (Shape{4, 2, 3}));
  EXPECT_FALSE(broadcastShapes({2, 3}, {4, 3}, result));
}

} // namespace
