//===- CollectiveFits.h - α–β of collectives per group size -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Times the runtime communicator's collectives (the calls emitted host
// programs make) at a few message sizes for each group size the world
// allows, and fits time = α + bytes / β by least squares. With N ranks the
// groups are all N, and pairs when N is even and above 2 (a mesh o=N/2 x
// i=2 grouped over i, all pairs running at once as in a plan's data- or
// tensor-parallel groups). send_recv exchanges messages between the ranks
// of each pair.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_CALIBRATE_COLLECTIVEFITS_H
#define LOOM_TOOLS_LOOM_CALIBRATE_COLLECTIVEFITS_H

#include "Timing.h"

#include "loom/Analysis/Cost/CalibrationFitting.h"

#include <map>
#include <string>
#include <vector>

namespace loom::calibrate {

/// Measures every collective of getCalibratedCollectiveNames(); `bytes` are
/// the per-device message sizes (the gathered bytes for all_gather). On one
/// rank there is nothing to measure: the result is empty. Returns an error
/// message when the communicator fails.
std::string measureCollectives(
    const std::vector<double> &bytes, const TimingBudget &budget,
    std::map<std::string, std::vector<mlir::loom::dist::CollectiveFit>> &fits);

} // namespace loom::calibrate

#endif // LOOM_TOOLS_LOOM_CALIBRATE_COLLECTIVEFITS_H
