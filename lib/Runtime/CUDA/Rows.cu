//===- Rows.cu - CUDA kernels that reduce along one dim -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Softmax (Softmax.h), layer and RMS norm (Normalization.h), cross-entropy
// (Loss.h) and general reductions (Reduction.h). Each lane (the elements
// that one output statistic reads) is one block of kRowThreads threads that
// reduces in double through Launch.h's fixed-order block reductions; sums
// across lanes (parameter gradients, the loss) run sequentially over the
// lanes in the host's order. Scratch memory comes from the stream's pool.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "loom/Runtime/CUDA/Loss.h"
#include "loom/Runtime/CUDA/Normalization.h"
#include "loom/Runtime/CUDA/Reduction.h"
#include "loom/Runtime/CUDA/Softmax.h"

#include <limits>

namespace loom::runtime::cuda {

using namespace detail;

namespace {

/// Scratch doubles on the stream's pool, freed after the kernels that use
/// them (stream order).
struct Scratch {
  cudaStream_t stream;
  double *data = nullptr;
  Scratch(cudaStream_t stream, int64_t count) : stream(stream) {
    if (count > 0)
      LOOM_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&data),
                                      count * sizeof(double), stream));
  }
  ~Scratch() {
    if (data)
      LOOM_CUDA_CHECK(cudaFreeAsync(data, stream));
  }
};

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

enum class SoftmaxKind { Softmax, LogSoftmax, SoftmaxGrad, LogSoftmaxGrad };

/// One block per lane: `outer * inner` lanes of `n` elements, `inner` apart.
template <typename T>
__global__ void softmaxKernel(SoftmaxKind kind, const T *a, const T *b,
                              int64_t n, int64_t inner, T *result) {
  __shared__ double shared[kRowThreads / 32];
  int64_t lane = blockIdx.x;
  int64_t base = (lane / inner) * n * inner + lane % inner;
  auto at = [&](int64_t k) { return base + k * inner; };
  switch (kind) {
  case SoftmaxKind::Softmax:
  case SoftmaxKind::LogSoftmax: {
    double m = -INFINITY;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      double v = a[at(k)];
      m = (isnan(v) || isnan(m)) ? (isnan(v) ? v : m) : fmax(m, v);
    }
    m = blockMax(m, shared);
    double sum = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
      sum += exp(static_cast<double>(a[at(k)]) - m);
    sum = blockSum(sum, shared);
    double logSum = log(sum);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      double v = a[at(k)];
      result[at(k)] = static_cast<T>(
          kind == SoftmaxKind::Softmax ? exp(v - m) / sum : v - m - logSum);
    }
    return;
  }
  case SoftmaxKind::SoftmaxGrad: {
    // a: the forward output, b: the incoming gradient.
    double dot = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
      dot += static_cast<double>(b[at(k)]) * a[at(k)];
    dot = blockSum(dot, shared);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
      result[at(k)] = static_cast<T>(a[at(k)] * (b[at(k)] - dot));
    return;
  }
  case SoftmaxKind::LogSoftmaxGrad: {
    double sum = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
      sum += b[at(k)];
    sum = blockSum(sum, shared);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
      result[at(k)] =
          static_cast<T>(b[at(k)] - exp(static_cast<double>(a[at(k)])) * sum);
    return;
  }
  }
}

template <typename T>
void launchSoftmax(cudaStream_t stream, SoftmaxKind kind, const T *a,
                   const T *b, const Shape &shape, int64_t axis, T *result) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t n = shape[axis];
  LOOM_LAUNCH(softmaxKernel<T>, n ? outer * inner : 0, kRowThreads, stream,
              kind, a, b, n, inner, result);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// One block per row: y = (x - mean) * rstd [* gamma + beta] (layer norm)
