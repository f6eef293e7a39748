//===- Options.cpp - Session options by their loomc flag names ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loomSessionSetOption fills the driver's `CompileOptions` (the struct
// `loomc` fills from its flags) from a name and a text value:
//
//   1. find the option in the rows of CompileOptions.def that a session
//      takes (the table loomc's flags come from): its flag name, its kind
//      (text, integer, real, switch) and the field it sets; unknown names
//      fail;
//   2. parse the value by kind (a number where a number is expected), and
//      for `cluster-json` / `strategy-json` write the text to a session
//      temporary file, since the driver reads those as files (a cluster
//      spec is parsed first, so that its errors name `cluster-json`);
//   3. store it. Whether options fit together and whether their phase has
//      landed is the driver's `checkOptions`, at run time, so the messages
//      are loomc's.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "loom/Analysis/Cost/ClusterSpec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <variant>

using namespace mlir::loom;
using capi::makeStatus;

namespace {

using TextField = std::optional<std::string> CompileOptions::*;
using IntegerField = std::optional<int64_t> CompileOptions::*;
using RealField = std::optional<double> CompileOptions::*;
using SwitchField = bool CompileOptions::*;
/// The two options given as text that the driver reads from files.
enum class InlineFile { Cluster, Strategy };

struct OptionInfo {
  const char *name;
  std::variant<TextField, IntegerField, RealField, SwitchField, InlineFile>
      field;
  LoomOptionKind kind;
  OptionPhase phase;
  const char *description;
};

constexpr LoomOptionKind kindOf(TextField) { return LOOM_OPTION_KIND_TEXT; }
constexpr LoomOptionKind kindOf(IntegerField) {
  return LOOM_OPTION_KIND_INTEGER;
}
constexpr LoomOptionKind kindOf(RealField) { return LOOM_OPTION_KIND_REAL; }
constexpr LoomOptionKind kindOf(SwitchField) { return LOOM_OPTION_KIND_SWITCH; }

/// The inline file that sets `field`.
constexpr InlineFile inlineFileOf(TextField field) {
  return field == &CompileOptions::cluster ? InlineFile::Cluster
                                           : InlineFile::Strategy;
}

/// The rows of CompileOptions.def whose scope is `Session`, in its order,
/// with the inline-file options next to the option they set.
#define LOOM_SESSION_OPTION_Session(NAME, FIELD, PHASE, HELP)                  \
  {NAME, &CompileOptions::FIELD, kindOf(&CompileOptions::FIELD),               \
   OptionPhase::PHASE, HELP},
#define LOOM_SESSION_OPTION_Loomc(NAME, FIELD, PHASE, HELP)
const OptionInfo kOptions[] = {
#define LOOM_OPTION(NAME, FIELD, KIND, VALUE, PHASE, SCOPE, PASSES, HELP)      \
  LOOM_SESSION_OPTION_##SCOPE(NAME, FIELD, PHASE, HELP)
#define LOOM_INLINE_FILE_OPTION(NAME, FIELD, HELP)                             \
  {NAME, inlineFileOf(&CompileOptions::FIELD), LOOM_OPTION_KIND_TEXT,          \
   OptionPhase::Any, HELP},
#include "loom/Driver/CompileOptions.def"
};
#undef LOOM_SESSION_OPTION_Session
#undef LOOM_SESSION_OPTION_Loomc

const OptionInfo *findOption(llvm::StringRef name) {
  for (const OptionInfo &option : kOptions)
    if (name == option.name)
      return &option;
  return nullptr;
}

LoomStatus *unknownOption(const char *name) {
  std::string known;
  for (const OptionInfo &option : kOptions)
    known += (known.empty() ? "" : ", ") + std::string(option.name);
  return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                    llvm::Twine("unknown option '") + (name ? name : "") +
                        "'; expected one of " + known);
}

