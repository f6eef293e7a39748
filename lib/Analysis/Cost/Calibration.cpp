//===- Calibration.cpp - Measured curves: lookup, JSON, validation --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Lookup: rates are interpolated linearly in log space (log size → log
//    rate; trilinear in log M, log N, log K for GEMMs) and clamped at the
//    ends of each axis, so a shape outside the measured range gets the rate
//    of the nearest measured one rather than an extrapolation.
// 2. Validation: a calibration is user input (a file anyone can edit), so
//    every number is checked: sizes strictly increasing, rates positive and
//    finite, one rate per sample, and the time a curve implies (size / rate)
//    non-decreasing in every size: a curve that says a bigger problem runs
//    in less time is a measurement error, and pricing by it would reward
//    plans for doing more work. Messages name the JSON pointer, what was
//    expected and what was found.
//
//===----------------------------------------------------------------------===//

#include "CalibrationJSON.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

namespace mlir::loom::dist {

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

namespace {

/// Where `x` falls on the increasing `axis`, in log space: the lower sample
/// and the weight of the upper one (0 at or below the first sample, and on
/// the last one at or above the last).
std::pair<size_t, double> locate(const std::vector<double> &axis, double x) {
  if (axis.size() < 2 || x <= axis.front())
    return {0, 0.0};
  if (x >= axis.back())
    return {axis.size() - 2, 1.0};
  size_t upper = std::upper_bound(axis.begin(), axis.end(), x) - axis.begin();
  size_t lower = upper - 1;
  double t = (std::log(x) - std::log(axis[lower])) /
             (std::log(axis[upper]) - std::log(axis[lower]));
  return {lower, t};
}

/// log(rate) at index `i` + `di` of an axis of `size` samples.
size_t clampIndex(size_t i, size_t di, size_t size) {
  return std::min(i + di, size - 1);
}

} // namespace

double Curve1D::getRate(double size) const {
  auto [i, t] = locate(sizes, size);
  double low = std::log(rates[i]);
  double high = std::log(rates[clampIndex(i, 1, rates.size())]);
  return std::exp(low + t * (high - low));
}

double GemmCurve::getRate(double gemmM, double gemmN, double gemmK) const {
  auto [i, ti] = locate(m, gemmM);
  auto [j, tj] = locate(n, gemmN);
  auto [l, tl] = locate(k, gemmK);
  double logRate = 0;
  for (size_t di = 0; di < 2; ++di)
    for (size_t dj = 0; dj < 2; ++dj)
      for (size_t dl = 0; dl < 2; ++dl) {
        double weight =
            (di ? ti : 1 - ti) * (dj ? tj : 1 - tj) * (dl ? tl : 1 - tl);
        if (weight == 0)
          continue;
        double rate = flopsPerSecond[clampIndex(i, di, m.size())][clampIndex(
            j, dj, n.size())][clampIndex(l, dl, k.size())];
        logRate += weight * std::log(rate);
      }
  return std::exp(logRate);
}

std::optional<CollectiveFit>
Calibration::findCollective(const std::string &kind, int64_t groupSize) const {
  auto it = collectives.find(kind);
  if (it == collectives.end())
    return std::nullopt;
  for (const CollectiveFit &fit : it->second)
    if (fit.groupSize == groupSize)
      return fit;
  return std::nullopt;
}

const std::vector<std::string> &getCalibratedCollectiveNames() {
  static const std::vector<std::string> names = {
      "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"};
  return names;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

std::string describe(const json &value) {
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

std::string formatNumber(double value) {
  std::ostringstream os;
  os.precision(6);
  os << value;
  return os.str();
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// Relative slack for the time checks: the tool writes monotone curves,
/// and printing then reading a rate may move its last bit.
constexpr double kTimeSlack = 1e-9;

class CalibrationReader {
public:
  std::optional<std::string> error;

  void fail(const std::string &path, const std::string &message) {
    if (!error)
      error = path + ": " + message;
  }

  bool checkObject(const json &value, const std::string &path,
                   const std::vector<std::string> &known,
                   const std::string &what) {
    if (!value.is_object()) {
      fail(path, "expected " + what + ", got " + describe(value));
      return false;
    }
    if (known.empty())
      return true;
    for (auto it = value.begin(); it != value.end(); ++it)
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        fail(path + "/" + it.key(),
             "unknown key (expected one of " + joinNames(known) + ")");
        return false;
      }
    return true;
  }

  const json *field(const json &object, const std::string &path,
                    const std::string &key, const std::string &what) {
    auto it = object.find(key);
    if (it != object.end())
      return &*it;
    fail(path + "/" + key, "required field missing (expected " + what + ")");
    return nullptr;
  }

  std::optional<double> readPositive(const json &value, const std::string &path,
                                     const std::string &unit) {
    if (value.is_number()) {
      double number = value.get<double>();
      if (std::isfinite(number) && number > 0)
        return number;
    }
    fail(path,
         "expected a positive number in " + unit + ", got " + describe(value));
    return std::nullopt;
  }

  /// Reads a non-empty array of positive numbers.
  std::optional<std::vector<double>> readList(const json &value,
                                              const std::string &path,
                                              const std::string &unit) {
    if (!value.is_array() || value.empty()) {
      fail(path, "expected a non-empty array of positive numbers in " + unit +
                     ", got " + describe(value));
      return std::nullopt;
    }
    std::vector<double> numbers;
    for (size_t i = 0; i < value.size(); ++i) {
      auto number =
          readPositive(value[i], path + "/" + std::to_string(i), unit);
      if (!number)
        return std::nullopt;
      numbers.push_back(*number);
    }
    return numbers;
  }

  /// Reads a strictly increasing list of sizes.
  std::optional<std::vector<double>> readAxis(const json &value,
                                              const std::string &path,
                                              const std::string &unit) {
    auto axis = readList(value, path, unit);
    if (!axis)
      return std::nullopt;
    for (size_t i = 1; i < axis->size(); ++i)
      if (!((*axis)[i] > (*axis)[i - 1])) {
        fail(path + "/" + std::to_string(i),
             "expected sizes strictly increasing, got " +
                 formatNumber((*axis)[i]) + " after " +
                 formatNumber((*axis)[i - 1]));
        return std::nullopt;
      }
    return axis;
  }

  /// Checks that time = size / rate does not fall from one sample to the
  /// next (`at` names the later sample's rate).
  bool checkTime(double size0, double rate0, double size1, double rate1,
                 const std::string &at, const std::string &sizeName) {
    double before = size0 / rate0, after = size1 / rate1;
    if (after >= before * (1 - kTimeSlack))
      return true;
    fail(at, "the time this implies falls from " + formatNumber(before) +
                 " s at " + sizeName + " " + formatNumber(size0) + " to " +
                 formatNumber(after) + " s at " + formatNumber(size1) +
                 " (a larger size cannot take less time)");
    return false;
  }

  /// `{"<sizeKey>": [...], "<rateKey>": [...]}`.
  void readCurve(const json &value, const std::string &path,
                 const std::string &sizeKey, const std::string &sizeUnit,
                 const std::string &rateKey, const std::string &rateUnit,
                 Curve1D &curve) {
    std::string what = "an object with " + sizeKey + " and " + rateKey;
    if (!checkObject(value, path, {sizeKey, rateKey}, what))
      return;
    const json *sizes = field(value, path, sizeKey, "an array in " + sizeUnit);
    const json *rates = field(value, path, rateKey, "an array in " + rateUnit);
    if (!sizes || !rates)
      return;
    auto axis = readAxis(*sizes, path + "/" + sizeKey, sizeUnit);
    auto list = readList(*rates, path + "/" + rateKey, rateUnit);
    if (!axis || !list)
      return;
    if (list->size() != axis->size()) {
      fail(path + "/" + rateKey,
           "expected " + std::to_string(axis->size()) + " rates (one per " +
               sizeKey + " entry), got " + std::to_string(list->size()));
      return;
    }
    for (size_t i = 1; i < axis->size(); ++i)
      if (!checkTime((*axis)[i - 1], (*list)[i - 1], (*axis)[i], (*list)[i],
                     path + "/" + rateKey + "/" + std::to_string(i), sizeKey))
        return;
    curve.sizes = std::move(*axis);
    curve.rates = std::move(*list);
  }

  void readGemm(const json &value, const std::string &path, GemmCurve &curve) {
    std::string what = "an object with m, n, k and flops_per_second";
    if (!checkObject(value, path, {"m", "n", "k", "flops_per_second"}, what))
      return;
    std::vector<double> *axes[] = {&curve.m, &curve.n, &curve.k};
    const char *names[] = {"m", "n", "k"};
    for (int a = 0; a < 3; ++a) {
      const json *axis = field(value, path, names[a], "an array of sizes");
      if (!axis)
        return;
      auto read = readAxis(*axis, path + "/" + names[a], "elements");
      if (!read)
        return;
      *axes[a] = std::move(*read);
    }
    const json *rates =
        field(value, path, "flops_per_second", "an [m][n][k] array in FLOP/s");
    if (!rates)
      return;
    std::string ratePath = path + "/flops_per_second";
    auto expectArray = [&](const json &array, const std::string &at,
                           size_t size, const char *axis) {
      if (array.is_array() && array.size() == size)
        return true;
      fail(at, "expected an array of " + std::to_string(size) + " (one per " +
                   axis + " entry), got " + describe(array));
      return false;
    };
    if (!expectArray(*rates, ratePath, curve.m.size(), "m"))
      return;
    curve.flopsPerSecond.assign(curve.m.size(), {});
    for (size_t i = 0; i < curve.m.size(); ++i) {
      std::string atI = ratePath + "/" + std::to_string(i);
      if (!expectArray((*rates)[i], atI, curve.n.size(), "n"))
        return;
      curve.flopsPerSecond[i].assign(curve.n.size(), {});
      for (size_t j = 0; j < curve.n.size(); ++j) {
        std::string atJ = atI + "/" + std::to_string(j);
        if (!expectArray((*rates)[i][j], atJ, curve.k.size(), "k"))
          return;
        for (size_t l = 0; l < curve.k.size(); ++l) {
          auto rate = readPositive((*rates)[i][j][l],
                                   atJ + "/" + std::to_string(l), "FLOP/s");
          if (!rate)
            return;
          curve.flopsPerSecond[i][j].push_back(*rate);
        }
      }
    }
    // The time 2·m·n·k / rate must not fall along any axis.
    auto flops = [&](size_t i, size_t j, size_t l) {
      return 2 * curve.m[i] * curve.n[j] * curve.k[l];
    };
    auto at = [&](size_t i, size_t j, size_t l) {
      return ratePath + "/" + std::to_string(i) + "/" + std::to_string(j) +
             "/" + std::to_string(l);
    };
    const auto &r = curve.flopsPerSecond;
    for (size_t i = 0; i < curve.m.size(); ++i)
      for (size_t j = 0; j < curve.n.size(); ++j)
        for (size_t l = 0; l < curve.k.size(); ++l) {
          if (i > 0 &&
              !checkTime(flops(i - 1, j, l), r[i - 1][j][l], flops(i, j, l),
                         r[i][j][l], at(i, j, l), "flops (m grows)"))
            return;
          if (j > 0 &&
              !checkTime(flops(i, j - 1, l), r[i][j - 1][l], flops(i, j, l),
                         r[i][j][l], at(i, j, l), "flops (n grows)"))
            return;
          if (l > 0 &&
              !checkTime(flops(i, j, l - 1), r[i][j][l - 1], flops(i, j, l),
                         r[i][j][l], at(i, j, l), "flops (k grows)"))
            return;
        }
  }

  /// `{"<dtype>": curve, ...}` covering exactly the dtypes of `peaks`.
  template <typename ReadOne>
  void readPerDtype(const json &value, const std::string &path,
                    const std::map<std::string, double> &peaks,
                    ReadOne readOne) {
    std::vector<std::string> dtypes;
    for (const auto &[dtype, peak] : peaks)
      dtypes.push_back(dtype);
    std::string what =
        "an object from dtype (" + joinNames(dtypes) + ") to a curve";
    if (!checkObject(value, path, {}, what))
      return;
    std::vector<std::string> given;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!peaks.count(it.key())) {
        fail(path + "/" + it.key(),
             "a curve for a dtype without a peak in /device/peak_flops "
             "(expected one of " +
                 joinNames(dtypes) + ")");
        return;
      }
      given.push_back(it.key());
    }
    std::sort(given.begin(), given.end());
    if (given != dtypes) {
      fail(path, "expected a curve for each dtype of /device/peak_flops (" +
                     joinNames(dtypes) + "), got " +
                     (given.empty() ? std::string("none") : joinNames(given)));
      return;
    }
    for (auto it = value.begin(); it != value.end(); ++it)
      readOne(it.value(), path + "/" + it.key(), it.key());
  }

  void readCollectives(const json &value, const std::string &path,
                       Calibration &calibration) {
    const std::vector<std::string> &names = getCalibratedCollectiveNames();
    if (!checkObject(value, path, names,
                     "an object from collective name to fits"))
      return;
    for (auto it = value.begin(); it != value.end(); ++it) {
      std::string at = path + "/" + it.key();
      const json &fits = it.value();
      if (!fits.is_array() || fits.empty()) {
        fail(at, "expected a non-empty array of {group_size, latency, "
                 "bandwidth}, got " +
                     describe(fits));
        return;
      }
      std::vector<CollectiveFit> read;
      for (size_t i = 0; i < fits.size(); ++i) {
        std::string atI = at + "/" + std::to_string(i);
        if (!checkObject(fits[i], atI, {"group_size", "latency", "bandwidth"},
                         "an object with group_size, latency and bandwidth"))
          return;
        CollectiveFit fit;
        const json *size = field(fits[i], atI, "group_size", "an integer >= 2");
        const json *latency =
            field(fits[i], atI, "latency", "a positive number in seconds");
        const json *bandwidth =
            field(fits[i], atI, "bandwidth", "a positive number in bytes/s");
        if (!size || !latency || !bandwidth)
          return;
        if (!size->is_number_integer() || size->get<int64_t>() < 2 ||
            size->get<int64_t>() > (int64_t(1) << 40)) {
          fail(atI + "/group_size",
               "expected an integer >= 2, got " + describe(*size));
          return;
        }
        fit.groupSize = size->get<int64_t>();
        if (!read.empty() && fit.groupSize <= read.back().groupSize) {
          fail(atI + "/group_size",
               "expected group sizes strictly increasing, got " +
                   std::to_string(fit.groupSize) + " after " +
                   std::to_string(read.back().groupSize));
          return;
        }
        auto alpha = readPositive(*latency, atI + "/latency", "seconds");
        auto beta = readPositive(*bandwidth, atI + "/bandwidth", "bytes/s");
        if (!alpha || !beta)
          return;
        fit.latencySeconds = *alpha;
        fit.bandwidthBytesPerSecond = *beta;
        read.push_back(fit);
      }
      calibration.collectives[it.key()] = std::move(read);
    }
  }

  void read(const json &value, const std::string &path,
            const std::map<std::string, double> &peaks,
            Calibration &calibration) {
    if (!checkObject(value, path,
                     {"date", "machine", "ranks", "gemm", "attention",
                      "elementwise", "row_kernel", "collectives"},
                     "an object"))
      return;
    for (auto [key, target] :
         {std::pair<const char *, std::string *>{"date", &calibration.date},
          {"machine", &calibration.machine}})
      if (const json *text = field(value, path, key, "a non-empty string")) {
        if (!text->is_string() || text->get<std::string>().empty())
          fail(path + "/" + key,
               "expected a non-empty string, got " + describe(*text));
        else
          *target = text->get<std::string>();
      }
    if (const json *ranks = field(value, path, "ranks", "an integer >= 1")) {
      if (!ranks->is_number_integer() || ranks->get<int64_t>() < 1 ||
          ranks->get<int64_t>() > (int64_t(1) << 40))
        fail(path + "/ranks",
             "expected an integer >= 1, got " + describe(*ranks));
      else
        calibration.ranks = ranks->get<int64_t>();
    }
    if (const json *gemm =
            field(value, path, "gemm", "an object from dtype to a GEMM grid"))
      readPerDtype(*gemm, path + "/gemm", peaks,
                   [&](const json &curve, const std::string &at,
                       const std::string &dtype) {
                     readGemm(curve, at, calibration.gemm[dtype]);
                   });
    if (const json *attention =
            field(value, path, "attention", "an object from dtype to a curve"))
      readPerDtype(*attention, path + "/attention", peaks,
                   [&](const json &curve, const std::string &at,
                       const std::string &dtype) {
                     readCurve(curve, at, "flops", "FLOPs", "flops_per_second",
                               "FLOP/s", calibration.attention[dtype]);
                   });
    if (const json *curve = field(value, path, "elementwise",
                                  "an object with bytes and bytes_per_second"))
      readCurve(*curve, path + "/elementwise", "bytes", "bytes",
                "bytes_per_second", "bytes/s", calibration.elementwise);
    if (const json *curve = field(value, path, "row_kernel",
                                  "an object with bytes and bytes_per_second"))
      readCurve(*curve, path + "/row_kernel", "bytes", "bytes",
                "bytes_per_second", "bytes/s", calibration.rowKernel);
    auto collectives = value.find("collectives");
    if (collectives != value.end())
      readCollectives(*collectives, path + "/collectives", calibration);
  }
};

ordered_json printCurve(const Curve1D &curve, const char *sizeKey,
                        const char *rateKey) {
  ordered_json value;
  value[sizeKey] = curve.sizes;
  value[rateKey] = curve.rates;
  return value;
}

} // namespace

