//===- Session.cpp - Sessions: load, run, results, emit -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A session over the driver library (include/loom/Driver/Driver.h), the
// same code `loomc` runs:
//
//   1. create: an MLIR context prepared as the driver prepares it, with one
//      diagnostic handler that collects the current call's errors, filters
//      remarks unless `explain` is set, and forwards to the caller's
//      callback (and to stderr only when asked);
//   2. load: graph JSON, IR text, a file by extension, or a model builder,
//      each into a fresh source manager; the loaded module is kept as is;
//   3. run to a phase: check the options as `loomc` does, then run the
//      driver's phases on a clone of the loaded module, with the report and
//      the plan JSON captured into session-owned strings;
//   4. emit: the same through partition, then the driver's codegen phase.
//
// Every failure becomes a status whose message holds the errors the
// diagnostics reported; nothing here aborts, exits or prints unasked.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "loom/Frontend/Models/ModelOptions.h"
#include "loom/Frontend/Models/Models.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;
using capi::makeStatus;

//===----------------------------------------------------------------------===//
// Lifecycle and diagnostics
//===----------------------------------------------------------------------===//

LoomSession::LoomSession() : sourceMgr(std::make_unique<llvm::SourceMgr>()) {
  prepareContext(&context);
  context.getDiagEngine().registerHandler(
      [this](Diagnostic &diag) { handleDiagnostic(diag); });
}

LoomSession::~LoomSession() {
  // The modules belong to the context: drop them first.
  result = nullptr;
  loaded = nullptr;
  for (const std::string &file : {clusterFile, strategyFile})
    if (!file.empty())
      llvm::sys::fs::remove(file);
}

/// "file:line:col" of the first file location inside `loc`, a name
/// location's name, or "" for none.
static std::string formatLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) +
            ":" + llvm::Twine(file.getColumn()))
        .str();
  if (auto name = loc->findInstanceOf<NameLoc>())
    return name.getName().str();
  return "";
}

static LoomSeverity toSeverity(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return LOOM_SEVERITY_ERROR;
  case DiagnosticSeverity::Warning:
    return LOOM_SEVERITY_WARNING;
  case DiagnosticSeverity::Note:
    return LOOM_SEVERITY_NOTE;
  case DiagnosticSeverity::Remark:
    return LOOM_SEVERITY_REMARK;
  }
  return LOOM_SEVERITY_ERROR;
}

static const char *severityName(LoomSeverity severity) {
  switch (severity) {
  case LOOM_SEVERITY_ERROR:
    return "error";
  case LOOM_SEVERITY_WARNING:
    return "warning";
  case LOOM_SEVERITY_NOTE:
    return "note";
  case LOOM_SEVERITY_REMARK:
    return "remark";
  case LOOM_SEVERITY_MAX_ENUM:
    break;
  }
  return "error";
}

void LoomSession::handleDiagnostic(Diagnostic &diag) {
  // Passes explain their decisions with remarks; like loomc, only under
  // `explain`.
  if (diag.getSeverity() == DiagnosticSeverity::Remark && !options.explain)
    return;
  bool isError = diag.getSeverity() == DiagnosticSeverity::Error;
  auto deliver = [&](Diagnostic &d) {
    LoomSeverity severity = toSeverity(d.getSeverity());
    std::string location = formatLocation(d.getLocation());
    std::string message = d.str();
    std::string line = location.empty() ? message : location + ": " + message;
    // An error's notes belong with it in the status.
    if (isError)
      errors.push_back(&d == &diag ? line : "  note: " + line);
    if (printDiagnostics)
      llvm::errs() << "loom: " << severityName(severity) << ": " << line
                   << "\n";
    if (callback)
      callback(severity, location.c_str(), message.c_str(), userData);
  };
  deliver(diag);
  for (Diagnostic &note : diag.getNotes())
    deliver(note);
}

LoomStatus *LoomSession::fail(LoomStatusCode code, const llvm::Twine &summary) {
  std::string message = summary.str();
  for (const std::string &line : errors) {
    message += "\n" + line;
    // Loom's phases and importers say so when they meet something that
    // has not landed (a phase, ONNX, a flag).
    if (llvm::StringRef(line).contains("not implemented yet"))
      code = LOOM_STATUS_UNIMPLEMENTED;
  }
  errors.clear();
  return makeStatus(code, message);
}

void LoomSession::clearResult() {
  result = nullptr;
  irText.clear();
  irValid = false;
  planJson.clear();
  hasPlan = false;
  report.clear();
}

