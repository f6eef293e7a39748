//===- Checkpoint.h - Per-rank checkpoints with a manifest ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A checkpoint is a directory:
//
//   manifest.json            the mesh, every tensor's global shape, dtype and
//                            layout, step, data position, RNG seed/state, and
//                            each rank file's size and CRC-32C
//   rank-00000.safetensors   rank 0's blocks of the tensors, named with the
//   rank-00001.safetensors   single-device names (parameters, optimizer
//   ...                      states), one file per mesh device
//
// Writing (docs/Checkpoints.md): every rank writes its own file atomically
// (temporary file, fsync, rename, fsync of the directory) with
// writeCheckpointShard, which returns the file's size and checksum; the
// caller gathers those to one rank (8 bytes per rank), which writes the
// manifest last, atomically, with writeCheckpointManifest. A directory whose
// manifest exists therefore holds complete rank files; a crash before the
// manifest leaves no manifest (the checkpoint does not exist), and a rank
// file replaced after its manifest no longer matches the recorded checksum.
//
// Reading verifies everything a damaged checkpoint can get wrong and names
// the file and the fault: a missing file, a size or CRC-32C other than the
// manifest's, a rank file of another rank or step, a tensor missing, extra,
// or with another dtype or block shape than the manifest's layout gives.
// Partial (pending-sum) layouts cannot appear: a checkpoint holds values.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_IO_CHECKPOINT_H
#define LOOM_RUNTIME_IO_CHECKPOINT_H

#include "loom/Runtime/IO/TensorFile.h"
#include "loom/Runtime/Layout/BlockLayout.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom::runtime::io {

using Status = host::Status;

/// The manifest's file name inside a checkpoint directory.
constexpr const char *kCheckpointManifestName = "manifest.json";
/// The manifest format version this code writes and reads.
constexpr int64_t kCheckpointVersion = 1;

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), continuing from
/// `crc` (0 to start): crc32c("123456789") = 0xe3069283.
uint32_t crc32c(const void *data, size_t size, uint32_t crc = 0);

/// One tensor of the model state as the single-device program sees it.
struct CheckpointTensor {
  /// The global shape the layout cuts (the program's).
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  /// How it is spread over the mesh (BlockLayout spelling).
  std::string layout;
  /// Pipelined runs: the stage that owns it; only the ranks of that stage
  /// hold its blocks (-1: every rank; manifest field `stage`, absent then).
  int64_t stage = -1;
  /// The shape the tensor has in its ecosystem's files when the program
  /// holds it as a row-major view of another shape (GPT-2's `c_attn`:
  /// [3H, H] here, [3, 1, H, H] in `shape`); empty when it is `shape`. Same
  /// elements in the same order: a merged file gives the tensor this shape
  /// (manifest field `file_shape`, absent when empty).
  std::vector<int64_t> fileShape;
};

/// One rank's file as recorded in the manifest.
struct CheckpointFile {
  std::string name;
  uint64_t bytes = 0;
  uint32_t crc32c = 0;
};

/// Everything a run needs to continue, besides the tensors themselves.
struct CheckpointManifest {
  /// The number of completed steps: training resumes at this step.
  int64_t step = 0;
  layout::DeviceMesh mesh;
  /// Global tensors by single-device name.
  std::map<std::string, CheckpointTensor> tensors;
  /// One per mesh device, indexed by rank.
  std::vector<CheckpointFile> files;
  /// Free text identifying the plan the layouts come from (e.g. its hash).
  std::string plan;
  /// The token file, its sampling seed, and the next step to read (batches
  /// are a function of (seed, step), see TokenFile.h).
  std::string dataFile;
  uint64_t dataSeed = 0;
  int64_t dataPosition = 0;
  /// The run's RNG: its seed and the generator's state words.
  uint64_t rngSeed = 0;
  std::vector<uint64_t> rngState;
  /// Anything else the writer wants to keep (string to string).
  std::map<std::string, std::string> metadata;
  /// Pipelined runs: the mesh axis whose coordinate is a rank's stage
  /// (manifest field `pipeline_axis`; empty and absent otherwise).
  std::string pipelineAxis;
};

