//===- KernelCallTable.h - How each op becomes a runtime call --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one emission table of the step emitters (docs/Codegen.md, "The
// emission table"). Every op family registers once how an op maps to a
// kernel call of the runtimes: the kernel's name, its template arguments,
// its arguments in order (buffers, shapes, attributes), and the results it
// needs buffers for. The description says *what* is passed, never how a
// target writes it: a KernelCall is printed by a target (the host program,
// the CUDA program), which supplies only its call syntax (the kernels'
// namespace, a leading stream or cuBLAS handle, how a one-element tensor the
// kernel reads as a number is passed, how its runtime reports errors) and
// hooks for the few calls that really differ (StepEmitterBase's "target
// syntax" section).
//
// A target that meets an op with no entry reports "no <target> emission for
// '<op>'" at the op (StepEmitterBase::emitKernelCall).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_COMMON_KERNELCALLTABLE_H
#define LOOM_TARGET_COMMON_KERNELCALLTABLE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::loom::emit {

/// One argument of a kernel call, as the table describes it.
struct CallArg {
  enum class Kind {
    /// A tensor's elements (`nullptr` for an absent optional operand).
    Buffer,
    /// A tensor's local shape (`{}` for an absent optional operand).
    Shape,
    /// A tensor's element count.
    Count,
    /// A one-element tensor the kernel reads as a number (a loss scale, the
    /// optimizer step): the host reads it, a device kernel takes its
    /// pointer (StepEmitterBase::scalarArgument).
    Scalar,
    /// An optimizer's compiled learning rate (`text`) and its optional
    /// per-step factor (`value`, `lr_scale`): StepEmitterBase::
    /// learningRateArgument.
    LearningRate,
    /// A runtime enumerator, `text` as `Type::Value`: the target prefixes
    /// its namespace.
    Enumerator,
    /// An enumerator of the communicator's runtime (`mpi::`, `nccl::`).
    CommunicatorEnumerator,
    /// The cast target of an f32/f64 cast, which keeps the run's precision
    /// (F64 in an f64 run, else F32), as the interpreter.
    RunPrecisionCastTarget,
    /// Text every target writes the same (a literal, an index scalar).
    Text,
    /// Input buffers as one braced list (concat).
    InputList,
    /// Result buffers as one braced list (split).
    OutputList,
    /// Shapes as one braced list.
    ShapeList,
  };
  Kind kind;
  /// The tensor of Buffer, Shape, Count, Scalar; the factor of
  /// LearningRate; the result whose element type an InputList holds.
  Value value;
  /// Enumerator, Text, LearningRate's rate literal.
  std::string text;
  /// The tensors of the lists.
  SmallVector<Value> values;
};

/// A kernel's template argument.
struct TemplateArg {
  enum class Kind {
    /// How `value`'s elements are held: `T` (the run's float type) or
    /// `int64_t`.
    StorageOf,
    /// `T`.
    RunType,
    /// The storage type of a Scalar argument, for kernels that read it on
    /// the device (the target decides: StepEmitterBase::
    /// scalarTemplateArgument).
    ScalarStorageOf,
  };
  Kind kind;
  Value value;
};

/// What a call runs on. A kernel runs on the target's stream (the CUDA
/// programs pass it first; the host has none) or its GEMM handle (cuBLAS);
/// a collective or point-to-point transfer is a method of the rank's
/// communicator (`comm.allReduce`, `nccl.allReduce`); a kernel of the
/// communicator's runtime takes the communicator first
/// (`mpi::ringAttention<T>(comm, ...)`).
enum class Executor { Stream, Blas, Communicator, CommunicatorKernel };

/// A result the call writes, declared before the call.
struct ResultBuffer {
  Value result;
  /// For an optimizer update, the state operand the result replaces: the
  /// target may write the result into its buffer when the update is its last
  /// reader (emit::StepArena::updatesInPlace). Null otherwise.
  Value updates;
};

/// One op as one kernel call (or as another name for an operand's
/// elements, `aliasOf`).
struct KernelCall {
  KernelCall() = default;
  explicit KernelCall(std::string kernel) : kernel(std::move(kernel)) {}

