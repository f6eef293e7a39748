//===- PointToPoint.cpp - dist.send and dist.recv -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the transfers between pipeline stages. The peer is a
// coordinate on one mesh axis (the stage); the other coordinates are the
// device's own, so each data-parallel and tensor-parallel replica talks to
// its counterpart in the next stage.
//
//===----------------------------------------------------------------------===//

#include "MeshChecks.h"

using namespace mlir;
using namespace mlir::loom::dist;


/// Checks C1 to C4 of send and recv: the peer coordinate `peer` (attribute
/// `name`) is on `axis` of the mesh and the tag fits every MPI.
static LogicalResult verifyPeer(Operation *op, FlatSymbolRefAttr mesh,
                                StringRef axis, int64_t peer, StringRef name,
                                int64_t tag, SymbolTableCollection &tables) {
  // C4.
  if (tag < 0 || tag > kMaxMessageTag)
    return op->emitOpError()
           << "expects `tag` in [0, " << kMaxMessageTag << "], got " << tag;
  // C1 and C2.
  FailureOr<int64_t> size = verifyMeshAxis(op, mesh, axis, tables);
  if (failed(size))
    return failure();
  // C3.
  if (peer < 0 || peer >= *size)
    return op->emitOpError()
           << "expects `" << name << "` in [0, " << *size << ") for mesh axis `"
           << axis << "`, got " << peer;
  return success();
}

//===----------------------------------------------------------------------===//
// SendOp
//===----------------------------------------------------------------------===//

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyPeer(*this, getMeshAttr(), getAxis(), getToAttr().getInt(), "to",
                    getTag(), tables);
}

//===----------------------------------------------------------------------===//
// RecvOp
//===----------------------------------------------------------------------===//

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyPeer(*this, getMeshAttr(), getAxis(), getFromAttr().getInt(),
                    "from", getTag(), tables);
}
