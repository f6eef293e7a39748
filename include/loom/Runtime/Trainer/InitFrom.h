//===- InitFrom.h - Pretrained weights into a partitioned step -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `--init-from FILE --init-format loom|nanogpt|hf` of the training
// executable: the run starts from pretrained weights instead of the
// initializers, in any plan. Every rank binds the file's tensors to the
// program's parameters from the headers alone (io::bindWeights, the same on
// every rank), then copies only its own block of each parameter it owns out
// of the memory-mapped file (io::gatherBlock), converting the stored dtype
// to the run's and, for Hugging Face's Conv1D weights, reading [in, out] as
// Loom's [out, in]. Optimizer states and the step counter start as in a run
// from scratch (zeros): a file of weights holds no optimizer.
//
// The program decides what must be there: each of its parameters present
// in the file with its shape (the file shape for a parameter the program
// holds as a view, e.g. GPT-2's `c_attn` [3H, H]; a Loom file may hold the
// view's shape too), no file weight that is not a parameter, except a
// nanoGPT/Hugging Face `lm_head.weight` when the program ties the head to
// `transformer.wte.weight`, which must then equal wte (each rank compares
// the block of wte it holds). Errors name the tensor as the file names it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_TRAINER_INITFROM_H
#define LOOM_RUNTIME_TRAINER_INITFROM_H

#include "loom/Runtime/Harness/Harness.h"
#include "loom/Runtime/IO/WeightFile.h"
#include "loom/Runtime/IO/WeightFormats.h"
#include "loom/Runtime/Layout/BlockLayout.h"

namespace loom::runtime::trainer {

/// What `--init-from` needs to know of the program and this rank.
struct PretrainedTarget {
  const harness::ProgramSpec *spec = nullptr;
  const layout::DeviceMesh *mesh = nullptr;
  int rank = 0;
  /// Every argument's layout, parsed.
  const std::vector<layout::BlockLayout> *layouts = nullptr;
  /// The model state (parameters, optimizer states, step), and the part of
  /// it this rank holds.
  std::vector<size_t> state, owned;
};

/// The parameters among `target.state`: float arguments that are not the
/// optimizer state of another (`<param>.exp_avg`, `.exp_avg_sq`,
/// `.momentum_buffer`).
std::vector<size_t> parameterArguments(const PretrainedTarget &target);

/// Binds the file's tensors (read in `format`) to the program's parameters
/// and checks them (the file comment); headers only, so every rank reaches
/// the same answer. Returns the error, or nullopt.
std::optional<std::string> bindPretrained(const PretrainedTarget &target,
                                          const io::WeightFile &file,
                                          io::WeightFormat format,
                                          io::WeightBindings &bindings);

/// Copies this rank's block of every parameter it owns out of `file` into
/// `args` (converted to T), and checks a tied head against wte on the
/// blocks this rank reads. Returns the error, or nullopt.
template <typename T>
std::optional<std::string>
readPretrainedBlocks(const PretrainedTarget &target, const io::WeightFile &file,
                     const io::WeightBindings &bindings,
                     std::vector<harness::Buffer<T>> &args);

} // namespace loom::runtime::trainer

#endif // LOOM_RUNTIME_TRAINER_INITFROM_H
