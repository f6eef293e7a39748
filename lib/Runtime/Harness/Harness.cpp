//===- Harness.cpp - Runs an emitted training step on MPI ranks -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. parse the flags; set up MPI, the mesh and the communicator;
// 2. build each global argument (file data or its initializer), exactly as
//    loom-run does, and cut this rank's block;
// 3. run the step `--steps` times; between steps, every loop-carried result
//    is assembled on rank 0, broadcast and cut again by its argument's layout
//    (the layouts of a result and its argument may differ);
// 4. assemble every result on rank 0 (replicas checked, partial blocks added
//    in rank order, as the interpreter does), print the summaries and write
//    the outputs.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Harness/Harness.h"
#include "loom/Runtime/Host/Random.h"
#include "loom/Runtime/Host/Shape.h"
#include "loom/Runtime/IO/Npy.h"
#include "loom/Runtime/IO/SafeTensors.h"
#include "loom/Runtime/Support/Memory.h"
#include "loom/Support/Flags.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <type_traits>

namespace loom::runtime::harness {

int64_t ProgramSpec::numRanks() const {
  int64_t n = 1;
  for (const auto &axis : mesh)
    n *= axis.second;
  return n;
}

void ProgramSpec::addHostArena(const int64_t (*table)[2], size_t stages) {
  if (hostArenaBytes.size() < stages)
    hostArenaBytes.resize(stages, {0, 0});
  for (size_t stage = 0; stage < stages; ++stage)
    for (size_t d = 0; d < 2; ++d)
      hostArenaBytes[stage][d] =
          std::max(hostArenaBytes[stage][d], table[stage][d]);
}

int64_t ProgramSpec::stageOf(int64_t rank) const {
  if (pipelineAxis.empty())
    return -1;
  // Row-major ranks: the coordinate on axis a is (rank / stride_a) % size_a.
  int64_t stride = 1;
  for (size_t a = mesh.size(); a-- > 0;) {
    if (mesh[a].first == pipelineAxis)
      return (rank / stride) % mesh[a].second;
    stride *= mesh[a].second;
  }
  return -1;
}

bool ProgramSpec::ownsArgument(int64_t rank, size_t index) const {
  int64_t stage = arguments[index].stage;
  return stage < 0 || stage == stageOf(rank);
}

bool ProgramSpec::computesResult(int64_t rank, size_t index) const {
  int64_t stage = results[index].stage;
  return stage < 0 || stage == stageOf(rank);
}

InFlightCounter &pipelineInFlight() {
  static InFlightCounter counter;
  return counter;
}

void reportInFlight(const ProgramSpec &spec, int rank) {
  int64_t numRanks = spec.numRanks();
  int64_t mine[2] = {spec.stageOf(rank), pipelineInFlight().max};
  std::vector<int64_t> all(rank == 0 ? 2 * numRanks : 0);
  MPI_Gather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  if (rank != 0)
    return;
  if (spec.pipelineAxis.empty())
    std::printf("--report-pipeline: @%s is not a pipelined program\n",
                spec.entry.c_str());
  else
    for (int64_t r = 0; r < numRanks; ++r)
      std::printf("rank %lld stage %lld in-flight micro-batches %lld\n",
                  static_cast<long long>(r), static_cast<long long>(all[2 * r]),
                  static_cast<long long>(all[2 * r + 1]));
  std::fflush(stdout);
}

namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string outputs;
  bool f32 = false;
  uint64_t seed = 0;
  int64_t steps = 1;
  bool verifyCalls = false;
  bool reportPipeline = false;
};