/// or x * rstd [* gamma] (RMS norm); records mean and rstd when asked.
template <typename T>
__global__ void normKernel(bool rms, const T *input, int64_t width,
                           const T *gamma, const T *beta, double eps, T *result,
                           double *means, double *rstds) {
  __shared__ double shared[kRowThreads / 32];
  const T *x = input + blockIdx.x * width;
  T *y = result + blockIdx.x * width;
  double mean = 0;
  if (!rms) {
    double sum = 0;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x)
      sum += x[i];
    mean = blockSum(sum, shared) / width;
  }
  double sq = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    double c = x[i] - mean;
    sq += c * c;
  }
  double rstd = 1.0 / sqrt(blockSum(sq, shared) / width + eps);
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    double v = (x[i] - mean) * rstd;
    if (gamma)
      v = rms ? v * gamma[i] : v * gamma[i] + beta[i];
    y[i] = static_cast<T>(v);
  }
  if (threadIdx.x == 0 && rstds) {
    rstds[blockIdx.x] = rstd;
    if (means)
      means[blockIdx.x] = mean;
  }
}

/// One block per row of the input gradient.
template <typename T>
__global__ void normGradKernel(bool rms, const T *grad, const T *input,
                               int64_t width, const T *gamma, double eps, T *dx,
                               double *means, double *rstds) {
  __shared__ double shared[kRowThreads / 32];
  const T *x = input + blockIdx.x * width;
  const T *dy = grad + blockIdx.x * width;
  T *out = dx + blockIdx.x * width;
  double mean = 0;
  if (!rms) {
    double sum = 0;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x)
      sum += x[i];
    mean = blockSum(sum, shared) / width;
  }
  double sq = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    double c = x[i] - mean;
    sq += c * c;
  }
  double rstd = 1.0 / sqrt(blockSum(sq, shared) / width + eps);
  double sumG = 0, sumGXhat = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    double xhat = (x[i] - mean) * rstd;
    double g = gamma ? static_cast<double>(dy[i]) * gamma[i] : dy[i];
    sumG += g;
    sumGXhat += g * xhat;
  }
  double meanG = rms ? 0.0 : blockSum(sumG, shared) / width;
  double meanGXhat = blockSum(sumGXhat, shared) / width;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    double xhat = (x[i] - mean) * rstd;
    double g = gamma ? static_cast<double>(dy[i]) * gamma[i] : dy[i];
    out[i] = static_cast<T>(rstd * (g - meanG - xhat * meanGXhat));
  }
  if (threadIdx.x == 0 && rstds) {
    rstds[blockIdx.x] = rstd;
    if (means)
      means[blockIdx.x] = mean;
  }
}

/// One thread per column: dgamma = sum_r dy * xhat, dbeta = sum_r dy, over
/// the rows in order.
/// The parameter gradients of a norm, in two passes so that the whole GPU
/// works on them: first each (chunk of rows, column) pair sums its rows,
/// then each column sums its chunks in order (deterministic). One thread per
/// column over every row left 768 threads for a GPT-2 small layer norm on a
/// 132-SM GPU (docs/Performance.md, "On a GPU").
template <typename T>
__global__ void normParamGradPartialKernel(const T *grad, const T *input,
                                           int64_t rows, int64_t width,
                                           int64_t chunkRows,
                                           const double *means,
                                           const double *rstds,
                                           double *partialGamma,
                                           double *partialBeta) {
  int64_t chunks = (rows + chunkRows - 1) / chunkRows;
  LOOM_GRID_LOOP(e, chunks * width) {
    int64_t chunk = e / width, i = e % width;
    int64_t end = (chunk + 1) * chunkRows;
    if (end > rows)
      end = rows;
    double dg = 0, db = 0;
    for (int64_t r = chunk * chunkRows; r < end; ++r) {
      double dy = grad[r * width + i];
      double mean = means ? means[r] : 0.0;
      dg += dy * ((input[r * width + i] - mean) * rstds[r]);
      db += dy;
    }
    partialGamma[e] = dg;
    partialBeta[e] = db;
  }
}

template <typename T>
__global__ void normParamGradSumKernel(const double *partialGamma,
                                       const double *partialBeta,
                                       int64_t chunks, int64_t width,
                                       T *dgamma, T *dbeta) {
  LOOM_GRID_LOOP(i, width) {
    double dg = 0, db = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      dg += partialGamma[chunk * width + i];
      db += partialBeta[chunk * width + i];
    }
    dgamma[i] = static_cast<T>(dg);
    if (dbeta)
      dbeta[i] = static_cast<T>(db);
  }
}

