/*===- Loom.h - The C API of the Loom compiler --------------------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The C API embeds Loom in a framework: a session loads one model graph (graph
 * JSON, textual IR, or a model builder), takes the options of `loomc`, runs
 * the phases up to a chosen one, and hands back the IR, the plan JSON and the
 * report as strings; it emits per-rank code into a directory and runs an
 * entry function in the reference interpreter on caller buffers.
 * docs/Embedding.md is the manual.
 *
 * Conventions (those of IREE's embedding API and MLIR's C API):
 *   - C99, no C++ types; every handle is opaque.
 *   - A function that can fail returns `LoomStatus *`: NULL is success,
 *     anything else is an error the caller owns and frees with
 *     loomStatusDestroy. Nothing aborts, exits or prints to stderr unless
 *     the caller asked for it (loomSessionSetPrintDiagnostics).
 *   - Strings passed in are copied before the call returns. Strings handed
 *     out as `LoomStringRef` are owned by the session and stay valid until
 *     the next call that loads, runs or emits on the same session, or its
 *     destruction; they are NUL-terminated (the terminator is not counted in
 *     `length`).
 *   - A session is used from one thread at a time; distinct sessions are
 *     independent.
 */

#ifndef LOOM_C_LOOM_H
#define LOOM_C_LOOM_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define LOOM_CAPI_EXPORTED __declspec(dllexport)
#else
#define LOOM_CAPI_EXPORTED __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Versions
 *===----------------------------------------------------------------------===*/

/* The Loom release this header belongs to (the project's CMake version). */
#define LOOM_VERSION_MAJOR 0
#define LOOM_VERSION_MINOR 1
#define LOOM_VERSION_PATCH 0
#define LOOM_VERSION_STRING "0.1.0"

/* The version of this API. It grows by one whenever a declaration is added;
 * existing declarations never change meaning within a major release. A caller
 * built against version N works with a library that reports N or more. */
#define LOOM_API_VERSION 2

/* The release of the loaded library, e.g. "0.1.0" (static storage). */
LOOM_CAPI_EXPORTED const char *loomGetVersion(void);

/* LOOM_API_VERSION of the loaded library; compare it with the header's. */
LOOM_CAPI_EXPORTED int loomGetApiVersion(void);

/*===----------------------------------------------------------------------===*
 * Strings and statuses
 *===----------------------------------------------------------------------===*/

/* A string that is not owned by the holder. `data` is NUL-terminated when it
 * comes from Loom; `length` excludes the terminator. */
typedef struct LoomStringRef {
  const char *data;
  size_t length;
} LoomStringRef;

/* What kind of error a status is. */
typedef enum LoomStatusCode {
  LOOM_STATUS_OK = 0,
  /* A bad argument or option value (unknown option, NULL handle, bad
   * number), or a bad user input: a graph, IR text, a strategy, a cluster
   * spec that does not parse or verify. */
  LOOM_STATUS_INVALID_ARGUMENT = 1,
  /* A call out of order: running before a graph is loaded, asking for a plan
   * before a phase made one. */
  LOOM_STATUS_FAILED_PRECONDITION = 2,
  /* A phase reported errors on a well-formed input (nothing fits the memory
   * limit, a layout that does not divide, ...). */
  LOOM_STATUS_COMPILE_ERROR = 3,
  /* A file or directory could not be read or written, or an emitted program
   * did not build. */
  LOOM_STATUS_IO_ERROR = 4,
  /* Something this build of Loom does not implement yet (a phase, ONNX). */
  LOOM_STATUS_UNIMPLEMENTED = 5,
  /* The reference interpreter refused or failed a run. */
  LOOM_STATUS_RUNTIME_ERROR = 6,
  /* A bug in Loom. */
  LOOM_STATUS_INTERNAL = 7,
  /* Not a value: makes every int one of the type's values, so that an
   * out-of-range value a caller passes is "unknown" rather than undefined
   * behaviour in the C++ library (Vulkan's _MAX_ENUM convention). */
  LOOM_STATUS_MAX_ENUM = 0x7FFFFFFF
} LoomStatusCode;

/* An error: a code and a message. NULL stands for success. */
typedef struct LoomStatus LoomStatus;

/* The code of `status`; LOOM_STATUS_OK for NULL. */
LOOM_CAPI_EXPORTED LoomStatusCode loomStatusGetCode(const LoomStatus *status);

/* The message of `status`: every error diagnostic of the failed call, one a
 * line, each prefixed by its location when it has one ("model.json: ...").
 * "" for NULL. Valid until the status is destroyed. */