LoomStatus *loomSessionCreate(LoomSession **outSession) {
  if (!outSession)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionCreate: outSession must not be NULL");
  *outSession = new LoomSession();
  return nullptr;
}

void loomSessionDestroy(LoomSession *session) { delete session; }

void loomSessionSetDiagnosticCallback(LoomSession *session,
                                      LoomDiagnosticCallback callback,
                                      void *userData) {
  if (!session)
    return;
  session->callback = callback;
  session->userData = userData;
}

void loomSessionSetPrintDiagnostics(LoomSession *session, int enabled) {
  if (session)
    session->printDiagnostics = enabled != 0;
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

#define LOOM_CHECK_SESSION(session, function)                                  \
  if (!(session))                                                              \
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,                            \
                      function ": session must not be NULL");

/// Makes `module` the session's graph, or reports why there is none.
static LoomStatus *adoptGraph(LoomSession *session,
                              OwningOpRef<ModuleOp> module,
                              const llvm::Twine &what) {
  if (!module)
    return session->fail(LOOM_STATUS_INVALID_ARGUMENT, "cannot load " + what);
  session->loaded = std::move(module);
  return nullptr;
}

/// Loads `text` in `format`, named `sourceName`.
static LoomStatus *loadText(LoomSession *session, LoomStringRef text,
                            const char *sourceName, InputFormat format) {
  if (!text.data && text.length)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "the graph text is NULL with a non-zero length");
  session->beginCall();
  session->clearResult();
  session->loaded = nullptr;
  session->sourceName = sourceName ? sourceName : "<graph>";
  session->sourceMgr = std::make_unique<llvm::SourceMgr>();
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(text.data ? text.data : "", text.length),
          session->sourceName);
  OwningOpRef<ModuleOp> module = loadInputBuffer(
      std::move(buffer), format, &session->context, *session->sourceMgr);
  return adoptGraph(session, std::move(module),
                    "'" + session->sourceName + "'");
}

LoomStatus *loomSessionLoadGraphJson(LoomSession *session, LoomStringRef text,
                                     const char *sourceName) {
  LOOM_CHECK_SESSION(session, "loomSessionLoadGraphJson");
  return loadText(session, text, sourceName, InputFormat::GraphJSON);
}

LoomStatus *loomSessionLoadMlir(LoomSession *session, LoomStringRef text,
                                const char *sourceName) {
  LOOM_CHECK_SESSION(session, "loomSessionLoadMlir");
  return loadText(session, text, sourceName, InputFormat::MLIR);
}

LoomStatus *loomSessionLoadFile(LoomSession *session, const char *path) {
  LOOM_CHECK_SESSION(session, "loomSessionLoadFile");
  if (!path)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionLoadFile: path must not be NULL");
  session->beginCall();
  session->clearResult();
  session->loaded = nullptr;
  session->sourceName = path;
  session->sourceMgr = std::make_unique<llvm::SourceMgr>();
  OwningOpRef<ModuleOp> module =
      loadInput(path, &session->context, *session->sourceMgr,
                onnxImportOptions(session->options));
  if (!module) {
    // An unreadable file is an I/O error; a bad graph a bad argument.
    bool readable = llvm::sys::fs::is_regular_file(path);
    return session->fail(readable ? LOOM_STATUS_INVALID_ARGUMENT
                                  : LOOM_STATUS_IO_ERROR,
                         llvm::Twine("cannot load '") + path + "'");
  }
  return adoptGraph(session, std::move(module), path);
}

LoomStatus *loomSessionLoadModel(LoomSession *session, const char *family,
                                 const char *options) {
  LOOM_CHECK_SESSION(session, "loomSessionLoadModel");
  if (!family)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionLoadModel: family must not be NULL");
  session->beginCall();
  session->clearResult();
  session->loaded = nullptr;
  std::optional<models::ModelFamily> parsed = models::parseFamilyName(family);
  if (!parsed)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      llvm::Twine("unknown model family '") + family +
                          "'; expected gpt2, llama, transformer or tfm-lm");
  llvm::Expected<models::ModelConfig> config =
      models::parseModelOptions(*parsed, options ? options : "");
  if (!config)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      llvm::toString(config.takeError()));
  session->sourceName = std::string(family) + ".json";
  session->sourceMgr = std::make_unique<llvm::SourceMgr>();
  return adoptGraph(session, models::buildModel(*config, session->context),
                    llvm::Twine("the ") + family + " model");
}

//===----------------------------------------------------------------------===//
// Runs
//===----------------------------------------------------------------------===//