template <typename T>
void launchNormGrad(cudaStream_t stream, bool rms, const T *grad,
                    const T *input, const Shape &shape, const T *gamma,
                    double eps, T *dx, T *dgamma, T *dbeta) {
  int64_t rows, width;
  rowsAndWidth(shape, rows, width);
  Scratch means(stream, gamma && !rms ? rows : 0);
  Scratch rstds(stream, gamma ? rows : 0);
  LOOM_LAUNCH(normGradKernel<T>, rows, kRowThreads, stream, rms, grad, input,
              width, gamma, eps, dx, means.data, rstds.data);
  if (!gamma || rows == 0 || width == 0) {
    if (gamma && width > 0)
      LOOM_LAUNCH(normParamGradSumKernel<T>, blocksFor(width), kThreads,
                  stream, static_cast<const double *>(nullptr),
                  static_cast<const double *>(nullptr), int64_t(0), width,
                  dgamma, dbeta);
    return;
  }
  // Chunks of at least 32 rows, at most 1024 chunks.
  int64_t chunkRows = std::max<int64_t>(32, (rows + 1023) / 1024);
  int64_t chunks = (rows + chunkRows - 1) / chunkRows;
  Scratch partialGamma(stream, chunks * width);
  Scratch partialBeta(stream, chunks * width);
  LOOM_LAUNCH(normParamGradPartialKernel<T>, blocksFor(chunks * width),
              kThreads, stream, grad, input, rows, width, chunkRows,
              means.data, rstds.data, partialGamma.data, partialBeta.data);
  LOOM_LAUNCH(normParamGradSumKernel<T>, blocksFor(width), kThreads, stream,
              static_cast<const double *>(partialGamma.data),
              static_cast<const double *>(partialBeta.data), chunks, width,
              dgamma, dbeta);
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

/// One block per row: the row's loss term (0 for an ignored row) into
/// `terms`. With `offset` the logits are log-probabilities of a vocabulary
/// block and the term is minus the label's, when this block holds it.
template <typename T>
__global__ void
crossEntropyRowKernel(const T *logits, int64_t vocab, const int64_t *labels,
                      int64_t ignoreIndex, bool hasOffset, int64_t offset,
                      double *terms, ErrorSink errors) {
  __shared__ double shared[kRowThreads / 32];
  int64_t n = blockIdx.x;
  const T *x = logits + n * vocab;
  int64_t label = labels[n];
  if (label == ignoreIndex) {
    if (threadIdx.x == 0)
      terms[n] = 0;
    return;
  }
  if (hasOffset) {
    if (threadIdx.x == 0) {
      int64_t column = label - offset;
      terms[n] =
          column >= 0 && column < vocab ? -static_cast<double>(x[column]) : 0.0;
    }
    return;
  }
  if (label < 0 || label >= vocab) {
    if (threadIdx.x == 0) {
      raiseError(errors, DeviceErrorKind::LabelOutOfRange, label, n, vocab,
                 ignoreIndex);
      terms[n] = 0;
    }
    return;
  }
  double m = -INFINITY;
  for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x)
    m = fmax(m, static_cast<double>(x[v]));
  m = blockMax(m, shared);
  double sum = 0;
  for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x)
    sum += exp(x[v] - m);
  sum = blockSum(sum, shared);
  if (threadIdx.x == 0)
    terms[n] = m + log(sum) - x[label];
}

/// One thread: adds the terms in row order, as the host, and divides by the
/// number of counted labels unless `sum` (0 / 0 is NaN, as in PyTorch).
template <typename T>
__global__ void crossEntropyTotalKernel(const double *terms,
                                        const int64_t *labels, int64_t rows,
                                        int64_t ignoreIndex, bool sum,
                                        T *result) {
  double total = 0;
  int64_t count = 0;
  for (int64_t n = 0; n < rows; ++n) {
    total += terms[n];
    count += labels[n] != ignoreIndex;
  }
  result[0] = static_cast<T>(sum ? total : total / static_cast<double>(count));
}

/// One thread: the gradient's factor, dloss or dloss / count.
template <typename T>
__global__ void crossEntropyFactorKernel(const int64_t *labels, int64_t rows,
                                         int64_t ignoreIndex, bool sum,
                                         const T *dloss, double *factor) {
  int64_t count = 0;
  for (int64_t n = 0; n < rows; ++n)
    count += labels[n] != ignoreIndex;
  double d = static_cast<double>(dloss[0]);
  factor[0] = sum ? d : d / static_cast<double>(count);
}