LOOM_CAPI_EXPORTED const char *loomStatusGetMessage(const LoomStatus *status);

/* Frees `status`; NULL is allowed. */
LOOM_CAPI_EXPORTED void loomStatusDestroy(LoomStatus *status);

/* The name of `code` ("ok", "invalid-argument", ...), static storage. */
LOOM_CAPI_EXPORTED const char *loomStatusCodeGetName(LoomStatusCode code);

/*===----------------------------------------------------------------------===*
 * Sessions and diagnostics
 *===----------------------------------------------------------------------===*/

/* One compilation: an MLIR context, the loaded graph, the options and the
 * results of the last run. */
typedef struct LoomSession LoomSession;

/* Creates a session with no graph and default options (those of `loomc`
 * without flags). */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionCreate(LoomSession **outSession);

/* Destroys `session` and everything it owns (strings it handed out
 * included); NULL is allowed. */
LOOM_CAPI_EXPORTED void loomSessionDestroy(LoomSession *session);

/* The severity of a diagnostic. */
typedef enum LoomSeverity {
  LOOM_SEVERITY_ERROR = 0,
  LOOM_SEVERITY_WARNING = 1,
  LOOM_SEVERITY_NOTE = 2,
  /* Passes explain their decisions with remarks; they are delivered only
   * with the option `explain` set. */
  LOOM_SEVERITY_REMARK = 3,
  /* Not a value: makes every int one of the type's values, so that an
   * out-of-range value a caller passes is "unknown" rather than undefined
   * behaviour in the C++ library (Vulkan's _MAX_ENUM convention). */
  LOOM_SEVERITY_MAX_ENUM = 0x7FFFFFFF
} LoomSeverity;

/* Receives one diagnostic. `location` is "file:line:col" (or a JSON path,
 * or "" when the diagnostic has no location); `message` is the text without
 * the location. Both strings live only during the call. Notes attached to a
 * diagnostic follow it as calls of their own with LOOM_SEVERITY_NOTE. */
typedef void (*LoomDiagnosticCallback)(LoomSeverity severity,
                                       const char *location,
                                       const char *message, void *userData);

/* Calls `callback` (with `userData`) for every diagnostic of later calls on
 * `session`; NULL removes it. Errors still also go into the returned
 * statuses. */
LOOM_CAPI_EXPORTED void
loomSessionSetDiagnosticCallback(LoomSession *session,
                                 LoomDiagnosticCallback callback,
                                 void *userData);

/* With `enabled` non-zero, diagnostics are also printed to stderr in the
 * `loomc` format. Off by default. */
LOOM_CAPI_EXPORTED void loomSessionSetPrintDiagnostics(LoomSession *session,
                                                       int enabled);

/*===----------------------------------------------------------------------===*
 * Loading a graph
 *===----------------------------------------------------------------------===*/

/* Each load replaces the session's graph and forgets the results of earlier
 * runs; the options stay. `sourceName` names the input in diagnostics
 * (NULL: "<graph>"). */

/* Loads graph JSON (docs/GraphFormat.md) from `text`. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionLoadGraphJson(LoomSession *session,
                                                        LoomStringRef text,
                                                        const char *sourceName);

/* Loads textual IR (`loom` and `dist` dialects) from `text`; a module at any
 * phase (import: @forward; later: @train_step) may be loaded. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionLoadMlir(LoomSession *session,
                                                   LoomStringRef text,
                                                   const char *sourceName);

/* Loads a file by its extension, as `loomc INPUT` does: `.json` (graph
 * JSON) or `.mlir` (textual IR). */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionLoadFile(LoomSession *session,
                                                   const char *path);

/* Builds a model as `loom-model` does. `family` is gpt2, llama, transformer
 * or tfm-lm; `options` is NULL or a comma-separated list of `key=value`
 * with the flag names of `loom-model` without dashes: preset (any case,
 * aliases such as gpt2-xl or 8b), layers, decoder-layers, hidden, heads,
 * kv-heads, ffn, vocab, seq, tgt-seq, batch, rope-theta, norm-eps, dropout,
 * gelu (tanh|none), bias and tie-embeddings (gpt2: true|false),
 * dtype (f32|bf16|f16|f64).
 * Example: "layers=2,hidden=64,heads=4,vocab=128,seq=16,batch=4". */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionLoadModel(LoomSession *session,
                                                    const char *family,
                                                    const char *options);

/*===----------------------------------------------------------------------===*
 * Options
 *===----------------------------------------------------------------------===*/

