//===- Passes.td - dist dialect passes ---------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The sharding phase (strategy search) and the partition phase: layout
// assignment, redistribution, SPMD partitioning.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SearchStrategyPass : Pass<"dist-search-strategy", "::mlir::ModuleOp"> {
  let summary = "Choose every forward op's strategy, the mesh, ZeRO and "
                "recompute by dynamic programming over a cluster cost model";
  let description = [{
    The sharding phase's search. For each candidate mesh (every `dp x tp`
    factorization of `devices`, `tp` minor so it maps inside a node; only
    the given mesh when the module, `mesh`, the parallel config or the
    strategy file fixes one), builds a cost graph of the entry function
    (nodes: forward ops carrying their backward and optimizer followers;
    candidates: mesh axes per sharding-rule factor, keeping what the user
    fixed; edges: tensors priced by redistribution forward and backward),
    solves it by graph elimination under the memory limit for each outer
    choice (ZeRO stage 0, 1 or 2, recompute off/all layers), and keeps the
    cheapest plan. Writes the mesh (`dist.mesh`), each forward op's
    `dist.strategy`, and the module attribute `dist.plan`, a `#dist.plan`
    with the outer choices (zero, recompute) and the predictions
    (step_time_s, compute_s, comm_s, bubble_s, memory_bytes_per_device,
    model_flops_per_step). With pipelining
    (`pipeline-stages`), the outer loop also runs over pp x dp x tp and
    micro-batch counts; a stage-assignment DP splits the layers into
    stages under the memory limit and a plan with S > 1 stages writes the
    module attribute `dist.pipeline` (docs/Pipeline.md). When that plan
    chose another micro-batch count than the one-micro-batch `@train_step`
    `loom-autodiff` built, the step as it was before the search is split by
    `loom-slice-micro-batches` and searched again under the chosen stages
    and count (not under `fit-liveness`, whose trials measured the step as
    it is); a step split already is priced with its own count.
    `dist-insert-reshards` then keeps those strategies and makes followers
    follow.
    See docs/Search.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Function to search (falls back to `forward` when absent)">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Cluster preset (dgx-a100-80g, dgx-h100, p3-v100, host) or spec "
           "file (JSON)">,
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "Number of devices (needed unless a mesh is given)">,
    Option<"meshSpec", "mesh", "std::string", /*default=*/"\"\"",
           "Search only this mesh, e.g. `dp=2,tp=4`">,
    Option<"memoryLimitGiB", "memory-limit", "::mlir::loom::ExactDouble", /*default=*/"0",
           "Memory limit per device in GiB (0: the device's capacity)">,
    Option<"parallelConfig", "parallel-config", "std::string",
           /*default=*/"\"\"",
           "MindSpore-style parallel config (inline JSON or a file): its "
           "splits are fixed, the search fills in the rest">,
    Option<"strategyFile", "strategy", "std::string", /*default=*/"\"\"",
           "Strategy file (JSON) whose splits are fixed">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per searched op (chosen strategy, its cost, the "
           "runner-up's) and per mesh">,
    Option<"pipelineStages", "pipeline-stages", "int64_t", /*default=*/"1",
           "Pipeline stages: 0 lets the search choose (divisors of the "
           "devices, at least one layer per stage; what loomc passes unless "
           "a flag or the parallel config constrains the stages or the "
           "mesh), 1 (the pass's default) turns pipelining off, S > 1 fixes S "
           "(the mesh searched is then the intra-stage mesh over "
           "devices / S)">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"0",
           "Micro-batches per step under a pipeline: 0 lets the search "
           "choose (the divisors up to 256 of the per-replica batch)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "Pipeline schedule the search prices: 1f1b, gpipe or "
           "interleaved-1f1b">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"1",
           "Chunks per stage under interleaved 1F1B (1: none; 0: the search "
           "chooses among the counts that divide the layers, 1 included)">,
    Option<"splitStep", "split-step", "bool", /*default=*/"true",
           "When a pipelined plan chose another micro-batch count than the "
           "step has, split the step into it and search it again (false: "
           "keep the plan as the first search priced it, a micro-batch as "
           "1/M of the batch; for pricing many plans fast, as "
           "test/python/hand_configs.py does)">,
    Option<"handConfigs", "hand-configs", "bool", /*default=*/"false",
           "Also price a Megatron-style grid of hand configs (t in {1, 2, 4, "
           "8} inside a node, p stages, d replicas, one sample per "
           "micro-batch) by the same search and record the closest in "
           "`dist.hand_config` (loomc sets it under --report)">,
    Option<"fitLiveness", "fit-liveness", "bool", /*default=*/"false",
           "Check the plan by the liveness of the per-rank program it "
           "yields (the partition pipeline run on a copy) and search again "
           "under a scaled limit while it does not fit, a few rounds at "
           "most; records the rounds in `dist.memory_fit` (a pipelined plan "
           "is taken as the model prices it)">,
  ];
}

