//===- loom-ckpt.cpp - Inspect, merge and re-cut checkpoints --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom-ckpt inspect DIR
// loom-ckpt merge DIR -o FILE.safetensors
// loom-ckpt split FILE.safetensors --mesh dp=2,tp=2 --layouts L.json -o DIR
// loom-ckpt reshard DIR --mesh dp=2 --layouts L.json -o DIR2
// loom-ckpt reshard DIR --to-plan PLAN.json -o DIR2
// loom-ckpt merge DIR --format loom|nanogpt|hf -o FILE.safetensors
// loom-ckpt convert --from loom|nanogpt|hf --to loom|nanogpt|hf IN -o OUT
//
// Per-rank checkpoints (include/loom/Runtime/IO/Checkpoint.h):
//   - inspect: the manifest (step, mesh, data position, RNG, each tensor's
//     global shape, dtype and layout) and, for every rank file, whether its
//     size, checksum and contents match; exits 1 if any does not;
//   - merge: assembles the global tensors into one standard safetensors file
//     with the single-device names (loadable by PyTorch, numpy, the
//     safetensors library);
//   - split: the inverse, a checkpoint at step --step (default 0) from one
//     global file, for a plan given as a mesh and a layout per tensor;
//   - reshard: merge then split, keeping step, data position and RNG state.
//   - convert: GPT-2's or Llama's weights from one file layout to another
//     (Loom's, nanoGPT's, Hugging Face's; Runtime/IO/WeightFormats.h),
//     checked against the model they describe; the input may be Hugging
//     Face's sharded form (an index JSON, or a directory holding one);
//     `merge --format` writes the merged weights so.
// L.json maps tensor names to layouts (`{"w": "[[\"dp\"], []]"}`); tensors
// it does not name are replicated. PLAN.json is what `loomc --plan-json`
// writes (docs/Partitioning.md, "Plan JSON"): its mesh is the target mesh
// and its arguments' layouts the tensors' layouts (`split` and `reshard`
// take it instead of --mesh and --layouts). Every checkpoint tensor must be
// an argument of the plan; plan arguments the checkpoint lacks (the training
// data) are listed and skipped.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/Checkpoint.h"
#include "loom/Runtime/IO/SafeTensors.h"
#include "loom/Runtime/IO/WeightFile.h"
#include "loom/Runtime/IO/WeightFormats.h"
#include "loom/Support/CommandLine.h"
#include "loom/Support/Flags.h"
#include "loom/Support/JSON.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace loom::runtime;
namespace cl = llvm::cl;
using loom::runtime::host::Status;
using json = nlohmann::json;

static cl::SubCommand inspectCommand("inspect",
                                     "describe and verify a checkpoint");
static cl::SubCommand mergeCommand("merge", "assemble one global safetensors "
                                            "file");
static cl::SubCommand splitCommand("split", "cut a global safetensors file "
                                            "into a checkpoint");
static cl::SubCommand reshardCommand("reshard",
                                     "re-cut a checkpoint for another plan");
static cl::SubCommand convertCommand(
    "convert", "GPT-2 or Llama weights between Loom's, nanoGPT's and "
               "Hugging Face's file layouts (input: a safetensors file, a "
               "sharded index JSON, or a directory holding either)");

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<input>"),
                                      cl::Required, cl::sub(inspectCommand),
                                      cl::sub(mergeCommand),
                                      cl::sub(splitCommand),
                                      cl::sub(reshardCommand),
                                      cl::sub(convertCommand));
static cl::opt<std::string>
    outputPath("o", cl::desc("output file or directory"),
               cl::value_desc("path"), cl::Required, cl::sub(mergeCommand),
               cl::sub(splitCommand), cl::sub(reshardCommand),
               cl::sub(convertCommand));
static cl::opt<std::string>
    fromFormat("from", cl::desc("the input's layout: loom, nanogpt or hf"),
               cl::value_desc("format"), cl::Required,
               cl::sub(convertCommand));
static cl::opt<std::string>
    toFormat("to", cl::desc("the output's layout: loom, nanogpt or hf"),
             cl::value_desc("format"), cl::Required, cl::sub(convertCommand));