std::optional<std::string>
readCalibration(const json &value, const std::string &path,
                const std::map<std::string, double> &peaks,
                Calibration &calibration) {
  CalibrationReader reader;
  reader.read(value, path, peaks, calibration);
  return reader.error;
}

ordered_json printCalibration(const Calibration &calibration) {
  ordered_json root;
  root["date"] = calibration.date;
  root["machine"] = calibration.machine;
  root["ranks"] = calibration.ranks;
  ordered_json gemm = ordered_json::object();
  for (const auto &[dtype, curve] : calibration.gemm) {
    ordered_json grid;
    grid["m"] = curve.m;
    grid["n"] = curve.n;
    grid["k"] = curve.k;
    grid["flops_per_second"] = curve.flopsPerSecond;
    gemm[dtype] = grid;
  }
  root["gemm"] = gemm;
  ordered_json attention = ordered_json::object();
  for (const auto &[dtype, curve] : calibration.attention)
    attention[dtype] = printCurve(curve, "flops", "flops_per_second");
  root["attention"] = attention;
  root["elementwise"] =
      printCurve(calibration.elementwise, "bytes", "bytes_per_second");
  root["row_kernel"] =
      printCurve(calibration.rowKernel, "bytes", "bytes_per_second");
  if (!calibration.collectives.empty()) {
    ordered_json collectives = ordered_json::object();
    for (const std::string &name : getCalibratedCollectiveNames()) {
      auto it = calibration.collectives.find(name);
      if (it == calibration.collectives.end())
        continue;
      ordered_json fits = ordered_json::array();
      for (const CollectiveFit &fit : it->second)
        fits.push_back({{"group_size", fit.groupSize},
                        {"latency", fit.latencySeconds},
                        {"bandwidth", fit.bandwidthBytesPerSecond}});
      collectives[name] = fits;
    }
    root["collectives"] = collectives;
  }
  return root;
}

} // namespace mlir::loom::dist