def InsertReshardsPass : Pass<"dist-insert-reshards", "::mlir::ModuleOp"> {
  let summary = "Give every value a layout and insert dist.reshard where "
                "a producer's layout differs from what a consumer needs";
  let description = [{
    Layout assignment for the global training step. Inputs: `dist.strategy`
    attributes on ops, `dist.annotate` ops, `dist.layout` argument
    attributes, and (through options) a strategy file and a parallel
    config, which are expanded into the former first. Ops left unset follow
    their producers (data parallel on the batch, from the inputs). See
    docs/Partitioning.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Function to partition (falls back to `forward` when absent)">,
    Option<"meshSpec", "mesh", "std::string", /*default=*/"\"\"",
           "Mesh to create when the module has none, e.g. `dp=2,tp=2`">,
    Option<"strategyFile", "strategy", "std::string", /*default=*/"\"\"",
           "Strategy file (JSON) with per-op splits">,
    Option<"parallelConfig", "parallel-config", "std::string",
           /*default=*/"\"\"",
           "MindSpore-style parallel config: inline JSON or a file path">,
    Option<"planJson", "plan-json", "std::string", /*default=*/"\"\"",
           "Write the plan (mesh, strategies, layouts, reshards) as JSON "
           "to this file ('-' for stdout)">,
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "The device count the mesh, times the pipeline stages of "
           "`dist.pipeline`, must have (0: not checked)">,
    Option<"reuseChoices", "reuse-choices", "bool", /*default=*/"true",
           "Reuse a strategy choice for every later op with the same "
           "context (the micro-batch copies of a split step); off only to "
           "check that reuse changes nothing">,
    Option<"gatherPerLayer", "gather-per-layer", "bool", /*default=*/"true",
           "Under ZeRO-3, gather each parameter before its layer's forward "
           "and again before its backward, per micro-batch, one layer "
           "ahead; off gathers every parameter once at "
           "the step's start (only to measure what per-layer gathers save)">,
  ];
  let statistics = [
    Statistic<"numReusedChoices", "reused-choices",
              "Strategy choices reused for an op of the same context">,
  ];
}

def LowerReshardsPass : Pass<"dist-lower-reshards", "::mlir::ModuleOp"> {
  let summary = "Replace each dist.reshard by the cheapest chain of "
                "collectives";
  let description = [{
    Each `dist.reshard %g from L1 to L2` becomes a cast of the global value
    to its local type under L1 (`builtin.unrealized_conversion_cast`), the
    chain of collectives the redistribution planner finds, and a cast back.
    `dist-partition-spmd` folds the casts. See docs/Redistribution.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per reshard with its chain and cost">,
  ];
}

def PartitionSPMDPass : Pass<"dist-partition-spmd", "::mlir::ModuleOp"> {
  let summary = "Rewrite the global program into the per-rank program";
  let description = [{
    Turns every global tensor type into the local type its layout gives,
    folds the casts `dist-lower-reshards` left, passes rank-dependent block
    offsets to ops whose computation depends on them (through
    `dist.axis_index`), and expands op-partitioned factors
    (vocab-parallel embedding and cross-entropy, heads-split attention).
    See docs/Partitioning.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect",
                           "::mlir::arith::ArithDialect"];
}

def VerifyShardingPass : Pass<"dist-verify-sharding", "::mlir::ModuleOp"> {
  let summary = "Check the contract of a searched (sharded) module";
  let description = [{
    Ends the sharding phase: the module has exactly one `dist.mesh` and the
    search's `#dist.plan` (choices and predictions); the entry
    function's forward ops (the first op of each `loom.fwd` id) that have a
    sharding rule carry a `dist.strategy` on that mesh whose factor axes are
    valid for the rule. Reports every violation before failing. Changes
    nothing.
  }];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Function to check (falls back to `forward` when absent)">,
  ];
}

def VerifyPartitionedPass : Pass<"dist-verify-partitioned",
                                 "::mlir::ModuleOp"> {
  let summary = "Check the contract of a partitioned module";
  let description = [{
    Ends the partition phase: no `dist.reshard`, `dist.annotate` or casts
    are left, every value is a local tensor, and every collective's shapes
    agree with its mesh. Changes nothing.
  }];
}

def DeriveEvalStepPass : Pass<"dist-derive-eval-step", "::mlir::ModuleOp"> {
  let summary = "Derive the forward-only evaluation step from the partitioned "
                "training step";
  let description = [{
    Adds `@eval_step` next to the partitioned `@train_step`: the same
    arguments, one result (the `loss`, with its attributes), and only the
    ops the loss depends on, so the forward of every micro-batch with its
    collectives and pipeline transfers, in the training step's order and
    layouts, and no backward, no update and no dropout (a forward dropout
    passes its input through, as `model.eval()` does). A kept receive keeps
    the send it pairs with (the same axis, stages and tag, in program order).
    Does nothing when the module has no training step or the step returns
    no `loss`; says so with a remark when a receive cannot be paired. Runs
    in the codegen phase, so that the emitted program carries both entries
    (docs/Codegen.md, "Evaluation").
  }];
  let options = [
    Option<"trainEntry", "train-entry", "std::string",
           /*default=*/"\"train_step\"", "The partitioned training step">,
    Option<"evalEntry", "eval-entry", "std::string",
           /*default=*/"\"eval_step\"", "The function to add">,
  ];
}

def BucketGradientReductionsPass
    : Pass<"dist-bucket-gradient-reductions", "::mlir::ModuleOp"> {
  let summary = "Group data-parallel gradient reductions into buckets a "
                "target can overlap with the backward";
  let description = [{
    PyTorch DDP's buckets as an IR decision (docs/Codegen.md, "Overlap"):
    the gradient `dist.all_reduce`s (sums read only by optimizer updates)
    of each function are taken in the order the backward produces them
    (reverse parameter order) and cut into buckets of at most
    `bucket-cap-mb` MiB (a gradient larger than the cap is a bucket of its
    own), one axis list and stage per bucket. Each bucket's reductions are
    moved to stand together right after its last gradient and marked
    `dist.bucket = b`; the first op that reads one of their results gets b
    in `dist.wait_buckets`. The host emitter starts a bucket's reductions
    without blocking where they stand and waits for them before that op;
    targets that ignore the marks run them blocking. Results are unchanged
    (nothing is reordered across a use). A cap of 0 leaves the module
    unchanged. The contract is checked by `dist-verify-partitioned`.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"bucketCapMB", "bucket-cap-mb", "double", /*default=*/"25.0",
           "Bytes of gradients per bucket, in MiB (DDP's bucket_cap_mb); "
           "0 turns bucketing off">,
  ];
}

def AssignStagesPass : Pass<"dist-assign-stages", "::mlir::ModuleOp"> {
  let summary = "Assign every op of the training step to a pipeline stage";
  let description = [{
    The pipeline phase. Stages are contiguous ranges of transformer layers;
    a layer is what `loom-recompute` calls one (the ops reading parameters
    named `<key>.<index>.*`, and the ops between them). Every forward op
    gets the stage of its layer, the ops before the first layer (embedding)
    stage 0 and the ops after a layer that read no layer parameter (final
    norm, head, loss) the stage of the layer before them; backward,
    accumulation and update ops follow the forward op of their `loom.fwd`
    id. Writes `dist.stage` on those ops and the module attribute
    `dist.pipeline`. The ranges come from `stage-layers` (layers per stage),
    else from a `dist.pipeline` the search wrote, else an even split (the
    first `layers mod stages` stages take one layer more). No-op for one
    stage. See docs/Pipeline.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Function to assign">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Pipeline stages (0: the module's `dist.pipeline`, else none)">,
    Option<"stageLayers", "stage-layers", "std::string", /*default=*/"\"\"",
           "Layers per stage, e.g. `3,3,2` (default: an even split)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "gpipe, 1f1b or interleaved-1f1b (default: the module's, else "
           "1f1b; interleaved-1f1b when virtual-stages > 1)">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"0",
           "Chunks of layers per stage under interleaved-1f1b (0: the "
           "module's, else 1)">,
  ];
}

def VerifyPipelinePass : Pass<"dist-verify-pipeline", "::mlir::ModuleOp"> {
  let summary = "Check the contract of the pipeline phase";
  let description = [{
    Ends the pipeline phase (after `dist-assign-stages`). Without a pipeline
    (no `dist.pipeline`, or one stage) no op carries a `dist.stage`. With S
    stages: `dist.pipeline` is well formed (stages, micro-batches, schedule,
    one layer range per stage); every op of the entry function that has
    operands and a `loom.fwd` id carries a `dist.stage` in [0, S); all ops
    of one id (its forward, backward and update ops, in every micro-batch)
    share one stage; and stages never fall along the forward (ids number
    the forward ops in order), so activations flow only to later stages and
    gradients only to earlier ones. Reports every violation before failing.
    Changes nothing.
  }];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Function to check">,
  ];
}

def PartitionStagesPass : Pass<"dist-partition-stages", "::mlir::ModuleOp"> {
  let summary = "Split the per-rank training step into pipeline stages";
  let description = [{
    Ends the partition phase of a pipelined module (`dist.pipeline`): adds
    the pipeline axis to the mesh as its major axis, gives every op left
    without a `dist.stage` the stage of its producers (else its users),
    makes each parameter's and state's updating stage its owner, sends
    every value (and owned argument) a stage reads from another stage with
    a uniquely tagged `dist.send`/`dist.recv` pair, marks each result with
    the stage that computes it, and orders each stage's ops by its
    schedule's units (GPipe or 1F1B over `loom.micro_batch` /
    `loom.backward`). The result is the contract of docs/Pipeline.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Function to split">,
  ];
}

def ExportPlanPass : Pass<"dist-export-plan", "::mlir::ModuleOp"> {
  let summary = "Write the plan as JSON and print its report";
  let description = [{
    Writes what the sharding and partition phases decided, changing
    nothing: the plan JSON (mesh, strategies, layouts, collectives with
    their bytes, predictions; docs/Search.md) to `plan-json`, and with
    `report` the readable report of the searched plan to stdout (or the
    stream an embedder passes). It reads a module whose reshards are
    lowered; with `lower-copy`, a searched module not yet partitioned, it
    inserts and lowers the reshards on a copy first so that the collectives
    show.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Cluster preset or spec file the report prices with (needed by "
           "`report`)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the plan report">,
    Option<"planJson", "plan-json", "std::string", /*default=*/"\"\"",
           "Write the plan JSON to this file">,
    Option<"lowerCopy", "lower-copy", "bool", /*default=*/"false",
           "Insert and lower the reshards on a copy first">,
    Option<"strategyFile", "strategy", "std::string", /*default=*/"\"\"",
           "Strategy file of the layout assignment on the copy">,
    Option<"parallelConfig", "parallel-config", "std::string",
           /*default=*/"\"\"",
           "Parallel config of the layout assignment on the copy">,
  ];
}

def ReportMemoryPass : Pass<"dist-report-memory", "::mlir::ModuleOp"> {
  let summary = "Print the peak live bytes of the per-rank program";
  let description = [{
    Prints, for each pipeline stage of a partitioned module, the peak live
    bytes of the per-rank program by category (docs/CostModel.md,
    "Memory"), and the search's memory fitting (`dist.memory_fit`) when it
    ran. Changes nothing.
  }];
}

def WriteTimelinePass : Pass<"dist-write-timeline", "::mlir::ModuleOp"> {
  let summary = "Write the predicted schedule of a pipelined step";
  let description = [{
    Writes the Chrome/Perfetto trace of the pipelined module's predicted
    schedule (docs/Pipeline.md, "Predicted timeline") to `file`. Fails on a
    module without `dist.pipeline`. Changes nothing.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"host\"",
           "Cluster preset or spec file the timeline prices with">,
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "The trace file">,
  ];
}

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PASSES_TD
