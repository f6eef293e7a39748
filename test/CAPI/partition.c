/*===- partition.c - Runs to sharding and partition ---------------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * A run to partition on a mesh gives the plan JSON loomc writes with
 * --plan-json (the mesh, and the collectives Megatron tensor parallelism
 * needs), a per-rank IR, and no report without a cluster; a run to sharding
 * with a cluster gives a searched plan and loomc's report, as strings.
 *
 * RUN: %capi_bin/capi-partition %t.plan.json %t.report.txt | FileCheck %s
 * RUN: loom-model gpt2 --layers 1 --hidden 8 --heads 2 --vocab 16 --seq 4 --batch 4 -o %t.model.mlir > /dev/null
 * RUN: loomc %t.model.mlir --compile-to=partition --parallel-config '{"data_parallel": 2, "model_parallel": 2}' --plan-json %t.loomc.json -o /dev/null
 * RUN: diff %t.loomc.json %t.plan.json
 * The report is loomc's, word for word.
 * RUN: loomc %t.model.mlir --compile-to=sharding --cluster host --devices 2 --report -o /dev/null > %t.loomc.report.txt
 * RUN: diff %t.loomc.report.txt %t.report.txt
 */

#include "CAPITest.h"

int main(int argc, char **argv) {
  LoomSession *session = NULL;
  LoomStringRef ir, plan, report;

  CHECK_OK(loomSessionCreate(&session));
  CHECK_OK(loomSessionLoadModel(
      session, "gpt2", "layers=1,hidden=8,heads=2,vocab=16,seq=4,batch=4"));

  /* Megatron over dp=2 x tp=2, as a parallel config. */
  CHECK_OK(loomSessionSetParallelConfig(
      session, "{\"data_parallel\": 2, \"model_parallel\": 2}"));
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_PARTITION));
  CHECK_OK(loomSessionGetPlanJson(session, &plan));
  CHECK_OK(loomSessionGetIR(session, &ir));
  report = loomSessionGetReport(session);
  // Megatron's all_reduce over tp in the forward and backward, and the
  // gradients' over dp, are in the plan's list of collectives (the diff
  // against loomc's --plan-json checks the rest).
  // CHECK: partition: phase partition mesh 1 collectives 1 all_reduce 1 report 0
  printf("partition: phase %s mesh %d collectives %d all_reduce %d "
         "report %d\n",
         loomPhaseGetName(loomSessionGetPhase(session)),
         contains(plan, "\"mesh\""), contains(plan, "\"collectives\""),
         contains(plan, "\"op\": \"dist.all_reduce\""), (int)report.length);
  // CHECK-NEXT: per-rank IR: dist.all_reduce 1 local wte 1
  printf("per-rank IR: dist.all_reduce %d local wte %d\n",
         contains(ir, "dist.all_reduce"), contains(ir, "tensor<8x8xf32>"));
  if (argc > 1)
    writeFile(argv[1], plan);

  /* The strategy search over a cluster preset: a plan and the report. */
  loomSessionResetOptions(session);
  CHECK_OK(loomSessionSetCluster(session, "host"));
  CHECK_OK(loomSessionSetDevices(session, 2));
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_SHARDING));
  CHECK_OK(loomSessionGetPlanJson(session, &plan));
  report = loomSessionGetReport(session);
  // CHECK-NEXT: sharding: predicted 1 report 1
  printf("sharding: predicted %d report %d\n",
         contains(plan, "\"predicted\""), report.length > 0);
  if (argc > 2)
    writeFile(argv[2], report);

  /* As with loomc, options of a phase the run stops before are refused:
   * the session keeps them, so they are unset first. */
  // CHECK-NEXT: stale options: invalid-argument: invalid options for a run to autodiff
  // CHECK-NEXT: --cluster belongs to the sharding phase, which --compile-to=autodiff stops before
  EXPECT_FAILURE("stale options", loomSessionRunTo(session, LOOM_PHASE_AUTODIFF));
  loomSessionResetOptions(session);
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_AUTODIFF));
  /* A run that stops before any plan forgets the last one. */
  // CHECK: autodiff plan: failed-precondition: no plan: run to the partition phase
  EXPECT_FAILURE("autodiff plan", loomSessionGetPlanJson(session, &plan));

  /* A strategy and a cluster spec given as JSON text. */
  CHECK_OK(loomSessionSetOption(
      session, "strategy-json",
      "{\"mesh\": \"dp=2,tp=2\", \"data_parallel_axes\": [\"dp\"], "
      "\"ops\": [{\"match\": \"*.mlp.c_fc.weight\", \"op\": "
      "\"loom.matmul\", \"in\": [[[\"dp\"], [], []], [[\"tp\"], []]]}, "
      "{\"match\": \"*.c_proj.weight\", \"in\": [[[\"dp\"], [], "
      "[\"tp\"]], [[], [\"tp\"]]]}]}"));
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_PARTITION));
  CHECK_OK(loomSessionGetPlanJson(session, &plan));
  // CHECK-NEXT: strategy-json: all_reduce 1
  printf("strategy-json: all_reduce %d\n",
         contains(plan, "\"op\": \"dist.all_reduce\""));
  CHECK_OK(loomSessionSetOption(
      session, "strategy-json",
      "{\"mesh\": \"dp=2\", \"ops\": [{\"match\": \"nothing\", "
      "\"in\": [[[\"dp\"]]]}]}"));
  // CHECK-NEXT: bad strategy: compile-error: the run to partition failed
  // CHECK-NEXT: 'func.func' op strategy ops[0] (`nothing`) matches no op
  EXPECT_FAILURE("bad strategy", loomSessionRunTo(session, LOOM_PHASE_PARTITION));
  loomSessionResetOptions(session);

  CHECK_OK(loomSessionSetOption(
      session, "cluster-json",
      "{\"name\": \"lab\", \"devices_per_node\": 8, \"device\": "
      "{\"name\": \"A100\", \"peak_flops\": {\"f32\": 19.5e12}, "
      "\"memory_bandwidth\": 2.039e12, \"memory_gib\": 80}, "
      "\"intra_node\": {\"bandwidth\": 300e9, \"latency\": 3e-6}, "
      "\"inter_node\": {\"bandwidth\": 25e9, \"latency\": 6e-6}}"));
  CHECK_OK(loomSessionSetDevices(session, 2));
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_SHARDING));
  report = loomSessionGetReport(session);
  // CHECK-NEXT: cluster-json: report names lab 1
  printf("cluster-json: report names lab %d\n", contains(report, "lab"));
  /* A bad spec is refused when it is set, naming the option. */
  // CHECK-NEXT: bad cluster: invalid-argument: cluster-json: /device: required field missing
  EXPECT_FAILURE("bad cluster",
                 loomSessionSetOption(session, "cluster-json",
                                      "{\"name\": \"x\", "
                                      "\"devices_per_node\": 1}"));

  loomSessionDestroy(session);
  // CHECK-NEXT: done
  printf("done\n");
  return 0;
}
