//===- Pointwise.cu - CUDA kernels applied element by element -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Elementwise arithmetic (Elementwise.h), activations (Activation.h) and
// optimizer updates (Optimizer.h): one grid-stride loop per op. Each kernel
// mirrors its host loop (lib/Runtime/Host) operation for operation: binary
// and unary ops compute in T as the host does, activations and optimizer
// formulas in double with one rounding to T.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "loom/Runtime/CUDA/Activation.h"
#include "loom/Runtime/CUDA/Elementwise.h"
#include "loom/Runtime/CUDA/Optimizer.h"

namespace loom::runtime::cuda {

using namespace detail;

namespace {

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void binaryKernel(BinaryKind kind, const T *lhs, Dims lhsDims,
                             const T *rhs, Dims rhsDims, T *out, int64_t count,
                             ErrorSink errors) {
  LOOM_GRID_LOOP(i, count) {
    int64_t rest = i, li = 0, ri = 0;
    // The operands' dims are the output's, with stride 0 where broadcast.
    for (int d = lhsDims.rank - 1; d >= 0; --d) {
      int64_t coord = rest % lhsDims.size[d];
      rest /= lhsDims.size[d];
      li += coord * lhsDims.stride[d];
      ri += coord * rhsDims.stride[d];
    }
    T a = lhs[li], b = rhs[ri];
    switch (kind) {
    case BinaryKind::Add:
      out[i] = a + b;
      break;
    case BinaryKind::Sub:
      out[i] = a - b;
      break;
    case BinaryKind::Mul:
      out[i] = a * b;
      break;
    case BinaryKind::Div:
      if constexpr (std::is_integral_v<T>) {
        if (b == 0) {
          raiseError(errors, DeviceErrorKind::IntegerDivisionByZero, 0, ri, 0);
          out[i] = 0;
          break;
        }
      }
      out[i] = a / b;
      break;
    }
  }
}

template <typename T>
__global__ void unaryKernel(UnaryKind kind, const T *in, int64_t count,
                            T *out) {
  LOOM_GRID_LOOP(i, count) {
    T x = in[i];
    switch (kind) {
    case UnaryKind::Neg:
      out[i] = -x;
      break;
    case UnaryKind::Exp:
      out[i] = exp(x);
      break;
    case UnaryKind::Log:
      out[i] = log(x);
      break;
    case UnaryKind::Sqrt:
      out[i] = sqrt(x);
      break;
    case UnaryKind::Rsqrt:
      out[i] = T(1) / sqrt(x);
      break;
    case UnaryKind::Tanh:
      out[i] = tanh(x);
      break;
    case UnaryKind::Sigmoid:
      out[i] = T(1) / (T(1) + exp(-x));
      break;
    }
  }
}

template <typename T>
__global__ void scaleKernel(const T *in, int64_t count, T factor, T *out) {
  LOOM_GRID_LOOP(i, count) { out[i] = in[i] * factor; }
}

/// The host's roundToBF16: round to nearest even on the dropped 16 bits.
__device__ float roundToBF16(float value) {
  if (isnan(value))
    return value;
  unsigned bits = __float_as_uint(value);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return __uint_as_float(bits & 0xffff0000u);
}

/// The host's roundToF16: nearest even on the half grid, overflow to inf.
__device__ float roundToF16(float value) {
  if (isnan(value) || isinf(value))
    return value;
  float magnitude = fabsf(value);
  if (magnitude >= 65520.0f)
    return copysignf(INFINITY, value);
  int exponent;
  frexpf(magnitude, &exponent);
  int ulpExponent = max(exponent - 11, -24);
  float ulp = ldexpf(1.0f, ulpExponent);
  return copysignf(nearbyintf(magnitude / ulp) * ulp, value);
}

/// The binary16 bits of `value`, an f16 value (roundToF16's result):
/// normal, subnormal (below 2^-14), zero, infinity or NaN.
__device__ uint16_t f16Bits(float value) {
  unsigned bits = __float_as_uint(value);
  unsigned sign = (bits >> 16) & 0x8000u;
  unsigned exponent = (bits >> 23) & 0xffu, mantissa = bits & 0x7fffffu;
  if (exponent == 0xffu) // Infinity, or a quiet NaN.
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  if (exponent == 0) // Zero (f32 subnormals round to an f16 zero).
    return static_cast<uint16_t>(sign);
  int unbiased = static_cast<int>(exponent) - 127;
  if (unbiased >= -14)
    return static_cast<uint16_t>(sign | ((unbiased + 15) << 10) |
                                 (mantissa >> 13));
  // value = (2^23 + mantissa) 2^(unbiased - 23) = q 2^-24.
  return static_cast<uint16_t>(sign | ((0x800000u | mantissa) >> (-unbiased - 1)));
}

__global__ void packLowPrecisionKernel(const float *in, int64_t count,
                                       bool toBF16, uint16_t *out) {
  LOOM_GRID_LOOP(i, count) {
    if (toBF16)
      out[i] = static_cast<uint16_t>(__float_as_uint(roundToBF16(in[i])) >> 16);
    else
      out[i] = f16Bits(roundToF16(in[i]));
  }
}

/// The value of a bf16 (`isBF16`) or binary16 bit pattern, exact in float:
/// f16Bits' inverse (NaN stays NaN).
__device__ float widenSixteenBits(uint16_t bits, bool isBF16) {
  if (isBF16)
    return __uint_as_float(static_cast<unsigned>(bits) << 16);
  unsigned sign = (static_cast<unsigned>(bits) & 0x8000u) << 16;
  unsigned exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0x1fu) // Infinity or NaN.
    return __uint_as_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // Zero or a subnormal: mantissa 2^-24.
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  // Rebias the exponent from 15 to 127; the fraction gains 13 zero bits.
  return __uint_as_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

template <typename T>
__global__ void widenLowPrecisionKernel(const uint16_t *in, int64_t count,
                                        bool fromBF16, T *out) {
  LOOM_GRID_LOOP(i, count) {
    out[i] = static_cast<T>(widenSixteenBits(in[i], fromBF16));
  }
}

template <typename To> __device__ To fromInteger(int64_t v, CastTarget target) {
  switch (target) {
  case CastTarget::I1:
    return static_cast<To>(v != 0);
  case CastTarget::I32:
    return static_cast<To>(static_cast<int32_t>(static_cast<uint32_t>(v)));
  case CastTarget::I64:
    return static_cast<To>(v);
  case CastTarget::BF16:
    return static_cast<To>(roundToBF16(static_cast<float>(v)));
  case CastTarget::F16:
    return static_cast<To>(roundToF16(static_cast<float>(v)));
  case CastTarget::F32:
    return static_cast<To>(static_cast<float>(v));
  case CastTarget::F64:
    return static_cast<To>(static_cast<double>(v));
  }
  return To(0);
}

template <typename To> __device__ To fromFloat(double v, CastTarget target) {
  switch (target) {
  case CastTarget::I1:
    return static_cast<To>(v != 0.0);
  case CastTarget::I32:
  case CastTarget::I64: {
    // Clamped as on the host so that the conversion is defined.
    if (isnan(v))
      return To(0);
    double t =
        fmax(fmin(trunc(v), 9.2233720368547748e18), -9.2233720368547758e18);
    return fromInteger<To>(static_cast<int64_t>(t), target);
  }
  case CastTarget::BF16:
    return static_cast<To>(roundToBF16(static_cast<float>(v)));
  case CastTarget::F16:
    return static_cast<To>(roundToF16(static_cast<float>(v)));
  case CastTarget::F32:
    return static_cast<To>(static_cast<float>(v));
  case CastTarget::F64:
    return static_cast<To>(v);
  }
  return To(0);
}

template <typename From, typename To>
__global__ void castKernel(const From *in, int64_t count, CastTarget target,
                           To *out) {
  LOOM_GRID_LOOP(i, count) {
    if constexpr (std::is_floating_point_v<From>)
      out[i] = fromFloat<To>(static_cast<double>(in[i]), target);
    else
      out[i] = fromInteger<To>(static_cast<int64_t>(in[i]), target);
  }
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

constexpr double kSqrt2 = 1.4142135623730950488;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kGeluCubic = 0.044715;

enum class Activation { Gelu, GeluTanh, Silu, Relu };

__device__ double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

template <typename T>
__global__ void activationKernel(Activation kind, const T *input, int64_t count,
                                 T *result) {
  LOOM_GRID_LOOP(e, count) {
    double x = input[e];
    switch (kind) {
    case Activation::Gelu:
      result[e] = static_cast<T>(0.5 * x * (1.0 + erf(x / kSqrt2)));
      break;
    case Activation::GeluTanh: {
      double u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
      result[e] = static_cast<T>(0.5 * x * (1.0 + tanh(u)));
      break;
    }
    case Activation::Silu:
      result[e] = static_cast<T>(x * sigmoid(x));
      break;
    case Activation::Relu: {
      // NaN passes through unchanged, as on the host.
      T v = input[e];
      result[e] = v > T(0) || isnan(v) ? v : T(0);
      break;
    }
    }
  }
}

template <typename T>
__global__ void activationGradKernel(Activation kind, const T *dy, const T *x,
                                     int64_t count, T *dx) {
  LOOM_GRID_LOOP(e, count) {
    double v = x[e];
    switch (kind) {
    case Activation::Gelu: {
      double cdf = 0.5 * (1.0 + erf(v / kSqrt2));
      double pdf = exp(-0.5 * v * v) * kInvSqrt2Pi;
      dx[e] = static_cast<T>(dy[e] * (cdf + v * pdf));
      break;
    }
    case Activation::GeluTanh: {
      double t = tanh(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
      double d = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * kSqrt2OverPi *
                                       (1.0 + 3.0 * kGeluCubic * v * v);
      dx[e] = static_cast<T>(dy[e] * d);
      break;
    }
    case Activation::Silu: {
      double s = sigmoid(v);
      dx[e] = static_cast<T>(dy[e] * s * (1.0 + v * (1.0 - s)));
      break;
    }
    case Activation::Relu:
      dx[e] = x[e] > T(0) ? dy[e] : T(0);
      break;
    }
  }
}

Activation geluKind(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh ? Activation::GeluTanh
                                                : Activation::Gelu;
}

template <typename T>
void launchActivation(cudaStream_t stream, Activation kind, const T *input,
                      const Shape &shape, T *result) {
  int64_t n = numElements(shape);
  LOOM_LAUNCH(activationKernel<T>, n ? blocksFor(n) : 0, kThreads, stream, kind,
              input, n, result);
}

template <typename T>
void launchActivationGrad(cudaStream_t stream, Activation kind, const T *dy,
                          const T *x, const Shape &shape, T *dx) {
  int64_t n = numElements(shape);
  LOOM_LAUNCH(activationGradKernel<T>, n ? blocksFor(n) : 0, kThreads, stream,
              kind, dy, x, n, dx);
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void sgdKernel(const T *param, const T *grad, const T *momentumBuf,
                          int64_t count, double lr, const T *lrScale,
                          double momentum, double weightDecay, double dampening,
                          bool nesterov, T *newParam, T *newMomentumBuf) {
  // The host's product (HostEmitter): a factor of 1 keeps lr's bits.
  if (lrScale)
    lr = lr * static_cast<double>(lrScale[0]);
  LOOM_GRID_LOOP(e, count) {
    double p = param[e];
    double g = grad[e] + weightDecay * p;
    if (momentumBuf) {
      double b = momentum * momentumBuf[e] + (1.0 - dampening) * g;
      g = nesterov ? g + momentum * b : b;
      newMomentumBuf[e] = static_cast<T>(b);
    }
    newParam[e] = static_cast<T>(p - lr * g);
  }
}

template <typename T, typename S>
__global__ void adamwKernel(const T *param, const T *grad, const T *expAvg,
                            const T *expAvgSq, int64_t count, const S *step,
                            double lr, const T *lrScale, double beta1,
                            double beta2, double eps, double weightDecay,
                            T *newParam, T *newExpAvg, T *newExpAvgSq) {
  if (lrScale)
    lr = lr * static_cast<double>(lrScale[0]);
  // The host converts the step to int64_t first; so do we.
  double t = static_cast<double>(static_cast<int64_t>(step[0])) + 1.0;
  double c1 = 1.0 - pow(beta1, t);
  double sqrtC2 = sqrt(1.0 - pow(beta2, t));
  double stepSize = lr / c1;
  double decay = 1.0 - lr * weightDecay;
  LOOM_GRID_LOOP(e, count) {
    double g = grad[e];
    double p = param[e] * decay;
    double m = beta1 * expAvg[e] + (1.0 - beta1) * g;
    double v = beta2 * expAvgSq[e] + (1.0 - beta2) * g * g;
    newParam[e] = static_cast<T>(p - stepSize * m / (sqrt(v) / sqrtC2 + eps));
    newExpAvg[e] = static_cast<T>(m);
    newExpAvgSq[e] = static_cast<T>(v);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

template <typename T>
void binary(cudaStream_t stream, BinaryKind kind, const T *lhs,
            const Shape &lhsShape, const T *rhs, const Shape &rhsShape, T *out,
            const Shape &outShape, ErrorSink errors) {
  int64_t count = numElements(outShape);
  Dims lhsDims =
      makeDims(outShape, broadcastStrides(outShape, lhsShape), "binary");
  Dims rhsDims =
      makeDims(outShape, broadcastStrides(outShape, rhsShape), "binary");
  LOOM_LAUNCH(binaryKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              kind, lhs, lhsDims, rhs, rhsDims, out, count, errors);
}

template <typename T>
void unary(cudaStream_t stream, UnaryKind kind, const T *in, int64_t count,
           T *out) {
  LOOM_LAUNCH(unaryKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              kind, in, count, out);
}

template <typename T>
void scale(cudaStream_t stream, const T *in, int64_t count, double factor,
           T *out) {
  LOOM_LAUNCH(scaleKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              in, count, static_cast<T>(factor), out);
}

template <typename From, typename To>
void cast(cudaStream_t stream, const From *in, int64_t count, CastTarget target,
          To *out) {
  auto *kernel = castKernel<From, To>;
  LOOM_LAUNCH(kernel, count ? blocksFor(count) : 0, kThreads, stream, in, count,
              target, out);
}

void packLowPrecision(cudaStream_t stream, const float *in, int64_t count,
                      CastTarget target, uint16_t *out) {
  if (target != CastTarget::BF16 && target != CastTarget::F16) {
    std::fprintf(stderr, "loom: rank %d: packLowPrecision: the target is not "
                         "bf16 or f16\n", reportedRank());
    std::abort();
  }
  LOOM_LAUNCH(packLowPrecisionKernel, count ? blocksFor(count) : 0, kThreads,
              stream, in, count, target == CastTarget::BF16, out);
}

template <typename T>
void widenLowPrecision(cudaStream_t stream, const uint16_t *in, int64_t count,
                       CastTarget source, T *out) {
  if (source != CastTarget::BF16 && source != CastTarget::F16) {
    std::fprintf(stderr, "loom: rank %d: widenLowPrecision: the source is not "
                         "bf16 or f16\n", reportedRank());
    std::abort();
  }
  LOOM_LAUNCH(widenLowPrecisionKernel<T>, count ? blocksFor(count) : 0,
              kThreads, stream, in, count, source == CastTarget::BF16, out);
}

template <typename T>
void gelu(cudaStream_t stream, const T *input, const Shape &shape,
          GeluApproximation approximate, T *result) {
  launchActivation(stream, geluKind(approximate), input, shape, result);
}
template <typename T>
void silu(cudaStream_t stream, const T *input, const Shape &shape, T *result) {
  launchActivation(stream, Activation::Silu, input, shape, result);
}
template <typename T>
void relu(cudaStream_t stream, const T *input, const Shape &shape, T *result) {
  launchActivation(stream, Activation::Relu, input, shape, result);
}
template <typename T>
void geluGrad(cudaStream_t stream, const T *dy, const T *x, const Shape &shape,
              GeluApproximation approximate, T *dx) {
  launchActivationGrad(stream, geluKind(approximate), dy, x, shape, dx);
}
template <typename T>
void siluGrad(cudaStream_t stream, const T *dy, const T *x, const Shape &shape,
              T *dx) {
  launchActivationGrad(stream, Activation::Silu, dy, x, shape, dx);
}
template <typename T>
void reluGrad(cudaStream_t stream, const T *dy, const T *x, const Shape &shape,
              T *dx) {
  launchActivationGrad(stream, Activation::Relu, dy, x, shape, dx);
}

template <typename T>
void sgdUpdate(cudaStream_t stream, const T *param, const T *grad,
               const T *momentumBuf, const Shape &shape, double lr,
               const T *lrScale, double momentum, double weightDecay,
               double dampening, bool nesterov, T *newParam,
               T *newMomentumBuf) {
  int64_t n = numElements(shape);
  LOOM_LAUNCH(sgdKernel<T>, n ? blocksFor(n) : 0, kThreads, stream, param, grad,
              momentumBuf, n, lr, lrScale, momentum, weightDecay, dampening,
              nesterov, newParam, newMomentumBuf);
}

template <typename T, typename S>
void adamwUpdate(cudaStream_t stream, const T *param, const T *grad,
                 const T *expAvg, const T *expAvgSq, const Shape &shape,
                 const S *step, double lr, const T *lrScale, double beta1,
                 double beta2, double eps, double weightDecay, T *newParam,
                 T *newExpAvg, T *newExpAvgSq) {
  int64_t n = numElements(shape);
  auto *kernel = adamwKernel<T, S>;
  LOOM_LAUNCH(kernel, n ? blocksFor(n) : 0, kThreads, stream, param, grad,
              expAvg, expAvgSq, n, step, lr, lrScale, beta1, beta2, eps,
              weightDecay, newParam, newExpAvg, newExpAvgSq);
}

#define LOOM_INSTANTIATE_FLOAT(T)                                              \
  template void unary<T>(cudaStream_t, UnaryKind, const T *, int64_t, T *);    \
  template void scale<T>(cudaStream_t, const T *, int64_t, double, T *);       \
  template void gelu<T>(cudaStream_t, const T *, const Shape &,                \
                        GeluApproximation, T *);                               \
  template void silu<T>(cudaStream_t, const T *, const Shape &, T *);          \
  template void relu<T>(cudaStream_t, const T *, const Shape &, T *);          \
  template void geluGrad<T>(cudaStream_t, const T *, const T *, const Shape &, \
                            GeluApproximation, T *);                           \
  template void siluGrad<T>(cudaStream_t, const T *, const T *, const Shape &, \
                            T *);                                              \
  template void reluGrad<T>(cudaStream_t, const T *, const T *, const Shape &, \
                            T *);                                              \
  template void sgdUpdate<T>(cudaStream_t, const T *, const T *, const T *,    \
                             const Shape &, double, const T *, double, double, \
                             double, bool, T *, T *);                          \
  template void adamwUpdate<T, T>(cudaStream_t, const T *, const T *,          \
                                  const T *, const T *, const Shape &,         \
                                  const T *, double, const T *, double,        \
                                  double, double, double, T *, T *, T *);      \
  template void adamwUpdate<T, int64_t>(                                       \
      cudaStream_t, const T *, const T *, const T *, const T *, const Shape &, \
      const int64_t *, double, const T *, double, double, double, double, T *, \
      T *, T *);
LOOM_INSTANTIATE_FLOAT(float)
LOOM_INSTANTIATE_FLOAT(double)
#undef LOOM_INSTANTIATE_FLOAT

template void widenLowPrecision<float>(cudaStream_t, const uint16_t *, int64_t,
                                       CastTarget, float *);
template void widenLowPrecision<double>(cudaStream_t, const uint16_t *,
                                        int64_t, CastTarget, double *);

#define LOOM_INSTANTIATE_BINARY(T)                                             \
  template void binary<T>(cudaStream_t, BinaryKind, const T *, const Shape &,  \
                          const T *, const Shape &, T *, const Shape &,        \
                          ErrorSink);
LOOM_INSTANTIATE_BINARY(float)
LOOM_INSTANTIATE_BINARY(double)
LOOM_INSTANTIATE_BINARY(int64_t)
#undef LOOM_INSTANTIATE_BINARY

#define LOOM_INSTANTIATE_CAST(From)                                            \
  template void cast<From, float>(cudaStream_t, const From *, int64_t,         \
                                  CastTarget, float *);                        \
  template void cast<From, double>(cudaStream_t, const From *, int64_t,        \
                                   CastTarget, double *);                      \
  template void cast<From, int64_t>(cudaStream_t, const From *, int64_t,       \
                                    CastTarget, int64_t *);
LOOM_INSTANTIATE_CAST(float)
LOOM_INSTANTIATE_CAST(double)
LOOM_INSTANTIATE_CAST(int64_t)
#undef LOOM_INSTANTIATE_CAST

} // namespace loom::runtime::cuda
