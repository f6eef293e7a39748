//===- KernelRegistry.h - How the interpreter runs each op ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The extension point of the interpreter. Each `loom` op runs through one
// *kernel function*: it reads the op's operands from the context, allocates
// its results, reads the op's attributes through the typed op class, and
// calls a host kernel of lib/Runtime/Host. A registry maps op names to
// kernel functions; each op family registers its kernels in one function
// (`registerMatmulKernels`, ...) listed in KernelRegistry.cpp.
//
// Adding an op (see docs/Interpreter.md):
//
//   static KernelStatus runSoftmax(SoftmaxOp op, KernelContext &ctx) {
//     const HostTensor &x = ctx.get(op.getInput());
//     HostTensor &y = ctx.allocate(op.getResult());
//     return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
//       using T = decltype(zero);
//       host::softmax<T>(x.data<T>(), x.getShape(), op.getAxis(),
//                        y.mutableData<T>());
//       return std::nullopt;
//     });
//   }
//   ...
//   registry.add<SoftmaxOp>(runSoftmax);   // in registerXKernels
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_KERNELREGISTRY_H
#define LOOM_INTERPRETER_KERNELREGISTRY_H

#include "loom/Interpreter/HostTensor.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

namespace mlir::loom::dist {
class InPlaceReuse;
class Mesh;
} // namespace mlir::loom::dist

namespace mlir::loom::interp {

/// What a kernel function returns: nullopt on success, else an error
/// message (lowercase, no trailing period; the interpreter adds the op, its
/// location and the rank).
using KernelStatus = std::optional<std::string>;

/// The values of one rank, keyed by `Value::getAsOpaquePointer()`. An
/// unordered_map keeps references stable while results are added, so a
/// kernel may hold its operands while it allocates its results.
using ValueMap = std::unordered_map<void *, HostTensor>;

/// What a kernel function sees: the values of one rank and the run's
/// settings.
class KernelContext {
public:
  KernelContext(ValueMap &values, StorageKind floatKind, int64_t rank,
                uint64_t seed, const dist::Mesh *mesh = nullptr,
                int64_t numRanks = 1, uint64_t rngStep = 0)
      : values(values), floatKind(floatKind), rank(rank), seed(seed),
        mesh(mesh), numRanks(numRanks), rngStep(rngStep) {}

  /// The value of an operand (defined earlier in program order).
  const HostTensor &get(Value value) const;

  /// Allocates a zero-filled tensor for `result`, with the shape of its
  /// (static) tensor type and the storage kind of its element type, binds
  /// it and returns it for the kernel to fill. Where the run's in-place rule
  /// (setInPlace) gives `result` an argument's storage that this rank alone
  /// holds, the tensor is that storage: as it was for an optimizer update
  /// that reads the old state while it writes the new, zeroed otherwise.
  HostTensor &allocate(Value result);

  /// Lets allocate() follow `rule` (dist::InPlaceReuse of the entry); the
  /// interpreter drops the donor argument after the op.
  void setInPlace(const dist::InPlaceReuse *rule) { inPlace = rule; }

  /// Binds `result` to an existing tensor (reshape, identity ops).
  void bind(Value result, HostTensor tensor);

  /// The storage kind of floats in this run (F64 or F32).
  StorageKind getFloatKind() const { return floatKind; }
  /// The rank running the op (0 in a single-device run).
  int64_t getRank() const { return rank; }
  /// The run's `--seed` (dropout and random initializers).
  uint64_t getSeed() const { return seed; }
  /// The mesh of an SPMD run (null in a single-device run).
  const dist::Mesh *getMesh() const { return mesh; }
  /// The number of ranks in the run (1 in a single-device run).
  int64_t getNumRanks() const { return numRanks; }
  /// The training step dropout draws for (`--rng-step`).
  uint64_t getRngStep() const { return rngStep; }

private:
  ValueMap &values;
  StorageKind floatKind;
  int64_t rank;
  uint64_t seed;
  const dist::Mesh *mesh;
  int64_t numRanks;
  uint64_t rngStep;
  const dist::InPlaceReuse *inPlace = nullptr;
};

/// A kernel function on the generic op.
using KernelFn = std::function<KernelStatus(Operation *, KernelContext &)>;

/// Op name -> kernel function.
class KernelRegistry {
public:
  /// Registers `fn` as the kernel of `OpTy`; `fn` takes the typed op.
  template <typename OpTy>
  void add(KernelStatus (*fn)(OpTy op, KernelContext &ctx)) {
    kernels[OpTy::getOperationName()] = [fn](Operation *op,
                                             KernelContext &ctx) {
      return fn(llvm::cast<OpTy>(op), ctx);
    };
  }

  /// The kernel of the op named `name`, or null.
  const KernelFn *lookup(llvm::StringRef name) const;

  /// Every kernel Loom has (all the register functions below).
  static const KernelRegistry &getDefault();

private:
  llvm::StringMap<KernelFn> kernels;
};

/// One register function per op family (lib/Interpreter/Kernels/*.cpp).
void registerMatmulKernels(KernelRegistry &registry);
void registerElementwiseKernels(KernelRegistry &registry);
void registerReductionKernels(KernelRegistry &registry);
void registerShapeKernels(KernelRegistry &registry);
void registerActivationKernels(KernelRegistry &registry);
void registerAttentionKernels(KernelRegistry &registry);
void registerEmbeddingKernels(KernelRegistry &registry);
void registerLossKernels(KernelRegistry &registry);
void registerNormalizationKernels(KernelRegistry &registry);
void registerOptimizerKernels(KernelRegistry &registry);
void registerLossScalingKernels(KernelRegistry &registry);
void registerRandomKernels(KernelRegistry &registry);
void registerSoftmaxKernels(KernelRegistry &registry);

} // namespace mlir::loom::interp

#endif // LOOM_INTERPRETER_KERNELREGISTRY_H