/// Whether `rank`'s file holds `tensor`: every rank's does, but in a
/// pipelined run only the ranks of the tensor's stage hold it.
bool holdsTensor(const CheckpointManifest &manifest,
                 const CheckpointTensor &tensor, int64_t rank);

/// `rank-00003.safetensors`.
std::string checkpointFileName(int64_t rank);

/// `<root>/step-00000100`: where a run that checkpoints into `root` puts the
/// checkpoint after `step` steps.
std::string checkpointStepDir(const std::string &root, int64_t step);

/// Finds the checkpoint of the highest step under `root` (a `step-N`
/// directory with a manifest); fails when there is none.
Status findLatestCheckpoint(const std::string &root, std::string &dir);

/// Checks the manifest against itself: a mesh, one file per device, every
/// layout parses, is not partial and divides its tensor's shape.
Status verifyManifest(const CheckpointManifest &manifest);

/// Checks what the training executable's `--resume` needs of a manifest
/// whatever the program: the data position is the step (batches are drawn
/// by step) and the RNG state holds at most one word (the RNG step). The
/// trainer and `loom-ckpt inspect` both call it, so inspect passes no
/// checkpoint that resume refuses. The message names the checkpoint `dir`.
Status verifyResumable(const std::string &dir,
                       const CheckpointManifest &manifest);

/// Writes `blocks` (this rank's blocks, single-device names) as the rank
/// file of `rank` in `dir` (created if needed), atomically; `file` receives
/// its name, size and checksum for the manifest. `step` is recorded in the
/// file's metadata so that a stale file is recognized.
Status writeCheckpointShard(const std::string &dir, int64_t rank, int64_t step,
                            const TensorMap &blocks, CheckpointFile &file);

/// Writes `dir/manifest.json` atomically after verifyManifest; call it once
/// every rank file is written (it is what makes the checkpoint exist).
Status writeCheckpointManifest(const std::string &dir,
                               const CheckpointManifest &manifest);

/// Reads and checks `dir/manifest.json` (schema and verifyManifest).
Status readCheckpointManifest(const std::string &dir,
                              CheckpointManifest &manifest);

/// Reads the file of `rank`, checking its size and checksum against the
/// manifest, its rank and step, and that it holds exactly the manifest's
/// tensors with the block shapes of their layouts and their dtypes.
Status readCheckpointShard(const std::string &dir,
                           const CheckpointManifest &manifest, int64_t rank,
                           TensorMap &blocks);

/// Cuts global tensors into every rank's blocks by the manifest's layouts
/// (its `files` are not needed); `global` must hold exactly the manifest's
/// tensors with their shapes and dtypes.
Status splitGlobalTensors(const CheckpointManifest &manifest,
                          const TensorMap &global,
                          std::vector<TensorMap> &perRank);

/// Assembles the global tensors from every rank's blocks; replicas (ranks
/// differing only in axes a layout does not use) must agree bit for bit.
Status assembleGlobalTensors(const CheckpointManifest &manifest,
                             const std::vector<TensorMap> &perRank,
                             TensorMap &global);

/// Writes a whole checkpoint from one process (tools, tests): every rank's
/// file, then the manifest, whose `files` are filled in here.
Status writeCheckpoint(const std::string &dir, CheckpointManifest manifest,
                       const std::vector<TensorMap> &perRank);

/// Reads every rank file of the checkpoint in `dir` and assembles the global
/// tensors (what `loom-ckpt merge` writes).
Status readGlobalCheckpoint(const std::string &dir,
                            CheckpointManifest &manifest, TensorMap &global);

/// Gives each global tensor whose manifest entry has a `fileShape` that
/// shape (a row-major view: the data stays as it is), so that a merged
/// file holds every tensor as its ecosystem's files do.
void applyFileShapes(const CheckpointManifest &manifest, TensorMap &global);

} // namespace loom::runtime::io

#endif // LOOM_RUNTIME_IO_CHECKPOINT_H
