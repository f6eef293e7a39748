//===- ArenaPlan.cpp - Offsets of a step's buffers in one arena -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Offline placement: every buffer's lifetime and size are known before any
// is placed, so the plan may visit them in any order. Three orders/fit
// rules are tried and the smallest arena kept:
//   1. program order, first fit (each buffer at the lowest offset free
//      during its lifetime): keeps a chain of temporaries in two slots and
//      is what the plan was before, so no plan gets larger than that;
//   2. decreasing size, best fit (the smallest gap between the buffers
//      live with it that holds it, the top of the arena only when no gap
//      does): the large activations that pipelined steps keep for their
//      backward are placed first, side by side, and the small temporaries
//      fill the gaps between them instead of pushing large ones up;
//   3. decreasing size, first fit.
// Orders 2 and 3 are the greedy-by-size rules of the offline dynamic
// storage allocation literature (TFLite's and XLA's heap simulators sort by
// size). Ties keep program order, so the plan is deterministic; equal
// arenas prefer the earlier rule, so a step first fit already packs keeps
// its offsets.
//
// Each buffer is checked against every buffer placed before it whose
// lifetime meets its own: quadratic in the step's buffers, independent of
// the device count. Fixed buffers (the unstaged ones, when a stage is
// planned) are placed first, once for every stage, and the unstaged plan
// kept is the one whose largest stage arena is smallest.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/ArenaPlan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace mlir::loom::emit {

namespace {

int64_t alignUp(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment *
         kArenaAlignment;
}

/// One of the placements tried: the order buffers are visited in and
/// whether a buffer takes the smallest gap that holds it or the lowest.
struct Rule {
  bool bySize;
  bool bestFit;
};
constexpr Rule kRules[] = {{false, false}, {true, true}, {true, false}};

/// A placed buffer: its lifetime and bytes in the arena.
struct Placed {
  int64_t first, last, offset, end;
};

/// Places `group` (indices into `buffers`) around `fixed` by `rule`; writes
/// `offsets` (indexed by buffer) and returns the arena's size.
int64_t place(llvm::ArrayRef<ArenaBuffer> buffers, std::vector<size_t> group,
              const std::vector<Placed> &fixed,
              const std::vector<int64_t> &bytes, Rule rule,
              std::vector<int64_t> &offsets) {
  // A total order (index last), so std::sort is deterministic; libstdc++ 12's
  // std::stable_sort trips clang-22's deprecation warning under -Werror.
  std::sort(group.begin(), group.end(), [&](size_t a, size_t b) {
    if (rule.bySize && bytes[a] != bytes[b])
      return bytes[a] > bytes[b];
    return std::make_pair(buffers[a].first, a) <
           std::make_pair(buffers[b].first, b);
  });
  std::vector<Placed> placed = fixed;
  int64_t size = 0;
  for (const Placed &p : fixed)
    size = std::max(size, p.end);
  std::vector<std::pair<int64_t, int64_t>> taken; // (offset, end)
  for (size_t i : group) {
    const ArenaBuffer &b = buffers[i];
    taken.clear();
    for (const Placed &p : placed)
      if (p.first <= b.last && p.last >= b.first)
        taken.push_back({p.offset, p.end});
    std::sort(taken.begin(), taken.end());
    // Walk the gaps below and between the buffers live with this one.
    int64_t cursor = 0, chosen = -1;
    int64_t chosenGap = std::numeric_limits<int64_t>::max();
    for (auto [start, end] : taken) {
      int64_t gap = start - cursor;
      if (gap >= bytes[i] && gap < chosenGap) {
        chosen = cursor;
        chosenGap = gap;
        if (!rule.bestFit)
          break;
      }
      cursor = std::max(cursor, end);
    }
    int64_t offset = chosen >= 0 ? chosen : cursor;
    offsets[i] = offset;
    size = std::max(size, offset + bytes[i]);
    placed.push_back({b.first, b.last, offset, offset + bytes[i]});
  }
  return size;
}

/// Places `group` around `fixed` by every rule and keeps the smallest arena
/// (the earliest rule on a tie); returns its size.
int64_t placeBest(llvm::ArrayRef<ArenaBuffer> buffers,
                  const std::vector<size_t> &group,
                  const std::vector<Placed> &fixed,
                  const std::vector<int64_t> &bytes,
                  std::vector<int64_t> &offsets) {
  int64_t best = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> tried(buffers.size(), -1);
  for (Rule rule : kRules) {
    int64_t size = place(buffers, group, fixed, bytes, rule, tried);
    if (size < best) {
      best = size;
      for (size_t i : group)
        offsets[i] = tried[i];
    }
  }
  return best;
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
  std::vector<size_t> unstaged = byStage[-1];
  for (int elementPlan : {0, 1}) {
    int64_t floatBytes = elementPlan == 0 ? 4 : 8;
    std::vector<int64_t> bytes(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i)
      bytes[i] = alignUp(buffers[i].elements *
                         (buffers[i].isInteger ? 8 : floatBytes));
    // Every unstaged placement, each with its stages placed around it; the
    // one whose largest stage arena is smallest (then the smallest total)
    // is kept.
    std::pair<int64_t, int64_t> bestCost = {std::numeric_limits<int64_t>::max(),
                                            0};
    std::vector<int64_t> offsets(buffers.size(), -1), trial(buffers.size(), -1);
    std::vector<int64_t> stageBytes(plans), trialBytes(plans);
    for (Rule rule : kRules) {
      int64_t shared = place(buffers, unstaged, {}, bytes, rule, trial);
      std::vector<Placed> fixed;
      for (size_t f : unstaged)
        fixed.push_back(
            {buffers[f].first, buffers[f].last, trial[f], trial[f] + bytes[f]});
      std::pair<int64_t, int64_t> cost = {0, 0};
      for (int64_t s = 0; s < plans; ++s) {
        auto it = byStage.find(s);
        bool own = numStages && it != byStage.end();
        trialBytes[s] =
            own ? placeBest(buffers, it->second, fixed, bytes, trial) : shared;
        cost = {std::max(cost.first, trialBytes[s]),
                cost.second + trialBytes[s]};
      }
      if (cost < bestCost) {
        bestCost = cost;
        offsets = trial;
        stageBytes = trialBytes;
      }
    }
    for (size_t i = 0; i < buffers.size(); ++i)
      plan.offsets[i][elementPlan] = buffers[i].ownAllocation ? -1 : offsets[i];
    for (int64_t s = 0; s < plans; ++s) {
      plan.arenaBytes[s][elementPlan] = stageBytes[s];
      std::vector<size_t> members = unstaged;
      auto it = byStage.find(s);
      if (numStages && it != byStage.end())
        members.insert(members.end(), it->second.begin(), it->second.end());
      plan.liveBytes[s][elementPlan] = peakLive(buffers, members, bytes);
    }
  }
  return plan;
}

} // namespace mlir::loom::emit