std::string formatShape(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Parses `--flag value` and `--flag=value`; each flag at most once but
/// `--inputs` (docs/Testing.md, "Bad input").
std::optional<std::string> parseOptions(int argc, char **argv,
                                        Options &options) {
  loom::support::FlagOccurrences occurrences({"--inputs"});
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasValue = true;
    }
    auto next = [&]() -> std::optional<std::string> {
      if (hasValue)
        return value;
      if (i + 1 >= argc)
        return std::nullopt;
      return std::string(argv[++i]);
    };
    if (arg.rfind("--", 0) == 0)
      if (auto repeated = occurrences.add(arg))
        return repeated;
    if (arg == "--verify-calls") {
      options.verifyCalls = true;
      continue;
    }
    if (arg == "--report-pipeline") {
      options.reportPipeline = true;
      continue;
    }
    if (arg != "--inputs" && arg != "--outputs" && arg != "--dtype" &&
        arg != "--seed" && arg != "--steps")
      return "unknown flag `" + arg +
             "` (flags: --inputs F, --outputs F, --dtype f64|f32, --seed S, "
             "--steps N, --verify-calls, --report-pipeline)";
    std::optional<std::string> v = next();
    if (!v)
      return "`" + arg + "` expects a value";
    char *end = nullptr;
    if (arg == "--inputs") {
      options.inputs.push_back(*v);
    } else if (arg == "--outputs") {
      options.outputs = *v;
    } else if (arg == "--dtype") {
      if (*v != "f64" && *v != "f32")
        return "--dtype expects f64 or f32, got `" + *v + "`";
      options.f32 = *v == "f32";
    } else if (arg == "--seed") {
      // strtoull would take `-1` as 2^64 - 1 and clamp what overflows.
      errno = 0;
      options.seed = std::strtoull(v->c_str(), &end, 10);
      if (v->empty() || *end || errno == ERANGE ||
          v->find('-') != std::string::npos)
        return "--seed expects an integer in [0, 2^64 - 1], got `" + *v + "`";
    } else {
      errno = 0;
      options.steps = std::strtoll(v->c_str(), &end, 10);
      if (v->empty() || *end || errno == ERANGE || options.steps < 1)
        return "--steps expects a count in [1, 2^63 - 1], got `" + *v + "`";
    }
  }
  return std::nullopt;
}

template <typename T> MPI_Datatype mpiType() {
  if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else
    return MPI_INT64_T;
}

/// The elements of `buffer` that `spec` says it holds.
template <typename T, typename E>
std::vector<E> &elementsOf(Buffer<T> &buffer) {
  if constexpr (std::is_same_v<E, int64_t>)
    return buffer.ints;
  else
    return buffer.floats;
}

/// Runs `fn(E())` with E the element type of `spec` in a run of floats T.
template <typename T, typename Fn>
void dispatchElement(const TensorSpec &spec, Fn &&fn) {
  if (spec.isInteger)
    fn(int64_t());
  else
    fn(T());
}

std::optional<std::string> readTensorFile(const std::string &path,
                                          io::TensorMap &tensors) {
  bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  if (!npy)
    return io::readSafeTensors(path, tensors);
  io::TensorData tensor;
  if (auto error = io::readNpy(path, tensor))
    return error;
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem.resize(stem.size() - 4);
  tensors.clear();
  tensors.emplace(stem, std::move(tensor));
  return std::nullopt;
}

/// Converts file data for argument `spec`, with loom-run's dtype rules:
/// float arguments take their declared dtype or the run's, integer ones I64
/// or I32.
template <typename T>
std::optional<std::string> fromFile(const io::TensorData &data,
                                    const TensorSpec &spec,
                                    const std::string &what, Buffer<T> &out) {
  if (spec.isInteger) {
    if (data.dtype != io::DType::I64 && data.dtype != io::DType::I32)
      return what + ": expected I64 or I32 data, found " +
             std::string(io::dtypeName(data.dtype));
    out.ints = data.toInt64s();
    return std::nullopt;
  }
  io::DType run = std::is_same_v<T, float> ? io::DType::F32 : io::DType::F64;
  if (data.dtype != spec.declaredDType && data.dtype != run) {
    std::string expected(io::dtypeName(spec.declaredDType));
    if (run != spec.declaredDType)
      expected += " or " + std::string(io::dtypeName(run));
    return what + ": expected " + expected + " data, found " +
           std::string(io::dtypeName(data.dtype));
  }
  std::vector<double> values = data.toDoubles();
  out.floats.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out.floats[i] = static_cast<T>(values[i]);
  return std::nullopt;
}

