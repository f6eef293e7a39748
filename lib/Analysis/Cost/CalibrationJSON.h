//===- CalibrationJSON.h - The `calibration` object of a spec ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reads and prints the `calibration` object of a cluster spec
// (docs/CostModel.md, "Calibrated curves"). Private to the cost model
// library: ClusterSpec.cpp calls it with the spec's peaks, so that curves
// and peaks can be checked against each other.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_ANALYSIS_COST_CALIBRATIONJSON_H
#define LOOM_LIB_ANALYSIS_COST_CALIBRATIONJSON_H

#include "loom/Analysis/Cost/Calibration.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace mlir::loom::dist {

/// Reads the calibration at JSON pointer `path`. `peaks` are the device's
/// peak FLOP/s by dtype: the GEMM and attention curves must cover exactly
/// those dtypes. Returns the first problem as "<path>: <message>".
std::optional<std::string>
readCalibration(const nlohmann::json &value, const std::string &path,
                const std::map<std::string, double> &peaks,
                Calibration &calibration);

/// The calibration as JSON, keys in schema order.
nlohmann::ordered_json printCalibration(const Calibration &calibration);

} // namespace mlir::loom::dist

#endif // LOOM_LIB_ANALYSIS_COST_CALIBRATIONJSON_H
