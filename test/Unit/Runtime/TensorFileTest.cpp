//===- TensorFileTest.cpp - safetensors and .npy files --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Round trips through safetensors and .npy for every dtype, half-precision
// conversions, and the errors a corrupt or truncated file produces.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/Npy.h"
#include "loom/Runtime/IO/SafeTensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace loom::runtime::io;

namespace {

TensorMap everyDType() {
  TensorMap tensors;
  tensors["f64"] =
      TensorData::fromDoubles(DType::F64, {2, 3}, {1.5, -2, 3e-300, 4, 5, 6});
  tensors["f32"] = TensorData::fromDoubles(DType::F32, {3}, {0.1, -0.5, 7});
  tensors["bf16"] = TensorData::fromDoubles(DType::BF16, {2}, {1.0, -3.5});
  tensors["f16"] = TensorData::fromDoubles(DType::F16, {2}, {0.25, 65504});
  tensors["i64"] = TensorData::fromInt64s(DType::I64, {2}, {-(1ll << 40), 7});
  tensors["i32"] = TensorData::fromInt64s(DType::I32, {1, 2}, {-5, 9});
  tensors["bool"] = TensorData::fromInt64s(DType::Bool, {3}, {1, 0, 1});
  tensors["scalar"] = TensorData::fromDoubles(DType::F64, {}, {42});
  tensors["empty"] = TensorData::fromDoubles(DType::F32, {0, 4}, {});
  return tensors;
}

TEST(SafeTensors, RoundTripsEveryDTypeAndMetadata) {
  TensorMap tensors = everyDType();
  std::string bytes = serializeSafeTensors(tensors, {{"format", "pt"}});
  // The header is padded so the data starts on an 8-byte boundary.
  uint64_t headerLength;
  std::memcpy(&headerLength, bytes.data(), 8);
  EXPECT_EQ(headerLength % 8, 0u);

  TensorMap back;
  std::map<std::string, std::string> metadata;
  ASSERT_EQ(parseSafeTensors("t.safetensors", bytes, back, &metadata),
            std::nullopt);
  EXPECT_EQ(metadata.at("format"), "pt");
  ASSERT_EQ(back.size(), tensors.size());
  for (const auto &[name, t] : tensors) {
    EXPECT_EQ(back[name].dtype, t.dtype) << name;
    EXPECT_EQ(back[name].shape, t.shape) << name;
    EXPECT_EQ(back[name].bytes, t.bytes) << name;
  }
  EXPECT_EQ(back["i64"].toInt64s()[0], -(1ll << 40));
  EXPECT_EQ(back["bf16"].toDoubles()[1], -3.5);
  EXPECT_EQ(back["f16"].toDoubles()[1], 65504.0);
  EXPECT_EQ(back["scalar"].toDoubles()[0], 42.0);
}

TEST(SafeTensors, WritesAtomicallyAndReadsBack) {
  std::string path = testing::TempDir() + "/roundtrip.safetensors";
  ASSERT_EQ(writeSafeTensors(path, everyDType()), std::nullopt);
  TensorMap back;
  ASSERT_EQ(readSafeTensors(path, back), std::nullopt);
  EXPECT_EQ(back.size(), everyDType().size());
  // A write into a missing directory fails and says where.
  auto error = writeSafeTensors(testing::TempDir() + "/no/such/dir/x", {});
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("cannot write"), std::string::npos);
}

/// Parses `bytes` and returns the error (empty string on success).
std::string errorOf(const std::string &bytes) {
  TensorMap tensors;
  return parseSafeTensors("bad.safetensors", bytes, tensors).value_or("");
}

/// A file with header `json` and `data` bytes of data.
std::string file(const std::string &json, size_t data) {
  uint64_t length = json.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  return out + json + std::string(data, '\0');
}