/// Writes `text` to the session's temporary file for `which` (created on
/// first use) and returns its path.
LoomStatus *writeInlineFile(LoomSession *session, InlineFile which,
                            llvm::StringRef text, std::string &path) {
  std::string &file = which == InlineFile::Cluster ? session->clusterFile
                                                   : session->strategyFile;
  if (file.empty()) {
    llvm::SmallString<128> created;
    const char *prefix =
        which == InlineFile::Cluster ? "loom-cluster" : "loom-strategy";
    if (std::error_code error =
            llvm::sys::fs::createTemporaryFile(prefix, "json", created))
      return makeStatus(LOOM_STATUS_IO_ERROR,
                        "cannot create a temporary file for the inline " +
                            llvm::Twine(prefix + 5) + ": " + error.message());
    file = created.str().str();
  }
  std::error_code error;
  llvm::raw_fd_ostream os(file, error);
  if (!error) {
    os << text;
    os.close();
    error = os.error();
  }
  if (error)
    return makeStatus(LOOM_STATUS_IO_ERROR,
                      "cannot write '" + file + "': " + error.message());
  path = file;
  return nullptr;
}

} // namespace

const char *loomOptionKindGetName(LoomOptionKind kind) {
  switch (kind) {
  case LOOM_OPTION_KIND_TEXT:
    return "text";
  case LOOM_OPTION_KIND_INTEGER:
    return "integer";
  case LOOM_OPTION_KIND_REAL:
    return "real";
  case LOOM_OPTION_KIND_SWITCH:
    return "switch";
  case LOOM_OPTION_KIND_MAX_ENUM:
    break;
  }
  return "unknown";
}

size_t loomOptionGetCount(void) { return std::size(kOptions); }

const char *loomOptionGetName(size_t index) {
  return index < std::size(kOptions) ? kOptions[index].name : nullptr;
}

LoomOptionKind loomOptionGetKind(size_t index) {
  return index < std::size(kOptions) ? kOptions[index].kind
                                     : LOOM_OPTION_KIND_TEXT;
}

const char *loomOptionGetDescription(size_t index) {
  return index < std::size(kOptions) ? kOptions[index].description : nullptr;
}

LoomStatus *loomSessionSetOption(LoomSession *session, const char *name,
                                 const char *value) {
  if (!session || !name || !value)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionSetOption: session, name and value must "
                      "not be NULL");
  const OptionInfo *option = findOption(name);
  if (!option)
    return unknownOption(name);
  CompileOptions &options = session->options;
  llvm::StringRef text(value);
  if (auto *field = std::get_if<TextField>(&option->field)) {
    options.*(*field) = text.str();
  } else if (auto *field = std::get_if<IntegerField>(&option->field)) {
    int64_t number;
    if (text.trim().getAsInteger(10, number))
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        llvm::Twine("option '") + name +
                            "': expected an integer, found '" + text + "'");
    options.*(*field) = number;
  } else if (auto *field = std::get_if<RealField>(&option->field)) {
    double number;
    if (!llvm::to_float(text.trim(), number))
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        llvm::Twine("option '") + name +
                            "': expected a number, found '" + text + "'");
    options.*(*field) = number;
  } else if (auto *field = std::get_if<SwitchField>(&option->field)) {
    if (text != "0" && text != "1" && text != "true" && text != "false")
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        llvm::Twine("option '") + name +
                            "': expected 1 or 0, found '" + text + "'");
    options.*(*field) = text == "1" || text == "true";
  } else {
    InlineFile which = std::get<InlineFile>(option->field);
    // A cluster spec is checked now, so its errors name `cluster-json`
    // rather than the temporary file the driver reads it from.
    if (which == InlineFile::Cluster) {
      dist::ValueOrError<dist::ClusterSpec> spec =
          dist::parseClusterSpec(text, "cluster-json");
      if (!spec)
        return makeStatus(LOOM_STATUS_INVALID_ARGUMENT, spec.error());
    }
    std::string path;
    if (LoomStatus *status = writeInlineFile(session, which, text, path))
      return status;
    if (which == InlineFile::Cluster)
      options.cluster = path;
    else
      options.strategy = path;
  }
  return nullptr;
}

