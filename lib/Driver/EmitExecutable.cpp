//===- EmitExecutable.cpp - loomc --emit: sources, build, launch.sh -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The codegen phase of the driver, after the partition phase:
//
//   1. emit the per-rank program of the partitioned step: `--emit host`
//      (HostEmitter: train_step.cpp, main.cpp, CMakeLists.txt) or `--emit
//      cuda` (CUDAEmitter: train_step.cu, main.cpp, CMakeLists.txt), plus
//      the partitioned IR as step.mlir (what loom-run checks the program
//      against). CUDA first checks that it can be built: this Loom was built
//      with its CUDA runtime, and nvcc is found;
//   2. build it: `cmake -G Ninja` against this Loom's source and build trees
//      (baked in at Loom's configure time; LOOM_SOURCE_DIR / LOOM_BUILD_DIR
//      in the environment override them) at -O2 (CUDA: nvcc with g++ as its
//      host compiler, architectures 90a;80 unless LOOM_CUDA_ARCHITECTURES
//      says otherwise), then `cmake --build`, with the output in
//      OUT/build.log;
//      With LOOM_CUDA_EMULATOR=1 in the environment, `--emit cuda` builds
//      the same sources for the CUDA emulator instead (plain C++ against
//      this tree's *Emulated runtime libraries; no nvcc, no GPU): the
//      program runs its kernels, GEMMs and NCCL calls on the CPU;
//   3. write OUT/launch.sh, which starts every rank of the mesh with mpirun
//      and passes its arguments to the training executable (CUDA: one GPU
//      per rank, the node-local rank picking it).
//
// Nothing is left half-written on an error before the build: the sources
// are emitted in memory first. A failed build keeps its log and says where.
//
//===----------------------------------------------------------------------===//

#include "loom/Driver/Driver.h"

#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Target/CUDA/CUDAEmitter.h"
#include "loom/Target/Host/HostEmitter.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The setting baked in at configure time, unless the environment names
/// another.
std::string fromEnvironment(const char *name, const char *builtIn) {
  if (const char *value = std::getenv(name); value && *value)
    return value;
  return builtIn;
}

/// Writes `contents` to `path` through a temporary file.
LogicalResult writeFile(MLIRContext *context, StringRef path,
                        StringRef contents) {
  llvm::Error error = llvm::writeToOutput(path, [&](raw_ostream &os) {
    os << contents;
    return llvm::Error::success();
  });
  if (!error)
    return success();
  return emitError(UnknownLoc::get(context))
         << "cannot write '" << path
         << "': " << llvm::toString(std::move(error));
}

/// Runs `argv` with stdout and stderr appended to `log`; returns its exit
/// status, or -1 (with `message` set) when it could not run.
int runLogged(ArrayRef<std::string> argv, StringRef log, std::string &message) {
  SmallVector<StringRef> args(argv.begin(), argv.end());
  // ExecuteAndWait redirects to a file it truncates; each command gets its
  // own log, appended to `log` afterwards.
  std::string part = (log + ".part").str();
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(part),
                                          StringRef(part)};
  int code = llvm::sys::ExecuteAndWait(args[0], args, std::nullopt, redirects,
                                       /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                       &message);
  std::error_code ec;
  llvm::raw_fd_ostream out(log, ec, llvm::sys::fs::OF_Append);
  if (auto buffer = llvm::MemoryBuffer::getFile(part); buffer && !ec)
    out << "$ " << llvm::join(args, " ") << "\n" << (*buffer)->getBuffer();
  llvm::sys::fs::remove(part);
  return code;
}

/// The last `lines` lines of `path`, to show with a failed build.
std::string tailOf(StringRef path, size_t lines) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  StringRef text = (*buffer)->getBuffer().rtrim();
  size_t start = text.size();
  for (size_t n = 0; n <= lines && start != StringRef::npos && start > 0; ++n)
    start = text.rfind('\n', start - 1);
  return (start == StringRef::npos ? text : text.substr(start + 1)).str();
}