/// One block per row: (softmax - onehot) * factor; zeros for ignored rows.
template <typename T>
__global__ void
crossEntropyGradRowKernel(const T *logits, int64_t vocab, const int64_t *labels,
                          int64_t ignoreIndex, bool hasOffset, int64_t offset,
                          const double *factor, T *result, ErrorSink errors) {
  __shared__ double shared[kRowThreads / 32];
  int64_t n = blockIdx.x;
  const T *x = logits + n * vocab;
  T *dx = result + n * vocab;
  int64_t label = labels[n];
  if (label == ignoreIndex) {
    for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x)
      dx[v] = T(0);
    return;
  }
  double m = 0, logSum = 0;
  if (!hasOffset) {
    if (label < 0 || label >= vocab) {
      if (threadIdx.x == 0)
        raiseError(errors, DeviceErrorKind::LabelOutOfRange, label, n, vocab,
                   ignoreIndex);
      return;
    }
    m = -INFINITY;
    for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x)
      m = fmax(m, static_cast<double>(x[v]));
    m = blockMax(m, shared);
    double sum = 0;
    for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x)
      sum += exp(x[v] - m);
    logSum = log(blockSum(sum, shared));
  }
  int64_t local = label - (hasOffset ? offset : 0);
  double f = factor[0];
  for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x) {
    double p = exp(x[v] - m - logSum);
    dx[v] = static_cast<T>((p - (v == local ? 1.0 : 0.0)) * f);
  }
}

