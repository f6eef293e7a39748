//===- Npy.cpp - Read numpy .npy files ------------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/Npy.h"

#include <cctype>
#include <cstring>

namespace loom::runtime::io {

namespace {
/// Returns the value text following `'key':` in the header dict, up to the
/// next top-level comma or closing brace; empty when the key is missing.
std::string findValue(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return {};
  at = header.find(':', at);
  if (at == std::string::npos)
    return {};
  ++at;
  int depth = 0;
  size_t end = at;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  std::string value = header.substr(at, end - at);
  size_t first = value.find_first_not_of(" \t");
  size_t last = value.find_last_not_of(" \t");
  return first == std::string::npos ? ""
                                    : value.substr(first, last - first + 1);
}
} // namespace

std::optional<std::string> parseNpy(const std::string &path,
                                    const std::string &contents,
                                    TensorData &tensor) {
  std::string at = "`" + path + "`: ";
  if (contents.size() < 10 || contents.compare(0, 6, "\x93NUMPY") != 0)
    return at + "not a .npy file (missing the \\x93NUMPY magic)";
  unsigned major = static_cast<unsigned char>(contents[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(contents[8]) |
                   static_cast<unsigned char>(contents[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (contents.size() < 12)
      return at + "truncated .npy header";
    uint32_t length;
    std::memcpy(&length, contents.data() + 8, 4);
    headerLength = length;
    headerStart = 12;
  } else {
    return at + "unsupported .npy version " + std::to_string(major) +
           ", expected 1, 2 or 3";
  }
  if (headerStart + headerLength > contents.size())
    return at + "truncated .npy header";
  std::string header = contents.substr(headerStart, headerLength);

  std::string descr = findValue(header, "descr");
  if (descr.size() < 4 || (descr.front() != '\'' && descr.front() != '"'))
    return at + "header has no `descr` string";
  descr = descr.substr(1, descr.size() - 2);
  static const std::pair<const char *, DType> kDescrs[] = {
      {"<f8", DType::F64}, {"<f4", DType::F32}, {"<f2", DType::F16},
      {"<i8", DType::I64}, {"<i4", DType::I32}, {"|b1", DType::Bool}};
  std::optional<DType> dtype;
  for (const auto &[name, d] : kDescrs)
    if (descr == name)
      dtype = d;
  if (!dtype)
    return at + "unsupported dtype `" + descr +
           "`, expected little-endian <f8 <f4 <f2 <i8 <i4 or |b1";
  if (findValue(header, "fortran_order") != "False")
    return at + "fortran_order arrays are not supported, save C-order arrays";

  std::string shapeText = findValue(header, "shape");
  if (shapeText.size() < 2 || shapeText.front() != '(' ||
      shapeText.back() != ')')
    return at + "header has no `shape` tuple";
  tensor.dtype = *dtype;
  tensor.shape.clear();
  std::string digits;
  for (char c : shapeText.substr(1, shapeText.size() - 2) + ",") {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
    } else if (c == ',') {
      if (!digits.empty()) {
        if (digits.size() > 15)
          return at + "shape is too large";
        tensor.shape.push_back(std::stoll(digits));
      }
      digits.clear();
    } else if (c != ' ' && c != 'L') {
      return at + "malformed shape `" + shapeText + "`";
    }
  }
  size_t dataStart = headerStart + headerLength;
  uint64_t expected = static_cast<uint64_t>(tensor.numElements()) *
                      static_cast<uint64_t>(dtypeSize(*dtype));
  if (contents.size() - dataStart != expected)
    return at + "data holds " + std::to_string(contents.size() - dataStart) +
           " bytes, expected " + std::to_string(expected) + " for dtype `" +
           descr + "` and shape " + shapeText + ": truncated or corrupt";
  tensor.bytes.assign(contents.begin() + dataStart, contents.end());
  return std::nullopt;
}

std::optional<std::string> readNpy(const std::string &path,
                                   TensorData &tensor) {
  std::string contents;
  if (auto error = readWholeFile(path, contents))
    return error;
  return parseNpy(path, contents, tensor);
}

std::string serializeNpy(const TensorData &tensor) {
  const char *descr = nullptr;
  switch (tensor.dtype) {
  case DType::F64:
    descr = "<f8";
    break;
  case DType::F32:
    descr = "<f4";
    break;
  case DType::F16:
    descr = "<f2";
    break;
  case DType::I64:
    descr = "<i8";
    break;
  case DType::I32:
    descr = "<i4";
    break;
  case DType::Bool:
    descr = "|b1";
    break;
  case DType::BF16:
    return {};
  }
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char *>(tensor.bytes.data()),
             tensor.bytes.size());
  return out;
}

} // namespace loom::runtime::io
