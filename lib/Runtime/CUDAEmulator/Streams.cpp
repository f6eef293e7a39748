//===- Streams.cpp - CUDA emulator: stream order and events ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Work enqueued on a created stream (launches, cuBLAS calls, NCCL
// collectives, device-to-device copies, memsets, frees) is checked when it is
// enqueued and run later, when a synchronization needs it, respecting only
// what CUDA promises:
//
//   - the work of one stream runs in the order it was enqueued;
//   - cudaStreamWaitEvent holds its stream until the work before the
//     matching cudaEventRecord (the latest one when the wait was enqueued)
//     has run; waiting on an event never recorded waits for nothing;
//   - cudaStreamSynchronize, cudaEventSynchronize and cudaDeviceSynchronize
//     run what they wait for, and the default stream (work enqueued on it,
//     and every call that touches host memory) first runs everything.
//
// Between those constraints the order is deliberately adversarial, so a
// missing dependency gives wrong numbers instead of passing by luck:
// $LOOM_CUDA_EMULATOR_STREAM_ORDER picks which stream runs first whenever
// several could, "newest-first" (the default: the most recently created
// stream, e.g. a communication stream, runs as early as its waits allow and
// reads what a compute stream has not written yet) or "oldest-first" (the
// first created stream runs as far as it can, so what waits on a
// communication stream's result reads it before it is there).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::cudaemu {

namespace {

/// One piece of a stream's work: `work` to run, once `waitFor` (if any) has
/// completed generation `waitGeneration`.
struct Pending {
  std::function<void()> work;
  std::shared_ptr<EventProgress> waitFor;
  uint64_t waitGeneration = 0;

  bool isRunnable() const {
    return !waitFor || waitFor->completed >= waitGeneration;
  }
};

struct StreamQueue {
  /// Creation order: the order the scheduler ranks streams by.
  uint64_t sequence = 0;
  std::deque<Pending> items;
};

/// The process's pending work. The mutex is recursive and held while work
/// runs: one host thread drains at a time, in stream order.
struct Streams {
  std::recursive_mutex mutex;
  uint64_t nextSequence = 1;
  std::map<cudaStream_t, StreamQueue> queues;
};

Streams &streams() {
  // Never destroyed, as the device state.
  static Streams *instance = new Streams();
  return *instance;
}

bool newestFirst() {
  const char *text = std::getenv("LOOM_CUDA_EMULATOR_STREAM_ORDER");
  if (!text || !*text || !std::strcmp(text, "newest-first"))
    return true;
  if (!std::strcmp(text, "oldest-first"))
    return false;
  fatal(std::string("LOOM_CUDA_EMULATOR_STREAM_ORDER must be newest-first "
                    "or oldest-first, not '") +
        text + "'");
}

/// Runs the head of the highest-ranked stream that can run; false when no
/// stream can (lock held).
bool runOne(Streams &s, bool preferNewest) {
  std::vector<StreamQueue *> ranked;
  for (auto &[stream, queue] : s.queues)
    if (!queue.items.empty())
      ranked.push_back(&queue);
  if (ranked.empty())
    return false;
  std::sort(ranked.begin(), ranked.end(),
            [&](const StreamQueue *a, const StreamQueue *b) {
              return preferNewest ? a->sequence > b->sequence
                                  : a->sequence < b->sequence;
            });
  for (StreamQueue *queue : ranked) {
    if (!queue->items.front().isRunnable())
      continue;
    Pending item = std::move(queue->items.front());
    queue->items.pop_front();
    if (item.work)
      item.work();
    return true;
  }
  return false;
}

/// Runs pending work until `done()` holds.
template <typename Done> void runUntil(const char *call, Done done) {
  Streams &s = streams();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  bool preferNewest = newestFirst();
  while (!done())
    if (!runOne(s, preferNewest))
      // Unreachable: a wait names a record enqueued before it.
      fatal(std::string(call) + ": pending stream work waits on an event "
                                "no stream will record");
}

} // namespace

void registerStream(cudaStream_t stream) {
  Streams &s = streams();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.queues[stream].sequence = s.nextSequence++;
}

void retireStream(cudaStream_t stream) {
  synchronizeStream(stream);
  Streams &s = streams();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.queues.erase(stream);
}

void enqueue(cudaStream_t stream, std::function<void()> work) {
  if (!stream) {
    synchronizeAll();
    work();
    return;
  }
  Streams &s = streams();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  auto it = s.queues.find(stream);
  if (it == s.queues.end())
    fatal("work enqueued on a stream the emulator does not know");
  it->second.items.push_back(Pending{std::move(work), nullptr, 0});
}

void synchronizeAll() {
  Streams &s = streams();
  runUntil("cudaDeviceSynchronize", [&] {
    for (auto &[stream, queue] : s.queues)
      if (!queue.items.empty())
        return false;
    return true;
  });
}

void synchronizeStream(cudaStream_t stream) {
  if (!stream) {
    synchronizeAll();
    return;
  }
  Streams &s = streams();
  runUntil("cudaStreamSynchronize", [&] {
    auto it = s.queues.find(stream);
    return it == s.queues.end() || it->second.items.empty();
  });
}

void recordEvent(const std::shared_ptr<EventProgress> &event,
                 cudaStream_t stream) {
  Streams &s = streams();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  uint64_t generation = ++event->recorded;
  enqueue(stream, [event, generation] {
    event->completed = std::max(event->completed, generation);
  });
}

void waitForEvent(cudaStream_t stream,
                  const std::shared_ptr<EventProgress> &event) {
  Streams &s = streams();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  if (event->completed >= event->recorded)
    return;
  if (!stream) {
    synchronizeEvent(event);
    return;
  }
  auto it = s.queues.find(stream);
  if (it == s.queues.end())
    fatal("cudaStreamWaitEvent on a stream the emulator does not know");
  it->second.items.push_back(Pending{nullptr, event, event->recorded});
}

void synchronizeEvent(const std::shared_ptr<EventProgress> &event) {
  uint64_t generation = event->recorded;
  runUntil("cudaEventSynchronize",
           [&] { return event->completed >= generation; });
}

} // namespace loom::cudaemu