static cl::opt<std::string> mergeFormat(
    "format",
    cl::desc("the merged file's layout: loom (every tensor, default), or "
             "the weights alone as nanogpt (GPT-2) or hf (GPT-2, Llama)"),
    cl::value_desc("format"), cl::init("loom"), cl::sub(mergeCommand));
static cl::opt<std::string> meshText("mesh",
                                     cl::desc("target mesh, e.g. dp=2,tp=2"),
                                     cl::sub(splitCommand),
                                     cl::sub(reshardCommand));
static cl::opt<std::string>
    toPlanPath("to-plan",
               cl::desc("the target plan as `loomc --plan-json` writes it "
                        "(its mesh and argument layouts; instead of --mesh "
                        "and --layouts)"),
               cl::value_desc("PLAN.json"), cl::sub(splitCommand),
               cl::sub(reshardCommand));
static cl::opt<std::string>
    layoutsPath("layouts",
                cl::desc("JSON object: tensor name -> layout (others are "
                         "replicated)"),
                cl::value_desc("L.json"), cl::sub(splitCommand),
                cl::sub(reshardCommand));
static cl::opt<std::string> planText("plan",
                                     cl::desc("text recorded as the plan"),
                                     cl::sub(splitCommand),
                                     cl::sub(reshardCommand));
static cl::opt<int64_t> stepNumber("step", cl::desc("step to record"),
                                   cl::init(0), cl::sub(splitCommand));

static int fail(const std::string &message) {
  llvm::errs() << "loom-ckpt: error: " << message << "\n";
  return 1;
}

static std::string formatShape(const std::vector<int64_t> &shape) {
  return mpi::formatShape(shape);
}

static int runInspect() {
  io::CheckpointManifest manifest;
  if (Status status = io::readCheckpointManifest(inputPath, manifest); !status)
    return fail(status.message());
  // What the trainer's --resume refuses, inspect refuses.
  if (Status status = io::verifyResumable(inputPath, manifest); !status)
    return fail(status.message());
  llvm::raw_ostream &os = llvm::outs();
  os << "checkpoint: " << inputPath << "\n";
  os << "step: " << manifest.step << "\n";
  os << "mesh: " << manifest.mesh.toString() << " ("
     << manifest.mesh.getNumDevices() << " ranks)\n";
  if (!manifest.pipelineAxis.empty())
    os << "pipeline axis: " << manifest.pipelineAxis << "\n";
  os << "plan: " << manifest.plan << "\n";
  os << "data: file `" << manifest.dataFile << "`, seed " << manifest.dataSeed
     << ", position " << manifest.dataPosition << "\n";
  os << "rng: seed " << manifest.rngSeed << ", state [";
  for (size_t i = 0; i < manifest.rngState.size(); ++i)
    os << (i ? ", " : "") << manifest.rngState[i];
  os << "]\n";
  os << "tensors: " << manifest.tensors.size() << "\n";
  for (const auto &[name, tensor] : manifest.tensors)
    os << "  " << name << ": " << io::dtypeName(tensor.dtype) << " "
       << formatShape(tensor.shape) << " layout " << tensor.layout
       << (tensor.stage >= 0 ? " stage " + std::to_string(tensor.stage) : "")
       << (tensor.fileShape.empty()
               ? ""
               : " file shape " + formatShape(tensor.fileShape))
       << "\n";
  os << "files: " << manifest.files.size() << "\n";
  int damaged = 0;
  for (size_t rank = 0; rank < manifest.files.size(); ++rank) {
    const io::CheckpointFile &file = manifest.files[rank];
    io::TensorMap blocks;
    Status status = io::readCheckpointShard(inputPath, manifest,
                                            static_cast<int64_t>(rank), blocks);
    os << "  rank " << rank << ": " << file.name << " " << file.bytes
       << " bytes crc32c " << llvm::format_hex_no_prefix(file.crc32c, 8)
       << (status ? " ok" : " BAD") << "\n";
    if (!status) {
      ++damaged;
      llvm::errs() << "loom-ckpt: error: " << status.message() << "\n";
    }
  }
  if (damaged) {
    os << "status: " << damaged << " of " << manifest.files.size()
       << " files damaged\n";
    return 1;
  }
  os << "status: ok\n";
  return 0;
}