/* The options a session takes are the `loomc` flags that configure a
 * compilation (DESIGN.md §8), named without dashes, plus `cluster-json` and
 * `strategy-json` (a cluster spec or a strategy file given as JSON text).
 * One table in the library holds them (include/loom/Driver/CompileOptions.def,
 * the table `loomc`'s flags come from); list it with loomOptionGetCount and
 * the getters below, and read docs/Embedding.md for what each does. */

/* How an option's value text is read. */
typedef enum LoomOptionKind {
  /* Any text (`mesh`: "dp=2,tp=4"; `optimizer`: "adamw" or "sgd"). */
  LOOM_OPTION_KIND_TEXT = 0,
  /* A decimal integer (`devices`, `micro-batches`, ...). */
  LOOM_OPTION_KIND_INTEGER = 1,
  /* A number (`lr`, `memory-limit`, ...). */
  LOOM_OPTION_KIND_REAL = 2,
  /* "1"/"true" or "0"/"false" (`explain`). */
  LOOM_OPTION_KIND_SWITCH = 3,
  /* Not a value: makes every int one of the type's values, so that an
   * out-of-range value a caller passes is "unknown" rather than undefined
   * behaviour in the C++ library (Vulkan's _MAX_ENUM convention). */
  LOOM_OPTION_KIND_MAX_ENUM = 0x7FFFFFFF
} LoomOptionKind;

/* The spelling of `kind`: "text", "integer", "real" or "switch" (static
 * storage; "unknown" out of range). */
LOOM_CAPI_EXPORTED const char *loomOptionKindGetName(LoomOptionKind kind);

/* The number of options loomSessionSetOption takes. */
LOOM_CAPI_EXPORTED size_t loomOptionGetCount(void);

/* The name of option `index` (< loomOptionGetCount(); static storage), as
 * loomSessionSetOption takes it; NULL out of range. */
LOOM_CAPI_EXPORTED const char *loomOptionGetName(size_t index);

/* The kind of option `index`; LOOM_OPTION_KIND_TEXT out of range. */
LOOM_CAPI_EXPORTED LoomOptionKind loomOptionGetKind(size_t index);

/* A one-line description of option `index` (its `loomc --help` text;
 * static storage); NULL out of range. */
LOOM_CAPI_EXPORTED const char *loomOptionGetDescription(size_t index);

/* Sets one option by the name of its `loomc` flag without dashes; `value`
 * is the flag's argument as text ("1" / "0" for the switches `explain`).
 * The names are those loomOptionGetName lists (`devices`, `mesh`, ...).
 * An unknown name or a value that is not a number where one is expected is
 * an INVALID_ARGUMENT status at once; whether the options fit together (and
 * whether their phase has landed) is checked by loomSessionRunTo, with the
 * driver's messages, which name the `loomc` flag. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionSetOption(LoomSession *session,
                                                    const char *name,
                                                    const char *value);

/* Forgets the option `name` (back to its default); unknown names fail. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionUnsetOption(LoomSession *session,
                                                      const char *name);

/* Forgets every option. */
LOOM_CAPI_EXPORTED void loomSessionResetOptions(LoomSession *session);

/* Typed shorthands of loomSessionSetOption. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionSetCluster(LoomSession *session,
                                                     const char *presetOrFile);
LOOM_CAPI_EXPORTED LoomStatus *loomSessionSetDevices(LoomSession *session,
                                                     int64_t devices);
LOOM_CAPI_EXPORTED LoomStatus *loomSessionSetMesh(LoomSession *session,
                                                  const char *mesh);
LOOM_CAPI_EXPORTED LoomStatus *
loomSessionSetParallelConfig(LoomSession *session, const char *jsonOrFile);
LOOM_CAPI_EXPORTED LoomStatus *loomSessionSetMemoryLimit(LoomSession *session,
                                                         double gib);
/* `schedule` may be NULL (the driver's default). */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionSetPipeline(LoomSession *session,
                                                      int64_t stages,
                                                      int64_t microBatches,
                                                      const char *schedule);
/* `name` is adamw or sgd. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionSetOptimizer(LoomSession *session,
                                                       const char *name);
/* `name` is a hyperparameter of the optimizer: a real-valued option of the
 * autodiff phase (`lr`, `weight-decay`, ...). */
LOOM_CAPI_EXPORTED LoomStatus *
loomSessionSetOptimizerParam(LoomSession *session, const char *name,
                             double value);

