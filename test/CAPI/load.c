/*===- load.c - Loading JSON, IR text, files, models --------------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Every way into a session gives the module loomc would: a graph JSON file
 * and the same JSON as text import to the same IR, that IR loaded back as
 * text prints the same, a model builder names its parameters as loom-model
 * does, and a run to autodiff honours the optimizer options.
 *
 * RUN: %capi_bin/capi-load %S/../Target/GraphJSON/Inputs/tiny.json | FileCheck %s
 * RUN: loom-model gpt2 --layers 1 --hidden 8 --heads 2 --vocab 11 --seq 4 --batch 4 -o %t.model.mlir > /dev/null
 * RUN: loomc %t.model.mlir > %t.loomc.mlir
 * RUN: %capi_bin/capi-load %S/../Target/GraphJSON/Inputs/tiny.json %t.capi.mlir
 * RUN: diff %t.loomc.mlir %t.capi.mlir
 */

#include "CAPITest.h"

int main(int argc, char **argv) {
  LoomSession *session = NULL;
  LoomStringRef ir;
  char *fromFile, *json, *copy;
  size_t length;

  if (argc < 2) {
    printf("usage: capi-load GRAPH.json [MODEL-IR-OUT]\n");
    return 1;
  }
  CHECK_OK(loomSessionCreate(&session));

  /* A file by its extension, as `loomc GRAPH.json`. */
  CHECK_OK(loomSessionLoadFile(session, argv[1]));
  CHECK_OK(loomSessionGetIR(session, &ir));
  fromFile = (char *)malloc(ir.length + 1);
  memcpy(fromFile, ir.data, ir.length + 1);
  // CHECK: file: func.func @forward 1
  printf("file: %s %d\n",
         contains(ir, "func.func @forward") ? "func.func @forward" : "?",
         contains(ir, "loom.layer_norm"));

  /* The same JSON as text. */
  json = readFile(argv[1], &length);
  {
    LoomStringRef text = {json, length};
    CHECK_OK(loomSessionLoadGraphJson(session, text, argv[1]));
  }
  CHECK_OK(loomSessionGetIR(session, &ir));
  // CHECK-NEXT: json text: same IR 1
  printf("json text: same IR %d\n", strcmp(ir.data, fromFile) == 0);

  /* The IR back as text; the session's string dies with the next load, so
   * it is copied first. */
  copy = (char *)malloc(ir.length + 1);
  memcpy(copy, ir.data, ir.length + 1);
  {
    LoomStringRef text = {copy, strlen(copy)};
    CHECK_OK(loomSessionLoadMlir(session, text, "tiny.mlir"));
  }
  CHECK_OK(loomSessionGetIR(session, &ir));
  // CHECK-NEXT: mlir text: same IR 1
  printf("mlir text: same IR %d\n", strcmp(ir.data, fromFile) == 0);

  /* A model builder, named as loom-model names parameters. */
  CHECK_OK(loomSessionLoadModel(
      session, "gpt2", "layers=1,hidden=8,heads=2,vocab=11,seq=4,batch=4"));
  CHECK_OK(loomSessionGetIR(session, &ir));
  // CHECK-NEXT: model: wte 1 lm_head tied 1
  printf("model: wte %d lm_head tied %d\n",
         contains(ir, "transformer.wte.weight"),
         !contains(ir, "lm_head.weight"));
  if (argc > 2) {
    /* With an output path: the import phase's IR, which lit compares with
     * `loomc` on loom-model's output of the same model. */
    CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_IMPORT));
    CHECK_OK(loomSessionGetIR(session, &ir));
    writeFile(argv[2], ir);
  }

  /* Autodiff with the optimizer options. */
  CHECK_OK(loomSessionSetOptimizer(session, "sgd"));
  CHECK_OK(loomSessionSetOptimizerParam(session, "momentum", 0.9));
  CHECK_OK(loomSessionSetOptimizerParam(session, "lr", 0.1));
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_AUTODIFF));
  CHECK_OK(loomSessionGetIR(session, &ir));
  // CHECK-NEXT: autodiff: train_step 1 sgd 1 momentum 1 phase autodiff
  printf("autodiff: train_step %d sgd %d momentum %d phase %s\n",
         contains(ir, "func.func @train_step"), contains(ir, "loom.sgd_update"),
         contains(ir, "momentum_buffer"),
         loomPhaseGetName(loomSessionGetPhase(session)));

  /* A model option the family does not read. */
  // CHECK-NEXT: model option: invalid-argument: model option 'kv-heads' does not apply to gpt2
  EXPECT_FAILURE("model option",
                 loomSessionLoadModel(session, "gpt2", "kv-heads=2"));
  // CHECK-NEXT: family: invalid-argument: unknown model family 'bert'; expected gpt2, llama, transformer or tfm-lm
  EXPECT_FAILURE("family", loomSessionLoadModel(session, "bert", NULL));
  // CHECK-NEXT: size: invalid-argument: model option 'layers': expected an integer, found 'two'
  EXPECT_FAILURE("size", loomSessionLoadModel(session, "llama", "layers=two"));
  /* A failed load leaves no graph behind. */
  // CHECK-NEXT: after: failed-precondition: no graph is loaded
  EXPECT_FAILURE("after", loomSessionRunTo(session, LOOM_PHASE_IMPORT));

  free(fromFile);
  free(json);
  free(copy);
  loomSessionDestroy(session);
  // CHECK-NEXT: done
  printf("done\n");
  return 0;
}
