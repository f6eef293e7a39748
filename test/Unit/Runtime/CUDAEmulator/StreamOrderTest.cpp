//===- StreamOrderTest.cpp - The CUDA emulator's streams and events -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The emulator defers the work of created streams and runs it only as
// stream order and events require, in the order that hurts a program that
// leaves a dependency out ($LOOM_CUDA_EMULATOR_STREAM_ORDER). These cases
// run the step a data-parallel trainer runs with a communication stream
// (produce a gradient on the compute stream, reduce it on the communication
// stream, apply it on the compute stream) and show that:
//
//   - with both events the result is right under either order;
//   - without the wait for the gradient, the reduction reads it before it is
//     written (newest-first, the default), and the step is wrong;
//   - without the wait for the reduction, the update reads the gradient
//     before it is reduced (oldest-first), and the step is wrong;
//   - an NCCL collective (on one MPI rank, in a child process) is deferred
//     the same way: without the wait it reads the unwritten buffer.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>
#include <nccl.h>

#include <mpi.h>

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using loom::cudaemu::launch;

namespace {

constexpr int kElements = 8;
constexpr float kInitialWeight = 100.0f;

__global__ void produceGradient(float *gradient) {
  gradient[threadIdx.x] = static_cast<float>(threadIdx.x + 1);
}

/// The communication: a sum over two ranks holding the same gradient.
__global__ void reduceGradient(float *gradient) {
  gradient[threadIdx.x] *= 2.0f;
}

__global__ void applyGradient(float *weight, const float *gradient) {
  weight[threadIdx.x] -= gradient[threadIdx.x];
}

__global__ void addOne(float *value) { *value += 1.0f; }

/// Sets $LOOM_CUDA_EMULATOR_STREAM_ORDER for one scope.
class StreamOrder {
public:
  explicit StreamOrder(const char *order) {
    setenv("LOOM_CUDA_EMULATOR_STREAM_ORDER", order, /*overwrite=*/1);
  }
  ~StreamOrder() { unsetenv("LOOM_CUDA_EMULATOR_STREAM_ORDER"); }
};

struct Events {
  bool waitForGradient = true;
  bool waitForReduction = true;
};

/// The weights after one step with the events `events` keeps.
std::vector<float> runStep(Events events) {
  cudaStream_t compute = nullptr, communication = nullptr;
  cudaEvent_t produced = nullptr, reduced = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking),
            cudaSuccess);
  EXPECT_EQ(cudaStreamCreateWithFlags(&communication, cudaStreamNonBlocking),
            cudaSuccess);
  EXPECT_EQ(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming),
            cudaSuccess);
  EXPECT_EQ(cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming),
            cudaSuccess);
  float *gradient = nullptr, *weight = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&gradient),
                       kElements * sizeof(float)),
            cudaSuccess);
  EXPECT_EQ(
      cudaMalloc(reinterpret_cast<void **>(&weight), kElements * sizeof(float)),
      cudaSuccess);
  std::vector<float> weights(kElements, kInitialWeight);
  EXPECT_EQ(cudaMemcpy(weight, weights.data(), kElements * sizeof(float),
                       cudaMemcpyHostToDevice),
            cudaSuccess);

  EXPECT_EQ(
      launch(produceGradient, dim3(1), dim3(kElements), compute, gradient),
      cudaSuccess);
  EXPECT_EQ(cudaEventRecord(produced, compute), cudaSuccess);
  if (events.waitForGradient)
    EXPECT_EQ(cudaStreamWaitEvent(communication, produced, 0), cudaSuccess);
  EXPECT_EQ(
      launch(reduceGradient, dim3(1), dim3(kElements), communication, gradient),
      cudaSuccess);
  EXPECT_EQ(cudaEventRecord(reduced, communication), cudaSuccess);
  if (events.waitForReduction)
    EXPECT_EQ(cudaStreamWaitEvent(compute, reduced, 0), cudaSuccess);
  EXPECT_EQ(launch(applyGradient, dim3(1), dim3(kElements), compute, weight,
                   gradient),
            cudaSuccess);

  EXPECT_EQ(cudaStreamSynchronize(compute), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(communication), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(weights.data(), weight, kElements * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(cudaFree(gradient), cudaSuccess);
  EXPECT_EQ(cudaFree(weight), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(produced), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(reduced), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(communication), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(compute), cudaSuccess);
  return weights;
}

/// The weights of a right step: each minus its reduced gradient.
std::vector<float> rightStep() {
  std::vector<float> weights(kElements);
  for (int i = 0; i < kElements; ++i)
    weights[i] = kInitialWeight - 2.0f * static_cast<float>(i + 1);
  return weights;
}

TEST(EmulatorStreamOrderTest, BothEventsGiveTheRightStepInEitherOrder) {
  {
    StreamOrder order("newest-first");
    EXPECT_EQ(runStep(Events()), rightStep());
  }
  {
    StreamOrder order("oldest-first");
    EXPECT_EQ(runStep(Events()), rightStep());
  }
}

TEST(EmulatorStreamOrderTest, AReductionThatDoesNotWaitReadsAnUnwrittenGrad) {
  // The default order runs the communication stream first: the reduction
  // doubles the 0xFF fill (NaN) and the update then subtracts the gradient
  // it never reduced.
  std::vector<float> weights = runStep({/*waitForGradient=*/false});
  for (int i = 0; i < kElements; ++i)
    EXPECT_EQ(weights[i], kInitialWeight - static_cast<float>(i + 1))
        << "element " << i;
  EXPECT_NE(weights, rightStep());
}

TEST(EmulatorStreamOrderTest, AnUpdateThatDoesNotWaitReadsAnUnreducedGrad) {
  StreamOrder order("oldest-first");
  std::vector<float> weights =
      runStep({/*waitForGradient=*/true, /*waitForReduction=*/false});
  for (int i = 0; i < kElements; ++i)
    EXPECT_EQ(weights[i], kInitialWeight - static_cast<float>(i + 1))
        << "element " << i;
}

TEST(EmulatorStreamOrderTest, CreatedStreamsRunOnlyWhenSynchronized) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  float *value = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&value), sizeof(float)),
            cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(value, 0, sizeof(float), stream), cudaSuccess);
  ASSERT_EQ(launch(addOne, dim3(1), dim3(1), stream, value), cudaSuccess);
  // Emulated device memory is host memory: the host may look before the
  // stream has run (a GPU program could not).
  uint32_t bits = 0;
  std::memcpy(&bits, value, sizeof(bits));
  EXPECT_EQ(bits, 0xFFFFFFFFu) << "the stream's work ran at its enqueue";
  cudaEvent_t done = nullptr;
  ASSERT_EQ(cudaEventCreate(&done), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(done, stream), cudaSuccess);
  ASSERT_EQ(launch(addOne, dim3(1), dim3(1), stream, value), cudaSuccess);
  // The event completes after the first addition and before the second.
  ASSERT_EQ(cudaEventSynchronize(done), cudaSuccess);
  EXPECT_EQ(*value, 1.0f);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(*value, 2.0f);
  ASSERT_EQ(cudaEventDestroy(done), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  ASSERT_EQ(cudaFree(value), cudaSuccess);
}

