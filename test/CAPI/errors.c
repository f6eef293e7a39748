/*===- errors.c - Bad input: statuses and diagnostics -------------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Bad graphs, bad IR, options that do not fit together, phases that have
 * not landed and compile errors each come back as a status with loomc's
 * message; the diagnostic callback sees every error with its location, the
 * process neither aborts nor prints, and the session stays usable.
 *
 * RUN: %capi_bin/capi-errors 2> %t.stderr | FileCheck %s
 * RUN: count 0 < %t.stderr
 */

#include "CAPITest.h"

static int errorsSeen = 0;

/* Prints every diagnostic so that FileCheck sees what the caller got. */
static void onDiagnostic(LoomSeverity severity, const char *location,
                         const char *message, void *userData) {
  const char *names[] = {"error", "warning", "note", "remark"};
  int *count = (int *)userData;
  if (severity == LOOM_SEVERITY_ERROR)
    ++*count;
  printf("callback %s at '%s': %s\n", names[severity], location, message);
}

int main(void) {
  LoomSession *session = NULL;
  const char *badJson = "{\"format\": \"loom-graph\", \"version\": 1, "
                        "\"tensors\": [{\"name\": \"x\", \"shape\": [2], "
                        "\"dtype\": \"f17\"}], \"parameters\": [], "
                        "\"inputs\": [], \"ops\": [], \"outputs\": [\"x\"]}";
  const char *badMlir = "func.func @forward(%x: tensor<2xf32>) -> "
                        "tensor<f32> {\n  %y = loom.matmul %x, %x\n}\n";
  const char *badName = "func.func @\"f\\FF\"() {\n  return\n}\n";
  LoomStringRef text;

  CHECK_OK(loomSessionCreate(&session));
  loomSessionSetDiagnosticCallback(session, onDiagnostic, &errorsSeen);

  /* Graph JSON naming the JSON path and what was found. */
  text.data = badJson;
  text.length = strlen(badJson);
  // CHECK: callback error at '': bad.json: tensors[0].dtype: expected a dtype (f64, f32, bf16, f16, i64, i32 or i1), found "f17"
  // CHECK-NEXT: json: invalid-argument: cannot load 'bad.json'
  // CHECK-NEXT: bad.json: tensors[0].dtype: expected a dtype (f64, f32, bf16, f16, i64, i32 or i1), found "f17"
  EXPECT_FAILURE("json", loomSessionLoadGraphJson(session, text, "bad.json"));

  /* IR text: the location is the source name, line and column. */
  text.data = badMlir;
  text.length = strlen(badMlir);
  // CHECK-NEXT: callback error at 'bad.mlir:2:26': expected ':'
  // CHECK-NEXT: mlir: invalid-argument: cannot load 'bad.mlir'
  // CHECK-NEXT: bad.mlir:2:26: expected ':'
  EXPECT_FAILURE("mlir", loomSessionLoadMlir(session, text, "bad.mlir"));

  /* A name that is not UTF-8 (an escaped byte): refused before parsing, so
   * that it never reaches a JSON writer or a caller that decodes messages
   * as UTF-8 (Python). */
  text.data = badName;
  text.length = strlen(badName);
  // CHECK-NEXT: callback error at 'name.mlir:1:12': string literal is not UTF-8: byte 0xFF at byte 1 of its value
  // CHECK-NEXT: utf8: invalid-argument: cannot load 'name.mlir'
  // CHECK-NEXT: name.mlir:1:12: string literal is not UTF-8: byte 0xFF at byte 1 of its value
  EXPECT_FAILURE("utf8", loomSessionLoadMlir(session, text, "name.mlir"));

  /* A file that is not there. */
  // CHECK-NEXT: callback error at '': input: cannot read `/nonexistent/graph.json`: No such file or directory
  // CHECK-NEXT: file: io-error: cannot load '/nonexistent/graph.json'
  // CHECK-NEXT: input: cannot read `/nonexistent/graph.json`: No such file or directory
  EXPECT_FAILURE("file", loomSessionLoadFile(session, "/nonexistent/graph.json"));

  CHECK_OK(loomSessionLoadModel(
      session, "gpt2", "layers=1,hidden=8,heads=2,vocab=11,seq=4,batch=4"));

  /* Options the driver refuses, by their loomc flags. */
  CHECK_OK(loomSessionSetMemoryLimit(session, 8));
  CHECK_OK(loomSessionSetDevices(session, 2));
  // CHECK: callback error at '': --memory-limit applies to the strategy search: give --cluster
  // CHECK: limit: invalid-argument: invalid options for a run to partition
  // CHECK-NEXT: --memory-limit applies to the strategy search: give --cluster
  EXPECT_FAILURE("limit", loomSessionRunTo(session, LOOM_PHASE_PARTITION));
  loomSessionResetOptions(session);

  /* Options of a phase after the one the run stops at, by their flags. */
  CHECK_OK(loomSessionSetPipeline(session, 2, 4, "1f1b"));
  CHECK_OK(loomSessionSetDevices(session, 2));
  // CHECK: pipeline: invalid-argument: invalid options for a run to pipeline
  // CHECK-NEXT: --devices belongs to the partition phase, which --compile-to=pipeline stops before
  EXPECT_FAILURE("pipeline", loomSessionRunTo(session, LOOM_PHASE_PIPELINE));
  loomSessionResetOptions(session);

  /* An input format Loom does not read. */
  // CHECK: ext: io-error: cannot load 'model.txt'
  // CHECK-NEXT: input 'model.txt': unsupported extension '.txt', expected .json (graph JSON), .onnx (ONNX) or .mlir (textual IR)
  EXPECT_FAILURE("ext", loomSessionLoadFile(session, "model.txt"));
  CHECK_OK(loomSessionLoadModel(
      session, "gpt2", "layers=1,hidden=8,heads=2,vocab=11,seq=4,batch=4"));

  /* A compile error: 3 devices of data parallelism for a batch of 4. */
  CHECK_OK(loomSessionSetDevices(session, 3));
  // CHECK: devices: compile-error: the run to partition failed
  // CHECK-NEXT: 'func.func' op argument {{[0-9]+}} (`input_ids`): mesh axis `dp` (size 3) does not divide dim 0 (size 4)
  EXPECT_FAILURE("devices", loomSessionRunTo(session, LOOM_PHASE_PARTITION));
  loomSessionResetOptions(session);

  /* The session still works; the callback saw each error once (json,
   * mlir, utf8, file, limit, pipeline, onnx, devices). */
  CHECK_OK(loomSessionSetDevices(session, 2));
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_PARTITION));
  // CHECK: recovered: partition, errors seen by the callback: 8
  printf("recovered: %s, errors seen by the callback: %d\n",
         loomPhaseGetName(loomSessionGetPhase(session)), errorsSeen);

  /* Remarks (the passes' explanations) reach the callback only with
   * `explain`, as loomc shows them only under --explain. */
  loomSessionResetOptions(session);
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_AUTODIFF));
  // CHECK-NOT: callback remark
  // CHECK: quiet autodiff
  printf("quiet autodiff\n");
  CHECK_OK(loomSessionSetOption(session, "explain", "1"));
  // CHECK-NEXT: callback remark at '{{.*}}': built @train_step from @forward: 16 parameters
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_AUTODIFF));

  loomSessionDestroy(session);
  // CHECK-NEXT: done
  printf("done\n");
  return 0;
}
