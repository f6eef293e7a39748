/*===- lifecycle.c - Versions, sessions, statuses, options --------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The parts of the C API that need no graph: the library's versions equal
 * the header's, sessions are created and destroyed, NULL is success and
 * everywhere allowed where the header says so, options are checked by name
 * and type, and calls out of order are precondition failures, not crashes.
 *
 * RUN: %capi_bin/capi-lifecycle 2> %t.stderr | FileCheck %s
 * Nothing goes to stderr unless asked.
 * RUN: count 0 < %t.stderr
 */

#include "CAPITest.h"

int main(void) {
  LoomSession *session = NULL;
  LoomPhase phase;

  // CHECK: version 0.1.0 api 2 matches 1
  printf("version %s api %d matches %d\n", loomGetVersion(),
         loomGetApiVersion(),
         strcmp(loomGetVersion(), LOOM_VERSION_STRING) == 0 &&
             loomGetApiVersion() == LOOM_API_VERSION);

  // CHECK-NEXT: null status: ok ''
  printf("null status: %s '%s'\n",
         loomStatusCodeGetName(loomStatusGetCode(NULL)),
         loomStatusGetMessage(NULL));
  loomStatusDestroy(NULL);
  loomSessionDestroy(NULL);

  CHECK_OK(loomSessionCreate(&session));

  // CHECK-NEXT: create: invalid-argument: loomSessionCreate: outSession must not be NULL
  EXPECT_FAILURE("create", loomSessionCreate(NULL));

  /* The option list (the library's table) names every option a session
   * takes, with its kind and description; past its end there is none. */
  {
    size_t count = loomOptionGetCount();
    int allTaken = count > 0;
    for (size_t i = 0; i < count; ++i) {
      const char *name = loomOptionGetName(i);
      LoomStatus *status = loomSessionUnsetOption(session, name);
      allTaken &= status == NULL && loomOptionGetDescription(i) != NULL;
      loomStatusDestroy(status);
      if (!strcmp(name, "cluster-json") || !strcmp(name, "devices") ||
          !strcmp(name, "clip-norm") || !strcmp(name, "explain"))
        printf("option %s: %s\n", name,
               loomOptionKindGetName(loomOptionGetKind(i)));
    }
    // CHECK-NEXT: option cluster-json: text
    // CHECK-NEXT: option devices: integer
    // CHECK-NEXT: option clip-norm: real
    // CHECK-NEXT: option explain: switch
    // CHECK-NEXT: every listed option is taken: 1; past the end: null
    printf("every listed option is taken: %d; past the end: %s\n", allTaken,
           loomOptionGetName(count) ? "a name" : "null");
    // CHECK-NEXT: kind 7: unknown
    printf("kind 7: %s\n", loomOptionKindGetName((LoomOptionKind)7));
  }

  /* Options by name; the type is checked at once. */
  CHECK_OK(loomSessionSetOption(session, "devices", "4"));
  CHECK_OK(loomSessionSetMesh(session, "dp=2,tp=2"));
  CHECK_OK(loomSessionSetOptimizer(session, "sgd"));
  CHECK_OK(loomSessionSetOptimizerParam(session, "lr", 0.5));
  CHECK_OK(loomSessionSetOption(session, "explain", "1"));
  CHECK_OK(loomSessionUnsetOption(session, "mesh"));
  // CHECK-NEXT: unknown: invalid-argument: unknown option 'mesh-shape'; expected one of cluster, cluster-json, devices, mesh,
  EXPECT_FAILURE("unknown", loomSessionSetOption(session, "mesh-shape", "x"));
  // CHECK-NEXT: integer: invalid-argument: option 'devices': expected an integer, found 'four'
  EXPECT_FAILURE("integer", loomSessionSetOption(session, "devices", "four"));
  // CHECK-NEXT: real: invalid-argument: option 'lr': expected a number, found '1e-3x'
  EXPECT_FAILURE("real", loomSessionSetOption(session, "lr", "1e-3x"));
  // CHECK-NEXT: switch: invalid-argument: option 'explain': expected 1 or 0, found 'yes'
  EXPECT_FAILURE("switch", loomSessionSetOption(session, "explain", "yes"));
  // CHECK-NEXT: param: invalid-argument: unknown optimizer parameter 'mesh'; expected lr, weight-decay,
  EXPECT_FAILURE("param", loomSessionSetOptimizerParam(session, "mesh", 1.0));
  loomSessionResetOptions(session);

  /* Out of order: no graph yet. */
  // CHECK-NEXT: run: failed-precondition: no graph is loaded: call loomSessionLoadGraphJson,
  EXPECT_FAILURE("run", loomSessionRunTo(session, LOOM_PHASE_AUTODIFF));
  {
    LoomStringRef text;
    // CHECK-NEXT: ir: failed-precondition: no IR: load a graph first
    EXPECT_FAILURE("ir", loomSessionGetIR(session, &text));
    // CHECK-NEXT: plan: failed-precondition: no plan: run to the partition phase
    EXPECT_FAILURE("plan", loomSessionGetPlanJson(session, &text));
    text = loomSessionGetReport(session);
    // CHECK-NEXT: report: 0 ''
    printf("report: %d '%s'\n", (int)text.length, text.data);
  }
  // CHECK-NEXT: range: invalid-argument: loomSessionRunTo: phase 9 is out of range
  EXPECT_FAILURE("range", loomSessionRunTo(session, (LoomPhase)9));

  /* Phases by name. */
  CHECK_OK(loomPhaseParse("partition", &phase));
  // CHECK-NEXT: phase 4 partition sharding unknown
  printf("phase %d %s %s %s\n", (int)phase, loomPhaseGetName(phase),
         loomPhaseGetName(LOOM_PHASE_SHARDING), loomPhaseGetName((LoomPhase)7));
  // CHECK-NEXT: parse: invalid-argument: unknown phase 'codegen'; expected import, autodiff, sharding, pipeline or partition (code generation is loomSessionEmit)
  EXPECT_FAILURE("parse", loomPhaseParse("codegen", &phase));

  // CHECK-NEXT: sizes 8 4 8 4 1
  printf("sizes %d %d %d %d %d\n", (int)loomDTypeGetSize(LOOM_DTYPE_F64),
         (int)loomDTypeGetSize(LOOM_DTYPE_F32),
         (int)loomDTypeGetSize(LOOM_DTYPE_I64),
         (int)loomDTypeGetSize(LOOM_DTYPE_I32),
         (int)loomDTypeGetSize(LOOM_DTYPE_BOOL));

  /* The training executable's flags, from its own table and parser. */
  {
    size_t count = loomTrainOptionGetCount();
    for (size_t i = 0; i < count; ++i) {
      const char *name = loomTrainOptionGetName(i);
      if (!strcmp(name, "lr-schedule") || !strcmp(name, "init-from") ||
          !strcmp(name, "resume"))
        printf("train option %s: %s\n", name,
               loomTrainOptionTakesValue(i) ? "value" : "switch");
    }
    // CHECK-NEXT: train option resume: switch
    // CHECK-NEXT: train option lr-schedule: value
    // CHECK-NEXT: train option init-from: value
    // CHECK-NEXT: past the end: null
    printf("past the end: %s\n",
           loomTrainOptionGetName(count) ? "a name" : "null");
    const char *good[] = {"--data", "t.bin", "--steps", "10",
                          "--lr-schedule", "cosine", "--warmup-steps=2",
                          "--min-lr", "1e-4", "--grad-accum", "2",
                          "--eval-data", "v.bin", "--eval-every", "5",
                          "--metrics", "m.jsonl", "--init-from",
                          "w.safetensors", "--init-format", "hf"};
    CHECK_OK(loomTrainArgsCheck(good, sizeof(good) / sizeof(good[0])));
    const char *bad[] = {"--data", "t.bin", "--steps", "10", "--min-lr",
                         "0.1"};
    // CHECK-NEXT: train: invalid-argument: --min-lr applies to --lr-schedule cosine or linear, not constant
    EXPECT_FAILURE("train", loomTrainArgsCheck(bad, 6));
    // CHECK-NEXT: train null: invalid-argument: loomTrainArgsCheck: `args` is NULL
    EXPECT_FAILURE("train null", loomTrainArgsCheck(NULL, 2));
  }

  loomSessionDestroy(session);
  // CHECK-NEXT: done
  printf("done\n");
  return 0;
}