TEST(EmulatorStreamOrderTest, AWaitHoldsForTheRecordBeforeItOnly) {
  cudaStream_t first = nullptr, second = nullptr;
  ASSERT_EQ(cudaStreamCreate(&first), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&second), cudaSuccess);
  cudaEvent_t event = nullptr, never = nullptr;
  ASSERT_EQ(cudaEventCreate(&event), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&never), cudaSuccess);
  float *value = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&value), sizeof(float)),
            cudaSuccess);
  ASSERT_EQ(cudaMemset(value, 0, sizeof(float)), cudaSuccess);
  ASSERT_EQ(launch(addOne, dim3(1), dim3(1), first, value), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, first), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(second, event, 0), cudaSuccess);
  // A wait on an event nobody recorded waits for nothing.
  ASSERT_EQ(cudaStreamWaitEvent(second, never, 0), cudaSuccess);
  // Recorded again after the wait: the wait keeps the first record.
  ASSERT_EQ(launch(addOne, dim3(1), dim3(1), first, value), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, first), cudaSuccess);
  ASSERT_EQ(
      cudaMemcpyAsync(value + 0, value, 0, cudaMemcpyDeviceToDevice, second),
      cudaSuccess);
  // Synchronizing the second stream runs what it waits on, the first
  // addition, and no more.
  ASSERT_EQ(cudaStreamSynchronize(second), cudaSuccess);
  EXPECT_EQ(*value, 1.0f);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(*value, 2.0f);
  ASSERT_EQ(cudaEventDestroy(event), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(never), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(first), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(second), cudaSuccess);
  ASSERT_EQ(cudaFree(value), cudaSuccess);
}