TEST(SafeTensors, ReportsCorruptFiles) {
  EXPECT_EQ(errorOf("abc"), "`bad.safetensors`: truncated safetensors file: "
                            "expected an 8-byte header length, found 3 bytes");
  EXPECT_NE(errorOf(file("{}", 0).substr(0, 9)).find("exceeds the file"),
            std::string::npos);
  EXPECT_EQ(errorOf(file("{not json", 0)).rfind(
                "`bad.safetensors`: header: line 1, column 3: invalid JSON: "
                "syntax error",
                0),
            0u)
      << errorOf(file("{not json", 0));
  EXPECT_EQ(errorOf(file("[1]", 0)),
            "`bad.safetensors`: header is not a JSON object");
  EXPECT_EQ(
      errorOf(file(
          R"({"w": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}})",
          1)),
      "`bad.safetensors`: tensor `w`: unsupported dtype `F8`, expected one of "
      "F64 F32 BF16 F16 I64 I32 BOOL");
  EXPECT_EQ(
      errorOf(file(
          R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})",
          8)),
      "`bad.safetensors`: tensor `w`: data_offsets [0, 4) hold 4 bytes, "
      "expected 8 for dtype F32 and its shape");
  EXPECT_EQ(
      errorOf(file(
          R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
          4)),
      "`bad.safetensors`: tensor `w`: data_offsets end 8 is past the end of "
      "the data (4 bytes): truncated file");
  EXPECT_EQ(
      errorOf(file(
          R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})",
          4)),
      "`bad.safetensors`: tensor `w`: shape entries must be non-negative "
      "integers");
  EXPECT_EQ(errorOf(file(
                R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                            "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                8)),
            "`bad.safetensors`: tensor data ranges overlap");
  EXPECT_EQ(errorOf(file(R"({"w": {"dtype": "F32", "shape": [1]}})", 4)),
            "`bad.safetensors`: tensor `w`: `data_offsets` must be two "
            "non-negative integers");
  TensorMap tensors;
  auto missing = readSafeTensors("/nonexistent/x.safetensors", tensors);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->rfind("cannot read `/nonexistent/x.safetensors`", 0), 0u);
}

TEST(Npy, RoundTripsAndReadsVersion2) {
  for (const auto &[name, t] : everyDType()) {
    if (t.dtype == DType::BF16)
      continue; // numpy has no bf16
    std::string bytes = serializeNpy(t);
    TensorData back;
    ASSERT_EQ(parseNpy("t.npy", bytes, back), std::nullopt) << name;
    EXPECT_EQ(back.dtype, t.dtype) << name;
    EXPECT_EQ(back.shape, t.shape) << name;
    EXPECT_EQ(back.bytes, t.bytes) << name;
  }
  // Version 2.0: a 4-byte header length.
  std::string header = "{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (2,), }\n";
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  uint32_t length = header.size();
  v2.append(reinterpret_cast<const char *>(&length), 4);
  double values[2] = {1.25, -8};
  v2 += header + std::string(reinterpret_cast<const char *>(values), 16);
  TensorData back;
  ASSERT_EQ(parseNpy("v2.npy", v2, back), std::nullopt);
  EXPECT_EQ(back.shape, std::vector<int64_t>{2});
  EXPECT_EQ(back.toDoubles()[1], -8.0);
}

TEST(Npy, ReportsWhatItCannotRead) {
  TensorData t = TensorData::fromDoubles(DType::F64, {2, 2}, {1, 2, 3, 4});
  std::string good = serializeNpy(t);
  TensorData back;
  auto errorOfNpy = [&](const std::string &bytes) {
    return parseNpy("x.npy", bytes, back).value_or("");
  };
  EXPECT_EQ(errorOfNpy("hello"),
            "`x.npy`: not a .npy file (missing the \\x93NUMPY magic)");
  EXPECT_EQ(errorOfNpy(good.substr(0, good.size() - 3)),
            "`x.npy`: data holds 29 bytes, expected 32 for dtype `<f8` and "
            "shape (2, 2): truncated or corrupt");
  std::string bigEndian = good;
  bigEndian.replace(bigEndian.find("<f8"), 3, ">f8");
  EXPECT_EQ(errorOfNpy(bigEndian),
            "`x.npy`: unsupported dtype `>f8`, expected little-endian <f8 <f4 "
            "<f2 <i8 <i4 or |b1");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_EQ(errorOfNpy(fortran), "`x.npy`: fortran_order arrays are not "
                                 "supported, save C-order arrays");
}

TEST(HalfPrecision, RoundsToNearestEven) {
  EXPECT_EQ(bf16ToFloat(floatToBF16(1.0f)), 1.0f);
  // 1 + 2^-8 is halfway between two bf16 values: ties go to even (1.0).
  EXPECT_EQ(bf16ToFloat(floatToBF16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(bf16ToFloat(floatToBF16(1.0f + 3 * std::ldexp(1.0f, -8))),
            1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(floatToF16(1.0f), 0x3c00);
  EXPECT_EQ(floatToF16(-2.0f), 0xc000);
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(floatToF16(70000.0f), 0x7c00);
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to even (1.0).
  EXPECT_EQ(floatToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  for (uint16_t bits : {0x0001, 0x03ff, 0x0400, 0x3555, 0x7bff, 0xbc01})
    EXPECT_EQ(floatToF16(f16ToFloat(bits)), bits);
}

} // namespace