static int runMerge() {
  io::CheckpointManifest manifest;
  io::TensorMap global;
  if (Status status = io::readGlobalCheckpoint(inputPath, manifest, global);
      !status)
    return fail(status.message());
  // The merged file holds every tensor in its ecosystem's shape.
  io::applyFileShapes(manifest, global);
  std::optional<io::WeightFormat> format = io::parseWeightFormat(mergeFormat);
  if (!format)
    return fail("--format: expected loom, nanogpt or hf, found `" +
                mergeFormat + "`");
  if (*format != io::WeightFormat::Loom) {
    io::TensorMap params, written;
    int skipped = 0;
    if (auto error = io::toLoomParameters(global, io::WeightFormat::Loom,
                                          params, skipped))
      return fail("checkpoint `" + inputPath + "`: " + *error);
    if (auto error = io::fromLoomParameters(params, *format, written))
      return fail("--format " + mergeFormat + ": " + *error);
    global = std::move(written);
  }
  if (auto error = io::writeSafeTensors(
          outputPath, global,
          {{"loom.step", std::to_string(manifest.step)},
           {"loom.merged_from", manifest.mesh.toString()}}))
    return fail(*error);
  llvm::outs() << "merged " << global.size() << " tensors of step "
               << manifest.step << " from " << manifest.files.size()
               << " ranks into " << outputPath << "\n";
  return 0;
}

/// The layout of a plan argument (`{"dims": [[axes]...], "partial": [axes]}`)
/// in BlockLayout's spelling.
static Status planLayoutText(const json &layout, const std::string &name,
                             std::string &text) {
  auto dims = layout.find("dims");
  if (dims == layout.end() || !dims->is_array())
    return Status::failure("argument `" + name + "`: its layout has no `dims`");
  if (auto partial = layout.find("partial");
      partial != layout.end() && partial->is_array() && !partial->empty())
    return Status::failure(
        "argument `" + name +
        "` has a partial layout in the plan: a checkpoint holds values");
  text = "[";
  for (size_t d = 0; d < dims->size(); ++d) {
    const json &axes = (*dims)[d];
    if (!axes.is_array())
      return Status::failure("argument `" + name + "`: dim " +
                             std::to_string(d) +
                             " of its layout must be a list of axes");
    text += d ? ", [" : "[";
    for (size_t a = 0; a < axes.size(); ++a) {
      if (!axes[a].is_string())
        return Status::failure("argument `" + name + "`: the axes of dim " +
                               std::to_string(d) + " must be names");
      text += (a ? ", \"" : "\"") + axes[a].get<std::string>() + "\"";
    }
    text += "]";
  }
  text += "]";
  return Status::success();
}

/// Reads the JSON file `path` strictly (loom/Support/JSON.h).
static Status readJSONFile(const std::string &path, json &value) {
  std::string text;
  if (auto error = io::readWholeFile(path, text))
    return Status::failure(*error);
  if (auto parseError = loom::support::parseJSON(text, value))
    return Status::failure("`" + path + "`: " + parseError->format());
  return Status::success();
}

/// Reads --to-plan: the mesh as `--mesh` spells it and the layout of every
/// named argument.
static Status readTargetPlan(std::string &mesh,
                             std::map<std::string, std::string> &layouts) {
  json plan;
  if (Status status = readJSONFile(toPlanPath, plan); !status)
    return status;
  std::string where = "--to-plan `" + toPlanPath + "`: ";
  const json *axes = nullptr;
  if (plan.is_object())
    if (auto meshIt = plan.find("mesh");
        meshIt != plan.end() && meshIt->is_object())
      if (auto axesIt = meshIt->find("axes");
          axesIt != meshIt->end() && axesIt->is_array())
        axes = &*axesIt;
  if (!axes)
    return Status::failure(where + "no `mesh.axes` (is it a `loomc "
                                   "--plan-json` file?)");
  mesh.clear();
  for (const json &axis : *axes) {
    auto name = axis.is_object() ? axis.find("name") : axis.end();
    auto size = axis.is_object() ? axis.find("size") : axis.end();
    std::optional<int64_t> sizeValue =
        size == axis.end() ? std::nullopt : loom::support::getInt64(*size);
    if (name == axis.end() || !name->is_string() || !sizeValue)
      return Status::failure(where + "each mesh axis needs a `name` and an "
                                     "integer `size` below 2^63");
    mesh += (mesh.empty() ? "" : ",") + name->get<std::string>() + "=" +
            std::to_string(*sizeValue);
  }
  auto arguments = plan.find("arguments");
  if (arguments == plan.end() || !arguments->is_array())
    return Status::failure(where + "no `arguments`");
  for (const json &argument : *arguments) {
    auto name = argument.is_object() ? argument.find("name") : argument.end();
    if (name == argument.end() || !name->is_string())
      continue; // An argument without a name is not checkpointed state.
    // Empty: no layout recorded, replicated.
    std::string layoutText;
    if (auto layout = argument.find("layout");
        layout != argument.end() && layout->is_object())
      if (Status status =
              planLayoutText(*layout, name->get<std::string>(), layoutText);
          !status)
        return Status::failure(where + status.message());
    layouts[name->get<std::string>()] = layoutText;
  }
  return Status::success();
}

