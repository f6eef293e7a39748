//===- TensorFile.cpp - Named tensors as stored in files ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/TensorFile.h"

#include "loom/Support/InputFile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

// Tensor files are little-endian and elements are copied with memcpy.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "tensor file I/O assumes a little-endian host");

namespace loom::runtime::io {

std::string_view dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return "F64";
  case DType::F32:
    return "F32";
  case DType::BF16:
    return "BF16";
  case DType::F16:
    return "F16";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType d : {DType::F64, DType::F32, DType::BF16, DType::F16, DType::I64,
                  DType::I32, DType::Bool})
    if (dtypeName(d) == name)
      return d;
  return std::nullopt;
}

int64_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::Bool:
    return 1;
  }
  return 1;
}

bool isFloat(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::BF16 ||
         dtype == DType::F16;
}

float bf16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

uint16_t floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float f16ToFloat(uint16_t bits) {
  uint32_t sign = (bits >> 15) & 1, exponent = (bits >> 10) & 0x1f,
           mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude =
        std::ldexp(static_cast<float>(mantissa | 0x400), int(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

uint16_t floatToF16(float value) {
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value))
    return 0x7e00;
  float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f)
    return sign | 0x7c00;
  int exponent;
  std::frexp(magnitude, &exponent);
  if (magnitude == 0.0f)
    return sign;
  // Count the value in units of its half ulp, rounding ties to even; a
  // carry into the next binade is handled by the bit layout itself.
  int ulpExponent = std::max(exponent - 11, -24);
  uint32_t units = static_cast<uint32_t>(
      std::nearbyint(std::ldexp(magnitude, -ulpExponent)));
  if (ulpExponent == -24)
    return sign | static_cast<uint16_t>(units); // subnormal (or 0x400 carry)
  // Normal: units = 1.mantissa * 2^10; the biased exponent is e + 14.
  uint32_t biased = static_cast<uint32_t>(ulpExponent + 25);
  uint32_t bits = (biased << 10) + (units - 0x400);
  return sign | static_cast<uint16_t>(bits);
}

int64_t TensorData::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<double> TensorData::toDoubles() const {
  int64_t n = numElements();
  std::vector<double> out(n);
  const uint8_t *p = bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
    case DType::F64: {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      out[i] = v;
      break;
    }
    case DType::F32: {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      out[i] = v;
      break;
    }
    case DType::BF16:
    case DType::F16: {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      out[i] = dtype == DType::BF16 ? bf16ToFloat(v) : f16ToFloat(v);
      break;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      out[i] = static_cast<double>(v);
      break;
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      out[i] = v;
      break;
    }
    case DType::Bool:
      out[i] = p[i] != 0;
      break;
    }
  }
  return out;
}

std::vector<int64_t> TensorData::toInt64s() const {
  int64_t n = numElements();
  std::vector<int64_t> out(n);
  if (dtype == DType::I64) {
    std::memcpy(out.data(), bytes.data(), 8 * n);
  } else if (dtype == DType::I32) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      out[i] = v;
    }
  } else if (dtype == DType::Bool) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = bytes[i] != 0;
  } else {
    std::vector<double> values = toDoubles();
    for (int64_t i = 0; i < n; ++i)
      out[i] = std::isfinite(values[i]) ? static_cast<int64_t>(values[i]) : 0;
  }
  return out;
}

TensorData TensorData::fromDoubles(DType dtype, std::vector<int64_t> shape,
                                   const std::vector<double> &values) {
  TensorData t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = static_cast<int64_t>(values.size());
  t.bytes.resize(n * dtypeSize(dtype));
  uint8_t *p = t.bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    double v = values[i];
    switch (dtype) {
    case DType::F64:
      std::memcpy(p + 8 * i, &v, 8);
      break;
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(p + 4 * i, &f, 4);
      break;
    }
    case DType::BF16:
    case DType::F16: {
      // Through float: double -> float -> half can double-round, which is
      // acceptable for the storage of reference outputs.
      uint16_t h = dtype == DType::BF16 ? floatToBF16(static_cast<float>(v))
                                        : floatToF16(static_cast<float>(v));
      std::memcpy(p + 2 * i, &h, 2);
      break;
    }
    case DType::I64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(p + 8 * i, &x, 8);
      break;
    }
    case DType::I32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p + 4 * i, &x, 4);
      break;
    }
    case DType::Bool:
      p[i] = v != 0.0;
      break;
    }
  }
  return t;
}

TensorData TensorData::fromInt64s(DType dtype, std::vector<int64_t> shape,
                                  const std::vector<int64_t> &values) {
  if (isFloat(dtype)) {
    std::vector<double> d(values.begin(), values.end());
    return fromDoubles(dtype, std::move(shape), d);
  }
  TensorData t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = static_cast<int64_t>(values.size());
  t.bytes.resize(n * dtypeSize(dtype));
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DType::I64) {
      std::memcpy(t.bytes.data() + 8 * i, &values[i], 8);
    } else if (dtype == DType::I32) {
      int32_t x = static_cast<int32_t>(static_cast<uint32_t>(values[i]));
      std::memcpy(t.bytes.data() + 4 * i, &x, 4);
    } else {
      t.bytes[i] = values[i] != 0;
    }
  }
  return t;
}

std::optional<std::string> writeFileAtomically(const std::string &path,
                                               const std::string &bytes) {
  // Same directory as the target, so that rename never crosses filesystems.
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const char *what) -> std::optional<std::string> {
    std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    return "cannot write `" + path + "`: " + what + ": " + why;
  };
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return "cannot write `" + path + "`: " + std::strerror(errno);
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ::close(fd);
      return fail("write failed");
    }
    written += static_cast<size_t>(n);
  }
  // The data must be on disk before the rename makes it visible, or a crash
  // could leave the new name pointing at an empty or partial file.
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("fsync failed");
  }
  if (::close(fd) != 0)
    return fail("close failed");
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    return fail("rename failed");
  // Make the rename itself durable. Failing to open the directory (e.g. no
  // read permission) leaves the file complete, just not yet durable.
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty())
    dir = "/";
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return std::nullopt;
}

std::optional<std::string> readWholeFile(const std::string &path,
                                         std::string &bytes) {
  return ::loom::support::readRegularFile(path, bytes);
}

} // namespace loom::runtime::io
