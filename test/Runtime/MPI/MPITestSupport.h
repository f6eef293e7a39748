//===- MPITestSupport.h - Helpers of the MPI test programs ------*- C++ -*-===//
//-*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the MPI test programs: deterministic tensor contents that every
// rank can compute for every other rank, row-major index arithmetic for the
// reference results, exact (bitwise) comparison, the block of a global tensor
// a layout assigns to a rank, and a JUnit writer so that tools/check.sh
// counts the cases one by one.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TEST_RUNTIME_MPI_MPITESTSUPPORT_H
#define LOOM_TEST_RUNTIME_MPI_MPITESTSUPPORT_H

#include "loom/Runtime/MPI/DeviceMesh.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::mpitest {

using runtime::numElements;
using runtime::Shape;
using runtime::mpi::AxisList;
using runtime::mpi::DeviceMesh;

inline uint64_t splitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Element `index` of rank `rank`'s tensor for the call tagged `salt`.
/// Floats have full mantissas and magnitudes that differ by rank, so the
/// order of a sum shows in its bits; integers stay small enough to never
/// overflow a sum.
template <typename T> T valueAt(int64_t rank, int64_t index, uint64_t salt) {
  uint64_t bits = splitMix64(salt * 0x100000001b3ull ^
                             splitMix64(static_cast<uint64_t>(rank) << 40 ^
                                        static_cast<uint64_t>(index)));
  if constexpr (std::is_floating_point_v<T>) {
    double unit = static_cast<double>(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    return static_cast<T>(unit * (1.0 + 7.25 * static_cast<double>(rank % 3)));
  } else {
    return static_cast<T>(static_cast<int64_t>(bits % 2001) - 1000);
  }
}

/// Rank `rank`'s tensor of `shape` for the call tagged `salt`. With
/// `specials`, floats also hold NaNs and zeros of both signs, which a max
/// must propagate and order exactly as the interpreter does.
template <typename T>
std::vector<T> tensorOf(int64_t rank, const Shape &shape, uint64_t salt,
                        bool specials = false) {
  std::vector<T> values(runtime::numElements(shape));
  for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
    values[i] = valueAt<T>(rank, i, salt);
    if constexpr (std::is_floating_point_v<T>) {
      if (specials && i % 11 == 5 && rank % 3 == 1)
        values[i] = std::numeric_limits<T>::quiet_NaN();
      if (specials && i % 13 == 7)
        values[i] = rank % 2 ? T(0.0) : T(-0.0);
    }
  }
  return values;
}

inline std::vector<int64_t> unravel(int64_t flat, const Shape &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

inline int64_t ravel(const std::vector<int64_t> &index, const Shape &shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + index[d];
  return flat;
}

template <typename T> std::string show(T value) {
  std::ostringstream os;
  os.precision(17);
  os << value;
  return os.str();
}

/// Compares bit for bit; returns "" or a description of the first
/// difference.
template <typename T>
std::string compareBits(const std::vector<T> &got,
                        const std::vector<T> &expected) {
  if (got.size() != expected.size())
    return "got " + std::to_string(got.size()) + " elements, expected " +
           std::to_string(expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &expected[i], sizeof(T)) != 0)
      return "element " + std::to_string(i) + " is " + show(got[i]) +
             ", expected " + show(expected[i]);
  return "";
}

/// The offset of `rank`'s block of a global tensor whose dim d is split over
/// `dims[d]` (a `#dist.layout` without partial axes), and its local shape.
inline void blockOf(const DeviceMesh &mesh, int64_t rank,
                    const std::vector<AxisList> &dims, const Shape &global,
                    Shape &offset, Shape &local) {
  std::vector<int64_t> coordinates = mesh.getCoordinates(rank);
  offset.assign(global.size(), 0);
  local = global;
  for (size_t d = 0; d < global.size(); ++d) {
    int64_t block = 0, blocks = 1;
    for (const std::string &axis : dims[d]) {
      size_t position = *mesh.findAxis(axis);
      block = block * mesh.getAxes()[position].size + coordinates[position];
      blocks *= mesh.getAxes()[position].size;
    }
    local[d] = global[d] / blocks;
    offset[d] = block * local[d];
  }
}

/// Copies the block at `offset` of shape `local` out of `global`.
template <typename T>
std::vector<T> extract(const std::vector<T> &global, const Shape &globalShape,
                       const Shape &offset, const Shape &local) {
  std::vector<T> block(runtime::numElements(local));
  for (int64_t i = 0; i < static_cast<int64_t>(block.size()); ++i) {
    std::vector<int64_t> index = unravel(i, local);
    for (size_t d = 0; d < index.size(); ++d)
      index[d] += offset[d];
    block[i] = global[ravel(index, globalShape)];
  }
  return block;
}

/// One reported test case.
struct CaseResult {
  std::string name;
  std::string failure; // empty when it passed
  double seconds = 0;
};

inline std::string escapeXml(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// Writes JUnit XML (the shape tools/summarize-tests.py reads).
inline bool writeJUnit(const std::string &path, const std::string &suite,
                       const std::vector<CaseResult> &cases) {
  FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    return false;
  int failures = 0;
  for (const CaseResult &c : cases)
    failures += !c.failure.empty();
  std::fprintf(file,
               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites>\n<testsuite name=\"%s\" tests=\"%zu\" "
               "failures=\"%d\">\n",
               escapeXml(suite).c_str(), cases.size(), failures);
  for (const CaseResult &c : cases) {
    std::fprintf(file, "<testcase classname=\"%s\" name=\"%s\" time=\"%.3f\"",
                 escapeXml(suite).c_str(), escapeXml(c.name).c_str(),
                 c.seconds);
    if (c.failure.empty())
      std::fprintf(file, "/>\n");
    else
      std::fprintf(file, ">\n<failure message=\"%s\"/>\n</testcase>\n",
                   escapeXml(c.failure).c_str());
  }
  std::fprintf(file, "</testsuite>\n</testsuites>\n");
  return std::fclose(file) == 0;
}

} // namespace loom::mpitest

#endif // LOOM_TEST_RUNTIME_MPI_MPITESTSUPPORT_H