/// Runs the phases up to `phase` (Codegen: through partition, then the
/// codegen phase into `directory` for `target`).
static LoomStatus *runSession(LoomSession *session, Phase phase,
                              const char *target, const char *directory) {
  session->beginCall();
  session->clearResult();
  if (!session->loaded)
    return makeStatus(LOOM_STATUS_FAILED_PRECONDITION,
                      "no graph is loaded: call loomSessionLoadGraphJson, "
                      "loomSessionLoadMlir, loomSessionLoadFile or "
                      "loomSessionLoadModel first");
  CompileOptions options = session->options;
  options.compileTo = phase;
  options.inputFile = session->sourceName;
  if (phase == Phase::Codegen) {
    options.emit = target;
    options.outputFile = directory;
  }
  // The report and the plan come back as strings, never on stdout.
  llvm::raw_string_ostream reportStream(session->report);
  options.reportStream = &reportStream;
  options.report = options.cluster.has_value() && phase >= Phase::Sharding;
  std::string planJson;
  options.planJsonText = &planJson;

  const char *phaseName = stringifyPhase(phase).data();
  if (failed(checkOptions(options, &session->context)))
    return session->fail(LOOM_STATUS_INVALID_ARGUMENT,
                         llvm::Twine("invalid options for a run to ") +
                             phaseName);
  OwningOpRef<ModuleOp> module = session->loaded->clone();
  if (failed(runPhases(options, *module))) {
    session->report.clear();
    return session->fail(LOOM_STATUS_COMPILE_ERROR,
                         llvm::Twine("the run to ") + phaseName + " failed");
  }
  if (phase == Phase::Codegen && failed(emitExecutable(options, *module))) {
    session->report.clear();
    return session->fail(LOOM_STATUS_IO_ERROR, llvm::Twine("emitting ") +
                                                   target + " code into '" +
                                                   directory + "' failed");
  }
  session->result = std::move(module);
  session->resultPhase = phase == Phase::Codegen ? Phase::Partition : phase;
  session->hasPlan = !planJson.empty();
  session->planJson = std::move(planJson);
  return nullptr;
}

LoomStatus *loomSessionRunTo(LoomSession *session, LoomPhase phase) {
  LOOM_CHECK_SESSION(session, "loomSessionRunTo");
  if (phase < LOOM_PHASE_IMPORT || phase > LOOM_PHASE_PARTITION)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionRunTo: phase " + llvm::Twine(int(phase)) +
                          " is out of range (LOOM_PHASE_IMPORT .. "
                          "LOOM_PHASE_PARTITION)");
  return runSession(session, static_cast<Phase>(phase), nullptr, nullptr);
}

LoomStatus *loomSessionEmit(LoomSession *session, const char *target,
                            const char *directory) {
  LOOM_CHECK_SESSION(session, "loomSessionEmit");
  if (!target || !directory || !*directory)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionEmit: target and directory must be given");
  return runSession(session, Phase::Codegen, target, directory);
}

LoomStatus *loomSessionGetIR(LoomSession *session, LoomStringRef *outText) {
  LOOM_CHECK_SESSION(session, "loomSessionGetIR");
  if (!outText)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionGetIR: outText must not be NULL");
  ModuleOp module = session->getCurrentModule();
  if (!module)
    return makeStatus(LOOM_STATUS_FAILED_PRECONDITION,
                      "no IR: load a graph first");
  if (!session->irValid) {
    session->irText.clear();
    llvm::raw_string_ostream os(session->irText);
    // With the final newline, as loomc and loom-opt write a module.
    module.print(os);
    os << "\n";
    session->irValid = true;
  }
  *outText = capi::wrap(session->irText);
  return nullptr;
}

LoomStatus *loomSessionGetPlanJson(LoomSession *session,
                                   LoomStringRef *outJson) {
  LOOM_CHECK_SESSION(session, "loomSessionGetPlanJson");
  if (!outJson)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionGetPlanJson: outJson must not be NULL");
  if (!session->hasPlan)
    return makeStatus(LOOM_STATUS_FAILED_PRECONDITION,
                      "no plan: run to the partition phase (or to sharding "
                      "with a cluster) first");
  *outJson = capi::wrap(session->planJson);
  return nullptr;
}

LoomStringRef loomSessionGetReport(LoomSession *session) {
  if (!session)
    return LoomStringRef{"", 0};
  return capi::wrap(session->report);
}

LoomPhase loomSessionGetPhase(LoomSession *session) {
  if (!session)
    return LOOM_PHASE_IMPORT;
  return static_cast<LoomPhase>(session->resultPhase);
}
