/*===- main.c - Plan and run a GPT-2 from C -----------------------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The C example of docs/Embedding.md, built against an installed Loom by
 * test/CMakePackage/consumer.test:
 *
 *   1. check that the library is the API version this program was built for;
 *   2. build a small GPT-2 in a session, collecting diagnostics through a
 *      callback;
 *   3. plan it over dp=2 x tp=2 and partition it, then read the plan JSON;
 *   4. run one training step of the partitioned program in the reference
 *      interpreter on 4 simulated ranks, and print the loss.
 *
 * Every call that can fail returns a LoomStatus *: NULL on success, else an
 * error the caller prints and frees.
 */

#include "loom-c/Loom.h"

#include <stdio.h>
#include <string.h>

/* Prints a failed call's status, frees it and says whether it failed. */
static int failed(LoomStatus *status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "%s failed (%s): %s\n", what,
          loomStatusCodeGetName(loomStatusGetCode(status)),
          loomStatusGetMessage(status));
  loomStatusDestroy(status);
  return 1;
}

/* Diagnostics arrive here as they happen; errors also end up in statuses. */
static void onDiagnostic(LoomSeverity severity, const char *location,
                         const char *message, void *userData) {
  (void)userData;
  if (severity == LOOM_SEVERITY_WARNING)
    fprintf(stderr, "warning: %s%s%s\n", location, *location ? ": " : "",
            message);
}

int main(void) {
  enum { kBatch = 4, kSeq = 8, kVocab = 32 };
  LoomSession *session = NULL;
  LoomStringRef plan;
  LoomInterpretOptions options;
  LoomTensorList *results = NULL;
  int64_t ids[kBatch * kSeq], labels[kBatch * kSeq];
  int64_t shape[2] = {kBatch, kSeq};
  LoomTensor inputs[2];
  int i, ok = 0;

  /* 1. The library must speak this header's API (or a newer one). */
  if (loomGetApiVersion() < LOOM_API_VERSION) {
    fprintf(stderr, "libLoomCAPI %s is older than this program's header\n",
            loomGetVersion());
    return 1;
  }
  printf("Loom %s, C API %d\n", loomGetVersion(), loomGetApiVersion());

  /* 2. A session and a model. */
  if (failed(loomSessionCreate(&session), "loomSessionCreate"))
    return 1;
  loomSessionSetDiagnosticCallback(session, onDiagnostic, NULL);
  if (failed(loomSessionLoadModel(session, "gpt2",
                                  "layers=2,hidden=32,heads=4,vocab=32,"
                                  "seq=8,batch=4"),
             "loomSessionLoadModel"))
    goto done;

  /* 3. Data parallel 2 x tensor parallel 2, partitioned per rank. */
  if (failed(loomSessionSetParallelConfig(
                 session, "{\"data_parallel\": 2, \"model_parallel\": 2}"),
             "loomSessionSetParallelConfig") ||
      failed(loomSessionRunTo(session, LOOM_PHASE_PARTITION),
             "loomSessionRunTo") ||
      failed(loomSessionGetPlanJson(session, &plan), "loomSessionGetPlanJson"))
    goto done;
  /* `plan` belongs to the session and lives until its next run. */
  printf("plan: %zu bytes of JSON, all_reduce %s\n", plan.length,
         strstr(plan.data, "all_reduce") ? "present" : "absent");

  /* 4. One step in the interpreter: global inputs in, global results out. */
  for (i = 0; i < kBatch * kSeq; ++i) {
    ids[i] = (i * 7) % kVocab;
    labels[i] = (i * 7 + 1) % kVocab;
  }
  inputs[0].name = "input_ids";
  inputs[1].name = "labels";
  for (i = 0; i < 2; ++i) {
    inputs[i].argIndex = -1;
    inputs[i].dtype = LOOM_DTYPE_I64;
    inputs[i].rank = 2;
    inputs[i].shape = shape;
  }
  inputs[0].data = ids;
  inputs[1].data = labels;
  loomInterpretOptionsInit(&options); /* @train_step, f64, the mesh's ranks */
  if (failed(loomSessionInterpret(session, &options, inputs, 2, &results),
             "loomSessionInterpret"))
    goto done;
  {
    LoomTensorView loss = loomTensorListGet(results, 0);
    printf("%s after one step on 4 simulated ranks: %.6f\n", loss.name,
           *(const double *)loss.data);
  }
  loomTensorListDestroy(results);
  ok = 1;

done:
  loomSessionDestroy(session);
  return ok ? 0 : 1;
}