/*===----------------------------------------------------------------------===*
 * Phases and results
 *===----------------------------------------------------------------------===*/

/* The phases in order (DESIGN.md §1); codegen is loomSessionEmit. */
typedef enum LoomPhase {
  LOOM_PHASE_IMPORT = 0,
  LOOM_PHASE_AUTODIFF = 1,
  LOOM_PHASE_SHARDING = 2,
  LOOM_PHASE_PIPELINE = 3,
  LOOM_PHASE_PARTITION = 4,
  /* Not a value: makes every int one of the type's values, so that an
   * out-of-range value a caller passes is "unknown" rather than undefined
   * behaviour in the C++ library (Vulkan's _MAX_ENUM convention). */
  LOOM_PHASE_MAX_ENUM = 0x7FFFFFFF
} LoomPhase;

/* Parses "import", "autodiff", "sharding", "pipeline" or "partition". */
LOOM_CAPI_EXPORTED LoomStatus *loomPhaseParse(const char *name,
                                              LoomPhase *outPhase);

/* The spelling of `phase` (static storage; "unknown" out of range). */
LOOM_CAPI_EXPORTED const char *loomPhaseGetName(LoomPhase phase);

/* Runs every phase up to `phase` on a copy of the loaded graph, as
 * `loomc --compile-to=<phase>` does with the session's options. The
 * result replaces the previous run's (IR, plan JSON, report); on failure
 * there is no result. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionRunTo(LoomSession *session,
                                                LoomPhase phase);

/* The IR of the last run as text, printed as `loomc -o` prints it; the
 * loaded graph when no run has succeeded since the load (a failed run
 * leaves no result). FAILED_PRECONDITION without a graph. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionGetIR(LoomSession *session,
                                                LoomStringRef *outText);

/* The plan JSON (DESIGN.md §8: mesh, strategies, layouts, collectives,
 * predictions) of the last run; a run to `partition` makes one, as does a
 * run to `sharding` with a cluster. FAILED_PRECONDITION otherwise. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionGetPlanJson(LoomSession *session,
                                                      LoomStringRef *outJson);

/* The report of the last run: what `loomc --report` prints (only with a
 * cluster; empty otherwise) followed by the codegen summary after an
 * emit. Never fails; empty before any run. */
LOOM_CAPI_EXPORTED LoomStringRef loomSessionGetReport(LoomSession *session);

/* The last phase the session's result reached (meaningful after a
 * successful loomSessionRunTo). */
LOOM_CAPI_EXPORTED LoomPhase loomSessionGetPhase(LoomSession *session);

/*===----------------------------------------------------------------------===*
 * Code generation
 *===----------------------------------------------------------------------===*/

/* Emits the per-rank program for `target` ("host" or "cuda") into
 * `directory` and builds it, as `loomc --emit <target> -o <directory>`:
 * runs every phase through partition with the session's options, then the
 * codegen phase (sources, CMakeLists.txt, step.mlir, the build and
 * launch.sh; docs/Codegen.md). The run's IR, plan and report become the
 * session's result. */
LOOM_CAPI_EXPORTED LoomStatus *loomSessionEmit(LoomSession *session,
                                               const char *target,
                                               const char *directory);

/*===----------------------------------------------------------------------===*
 * The training executable's options
 *===----------------------------------------------------------------------===*/

/* The flags of an emitted program's training executable (what `launch.sh`
 * takes: data, steps, learning-rate schedule, warmup, min lr, decay steps,
 * gradient accumulation, held-out evaluation, metrics file, pretrained
 * weights, checkpoints; docs/Codegen.md, "The training executable"), read
 * from the table the executable parses with. Names without the dashes
 * (`lr-schedule`); out of range: NULL / 0. */
LOOM_CAPI_EXPORTED size_t loomTrainOptionGetCount(void);
LOOM_CAPI_EXPORTED const char *loomTrainOptionGetName(size_t index);
/* 1 when the flag takes a value, 0 for a switch (`resume`). */
LOOM_CAPI_EXPORTED int loomTrainOptionTakesValue(size_t index);
LOOM_CAPI_EXPORTED const char *loomTrainOptionGetDescription(size_t index);

/* Checks a training command line (`numArgs` arguments after the program
 * name, `--flag value` or `--flag=value`) exactly as the training
 * executable does before it starts: NULL when it would start, else
 * INVALID_ARGUMENT with the executable's message (naming the flag). Only
 * the flags are checked, not the files they name. */
LOOM_CAPI_EXPORTED LoomStatus *loomTrainArgsCheck(const char *const *args,
                                                  size_t numArgs);