/// The initial global value of an argument without data (loom-run's
/// initializeArgument: random initializers draw over the global tensor).
template <typename T>
std::optional<std::string> initialize(const TensorSpec &spec, size_t index,
                                      uint64_t seed, Buffer<T> &out) {
  int64_t n = numElements(spec.globalShape);
  if (spec.isInteger) {
    out.ints.assign(n, spec.init == Init::Ones ? 1 : 0);
    if (spec.init == Init::Normal || spec.init == Init::Uniform ||
        spec.init == Init::ScaledNormal)
      return "parameter `" + spec.name +
             "` has a random initializer but a non-float type";
  } else {
    // A named state starts at its initial value (initArgs[0]: 0, or the
    // loss scale's `loom.initial_value`).
    out.floats.assign(n, spec.init == Init::Ones    ? T(1)
                         : spec.init == Init::State ? T(spec.initArgs[0])
                                                    : T(0));
  }
  Shape origin(spec.globalShape.size(), 0);
  uint64_t id = host::tensorIdFromName(spec.name);
  switch (spec.init) {
  case Init::None:
    return "argument `" + spec.name + "` (#" + std::to_string(index) +
           ") has no data in the inputs and no initializer";
  case Init::Zeros:
  case Init::Ones:
  case Init::State:
    return std::nullopt;
  case Init::Uniform:
    host::fillUniform<T>(out.floats.data(), spec.globalShape, origin,
                         spec.globalShape, seed, id, spec.initArgs[0],
                         spec.initArgs[1]);
    return std::nullopt;
  case Init::Normal:
  case Init::ScaledNormal:
    host::fillNormal<T>(out.floats.data(), spec.globalShape, origin,
                        spec.globalShape, seed, id, 0.0,
                        spec.init == Init::Normal
                            ? spec.initArgs[0]
                            : spec.initArgs[0] / std::sqrt(spec.initArgs[1]));
    return std::nullopt;
  }
  return std::nullopt;
}

/// This rank's block of the global `global` of argument `spec`.
template <typename T>
void cutBlock(const TensorSpec &spec, const Placement &placement,
              Buffer<T> &global, Buffer<T> &local) {
  dispatchElement<T>(spec, [&](auto zero) {
    using E = decltype(zero);
    std::vector<E> &out = elementsOf<T, E>(local);
    out.assign(numElements(spec.localShape), E(0));
    // A pending sum: only the first member of the partial group holds it.
    if (!placement.holds)
      return;
    std::vector<int64_t> limits(spec.localShape.size()),
        strides(spec.localShape.size(), 1);
    for (size_t d = 0; d < limits.size(); ++d)
      limits[d] = placement.offset[d] + spec.localShape[d];
    host::slice<E>(elementsOf<T, E>(global).data(), spec.globalShape,
                   placement.offset, limits, strides, out.data());
  });
}

template <typename E> bool sameValues(const E *a, const E *b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (a[i] == b[i])
      continue;
    if constexpr (std::is_floating_point_v<E>)
      if (std::isnan(a[i]) && std::isnan(b[i]))
        continue;
    return false;
  }
  return true;
}

/// Gathers result `index` on rank 0 and assembles the global tensor there
/// (the interpreter's rules: replicas must agree, partial blocks add up in
/// rank order). Collective over MPI_COMM_WORLD.
template <typename T>
Status assemble(const ProgramSpec &spec, const Placements &placements,
                size_t index, Buffer<T> &local, int rank, int worldSize,
                Buffer<T> &global) {
  const TensorSpec &result = spec.results[index];
  Status status = Status::success();
  dispatchElement<T>(result, [&](auto zero) {
    using E = decltype(zero);
    std::vector<E> &block = elementsOf<T, E>(local);
    int64_t n = numElements(result.localShape);
    std::vector<E> all(rank == 0 ? n * worldSize : 0);
    int code =
        MPI_Gather(block.data(), static_cast<int>(n), mpiType<E>(), all.data(),
                   static_cast<int>(n), mpiType<E>(), 0, MPI_COMM_WORLD);
    if (code != MPI_SUCCESS) {
      status = Status::failure("rank " + std::to_string(rank) +
                               ": MPI_Gather failed while gathering result `" +
                               result.name + "`");
      return;
    }
    if (rank != 0)
      return;
    std::vector<E> &out = elementsOf<T, E>(global);
    out.assign(numElements(result.globalShape), E(0));
    for (int r = 0; r < worldSize; ++r) {
      Placement placement = placements.result(r, index);
      const E *mine = all.data() + r * n;
      // Another pipeline stage's result: this rank left it untouched.
      if (placement.canonicalRank < 0)
        continue;
      if (!placement.holds) {
        const E *canonical = all.data() + placement.canonicalRank * n;
        if (!sameValues(mine, canonical, n)) {
          status = Status::failure(
              "result `" + result.name +
              "` is replicated over the unused mesh axes, but rank " +
              std::to_string(r) + " holds other values than rank " +
              std::to_string(placement.canonicalRank));
          return;
        }
        continue;
      }
      host::accumulateBlock<E>(mine, result.localShape, placement.offset,
                               out.data(), result.globalShape);
    }
  });
  return status;
}

