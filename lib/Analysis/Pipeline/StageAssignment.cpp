//===- StageAssignment.cpp - Layers to pipeline stages --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The bottleneck split of layers into contiguous stages:
//
//   1. best[k][i]: the least bottleneck (max over stages of F + B) of
//      splitting layers [0, i) into stages 0..k, each with at least one
//      layer and within the memory limit (stage k's in-flight count depends
//      on k, so the memory check needs the stage index);
//   2. best[k][i] = min over j < i of max(best[k-1][j], w(k, j, i)), with
//      stage 0 adding the embedding and stage S-1 the head;
//   3. walk the argmins back from best[S-1][L] and evaluate the split with
//      simulatePipeline for the step time and the bubble.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Pipeline/StageAssignment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace loom::pipeline {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Sums of a layer field over layer ranges, with the pseudo-layers added at
/// the pipeline's ends.
struct RangeSums {
  std::vector<double> forward, backward, step, state, activation;

  explicit RangeSums(const std::vector<LayerCost> &layers) {
    size_t n = layers.size();
    for (auto *v : {&forward, &backward, &step, &state, &activation})
      v->assign(n + 1, 0.0);
    for (size_t i = 0; i < n; ++i) {
      forward[i + 1] = forward[i] + layers[i].forwardSeconds;
      backward[i + 1] = backward[i] + layers[i].backwardSeconds;
      step[i + 1] = step[i] + layers[i].stepSeconds;
      state[i + 1] = state[i] + layers[i].stateBytes;
      activation[i + 1] = activation[i] + layers[i].activationBytes;
    }
  }
};

int64_t getInFlight(const StageProblem &problem, int64_t stage) {
  return getMaxInFlight(getStageUnitOrder(problem.schedule, problem.stages,
                                          stage, problem.microBatches,
                                          problem.virtualStages));
}

double getGatherWindowOf(const std::vector<LayerCost> &layers, int64_t first,
                         int64_t end) {
  double largest = 0.0, second = 0.0;
  for (int64_t i = first; i < end; ++i) {
    double bytes = layers[i].gatheredBytes;
    if (bytes > largest) {
      second = largest;
      largest = bytes;
    } else if (bytes > second) {
      second = bytes;
    }
  }
  return largest + second;
}

/// Stage `stage` over [first, end), from the range sums.
StageInfo makeStageInfo(const StageProblem &problem, const RangeSums &sums,
                        int64_t stage, int64_t first, int64_t end,
                        int64_t inFlight) {
  StageInfo info;
  info.firstLayer = first;
  info.endLayer = end;
  info.inFlight = inFlight;
  double forward = sums.forward[end] - sums.forward[first];
  double backward = sums.backward[end] - sums.backward[first];
  double step = sums.step[end] - sums.step[first];
  double state = sums.state[end] - sums.state[first];
  double activation = sums.activation[end] - sums.activation[first];
  auto add = [&](const LayerCost &layer) {
    forward += layer.forwardSeconds;
    backward += layer.backwardSeconds;
    step += layer.stepSeconds;
    state += layer.stateBytes + layer.gatheredBytes;
    activation += layer.activationBytes;
  };
  state += getGatherWindowOf(problem.layers, first, end);
  if (stage == 0)
    add(problem.embedding);
  if (stage == problem.stages - 1)
    add(problem.head);
  info.times = {forward, backward};
  info.stepSeconds = step;
  info.memoryBytes = state + activation * double(inFlight);
  return info;
}

std::string formatGiB(double bytes) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.3f GiB", bytes / double(1 << 30));
  return text;
}
} // namespace

double getGatherWindow(const StageProblem &problem, int64_t first,
                       int64_t end) {
  return getGatherWindowOf(problem.layers, first, end);
}

double getStageMemory(const StageProblem &problem, int64_t stage,
                      int64_t first, int64_t end) {
  return getStageInfo(problem, stage, first, end).memoryBytes;
}

StageInfo getStageInfo(const StageProblem &problem, int64_t stage,
                       int64_t first, int64_t end) {
  RangeSums sums(problem.layers);
  return makeStageInfo(problem, sums, stage, first, end,
                       getInFlight(problem, stage));
}

std::vector<int64_t> getEvenStageBounds(int64_t layers, int64_t stages) {
  std::vector<int64_t> bounds = {0};
  for (int64_t s = 0; s < stages; ++s)
    bounds.push_back(bounds.back() + layers / stages +
                     (s < layers % stages ? 1 : 0));
  return bounds;
}