/// `launch.sh`: every rank under mpirun, arguments passed through.
std::string launchScript(StringRef input, StringRef meshText, int64_t numRanks,
                         StringRef mpirun, bool cuda, bool emulated) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "#!/usr/bin/env bash\n"
     << "# Emitted by loomc --emit " << (cuda ? "cuda" : "host") << " from "
     << input << ".\n"
     << "# Runs the " << numRanks << " ranks of mesh " << meshText
     << " with mpirun; every argument goes to the\n"
     << "# training executable, e.g.\n"
     << "#   ./launch.sh --data tokens.bin --steps 50 --ckpt-dir ckpt "
        "--ckpt-every 10 [--resume]\n"
     << "# LOOM_MPIRUN: the mpirun command. LOOM_MPIRUN_FLAGS: its flags "
        "(default: one host,\n"
     << "# oversubscribed, unbound, shared memory; set them for a cluster).\n"
     << "set -euo pipefail\n"
     << "here=$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\n"
     << "mpirun=${LOOM_MPIRUN:-" << mpirun << "}\n"
     << "flags=${LOOM_MPIRUN_FLAGS---oversubscribe --bind-to none --mca btl "
        "self,vader -x OPENBLAS_NUM_THREADS}\n"
     << "# One BLAS thread per rank: ranks already fill the cores (OpenBLAS's "
        "own\n"
     << "# threads on top made 4 ranks on 2 cores 2.5x slower; "
        "docs/Performance.md).\n"
     << "export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}\n"
     << "# Open MPI refuses to start as root (containers) unless told.\n"
     << "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
     << "# A rank's MPI_Finalize waits at most 2 s for mpirun's "
        "acknowledgement; on a\n"
     << "# loaded host mpirun can miss it and report a rank that exited 0 as "
        "\"exiting\n"
     << "# improperly\". Non-zero exits, aborts and signals still fail the "
        "job.\n"
     << ": \"${OMPI_MCA_orte_allowed_exit_without_sync:=1}\"\n"
     << "export OMPI_MCA_orte_allowed_exit_without_sync\n";
  if (emulated)
    os << "# Built for the CUDA emulator: every rank runs its kernels, GEMMs "
          "and NCCL\n"
       << "# calls on the CPU (docs/Codegen.md, \"The CUDA emulator\").\n";
  else if (cuda)
    os << "# One GPU per rank: each node's ranks take its visible devices in "
          "node-local\n"
       << "# rank order (device = local rank % visible devices; "
          "CUDA_VISIBLE_DEVICES picks\n"
       << "# and orders them). Start at most as many ranks per node as it "
          "has GPUs.\n"
       << "if command -v nvidia-smi > /dev/null && [[ -z "
          "\"${CUDA_VISIBLE_DEVICES:-}\" ]]; then\n"
       << "  gpus=$(nvidia-smi -L | wc -l)\n"
       << "  if (( gpus < " << numRanks << " )); then\n"
       << "    echo \"launch.sh: warning: " << numRanks
       << " ranks on one node with $gpus GPUs share devices\" >&2\n"
       << "  fi\n"
       << "fi\n"
       << "if [[ -n \"${CUDA_VISIBLE_DEVICES:-}\" ]]; then\n"
       << "  flags=\"$flags -x CUDA_VISIBLE_DEVICES\"\n"
       << "fi\n";
  // A private Open MPI session directory: jobs of one user started together
  // on one host otherwise race on the shared one, and mpirun fails with
  // "orte_session_dir failed" before any rank starts. The directory is
  // removed when mpirun ends, so the script waits for it (forwarding INT
  // and TERM) instead of exec'ing it.
  os << "# Open MPI keeps a job's session files under one directory per user "
        "and host,\n"
     << "# which jobs started together race to create and remove: this job "
        "gets its own.\n"
     << "if [[ -n \"${OMPI_MCA_orte_tmpdir_base:-}\" ]]; then\n"
     << "  # shellcheck disable=SC2086  # flags is a list\n"
     << "  exec \"$mpirun\" $flags -np " << numRanks
     << " \"$here/build/train_step\" \"$@\"\n"
     << "fi\n"
     << "session=$(mktemp -d \"${TMPDIR:-/tmp}/loom-mpi.XXXXXX\")\n"
     << "trap 'rm -rf \"$session\"' EXIT\n"
     << "export OMPI_MCA_orte_tmpdir_base=$session "
        "PRTE_MCA_prte_tmpdir_base=$session\n"
     << "# shellcheck disable=SC2086  # flags is a list\n"
     << "\"$mpirun\" $flags -np " << numRanks
     << " \"$here/build/train_step\" \"$@\" &\n"
     << "job=$!\n"
     << "trap 'kill -TERM \"$job\" 2> /dev/null' INT TERM\n"
     << "status=0\n"
     << "wait \"$job\" || status=$?\n"
     << "# A trapped signal ends wait early: wait on until mpirun is gone.\n"
     << "while kill -0 \"$job\" 2> /dev/null; do\n"
     << "  status=0\n"
     << "  wait \"$job\" || status=$?\n"
     << "done\n"
     << "exit \"$status\"\n";
  return s;
}

