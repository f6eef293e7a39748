/*===- emit.c - Emitting host code into a directory ---------------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * loomSessionEmit is `loomc --emit host -o DIR`: the per-rank sources, the
 * partitioned IR, a built training executable and launch.sh land in the
 * directory, the summary loomc prints becomes the session's report, and an
 * unknown target is a status naming the flag.
 *
 * RUN: rm -rf %t && mkdir -p %t
 * RUN: %capi_bin/capi-emit %t/out | FileCheck %s
 * RUN: test -x %t/out/launch.sh && test -x %t/out/build/train_step && test -f %t/out/step.mlir
 */

#include "CAPITest.h"

int main(int argc, char **argv) {
  LoomSession *session = NULL;
  LoomStringRef report;

  if (argc != 2) {
    printf("usage: capi-emit DIR\n");
    return 1;
  }
  CHECK_OK(loomSessionCreate(&session));
  CHECK_OK(loomSessionLoadModel(
      session, "gpt2", "layers=1,hidden=8,heads=2,vocab=11,seq=4,batch=4"));
  CHECK_OK(loomSessionSetDevices(session, 1));
  CHECK_OK(loomSessionSetOption(session, "emit-dtypes", "f64"));

  // CHECK: target: invalid-argument: invalid options for a run to codegen
  // CHECK-NEXT: --emit: expected host or cuda, found 'tpu'
  EXPECT_FAILURE("target", loomSessionEmit(session, "tpu", argv[1]));

  CHECK_OK(loomSessionEmit(session, "host", argv[1]));
  report = loomSessionGetReport(session);
  // CHECK-NEXT: report: wrote {{.*}}/out/build/train_step (1 rank, mesh
  // CHECK-NEXT: phase partition
  printf("report: %s", report.data);
  printf("phase %s\n", loomPhaseGetName(loomSessionGetPhase(session)));

  loomSessionDestroy(session);
  // CHECK-NEXT: done
  printf("done\n");
  return 0;
}