uint64_t fnv1a(const std::vector<uint8_t> &bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// loom-run's summary line of a result.
void printSummary(const std::string &name, const io::TensorData &t) {
  std::vector<double> values = t.toDoubles();
  double sum = 0, absMax = 0;
  for (double v : values) {
    sum += v;
    absMax = std::fmax(absMax, std::fabs(v));
  }
  double mean = values.empty() ? 0.0 : sum / values.size();
  std::printf("%s: shape %s dtype %s mean %.9g absmax %.9g fnv1a64 %016" PRIx64
              "\n",
              name.c_str(), formatShape(t.shape).c_str(),
              std::string(io::dtypeName(t.dtype)).c_str(), mean, absMax,
              fnv1a(t.bytes));
}

template <typename T>
io::TensorData toFile(const TensorSpec &spec, const Buffer<T> &global) {
  if (spec.isInteger)
    return io::TensorData::fromInt64s(spec.declaredDType, spec.globalShape,
                                      global.ints);
  io::TensorData data;
  data.dtype = std::is_same_v<T, float> ? io::DType::F32 : io::DType::F64;
  // A row-major view of its ecosystem's shape is written in that shape.
  data.shape = spec.fileShape.empty() ? spec.globalShape : spec.fileShape;
  const auto *bytes = reinterpret_cast<const uint8_t *>(global.floats.data());
  data.bytes.assign(bytes, bytes + global.floats.size() * sizeof(T));
  return data;
}

/// Steps 2-4 of the file comment for floats T. Errors every rank sees alike
/// are returned (and printed by rank 0); errors of one rank abort the job.
template <typename T>
std::optional<std::string> run(const ProgramSpec &spec, const Options &options,
                               mpi::Communicator &comm, StepFn<T> step) {
  int rank = static_cast<int>(comm.getRank());
  int worldSize = static_cast<int>(spec.numRanks());
  size_t numArgs = spec.arguments.size();
  Placements placements;
  if (Status status = Placements::create(spec, comm.getMesh(), placements);
      !status)
    return status.message();

  // Every rank reads the files: they are small next to what a step moves,
  // and nobody waits for a rank that reads.
  std::map<std::string, size_t> argIndex;
  for (size_t i = 0; i < numArgs; ++i)
    argIndex.emplace(spec.arguments[i].name, i);
  std::vector<std::optional<Buffer<T>>> given(numArgs);
  for (const std::string &file : options.inputs) {
    io::TensorMap tensors;
    if (auto error = readTensorFile(file, tensors))
      return error;
    for (auto &[name, data] : tensors) {
      auto it = argIndex.find(name);
      std::string what = "`" + file + "`: tensor `" + name + "`";
      if (it == argIndex.end())
        return what + " matches no argument of @" + spec.entry;
      size_t i = it->second;
      if (given[i])
        return what + " is given twice";
      // A view of its file shape reads the file's row-major data as is.
      const Shape &fileShape = spec.arguments[i].fileShape;
      if (!fileShape.empty() && data.shape == fileShape)
        data.shape = spec.arguments[i].globalShape;
      if (data.shape != spec.arguments[i].globalShape)
        return what + " has shape " + formatShape(data.shape) +
               ", but argument #" + std::to_string(i) +
               " expects the global shape " +
               formatShape(fileShape.empty() ? spec.arguments[i].globalShape
                                             : fileShape);
      Buffer<T> buffer;
      if (auto error = fromFile(data, spec.arguments[i], what, buffer))
        return error;
      given[i] = std::move(buffer);
    }
  }

  std::vector<Buffer<T>> args(numArgs);
  for (size_t i = 0; i < numArgs; ++i) {
    Buffer<T> global;
    if (given[i])
      global = std::move(*given[i]);
    else if (auto error =
                 initialize(spec.arguments[i], i, options.seed, global))
      return error;
    cutBlock(spec.arguments[i], placements.argument(rank, i), global, args[i]);
  }

  std::vector<Buffer<T>> results(spec.results.size());
  for (int64_t s = 0; s < options.steps; ++s) {
    for (size_t i = 0; i < results.size(); ++i) {
      results[i] = Buffer<T>();
      if (spec.results[i].isInteger)
        results[i].ints.assign(numElements(spec.results[i].localShape), 0);
      else
        results[i].floats.assign(numElements(spec.results[i].localShape), 0);
    }
    // The i-th run is training step i: dropout masks advance as the
    // trainer's do.
    StepContext context{options.seed, static_cast<uint64_t>(s)};
    Status status = step(comm, context, args, results);
    if (!status.ok())
      comm.abort(status);
    if (s + 1 == options.steps)
      break;
    for (auto [result, arg] : spec.carried) {
      Buffer<T> global;
      Status assembled = assemble(spec, placements, result, results[result],
                                  rank, worldSize, global);
      if (!assembled.ok())
        comm.abort(assembled);
      const TensorSpec &argSpec = spec.arguments[arg];
      dispatchElement<T>(argSpec, [&](auto zero) {
        using E = decltype(zero);
        std::vector<E> &data = elementsOf<T, E>(global);
        data.resize(numElements(argSpec.globalShape));
        MPI_Bcast(data.data(), static_cast<int>(data.size()), mpiType<E>(), 0,
                  MPI_COMM_WORLD);
      });
      cutBlock(argSpec, placements.argument(rank, arg), global, args[arg]);
    }
  }

  io::TensorMap outputs;
  for (size_t i = 0; i < results.size(); ++i) {
    Buffer<T> global;
    Status assembled =
        assemble(spec, placements, i, results[i], rank, worldSize, global);
    if (!assembled.ok())
      comm.abort(assembled);
    if (rank != 0)
      continue;
    io::TensorData data = toFile(spec.results[i], global);
    printSummary(spec.results[i].name, data);
    outputs.emplace(spec.results[i].name, std::move(data));
  }
  if (rank == 0 && !options.outputs.empty())
    if (auto error = io::writeSafeTensors(options.outputs, outputs))
      comm.abort(Status::failure(*error));
  std::fflush(stdout);
  Status waited = comm.waitSends();
  if (!waited.ok())
    comm.abort(waited);
  if (options.reportPipeline)
    reportInFlight(spec, rank);
  return std::nullopt;
}

} // namespace