LoomStatus *loomSessionUnsetOption(LoomSession *session, const char *name) {
  if (!session || !name)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionUnsetOption: session and name must not be "
                      "NULL");
  const OptionInfo *option = findOption(name);
  if (!option)
    return unknownOption(name);
  CompileOptions &options = session->options;
  if (auto *field = std::get_if<TextField>(&option->field))
    (options.*(*field)).reset();
  else if (auto *field = std::get_if<IntegerField>(&option->field))
    (options.*(*field)).reset();
  else if (auto *field = std::get_if<RealField>(&option->field))
    (options.*(*field)).reset();
  else if (auto *field = std::get_if<SwitchField>(&option->field))
    options.*(*field) = false;
  else if (std::get<InlineFile>(option->field) == InlineFile::Cluster)
    options.cluster.reset();
  else
    options.strategy.reset();
  return nullptr;
}

void loomSessionResetOptions(LoomSession *session) {
  if (session)
    session->options = CompileOptions();
}

//===----------------------------------------------------------------------===//
// Typed shorthands
//===----------------------------------------------------------------------===//

LoomStatus *loomSessionSetCluster(LoomSession *session,
                                  const char *presetOrFile) {
  return loomSessionSetOption(session, "cluster", presetOrFile);
}

LoomStatus *loomSessionSetDevices(LoomSession *session, int64_t devices) {
  return loomSessionSetOption(session, "devices",
                              std::to_string(devices).c_str());
}

LoomStatus *loomSessionSetMesh(LoomSession *session, const char *mesh) {
  return loomSessionSetOption(session, "mesh", mesh);
}

LoomStatus *loomSessionSetParallelConfig(LoomSession *session,
                                         const char *jsonOrFile) {
  return loomSessionSetOption(session, "parallel-config", jsonOrFile);
}

/// `value` as text that parses back to the same double.
static std::string formatReal(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.17g", value);
  return text;
}

LoomStatus *loomSessionSetMemoryLimit(LoomSession *session, double gib) {
  return loomSessionSetOption(session, "memory-limit", formatReal(gib).c_str());
}

LoomStatus *loomSessionSetPipeline(LoomSession *session, int64_t stages,
                                   int64_t microBatches, const char *schedule) {
  if (LoomStatus *status = loomSessionSetOption(session, "pipeline-stages",
                                                std::to_string(stages).c_str()))
    return status;
  if (LoomStatus *status = loomSessionSetOption(
          session, "micro-batches", std::to_string(microBatches).c_str()))
    return status;
  if (schedule)
    return loomSessionSetOption(session, "schedule", schedule);
  return loomSessionUnsetOption(session, "schedule");
}

LoomStatus *loomSessionSetOptimizer(LoomSession *session, const char *name) {
  return loomSessionSetOption(session, "optimizer", name);
}

LoomStatus *loomSessionSetOptimizerParam(LoomSession *session, const char *name,
                                         double value) {
  // The optimizer's hyperparameters: the real-valued options of the
  // autodiff phase.
  auto isParam = [](const OptionInfo &option) {
    return option.phase == OptionPhase::Autodiff &&
           option.kind == LOOM_OPTION_KIND_REAL;
  };
  const OptionInfo *option = name ? findOption(name) : nullptr;
  if (!option || !isParam(*option)) {
    llvm::SmallVector<llvm::StringRef> params;
    for (const OptionInfo &param : kOptions)
      if (isParam(param))
        params.push_back(param.name);
    std::string expected =
        llvm::join(llvm::ArrayRef(params).drop_back(), ", ") + " or " +
        params.back().str();
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      llvm::Twine("unknown optimizer parameter '") +
                          (name ? name : "") + "'; expected " + expected);
  }
  return loomSessionSetOption(session, name, formatReal(value).c_str());
}