/// Fills `manifest.tensors` from `global` with the layouts of --layouts, or
/// of --to-plan when `planLayouts` is given.
static Status
planTensors(const io::TensorMap &global, io::CheckpointManifest &manifest,
            const std::map<std::string, std::string> *planLayouts) {
  std::map<std::string, std::string> layouts;
  if (planLayouts) {
    std::vector<std::string> skipped;
    for (const auto &[name, layoutText] : *planLayouts) {
      if (!global.count(name)) {
        skipped.push_back(name);
        continue;
      }
      if (!layoutText.empty())
        layouts[name] = layoutText;
    }
    for (const auto &[name, value] : global)
      if (!planLayouts->count(name))
        return Status::failure("--to-plan `" + toPlanPath +
                               "` has no argument `" + name +
                               "`, which the checkpoint holds (a plan of "
                               "another model?)");
    if (!skipped.empty()) {
      std::string list;
      for (const std::string &name : skipped)
        list += (list.empty() ? "" : ", ") + name;
      llvm::outs() << "plan arguments not in the checkpoint (training data): "
                   << list << "\n";
    }
  } else if (!layoutsPath.empty()) {
    json object;
    if (Status status = readJSONFile(layoutsPath, object); !status)
      return status;
    if (!object.is_object())
      return Status::failure("`" + layoutsPath +
                             "` must be a JSON object of layouts");
    for (const auto &[name, value] : object.items()) {
      if (!value.is_string())
        return Status::failure("`" + layoutsPath + "`: the layout of `" +
                               name + "` must be a string");
      if (!global.count(name))
        return Status::failure("`" + layoutsPath + "` names tensor `" + name +
                               "`, which the input lacks");
      layouts[name] = value.get<std::string>();
    }
  }
  // A resharded checkpoint keeps each tensor's file shape.
  std::map<std::string, std::vector<int64_t>> fileShapes;
  for (const auto &[name, tensor] : manifest.tensors)
    fileShapes[name] = tensor.fileShape;
  manifest.tensors.clear();
  for (const auto &[name, value] : global) {
    io::CheckpointTensor tensor;
    tensor.shape = value.shape;
    if (auto it = fileShapes.find(name); it != fileShapes.end())
      tensor.fileShape = it->second;
    tensor.dtype = value.dtype;
    auto it = layouts.find(name);
    layout::BlockLayout parsed =
        layout::BlockLayout::replicated(value.shape.size());
    if (it != layouts.end())
      if (Status status =
              layout::BlockLayout::parse(it->second, manifest.mesh, parsed);
          !status)
        return Status::failure("tensor `" + name + "`: " + status.message());
    tensor.layout = parsed.toString();
    manifest.tensors.emplace(name, std::move(tensor));
  }
  return Status::success();
}