StageAssignment evaluateStageSplit(const StageProblem &problem,
                                   const std::vector<int64_t> &bounds) {
  StageAssignment result;
  int64_t stages = problem.stages;
  int64_t layers = int64_t(problem.layers.size());
  if (int64_t(bounds.size()) != stages + 1 || bounds.front() != 0 ||
      bounds.back() != layers) {
    result.error = "the stage bounds do not cover the " +
                   std::to_string(layers) + " layers with " +
                   std::to_string(stages) + " stages";
    return result;
  }
  RangeSums sums(problem.layers);
  std::vector<StageTimes> times;
  double slowestStep = 0.0;
  for (int64_t s = 0; s < stages; ++s) {
    if (bounds[s + 1] <= bounds[s]) {
      result.error = "stage " + std::to_string(s) + " holds no layer";
      return result;
    }
    StageInfo info = makeStageInfo(problem, sums, s, bounds[s], bounds[s + 1],
                                   getInFlight(problem, s));
    if (info.memoryBytes > problem.memoryLimit) {
      result.error = "stage " + std::to_string(s) + " (layers [" +
                     std::to_string(bounds[s]) + ", " +
                     std::to_string(bounds[s + 1]) + ")) needs " +
                     formatGiB(info.memoryBytes) + ", over the limit of " +
                     formatGiB(problem.memoryLimit);
      return result;
    }
    times.push_back(info.times);
    slowestStep = std::max(slowestStep, info.stepSeconds);
    result.bottleneckSeconds = std::max(
        result.bottleneckSeconds, info.times.forward + info.times.backward);
    result.stages.push_back(info);
  }
  result.simulation = simulatePipeline(problem.schedule, times,
                                       problem.microBatches, problem.p2pSeconds);
  result.stepSeconds = result.simulation.makespan + slowestStep;
  result.bubbleSeconds = result.simulation.bubble;
  result.p2pSeconds = problem.p2pSeconds;
  result.feasible = true;
  return result;
}

StageAssignment assignInterleavedStages(const StageProblem &problem) {
  StageAssignment result;
  int64_t stages = problem.stages, chunks = problem.virtualStages;
  int64_t layers = int64_t(problem.layers.size());
  int64_t numChunks = stages * chunks;
  if (std::optional<std::string> error = checkSchedule(
          problem.schedule, stages, problem.microBatches, chunks)) {
    result.error = *error;
    return result;
  }
  if (layers % numChunks != 0) {
    result.error = std::to_string(layers) +
                   " layers do not split evenly "
                   "into " +
                   std::to_string(stages) + " stages of " +
                   std::to_string(chunks) + " chunks";
    return result;
  }
  RangeSums sums(problem.layers);
  // Chunks are the stages of an S · V-stage pipeline for the range sums and
  // the embedding / head placement.
  StageProblem perChunk = problem;
  perChunk.stages = numChunks;
  std::vector<StageTimes> times;
  int64_t per = layers / numChunks;
  for (int64_t c = 0; c < numChunks; ++c) {
    StageInfo info =
        makeStageInfo(perChunk, sums, c, c * per, (c + 1) * per, 0);
    times.push_back(info.times);
    result.chunks.push_back(info);
  }
  double slowestStep = 0.0;
  for (int64_t s = 0; s < stages; ++s) {
    StageInfo info;
    info.firstLayer = s * per;
    info.endLayer = (s + 1) * per;
    info.inFlight = getInFlight(problem, s);
    double state = 0.0, activation = 0.0, window = 0.0;
    for (int64_t c = s; c < numChunks; c += stages) {
      const StageInfo &chunk = result.chunks[c];
      int64_t first = chunk.firstLayer, end = chunk.endLayer;
      info.times.forward += chunk.times.forward;
      info.times.backward += chunk.times.backward;
      info.stepSeconds += chunk.stepSeconds;
      double chunkActivation =
          sums.activation[end] - sums.activation[first] +
          (c == 0 ? problem.embedding.activationBytes : 0.0) +
          (c == numChunks - 1 ? problem.head.activationBytes : 0.0);
      // makeStageInfo with nothing in flight gave the chunk's state alone,
      // with its own ZeRO-3 gather window: one chunk runs at a time, so the
      // stage keeps the largest chunk's window, not their sum.
      double chunkWindow = getGatherWindowOf(problem.layers, first, end);
      state += chunk.memoryBytes - chunkWindow;
      window = std::max(window, chunkWindow);
      activation = std::max(activation, chunkActivation);
    }
    info.memoryBytes = state + window + activation * double(info.inFlight);
    if (info.memoryBytes > problem.memoryLimit) {
      result.chunks.clear();
      result.stages.clear();
      result.error = "stage " + std::to_string(s) + " of " +
                     std::to_string(chunks) + " chunks needs " +
                     formatGiB(info.memoryBytes) + ", over the limit of " +
                     formatGiB(problem.memoryLimit);
      return result;
    }
    slowestStep = std::max(slowestStep, info.stepSeconds);
    result.bottleneckSeconds = std::max(
        result.bottleneckSeconds, info.times.forward + info.times.backward);
    result.stages.push_back(info);
  }
  result.simulation =
      simulatePipeline(problem.schedule, times, problem.microBatches,
                       problem.p2pSeconds, chunks);
  result.stepSeconds = result.simulation.makespan + slowestStep;
  result.bubbleSeconds = result.simulation.bubble;
  result.p2pSeconds = problem.p2pSeconds;
  result.feasible = true;
  return result;
}