  /// The kernel, without namespace: `binary`, `attentionGrad`.
  std::string kernel;
  SmallVector<TemplateArg> templateArgs;
  Executor executor = Executor::Stream;
  SmallVector<ResultBuffer> results;
  SmallVector<CallArg> args;
  /// Whether the kernel can meet an error in its data that the IR cannot
  /// rule out (an id or label out of range, an integer division by zero):
  /// a target whose runtime reports those asynchronously passes its error
  /// sink.
  bool checksData = false;
  /// Set for ops that only look at their operand (reshape): `results[0]`
  /// names this value's elements and no kernel runs.
  Value aliasOf;
  /// A collective: a comment naming its group's axes comes first.
  bool groupComment = false;
  /// A send or receive: the call runs only when the peer (the C++
  /// `expression`, bound to `variable`) is another rank.
  struct PeerGuard {
    std::string variable, expression;
  };
  PeerGuard peer;

  // Builders, in argument order.
  KernelCall &buffer(Value v);
  KernelCall &shape(Value v);
  KernelCall &count(Value v);
  KernelCall &scalar(Value v);
  KernelCall &learningRate(double rate, Value factor);
  KernelCall &enumerator(StringRef type, StringRef value);
  KernelCall &communicatorEnumerator(StringRef type, StringRef value);
  KernelCall &runPrecisionCastTarget();
  KernelCall &text(std::string text);
  KernelCall &integer(int64_t value);
  KernelCall &real(double value);
  KernelCall &boolean(bool value);
  KernelCall &ints(ArrayRef<int64_t> values);
  KernelCall &inputList(ValueRange inputs, Value result);
  KernelCall &outputList(ValueRange outputs);
  KernelCall &shapeList(ValueRange values);
  KernelCall &storageOf(Value v);
  KernelCall &runType();
  KernelCall &scalarStorageOf(Value v);
  KernelCall &allocates(Value result, Value updates = Value());
};

/// What an entry asks of the emitter while it describes a call: the index
/// scalars and block offsets the step computes at run time, and the
/// target's name for its diagnostics.
class KernelCallContext {
public:
  virtual ~KernelCallContext() = default;
  /// The C++ expression of an index scalar; an error at `user` when `value`
  /// is not one.
  virtual FailureOr<std::string> scalar(Operation *user, Value value) = 0;
  /// Prints where this rank's block of `op`'s first operand lies in the
  /// global tensor and returns the offset's expression (dropout).
  virtual FailureOr<std::string> globalBlock(Operation *op,
                                             std::vector<int64_t> &global) = 0;
  /// "host", "CUDA": the target named by "no <target> emission" errors.
  virtual StringRef targetName() const = 0;
  /// The C++ expression of the rank at `coordinate` on `axis` (this rank's
  /// coordinates elsewhere); an error at `op` when there is none.
  virtual FailureOr<std::string> peer(Operation *op, StringRef axis,
                                      int64_t coordinate) = 0;
  /// The number of ranks of the step's mesh.
  virtual int64_t numRanks() const = 0;
  /// Checks that `type` is a tensor the target's runtime holds (an error
  /// naming `what` at `op`).
  virtual LogicalResult checkTensor(Operation *op, Type type,
                                    const Twine &what) = 0;
};

/// Op type -> how to describe its call.
class KernelCallTable {
public:
  using Describe =
      std::function<FailureOr<KernelCall>(Operation *, KernelCallContext &)>;

  struct Entry {
    Describe describe;
    /// Whether the emitter checks, before describing the call, that every
    /// operand (but index scalars) and result is a tensor the runtimes hold.
    bool checksTensorTypes = true;
  };

  /// Registers `describe` for `OpTy`; one entry per op.
  template <typename OpTy>
  void add(FailureOr<KernelCall> (*describe)(OpTy, KernelCallContext &),
           bool checksTensorTypes = true) {
    insert(TypeID::get<OpTy>(),
           {[describe](Operation *op, KernelCallContext &context) {
              return describe(cast<OpTy>(op), context);
            },
            checksTensorTypes});
  }
  /// The entry of `op`'s type, or null.
  const Entry *lookup(Operation *op) const;
  bool contains(TypeID op) const { return entries.count(op) != 0; }

  /// The table of every family (built once).
  static const KernelCallTable &get();

private:
  void insert(TypeID op, Entry entry);
  llvm::DenseMap<TypeID, Entry> entries;
};

/// The loom ops' entries (LoomKernelCalls.cpp).
void addLoomKernelCalls(KernelCallTable &table);
/// The dist ops' entries (DistKernelCalls.cpp).
void addDistKernelCalls(KernelCallTable &table);

} // namespace mlir::loom::emit

#endif // LOOM_TARGET_COMMON_KERNELCALLTABLE_H
