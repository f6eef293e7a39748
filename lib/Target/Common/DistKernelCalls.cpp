//===- DistKernelCalls.cpp - The dist ops' communicator calls -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// How every `dist` op of a partitioned step becomes a call of the rank's
// communicator (the host's mpi::Communicator, CUDA's nccl::Communicator:
// the same methods with the same parameters) or of a kernel of the
// communicator's runtime that takes it (ring attention). A collective
// names its group's axes; a send or receive runs only when its peer,
// computed at run time from the rank's coordinates, is another rank (as the
// interpreter: a send to oneself does nothing, a receive from oneself
// yields zeros). `annotate`, and `reshard` on one rank, only name their
// operand.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Target/Common/EmitterSupport.h"
#include "loom/Target/Common/KernelCallTable.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::loom::emit {
namespace {

using Result = FailureOr<KernelCall>;

/// Attention's optional `scale`, as the kernels take it.
std::string optionalScale(std::optional<llvm::APFloat> scale) {
  if (!scale)
    return "std::nullopt";
  return "std::optional<double>(" + doubleLiteral(scale->convertToDouble()) +
         ")";
}

std::string axesOf(Operation *op) {
  return axesLiteral(axisNames(op->getAttrOfType<ArrayAttr>("axes")));
}

//===----------------------------------------------------------------------===//
// Names for an operand
//===----------------------------------------------------------------------===//

Result annotate(dist::AnnotateOp op, KernelCallContext &) {
  KernelCall call;
  call.allocates(op.getResult());
  call.aliasOf = op.getInput();
  return call;
}

Result reshard(dist::ReshardOp op, KernelCallContext &context) {
  if (context.numRanks() > 1)
    return op.emitError() << "reshards must be lowered to collectives "
                             "(-dist-lower-reshards) before "
                          << context.targetName() << " emission";
  KernelCall call;
  call.allocates(op.getResult());
  call.aliasOf = op.getInput();
  return call;
}

//===----------------------------------------------------------------------===//
// Collectives: (input, its shape, the group's axes, attributes..., result)
//===----------------------------------------------------------------------===//

/// A collective's call up to its attributes; `finish` adds the result.
KernelCall collective(Operation *op, StringRef method) {
  KernelCall call{method.str()};
  call.executor = Executor::Communicator;
  call.groupComment = true;
  Value in = op->getOperand(0), out = op->getResult(0);
  call.allocates(out);
  call.buffer(in).shape(in).text(axesOf(op));
  return call;
}

Result finish(Operation *op, KernelCall &call) {
  call.buffer(op->getResult(0));
  return std::move(call);
}

Result allGather(dist::AllGatherOp op, KernelCallContext &) {
  KernelCall call = collective(op, "allGather");
  call.integer(op.getDim());
  return finish(op, call);
}

Result allSlice(dist::AllSliceOp op, KernelCallContext &) {
  KernelCall call = collective(op, "allSlice");
  call.integer(op.getDim());
  return finish(op, call);
}

Result allReduce(dist::AllReduceOp op, KernelCallContext &) {
  KernelCall call = collective(op, "allReduce");
  call.communicatorEnumerator(
      "ReduceKind", op.getKind() == dist::ReductionKind::Sum ? "Sum" : "Max");
  return finish(op, call);
}

Result reduceScatter(dist::ReduceScatterOp op, KernelCallContext &) {
  KernelCall call = collective(op, "reduceScatter");
  call.integer(op.getDim());
  return finish(op, call);
}

Result allToAll(dist::AllToAllOp op, KernelCallContext &) {
  KernelCall call = collective(op, "allToAll");
  call.integer(op.getSplitDim()).integer(op.getConcatDim());
  return finish(op, call);
}

Result collectivePermute(dist::CollectivePermuteOp op, KernelCallContext &) {
  KernelCall call = collective(op, "collectivePermute");
  call.text("int64_t(" + std::to_string(op.getShift()) + ")");
  return finish(op, call);
}

Result broadcast(dist::BroadcastOp op, KernelCallContext &) {
  KernelCall call = collective(op, "broadcast");
  call.integer(op.getRoot());
  return finish(op, call);
}

//===----------------------------------------------------------------------===//
// Ring attention (context parallelism): a kernel that takes the
// communicator and the ring's axes first
//===----------------------------------------------------------------------===//

Result ringAttention(dist::RingAttentionOp op, KernelCallContext &) {
  KernelCall call{"ringAttention"};
  call.executor = Executor::CommunicatorKernel;
  call.groupComment = true;
  call.runType().allocates(op.getResult()).allocates(op.getLse());
  call.text(axesOf(op))
      .buffer(op.getQuery())
      .shape(op.getQuery())
      .buffer(op.getKey())
      .shape(op.getKey())
      .buffer(op.getValue())
      .shape(op.getValue())
      .boolean(op.getCausal())
      .text(optionalScale(op.getScale()))
      .buffer(op.getResult())
      .buffer(op.getLse());
  return call;
}

Result ringAttentionGrad(dist::RingAttentionGradOp op, KernelCallContext &) {
  KernelCall call{"ringAttentionGrad"};
  call.executor = Executor::CommunicatorKernel;
  call.groupComment = true;
  call.runType()
      .allocates(op.getDquery())
      .allocates(op.getDkey())
      .allocates(op.getDvalue());
  call.text(axesOf(op))
      .buffer(op.getQuery())
      .shape(op.getQuery())
      .buffer(op.getKey())
      .shape(op.getKey())
      .buffer(op.getValue())
      .shape(op.getValue())
      .buffer(op.getOut())
      .buffer(op.getDout())
      .buffer(op.getLse())
      .boolean(op.getCausal())
      .text(optionalScale(op.getScale()))
      .buffer(op.getDquery())
      .buffer(op.getDkey())
      .buffer(op.getDvalue());
  return call;
}

//===----------------------------------------------------------------------===//
// Point to point: the peer is the rank at a coordinate of the axis, this
// rank's coordinates elsewhere
//===----------------------------------------------------------------------===//

/// (NCCL's communicator queues a send and posts it with the next receive,
/// collective or the step's end, so no send waits for its receiver.)
Result send(dist::SendOp op, KernelCallContext &context) {
  FailureOr<std::string> to =
      context.peer(op, op.getAxis(), static_cast<int64_t>(op.getTo()));
  if (failed(to))
    return failure();
  KernelCall call{"send"};
  call.executor = Executor::Communicator;
  call.peer = {"to", *to};
  call.buffer(op.getInput())
      .shape(op.getInput())
      .text("to")
      .integer(op.getTag());
  return call;
}

Result recv(dist::RecvOp op, KernelCallContext &context) {
  FailureOr<std::string> from =
      context.peer(op, op.getAxis(), static_cast<int64_t>(op.getFrom()));
  if (failed(from))
    return failure();
  if (failed(context.checkTensor(op, op.getResult().getType(), "the result")))
    return failure();
  KernelCall call{"recv"};
  call.executor = Executor::Communicator;
  call.peer = {"from", *from};
  call.allocates(op.getResult());
  call.buffer(op.getResult())
      .shape(op.getResult())
      .text("from")
      .integer(op.getTag());
  return call;
}

} // namespace

void addDistKernelCalls(KernelCallTable &table) {
  // Unlike a loom op's, a dist op's value types are not checked before its
  // call: a collective moves the elements of a value another op produced
  // (or an argument's); a receive makes a new one, which its entry checks.
  const bool unchecked = false;
  table.add(annotate, unchecked);
  table.add(reshard, unchecked);
  table.add(allGather, unchecked);
  table.add(allSlice, unchecked);
  table.add(allReduce, unchecked);
  table.add(reduceScatter, unchecked);
  table.add(allToAll, unchecked);
  table.add(collectivePermute, unchecked);
  table.add(broadcast, unchecked);
  table.add(ringAttention, unchecked);
  table.add(ringAttentionGrad, unchecked);
  table.add(send, unchecked);
  table.add(recv, unchecked);
}

} // namespace mlir::loom::emit