/// Checks that `--emit cuda` can build here: this Loom was configured with
/// its CUDA runtime (the emitted program links it) and nvcc is found
/// ($CUDACXX when set, else the nvcc Loom was configured with, PATH,
/// /usr/local/cuda).
LogicalResult findCUDABuild(MLIRContext *context, std::string &nvcc) {
  if (!LOOM_CUDA_RUNTIME)
    return emitError(UnknownLoc::get(context))
           << "--emit cuda needs a Loom build with its CUDA runtime, and this "
              "one was configured without it (no CUDA toolkit found, or "
              "-DLOOM_ENABLE_CUDA=OFF); install the CUDA toolkit and "
              "reconfigure, or use --emit host";
  // An explicit choice is used or refused, never silently replaced.
  if (const char *env = std::getenv("CUDACXX"); env && *env) {
    if (!llvm::sys::fs::can_execute(env))
      return emitError(UnknownLoc::get(context))
             << "--emit cuda builds with $CUDACXX, which names '" << env
             << "', not an executable";
    nvcc = env;
    return success();
  }
  SmallVector<std::string> candidates;
  candidates.push_back(LOOM_CUDA_COMPILER);
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("nvcc"))
    candidates.push_back(*onPath);
  candidates.push_back("/usr/local/cuda/bin/nvcc");
  for (const std::string &candidate : candidates)
    if (!candidate.empty() && llvm::sys::fs::can_execute(candidate)) {
      nvcc = candidate;
      return success();
    }
  return emitError(UnknownLoc::get(context))
         << "--emit cuda builds with nvcc, which was not found ($CUDACXX, "
            "PATH, /usr/local/cuda/bin); install the CUDA toolkit or set "
            "CUDACXX";
}

/// Whether $LOOM_CUDA_EMULATOR asks for a build for the CUDA emulator
/// ("1"; unset, empty or "0": no); anything else is an error.
FailureOr<bool> wantsCUDAEmulator(MLIRContext *context) {
  const char *env = std::getenv("LOOM_CUDA_EMULATOR");
  StringRef value = env ? env : "";
  if (value.empty() || value == "0")
    return false;
  if (value != "1")
    return emitError(UnknownLoc::get(context))
           << "$LOOM_CUDA_EMULATOR must be 0 or 1, not '" << value << "'";
  if (!LOOM_CUDA_EMULATOR_RUNTIME)
    return emitError(UnknownLoc::get(context))
           << "LOOM_CUDA_EMULATOR=1 needs a Loom build with the CUDA emulator, "
              "and this one was configured without it (no Boost.Context, or "
              "-DLOOM_ENABLE_CUDA_EMULATOR=OFF)";
  return true;
}

} // namespace