/// Writes `global` as a checkpoint in --o for --mesh and --layouts, or for
/// --to-plan.
static int writeForPlan(io::CheckpointManifest manifest,
                        const io::TensorMap &global) {
  std::map<std::string, std::string> planLayouts;
  std::string mesh = meshText;
  if (!toPlanPath.empty()) {
    if (!meshText.empty() || !layoutsPath.empty())
      return fail("--to-plan names the mesh and the layouts: give it "
                  "without --mesh and --layouts");
    if (Status status = readTargetPlan(mesh, planLayouts); !status)
      return fail(status.message());
  } else if (meshText.empty()) {
    return fail("give the target plan: --to-plan PLAN.json, or --mesh (and "
                "--layouts)");
  }
  if (Status status = layout::DeviceMesh::parse(mesh, manifest.mesh); !status)
    return fail((toPlanPath.empty() ? "--mesh: " : "--to-plan mesh: ") +
                status.message());
  manifest.files.assign(manifest.mesh.getNumDevices(), io::CheckpointFile());
  if (Status status = planTensors(global, manifest,
                                  toPlanPath.empty() ? nullptr : &planLayouts);
      !status)
    return fail(status.message());
  std::vector<io::TensorMap> perRank;
  if (Status status = io::splitGlobalTensors(manifest, global, perRank);
      !status)
    return fail(status.message());
  if (Status status = io::writeCheckpoint(outputPath, manifest, perRank);
      !status)
    return fail(status.message());
  llvm::outs() << "wrote " << manifest.tensors.size() << " tensors of step "
               << manifest.step << " for mesh " << manifest.mesh.toString()
               << " (" << perRank.size() << " ranks) to " << outputPath << "\n";
  return 0;
}

static int runSplit() {
  if (auto error = loom::support::checkAtLeast("--step", stepNumber, 0))
    return fail(*error);
  io::TensorMap global;
  if (auto error = io::readSafeTensors(inputPath, global))
    return fail(*error);
  io::CheckpointManifest manifest;
  manifest.step = stepNumber;
  manifest.dataPosition = stepNumber;
  manifest.plan = planText;
  return writeForPlan(std::move(manifest), global);
}

static int runReshard() {
  io::CheckpointManifest manifest;
  io::TensorMap global;
  if (Status status = io::readGlobalCheckpoint(inputPath, manifest, global);
      !status)
    return fail(status.message());
  manifest.plan = planText.empty()
                      ? "resharded from " + manifest.mesh.toString() + " (" +
                            manifest.plan + ")"
                      : std::string(planText);
  return writeForPlan(std::move(manifest), global);
}

static int runConvert() {
  std::optional<io::WeightFormat> from = io::parseWeightFormat(fromFormat);
  std::optional<io::WeightFormat> to = io::parseWeightFormat(toFormat);
  if (!from)
    return fail("--from: expected loom, nanogpt or hf, found `" + fromFormat +
                "`");
  if (!to)
    return fail("--to: expected loom, nanogpt or hf, found `" + toFormat +
                "`");
  // A single file or Hugging Face's shards (an index and its files).
  io::WeightFile file;
  if (auto error = io::WeightFile::open(inputPath, file))
    return fail(*error);
  io::TensorMap input;
  if (auto error = file.readAll(input))
    return fail(*error);
  io::TensorMap params, output;
  int skipped = 0;
  if (auto error = io::toLoomParameters(input, *from, params, skipped))
    return fail("`" + inputPath + "` (" + fromFormat + "): " + *error);
  if (auto error = io::fromLoomParameters(params, *to, output))
    return fail("--to " + toFormat + ": " + *error);
  if (auto error = io::writeSafeTensors(outputPath, output))
    return fail(*error);
  llvm::outs() << "converted " << params.size() << " weights"
               << (file.getShards().size() > 1
                       ? " from " + std::to_string(file.getShards().size()) +
                             " shards"
                       : std::string())
               << " from " << fromFormat << " to " << toFormat << " ("
               << skipped << " other tensors left out) into " << outputPath
               << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --help lists the subcommands and their flags, not the options LLVM's
  // libraries register at the top level (--help-hidden shows them).
  cl::HideUnrelatedOptions(llvm::ArrayRef<const cl::OptionCategory *>(),
                           cl::SubCommand::getTopLevel());
  cl::ParseCommandLineOptions(argc, argv, "Loom checkpoints\n");
  if (auto repeated = loom::support::findRepeatedFlag())
    return fail(*repeated);
  if (inspectCommand)
    return runInspect();
  if (mergeCommand)
    return runMerge();
  if (splitCommand)
    return runSplit();
  if (reshardCommand)
    return runReshard();
  if (convertCommand)
    return runConvert();
  return fail("name a command: inspect, merge, split, reshard or convert (see "
              "loom-ckpt --help)");
}