/// Stops the child process with `what` on stderr unless `ok`.
void require(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "check failed: %s\n", what);
  std::exit(1);
}

/// The value an all-reduce over one rank on a communication stream reads
/// from what a kernel on the compute stream wrote, with or without the
/// event between them (inside the caller's MPI job).
float reduceAfterCompute(ncclComm_t comm, bool waitForCompute) {
  cudaStream_t compute = nullptr, communication = nullptr;
  cudaEvent_t produced = nullptr;
  require(cudaStreamCreate(&compute) == cudaSuccess &&
              cudaStreamCreate(&communication) == cudaSuccess &&
              cudaEventCreate(&produced) == cudaSuccess,
          "streams and event");
  float *send = nullptr, *recv = nullptr;
  require(cudaMalloc(reinterpret_cast<void **>(&send), sizeof(float)) ==
                  cudaSuccess &&
              cudaMalloc(reinterpret_cast<void **>(&recv), sizeof(float)) ==
                  cudaSuccess,
          "cudaMalloc");
  require(cudaMemsetAsync(send, 0, sizeof(float), compute) == cudaSuccess,
          "cudaMemsetAsync");
  require(launch(addOne, dim3(1), dim3(1), compute, send) == cudaSuccess,
          "launch");
  require(cudaEventRecord(produced, compute) == cudaSuccess, "record");
  if (waitForCompute)
    require(cudaStreamWaitEvent(communication, produced, 0) == cudaSuccess,
            "wait");
  require(ncclAllReduce(send, recv, 1, ncclFloat32, ncclSum, comm,
                        communication) == ncclSuccess,
          "ncclAllReduce");
  float value = 0;
  require(cudaDeviceSynchronize() == cudaSuccess, "cudaDeviceSynchronize");
  require(cudaMemcpy(&value, recv, sizeof(float), cudaMemcpyDeviceToHost) ==
              cudaSuccess,
          "cudaMemcpy");
  require(cudaFree(send) == cudaSuccess && cudaFree(recv) == cudaSuccess &&
              cudaEventDestroy(produced) == cudaSuccess &&
              cudaStreamDestroy(compute) == cudaSuccess &&
              cudaStreamDestroy(communication) == cudaSuccess,
          "release");
  return value;
}

[[noreturn]] void exitWithDeferredCollective(const std::string &session) {
  setenv("OMPI_MCA_orte_tmpdir_base", session.c_str(), /*overwrite=*/1);
  setenv("PRTE_MCA_prte_tmpdir_base", session.c_str(), /*overwrite=*/1);
  require(MPI_Init(nullptr, nullptr) == MPI_SUCCESS, "MPI_Init");
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  require(ncclGetUniqueId(&id) == ncclSuccess &&
              ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess,
          "ncclCommInitRank");
  require(reduceAfterCompute(comm, /*waitForCompute=*/true) == 1.0f,
          "with the event, the all-reduce reads the kernel's 1");
  // Newest-first runs the communication stream's all-reduce before the
  // compute stream's memset and kernel: it copies the 0xFF fill (NaN).
  require(std::isnan(reduceAfterCompute(comm, /*waitForCompute=*/false)),
          "without the event, the all-reduce reads the unwritten buffer");
  require(ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
  MPI_Finalize();
  std::exit(0);
}

class EmulatorStreamOrderDeathTest : public ::testing::Test {
protected:
  void SetUp() override {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  }
};

TEST_F(EmulatorStreamOrderDeathTest, ACollectiveWithoutItsEventReadsGarbage) {
  // An Open MPI session directory of its own, as EmulatorTest.cpp's MPI
  // cases (the "threadsafe" child runs this body again and inherits it).
  const char *sessionVariable = "LOOM_STREAM_ORDER_TEST_MPI_SESSION";
  std::string session;
  if (const char *inherited = std::getenv(sessionVariable)) {
    session = inherited;
  } else {
    const char *tmp = std::getenv("TMPDIR");
    session = std::string(tmp && *tmp ? tmp : "/tmp") +
              "/loom-stream-order-test.XXXXXX";
    ASSERT_NE(mkdtemp(session.data()), nullptr);
    setenv(sessionVariable, session.c_str(), /*overwrite=*/1);
  }
  EXPECT_EXIT(exitWithDeferredCollective(session), ::testing::ExitedWithCode(0),
              "");
  unsetenv(sessionVariable);
  std::error_code ignored;
  std::filesystem::remove_all(session, ignored);
}

} // namespace