LogicalResult mlir::loom::emitExecutable(const CompileOptions &options,
                                         ModuleOp module) {
  MLIRContext *context = module.getContext();
  StringRef out = options.outputFile;

  bool cuda = options.emit && *options.emit == "cuda";
  bool emulated = false;
  if (cuda) {
    FailureOr<bool> wanted = wantsCUDAEmulator(context);
    if (failed(wanted))
      return failure();
    emulated = *wanted;
  }
  std::string nvcc;
  if (cuda && !emulated && failed(findCUDABuild(context, nvcc)))
    return failure();

  // 1. The sources, in memory first: an emission error writes nothing.
  std::vector<std::pair<std::string, std::string>> files;
  if (cuda ? failed(emitCUDAProgram(module, CUDAEmitOptions(), files))
           : failed(emitHostProgram(module, HostEmitOptions(), files)))
    return failure();
  std::string ir;
  {
    llvm::raw_string_ostream os(ir);
    module->print(os);
  }
  int64_t numRanks = 1;
  std::string meshText = "{}";
  for (auto meshOp : module.getOps<dist::MeshOp>()) {
    dist::ValueOrError<dist::Mesh> mesh = meshOp.getMesh();
    if (!mesh)
      return meshOp.emitError(mesh.error());
    numRanks = mesh->getNumDevices();
    meshText = mesh->toString();
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(out))
    return emitError(UnknownLoc::get(context))
           << "cannot create the output directory '" << out
           << "': " << ec.message();
  for (const auto &[name, contents] : files) {
    SmallString<256> path(out);
    llvm::sys::path::append(path, name);
    if (failed(writeFile(context, path, contents)))
      return failure();
  }
  SmallString<256> irPath(out);
  llvm::sys::path::append(irPath, "step.mlir");
  if (failed(writeFile(context, irPath, ir)))
    return failure();

  // 2. Build it against this Loom.
  auto find = [&](StringRef name) -> FailureOr<std::string> {
    llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name);
    if (!path)
      return emitError(UnknownLoc::get(context))
             << "--emit " << (cuda ? "cuda" : "host") << " builds with " << name
             << ", which is not on PATH";
    return *path;
  };
  FailureOr<std::string> cmake = find("cmake");
  if (failed(cmake) || failed(find("ninja")))
    return failure();
  std::string sourceDir = fromEnvironment("LOOM_SOURCE_DIR", LOOM_SOURCE_DIR);
  std::string buildDir = fromEnvironment("LOOM_BUILD_DIR", LOOM_BUILD_DIR);
  SmallString<256> programBuild(out), log(out);
  llvm::sys::path::append(programBuild, "build");
  llvm::sys::path::append(log, "build.log");
  llvm::sys::fs::remove(log);
  std::vector<std::string> configure = {
      *cmake,
      "-G",
      "Ninja",
      "-S",
      out.str(),
      "-B",
      programBuild.str().str(),
      "-DLOOM_SOURCE_DIR=" + sourceDir,
      "-DLOOM_BUILD_DIR=" + buildDir,
      "-DCMAKE_BUILD_TYPE=Release",
      "-DCMAKE_CXX_FLAGS_RELEASE=-O2",
      "-DLOOM_STEP_DTYPES=" +
          llvm::join(llvm::split(options.emitDtypes.value_or("f32,f64"), ','),
                     ";")};
  if (emulated) {
    configure.push_back("-DLOOM_CUDA_EMULATOR=ON");
  } else if (cuda) {
    configure.push_back("-DCMAKE_CUDA_COMPILER=" + nvcc);
    configure.push_back("-DCMAKE_CUDA_FLAGS_RELEASE=-O2");
    configure.push_back("-DCMAKE_CUDA_ARCHITECTURES=" +
                        fromEnvironment("LOOM_CUDA_ARCHITECTURES", "90a;80"));
  }
  // Rebuilds of the same program (tests, the quickstart) hit the cache.
  if (llvm::ErrorOr<std::string> ccache =
          llvm::sys::findProgramByName("ccache")) {
    configure.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=" + *ccache);
    if (cuda && !emulated)
      configure.push_back("-DCMAKE_CUDA_COMPILER_LAUNCHER=" + *ccache);
  }
  std::vector<std::string> build = {*cmake, "--build",
                                    programBuild.str().str()};
  for (const std::vector<std::string> *command : {&configure, &build}) {
    std::string message;
    int code = runLogged(*command, log, message);
    if (code == 0)
      continue;
    InFlightDiagnostic diag = emitError(UnknownLoc::get(context));
    diag << "building '" << out << "' failed: `" << (*command)[0] << " "
         << (*command)[1] << "` ";
    if (code < 0)
      diag << "could not run (" << message << ")";
    else
      diag << "exited with " << code;
    diag << "; the log is " << log << ", ending:\n" << tailOf(log, 15);
    return failure();
  }

  // 3. launch.sh.
  SmallString<256> launch(out);
  llvm::sys::path::append(launch, "launch.sh");
  std::string mpirun = fromEnvironment("LOOM_MPIRUN", LOOM_MPIEXEC);
  if (failed(writeFile(
          context, launch,
          launchScript(options.inputFile, meshText, numRanks, mpirun, cuda,
                       emulated))))
    return failure();
  llvm::sys::fs::setPermissions(launch, llvm::sys::fs::all_read |
                                            llvm::sys::fs::all_exe |
                                            llvm::sys::fs::owner_write);
  options.getReportStream()
      << "wrote " << out << "/build/train_step (" << numRanks
      << (numRanks == 1 ? " rank" : " ranks") << ", mesh " << meshText
      << (emulated ? ", one emulated GPU each: the CUDA emulator, on the CPU"
          : cuda   ? ", one GPU each"
                   : "")
      << "); run it with " << out
      << "/launch.sh --data TOKENS.bin --steps N\n";
  return success();
}