StageAssignment assignStages(const StageProblem &problem) {
  if (problem.schedule == ScheduleKind::Interleaved1F1B)
    return assignInterleavedStages(problem);
  int64_t stages = problem.stages;
  int64_t layers = int64_t(problem.layers.size());
  if (stages < 1 || problem.microBatches < 1) {
    StageAssignment result;
    result.error = "expected at least one stage and one micro-batch, found " +
                   std::to_string(stages) + " stages and " +
                   std::to_string(problem.microBatches) + " micro-batches";
    return result;
  }
  if (stages > layers) {
    StageAssignment result;
    result.error = std::to_string(stages) + " stages need at least as many " +
                   "layers; the model has " + std::to_string(layers);
    return result;
  }
  RangeSums sums(problem.layers);
  std::vector<int64_t> inFlight;
  for (int64_t s = 0; s < stages; ++s)
    inFlight.push_back(getInFlight(problem, s));

  // best[k][i], and the start of stage k that achieves it.
  std::vector<std::vector<double>> best(
      stages, std::vector<double>(layers + 1, kInfinity));
  std::vector<std::vector<int64_t>> from(stages,
                                        std::vector<int64_t>(layers + 1, -1));
  // The least memory any stage k over [j, i) needs, for the error message.
  double leastOverflow = kInfinity;
  for (int64_t k = 0; k < stages; ++k) {
    // Stage k ends at i: at least k + 1 layers before it, at least
    // stages - k - 1 after it; the last stage ends at the last layer.
    int64_t lowEnd = k + 1, highEnd = layers - (stages - k - 1);
    if (k == stages - 1)
      lowEnd = layers;
    for (int64_t i = lowEnd; i <= highEnd; ++i) {
      int64_t lowStart = k == 0 ? 0 : k, highStart = k == 0 ? 0 : i - 1;
      for (int64_t j = lowStart; j <= highStart; ++j) {
        double before = k == 0 ? 0.0 : best[k - 1][j];
        if (!std::isfinite(before))
          continue;
        StageInfo info = makeStageInfo(problem, sums, k, j, i, inFlight[k]);
        if (info.memoryBytes > problem.memoryLimit) {
          leastOverflow = std::min(leastOverflow, info.memoryBytes);
          continue;
        }
        double bottleneck =
            std::max(before, info.times.forward + info.times.backward);
        if (bottleneck < best[k][i]) {
          best[k][i] = bottleneck;
          from[k][i] = j;
        }
      }
    }
  }
  if (!std::isfinite(best[stages - 1][layers])) {
    StageAssignment result;
    result.error = "no split of " + std::to_string(layers) + " layers into " +
                   std::to_string(stages) + " stages fits " +
                   formatGiB(problem.memoryLimit) + " per device";
    if (std::isfinite(leastOverflow))
      result.error += " (a stage needs at least " + formatGiB(leastOverflow) +
                      ")";
    return result;
  }
  std::vector<int64_t> bounds(stages + 1, layers);
  for (int64_t k = stages - 1; k >= 0; --k)
    bounds[k] = from[k][bounds[k + 1]];
  return evaluateStageSplit(problem, bounds);
}

} // namespace loom::pipeline
