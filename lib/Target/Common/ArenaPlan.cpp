//===- ArenaPlan.cpp - Offsets of a step's buffers in one arena -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// First fit in program order: buffers are placed in the order their
// defining ops run; each takes the lowest offset whose bytes no buffer live
// during its own interval holds. Placed buffers whose interval ended before
// the new one starts leave the active set (a min-heap on their last use),
// so the search looks only at what is live. Fixed buffers (the unstaged
// ones, when a stage is planned) may start later than the buffer being
// placed, so they are checked against its whole interval.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/ArenaPlan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <utility>

namespace mlir::loom::emit {

namespace {

int64_t alignUp(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment *
         kArenaAlignment;
}

/// Places `order` (indices into `buffers`, by first use) around the already
/// placed `fixed`; writes offsets[i][plan] and returns the arena's size.
int64_t placeFirstFit(llvm::ArrayRef<ArenaBuffer> buffers,
                      const std::vector<size_t> &order,
                      const std::vector<size_t> &fixed,
                      const std::vector<int64_t> &bytes,
                      std::vector<PerElementSize> &offsets, int plan) {
  int64_t size = 0;
  for (size_t f : fixed)
    size = std::max(size, offsets[f][plan] + bytes[f]);
  // Active placed buffers: offset -> index, and a heap of (last, index).
  std::multimap<int64_t, size_t> active;
  using Expiry = std::pair<int64_t, size_t>;
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiry;
  std::vector<std::multimap<int64_t, size_t>::iterator> where(buffers.size());
  for (size_t i : order) {
    const ArenaBuffer &b = buffers[i];
    while (!expiry.empty() && expiry.top().first < b.first) {
      active.erase(where[expiry.top().second]);
      expiry.pop();
    }
    // What this buffer must not overlap, by offset.
    std::vector<std::pair<int64_t, int64_t>> taken; // (offset, end)
    for (auto &[offset, j] : active)
      taken.push_back({offset, offset + bytes[j]});
    for (size_t f : fixed)
      if (buffers[f].first <= b.last && buffers[f].last >= b.first)
        taken.push_back({offsets[f][plan], offsets[f][plan] + bytes[f]});
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (auto [start, end] : taken) {
      if (start - offset >= bytes[i])
        break;
      offset = std::max(offset, end);
    }
    offsets[i][plan] = offset;
    size = std::max(size, offset + bytes[i]);
    where[i] = active.insert({offset, i});
    expiry.push({b.last, i});
  }
  return size;
}

/// The most bytes of `members` live at one position.
int64_t peakLive(llvm::ArrayRef<ArenaBuffer> buffers,
                 const std::vector<size_t> &members,
                 const std::vector<int64_t> &bytes) {
  // +bytes at first, -bytes after last; at one position frees sort after
  // allocations of the next one.
  std::vector<std::pair<int64_t, int64_t>> events;
  for (size_t i : members) {
    events.push_back({2 * buffers[i].first, bytes[i]});
    events.push_back({2 * buffers[i].last + 1, -bytes[i]});
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (auto [at, delta] : events)
    peak = std::max(peak, live += delta);
  return peak;
}

} // namespace

ArenaPlan planArena(llvm::ArrayRef<ArenaBuffer> buffers, int64_t numStages) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), {-1, -1});
  int64_t plans = std::max<int64_t>(numStages, 1);
  plan.arenaBytes.assign(plans, {0, 0});
  plan.liveBytes.assign(plans, {0, 0});
  // Arena buffers by stage (-1 first), each list by first use.
  std::map<int64_t, std::vector<size_t>> byStage;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (!buffers[i].ownAllocation)
      byStage[numStages ? buffers[i].stage : -1].push_back(i);
  for (auto &[stage, list] : byStage)
    std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return std::make_pair(buffers[a].first, a) <
             std::make_pair(buffers[b].first, b);
    });
  for (int elementPlan : {0, 1}) {
    int64_t floatBytes = elementPlan == 0 ? 4 : 8;
    std::vector<int64_t> bytes(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i)
      bytes[i] = alignUp(buffers[i].elements *
                         (buffers[i].isInteger ? 8 : floatBytes));
    std::vector<size_t> unstaged = byStage[-1];
    int64_t shared =
        placeFirstFit(buffers, unstaged, {}, bytes, plan.offsets, elementPlan);
    for (int64_t s = 0; s < plans; ++s) {
      auto it = byStage.find(s);
      bool own = numStages && it != byStage.end();
      plan.arenaBytes[s][elementPlan] =
          own ? placeFirstFit(buffers, it->second, unstaged, bytes,
                              plan.offsets, elementPlan)
              : shared;
      std::vector<size_t> members = unstaged;
      if (own)
        members.insert(members.end(), it->second.begin(), it->second.end());
      plan.liveBytes[s][elementPlan] = peakLive(buffers, members, bytes);
    }
  }
  return plan;
}

} // namespace mlir::loom::emit