/*===----------------------------------------------------------------------===*
 * The reference interpreter
 *===----------------------------------------------------------------------===*/

/* Element types of the interpreter's edges. Floats are computed in the
 * run's precision (F64 or F32); integers as int64; i1 as one byte 0/1. */
typedef enum LoomDType {
  LOOM_DTYPE_F64 = 0,
  LOOM_DTYPE_F32 = 1,
  LOOM_DTYPE_I64 = 2,
  LOOM_DTYPE_I32 = 3,
  LOOM_DTYPE_BOOL = 4,
  /* Not a value: makes every int one of the type's values, so that an
   * out-of-range value a caller passes is "unknown" rather than undefined
   * behaviour in the C++ library (Vulkan's _MAX_ENUM convention). */
  LOOM_DTYPE_MAX_ENUM = 0x7FFFFFFF
} LoomDType;

/* Bytes per element of `dtype` (0 out of range). */
LOOM_CAPI_EXPORTED size_t loomDTypeGetSize(LoomDType dtype);

/* A global tensor passed in: dense, row-major, `data` holds
 * product(shape) elements of `dtype`. It feeds the argument called `name`
 * (the names `loom-run` uses: parameters by their ecosystem names,
 * `input_ids`, `labels`, optimizer states `<param>.exp_avg`, `step`), or
 * when `name` is NULL the argument number `argIndex`. The buffer is read
 * during the call only. */
typedef struct LoomTensor {
  const char *name;
  int64_t argIndex;
  LoomDType dtype;
  int64_t rank;
  const int64_t *shape;
  const void *data;
} LoomTensor;

/* How the interpreter runs. Fill with loomInterpretOptionsInit first so
 * that later fields keep their defaults. */
typedef struct LoomInterpretOptions {
  /* The function to run; NULL: "train_step". */
  const char *entry;
  /* LOOM_DTYPE_F64 (default) or LOOM_DTYPE_F32. */
  LoomDType floatType;
  /* Simulated ranks; 0: the mesh's device count (1 without a mesh). */
  int64_t ranks;
  /* Seeds dropout and the initializers of arguments given no data. */
  uint64_t seed;
} LoomInterpretOptions;

/* Sets `options` to the defaults above. */
LOOM_CAPI_EXPORTED void loomInterpretOptionsInit(LoomInterpretOptions *options);

/* A list of named global tensors owned by Loom (results, or an entry's
 * argument descriptions). */
typedef struct LoomTensorList LoomTensorList;

/* One tensor of a list; every pointer is owned by the list. `data` is NULL
 * in a signature. */
typedef struct LoomTensorView {
  const char *name;
  LoomDType dtype;
  int64_t rank;
  const int64_t *shape;
  const void *data;
  size_t byteSize;
} LoomTensorView;

LOOM_CAPI_EXPORTED size_t loomTensorListGetSize(const LoomTensorList *list);

/* Tensor `index` of `list`; all fields zero when out of range. */
LOOM_CAPI_EXPORTED LoomTensorView
loomTensorListGet(const LoomTensorList *list, size_t index);

/* Frees `list`; NULL is allowed. */
LOOM_CAPI_EXPORTED void loomTensorListDestroy(LoomTensorList *list);

/* Describes the arguments of `entry` (NULL: "train_step") of the session's
 * current module: names, global shapes and the dtypes a run in `floatType`
 * takes (data NULL). The caller destroys the list. */
LOOM_CAPI_EXPORTED LoomStatus *
loomSessionGetEntryArguments(LoomSession *session, const char *entry,
                             LoomDType floatType, LoomTensorList **outList);

/* Runs `options->entry` (`options` NULL: the defaults of
 * loomInterpretOptionsInit) of the session's current module (the result of
 * the last run, e.g. at `partition`, or the loaded module) once in the
 * reference interpreter, as `loom-run FILE --entry NAME` does: the
 * `numInputs` tensors in `inputs` feed their arguments (global shapes; a
 * partitioned program is cut into each rank's blocks), arguments given no
 * data are initialized as `loom-run` initializes them (parameters by their
 * initializers, optimizer states zero; data inputs must be given), and the
 * global results come back in `*outResults` (floats in the run's
 * precision), which the caller destroys. */
LOOM_CAPI_EXPORTED LoomStatus *
loomSessionInterpret(LoomSession *session, const LoomInterpretOptions *options,
                     const LoomTensor *inputs, size_t numInputs,
                     LoomTensorList **outResults);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_C_LOOM_H */