template <typename T>
__global__ void labelCountKernel(const int64_t *labels, int64_t count,
                                 int64_t ignoreIndex, T *result) {
  int64_t n = 0;
  for (int64_t i = 0; i < count; ++i)
    n += labels[i] != ignoreIndex;
  result[0] = static_cast<T>(n);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The accumulator: double for floats, int64_t for integers.
template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename A> __device__ A combine(ReduceKind kind, A a, A b) {
  if (kind != ReduceKind::Max)
    return a + b;
  if constexpr (std::is_floating_point_v<A>) {
    if (isnan(a) || isnan(b))
      return isnan(a) ? a : b;
  }
  return a > b ? a : b;
}

template <typename T> __device__ Acc<T> reduceIdentity(ReduceKind kind) {
  if constexpr (std::is_floating_point_v<T>)
    return kind == ReduceKind::Max ? -INFINITY : 0.0;
  else
    return kind == ReduceKind::Max ? INT64_MIN : 0;
}

/// The input offset of element `index` of the dims `dims` (the kept dims
/// for an output index, the reduced dims for a reduction index).
__device__ inline int64_t offsetOf(const Dims &dims, int64_t index) {
  int64_t offset = 0;
  for (int d = dims.rank - 1; d >= 0; --d) {
    offset += (index % dims.size[d]) * dims.stride[d];
    index /= dims.size[d];
  }
  return offset;
}

template <typename T>
__device__ T finishReduce(ReduceKind kind, Acc<T> v, int64_t reducedCount) {
  if (kind == ReduceKind::Mean && reducedCount > 0) {
    if constexpr (std::is_floating_point_v<T>)
      v /= static_cast<double>(reducedCount);
    else
      v /= reducedCount;
  }
  return static_cast<T>(v);
}

/// One thread per output element, combining its elements in order: for
/// many outputs that each reduce a few elements (the sum of a fused
/// projection's q, k and v input gradients is 3 elements per output), where
/// a block per output would leave all but a few of its threads idle.
template <typename T>
__global__ void reduceSerialKernel(ReduceKind kind, const T *in, Dims kept,
                                   Dims reduced, int64_t outCount,
                                   int64_t reducedCount, T *out) {
  using A = Acc<T>;
  LOOM_GRID_LOOP(o, outCount) {
    int64_t base = offsetOf(kept, o);
    A acc = reduceIdentity<T>(kind);
    for (int64_t r = 0; r < reducedCount; ++r)
      acc = combine<A>(kind, acc,
                       static_cast<A>(in[base + offsetOf(reduced, r)]));
    out[o] = finishReduce<T>(kind, acc, reducedCount);
  }
}

/// One block per output element; `kept` maps the output index to the input
/// offset, `reduced` the reduction index.
template <typename T>
__global__ void reduceKernel(ReduceKind kind, const T *in, Dims kept,
                             Dims reduced, int64_t reducedCount, T *out) {
  using A = Acc<T>;
  __shared__ A shared[kRowThreads];
  int64_t base = offsetOf(kept, blockIdx.x);
  A acc = reduceIdentity<T>(kind);
  for (int64_t r = threadIdx.x; r < reducedCount; r += blockDim.x)
    acc = combine<A>(kind, acc,
                     static_cast<A>(in[base + offsetOf(reduced, r)]));
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (int width = blockDim.x / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width)
      shared[threadIdx.x] =
          combine<A>(kind, shared[threadIdx.x], shared[threadIdx.x + width]);
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = finishReduce<T>(kind, shared[0], reducedCount);
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

template <typename T>
void softmax(cudaStream_t stream, const T *input, const Shape &shape,
             int64_t axis, T *result) {
  launchSoftmax<T>(stream, SoftmaxKind::Softmax, input, nullptr, shape, axis,
                   result);
}
template <typename T>
void logSoftmax(cudaStream_t stream, const T *input, const Shape &shape,
                int64_t axis, T *result) {
  launchSoftmax<T>(stream, SoftmaxKind::LogSoftmax, input, nullptr, shape, axis,
                   result);
}
template <typename T>
void softmaxGrad(cudaStream_t stream, const T *output, const T *grad,
                 const Shape &shape, int64_t axis, T *result) {
  launchSoftmax<T>(stream, SoftmaxKind::SoftmaxGrad, output, grad, shape, axis,
                   result);
}
template <typename T>
void logSoftmaxGrad(cudaStream_t stream, const T *output, const T *grad,
                    const Shape &shape, int64_t axis, T *result) {
  launchSoftmax<T>(stream, SoftmaxKind::LogSoftmaxGrad, output, grad, shape,
                   axis, result);
}

template <typename T>
void layerNorm(cudaStream_t stream, const T *input, const Shape &shape,
               const T *gamma, const T *beta, double eps, T *result) {
  int64_t rows, width;
  rowsAndWidth(shape, rows, width);
  LOOM_LAUNCH(normKernel<T>, rows, kRowThreads, stream, false, input, width,
              gamma, beta, eps, result, nullptr, nullptr);
}
template <typename T>
void rmsNorm(cudaStream_t stream, const T *input, const Shape &shape,
             const T *gamma, double eps, T *result) {
  int64_t rows, width;
  rowsAndWidth(shape, rows, width);
  LOOM_LAUNCH(normKernel<T>, rows, kRowThreads, stream, true, input, width,
              gamma, nullptr, eps, result, nullptr, nullptr);
}
template <typename T>
void layerNormGrad(cudaStream_t stream, const T *grad, const T *input,
                   const Shape &shape, const T *gamma, double eps, T *dx,
                   T *dgamma, T *dbeta) {
  launchNormGrad(stream, false, grad, input, shape, gamma, eps, dx, dgamma,
                 dbeta);
}
template <typename T>
void rmsNormGrad(cudaStream_t stream, const T *grad, const T *input,
                 const Shape &shape, const T *gamma, double eps, T *dx,
                 T *dgamma) {
  launchNormGrad(stream, true, grad, input, shape, gamma, eps, dx, dgamma,
                 static_cast<T *>(nullptr));
}

template <typename T>
void crossEntropyLocal(cudaStream_t stream, const T *logits,
                       const Shape &logitsShape, const int64_t *labels,
                       int64_t ignoreIndex, const int64_t *offset, bool sum,
                       T *result, ErrorSink errors) {
  int64_t rows, vocab;
  rowsAndWidth(logitsShape, rows, vocab);
  Scratch terms(stream, rows);
  LOOM_LAUNCH(crossEntropyRowKernel<T>, rows, kRowThreads, stream, logits,
              vocab, labels, ignoreIndex, offset != nullptr,
              offset ? *offset : 0, terms.data, errors);
  LOOM_LAUNCH(crossEntropyTotalKernel<T>, 1, 1, stream, terms.data, labels,
              rows, ignoreIndex, sum, result);
}

template <typename T>
void crossEntropyGradLocal(cudaStream_t stream, const T *logits,
                           const Shape &logitsShape, const int64_t *labels,
                           const T *dloss, int64_t ignoreIndex,
                           const int64_t *offset, bool sum, T *result,
                           ErrorSink errors) {
  int64_t rows, vocab;
  rowsAndWidth(logitsShape, rows, vocab);
  Scratch factor(stream, 1);
  LOOM_LAUNCH(crossEntropyFactorKernel<T>, 1, 1, stream, labels, rows,
              ignoreIndex, sum, dloss, factor.data);
  LOOM_LAUNCH(crossEntropyGradRowKernel<T>, rows, kRowThreads, stream, logits,
              vocab, labels, ignoreIndex, offset != nullptr,
              offset ? *offset : 0, factor.data, result, errors);
}

template <typename T>
void labelCount(cudaStream_t stream, const int64_t *labels, int64_t count,
                int64_t ignoreIndex, T *result) {
  LOOM_LAUNCH(labelCountKernel<T>, 1, 1, stream, labels, count, ignoreIndex,
              result);
}

template <typename T>
void reduce(cudaStream_t stream, ReduceKind kind, const T *in,
            const Shape &shape, const std::vector<int64_t> &axes, T *out) {
  std::vector<bool> isReduced(shape.size(), false);
  for (int64_t axis : axes)
    isReduced[axis] = true;
  Dims all = makeDims(shape, {}, "reduce");
  Dims kept, reduced;
  int64_t outCount = 1, reducedCount = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    Dims &target = isReduced[d] ? reduced : kept;
    target.size[target.rank] = shape[d];
    target.stride[target.rank] = all.stride[d];
    ++target.rank;
    (isReduced[d] ? reducedCount : outCount) *= shape[d];
  }
  // A thread per output when each reduces fewer elements than a warp, or
  // when the outputs alone fill the GPU; else a block per output.
  if (reducedCount < 32 || outCount >= (int64_t(1) << 16))
    LOOM_LAUNCH(reduceSerialKernel<T>, outCount ? blocksFor(outCount) : 0,
                kThreads, stream, kind, in, kept, reduced, outCount,
                reducedCount, out);
  else
    LOOM_LAUNCH(reduceKernel<T>, outCount, kRowThreads, stream, kind, in,
                kept, reduced, reducedCount, out);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void softmax<T>(cudaStream_t, const T *, const Shape &, int64_t,    \
                           T *);                                               \
  template void logSoftmax<T>(cudaStream_t, const T *, const Shape &, int64_t, \
                              T *);                                            \
  template void softmaxGrad<T>(cudaStream_t, const T *, const T *,             \
                               const Shape &, int64_t, T *);                   \
  template void logSoftmaxGrad<T>(cudaStream_t, const T *, const T *,          \
                                  const Shape &, int64_t, T *);                \
  template void layerNorm<T>(cudaStream_t, const T *, const Shape &,           \
                             const T *, const T *, double, T *);               \
  template void rmsNorm<T>(cudaStream_t, const T *, const Shape &, const T *,  \
                           double, T *);                                       \
  template void layerNormGrad<T>(cudaStream_t, const T *, const T *,           \
                                 const Shape &, const T *, double, T *, T *,   \
                                 T *);                                         \
  template void rmsNormGrad<T>(cudaStream_t, const T *, const T *,             \
                               const Shape &, const T *, double, T *, T *);    \
  template void crossEntropyLocal<T>(cudaStream_t, const T *, const Shape &,   \
                                     const int64_t *, int64_t,                 \
                                     const int64_t *, bool, T *, ErrorSink);   \
  template void crossEntropyGradLocal<T>(                                      \
      cudaStream_t, const T *, const Shape &, const int64_t *, const T *,      \
      int64_t, const int64_t *, bool, T *, ErrorSink);                         \
  template void labelCount<T>(cudaStream_t, const int64_t *, int64_t, int64_t, \
                              T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

template void reduce<float>(cudaStream_t, ReduceKind, const float *,
                            const Shape &, const std::vector<int64_t> &,
                            float *);
template void reduce<double>(cudaStream_t, ReduceKind, const double *,
                             const Shape &, const std::vector<int64_t> &,
                             double *);
template void reduce<int64_t>(cudaStream_t, ReduceKind, const int64_t *,
                              const Shape &, const std::vector<int64_t> &,
                              int64_t *);

} // namespace loom::runtime::cuda