int runMain(int argc, char **argv, const ProgramSpec &spec,
            StepFn<float> f32Step, StepFn<double> f64Step) {
  std::string program = argv[0];
  program = program.substr(program.find_last_of('/') + 1);
  keepFreedMemoryResident();
  MPI_Init(&argc, &argv);
  int worldRank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  // Errors that every rank meets alike: rank 0 reports, all return 1.
  auto fail = [&](const std::string &message) {
    if (worldRank == 0)
      std::fprintf(stderr, "%s: error: %s\n", program.c_str(), message.c_str());
    MPI_Finalize();
    return 1;
  };

  Options options;
  if (auto error = parseOptions(argc, argv, options))
    return fail(*error);
  if (options.f32 ? !f32Step : !f64Step)
    return fail(std::string("this program was built without its ") +
                (options.f32 ? "f32" : "f64") +
                " step functions (LOOM_STEP_DTYPES); run it with --dtype " +
                (options.f32 ? "f64" : "f32") + " or rebuild");
  std::vector<mpi::DeviceMesh::Axis> axes;
  for (const auto &[name, size] : spec.mesh)
    axes.push_back({name, size});
  mpi::DeviceMesh mesh;
  Status status = mpi::DeviceMesh::create(std::move(axes), mesh);
  if (!status.ok())
    return fail(status.message());
  mpi::CommunicatorOptions commOptions;
  commOptions.verifyCalls = options.verifyCalls;
  std::unique_ptr<mpi::Communicator> comm;
  status = mpi::Communicator::create(mesh, comm, commOptions);
  if (!status.ok())
    return fail(status.message());

  std::optional<std::string> error =
      options.f32 ? run<float>(spec, options, *comm, f32Step)
                  : run<double>(spec, options, *comm, f64Step);
  comm.reset();
  if (error)
    return fail(*error);
  MPI_Finalize();
  return 0;
}

} // namespace loom::runtime::harness
