//===- Passes.td - loom dialect passes ---------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyImportPass : Pass<"loom-verify-import", "::mlir::ModuleOp"> {
  let summary = "Check the contract every later phase relies on after import";
  let description = [{
    The import phase hands the rest of Loom one function, `@forward`, that
    computes the training loss of a model on one device. This pass checks
    that contract and fails with a diagnostic naming the offending function,
    argument or op:

    1. the module has a `func.func @forward` with a body;
    2. `@forward` returns exactly one value, a rank-0 floating-point tensor
       (the loss);
    3. every argument and every value in `@forward` is a statically shaped
       ranked tensor of a Loom element type (f64, f32, bf16, f16, i64, i32,
       i1);
    4. every op in `@forward` belongs to the `loom`, `arith`, `tensor` or
       `func` dialects.

    It changes nothing; it ends the `loom-import-pipeline`.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the function that computes the loss">,
  ];
}

def ViewFusedProjectionsPass
    : Pass<"loom-view-fused-projections", "::mlir::ModuleOp"> {
  let summary = "Hold a fused projection split into equal parts as a view";
  let description = [{
    A fused projection (nanoGPT's `c_attn`, an imported `q, k, v =
    linear(x, W, b).split(N, dim=-1)`) stores the rows of its parts one
    block after another in a [k * N, K] weight. Splitting every part by
    heads takes k strided pieces of that weight, which a block layout
    cannot describe, so an imported model would get gathers around its
    attention. This pass finds, in the entry function,

      %y = loom.matmul %x, %W {transpose_rhs}   // W a parameter [k*N, K]
      %y' = loom.add %y, %b                     // optional, b a parameter [k*N]
      %p0, ..., %pk-1 = loom.split %y' {axis = last, sizes = [N] * k}

    (W and b used nowhere else, without a `loom.file_shape`) and rewrites
    it into the form `loom-model gpt2` builds (docs/Models.md, "Fused QKV
    projection"): W becomes the row-major view [k, 1.., N, K] and b
    [k, 1.., N] (the same elements in the same order), each with
    `loom.file_shape` set to its old shape, so parameter names, file
    layout and checkpoints are unchanged; the product is
    [k, batch.., M, N] and a split of dim 0 gives the parts, viewed back
    as the old pieces (a reshape that consumed a piece now consumes the
    view directly). Anything else is left as it is. It runs first in
    `loom-import-pipeline`, so every frontend gets it.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the function that computes the loss">,
  ];
}

def MixedPrecisionPass : Pass<"loom-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Cast @forward to a mixed-precision policy (fp32 master weights)";
  let description = [{
    Rewrites the loss function `@forward` so that it computes in a low
    element type where `torch.autocast` does and in f32 where autocast
    keeps f32, with the parameters left f32 (master weights). It runs
    before `loom-autodiff`: the backward then follows through the casts'
    VJPs (a cast's gradient is the gradient cast back), so the parameters'
    gradients reach the optimizer in f32 and the optimizer stays f32.

    `precision` is `f32` (the default: the pass changes nothing),
    `bf16-mixed` (low type bf16) or `fp16-mixed` (low type f16; loss
    scaling is not built yet).

    1. every float argument of `@forward` must be f32 (the master type);
    2. walk `@forward` in order; each op's kind has one rule in the policy
       table (`lookupPrecisionRule`, lib/Dialect/Loom/Transforms/
       MixedPrecision.cpp; docs/MixedPrecision.md lists it):
       - `low` (matmul, attention, embedding): f32 float operands are cast
         to the low type;
       - `f32` (layer_norm, rms_norm, softmax, log_softmax, cross_entropy,
         reduce_sum, reduce_mean, exp, log, rsqrt): low-type operands are
         cast to f32;
       - `follow` (elementwise arithmetic and activations, dropout, rope,
         reduce_max, shape ops): if any float operand has the low type,
         the f32 ones are cast to it (the low type wins, so a bias or a
         position table meets its activation in the low type, as inside
         autocast's `linear`); otherwise nothing changes;
       - `as-written` (cast, arith.constant): unchanged;
       - backward and optimizer ops are an error: they belong to the
         training step that `loom-autodiff` builds afterwards;
       an op with no rule is an error naming it;
    3. each cast is built once per (value, type), right before the first
       op that needs it, and reused by every later one (a tied embedding
       table is cast once for the lookup and the head);
    4. after its operands change, an op's result types are inferred again
       (InferTypeOpInterface; a reshape keeps its shape and takes its
       operand's element type);
    5. a returned value whose type changed is cast back to the function's
       result type, so the signature of `@forward` is unchanged.

    A remark on `@forward` counts the casts and the ops in each type.
    Numerics of the low type (both runtimes): an op whose result is bf16 or
    f16 computes as the f32 op does and rounds each result element to the
    low type, to nearest, ties to even. See docs/MixedPrecision.md.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the function that computes the loss">,
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "Precision policy: f32 (no change), bf16-mixed or fp16-mixed">,
  ];
}

def WidenParamGradsPass : Pass<"loom-widen-param-grads", "::mlir::ModuleOp"> {
  let summary = "Compute a mixed-precision step's parameter gradients in f32";
  let description = [{
    Megatron's f32 gradient accumulation for a step that loom-autodiff
    built from a mixed-precision `@forward` (`--grad-reduce-dtype f32`,
    the default): each parameter's gradient used to be summed in the low
    type and cast back to f32 by the VJP of the cast that narrowed the
    parameter; the pass rebuilds what that cast widens so that no sum is
    rounded to the low type:

    1. a gradient cast is a `loom.cast` low -> f32 sharing its `loom.fwd`
       with a forward cast f32 -> low of a `#loom.param` argument;
    2. the value it widens is rebuilt: a `matmul` becomes the same product
       of its operands cast to f32 (exact, so it is the GEMM of low-type
       operands with an f32 result; the cost model prices it at the low
       type's rate); `add`,
       `reduce_sum`, `reshape` and `embedding_grad` are rebuilt on their
       widened operands in f32; any other value is widened by a cast
       (exact);
    3. the cast's users read the rebuilt value; the rounded chain is erased.

    The partial sums a data-parallel (or ZeRO, or pipelined) plan leaves on
    each rank are then f32 and are reduced in f32, so the partitioned step
    computes the single-device step's gradients up to the order of f32
    additions. See docs/MixedPrecision.md.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Name of the training step">,
  ];
}

def AutodiffPass : Pass<"loom-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build @train_step: forward, reverse-mode backward, update";
  let description = [{
    Turns the loss function `@forward` (kept unchanged, for evaluation and
    finite differences) into a whole training step:
    ```
    @train_step(params..., states..., step, batch...)
        -> (loss, new params..., new states..., step + 1)
    ```
    1. clone `@forward`'s body onto the step's arguments, tagging every
       cloned op with `loom.fwd = <index of the op in @forward>`;
    2. run reverse mode over the straight-line clone, seeding the loss with
       1, calling each op's `DifferentiableOpInterface` VJP and summing the
       gradients of values used several times (tied weights, residuals);
       every op a VJP builds carries its forward op's `loom.fwd`;
    3. optionally clip all gradients together by their global L2 norm as
       `torch.nn.utils.clip_grad_norm_`;
    4. update each parameter with `loom.adamw_update` (weight decay only
       where its `#loom.param` sets `decay`) or `loom.sgd_update`, tagged
       with the `loom.fwd` of the first forward op that uses the parameter;
    5. remove dead ops.
    The step processes the whole batch as one micro-batch;
    `loom-slice-micro-batches` splits it into several.
    Names: parameters keep `#loom.param`; states are `loom.name`d
    `<param>.exp_avg`, `<param>.exp_avg_sq` (AdamW) or
    `<param>.momentum_buffer` (SGD with momentum); the step counter is a
    rank-0 i64 named `step`; results carry `loom.name` result attributes.
    With `loss-scale` (fp16-mixed), the backward is seeded with the rank-0
    `loss_scale` argument, the gradients are multiplied by its reciprocal
    before clipping, and a step whose unscaled gradients hold an inf or NaN
    keeps every parameter, state and the step counter
    (`loom.nonfinite_count`, `loom.select`); `loom.update_loss_scale`
    returns the next `loss_scale` and `loss_scale.growth_tracker`, and the
    count as `found_inf`.
    See docs/Autodiff.md.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the function that computes the loss">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "Optimizer: adamw, sgd, or none (return the gradients as "
           "<param>.grad instead of updating)">,
    Option<"lr", "lr", "::mlir::loom::ExactDouble", /*default=*/"1.0e-3", "Learning rate">,
    Option<"beta1", "beta1", "::mlir::loom::ExactDouble", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "::mlir::loom::ExactDouble", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "::mlir::loom::ExactDouble", /*default=*/"1.0e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "::mlir::loom::ExactDouble", /*default=*/"-1.0",
           "Weight decay, applied to parameters whose #loom.param sets "
           "decay; -1 (the default) is the optimizer's torch.optim default "
           "(adamw 0.01, sgd 0)">,
    Option<"momentum", "momentum", "::mlir::loom::ExactDouble", /*default=*/"0.0",
           "SGD momentum (0: no momentum buffer)">,
    Option<"clipNorm", "clip-norm", "::mlir::loom::ExactDouble", /*default=*/"0.0",
           "Clip the global L2 norm of the gradients to this (0: off)">,
    Option<"returnGradNorm", "grad-norm", "bool", /*default=*/"false",
           "Return the global L2 norm of the gradients as `grad_norm` "
           "(always with clipping)">,
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"\"none\"",
           "Loss scaling as torch.cuda.amp.GradScaler (fp16-mixed): none, "
           "dynamic (init 2^16, x2 after 2000 clean steps, x0.5 and a "
           "skipped update on a non-finite gradient) or a fixed scale N "
           "(skips, never changes); docs/MixedPrecision.md">,
  ];
}

def InterleaveCopiesPass
    : Pass<"loom-interleave-copies", "::mlir::ModuleOp"> {
  let summary = "Split the transformer layers' batch into interleaved copies";
  let description = [{
    Fine-grained multi-copy interleave (MindFormers' `fine_grain_interleave`,
    docs/Partitioning.md "Multi-copy interleave"): the batch entering the
    transformer layers is split into `copies` copies along dim 0 and the
    layers' ops are cloned per copy, interleaved in program order (copy 0's
    op i, copy 1's op i, ..., then op i + 1), so that one copy's tensor-
    and sequence-parallel collectives have the other copies' compute to
    overlap with. It runs on `@forward` before `loom-autodiff`: reverse mode
    then interleaves the backward the same way, and a parameter read by
    every copy gets the sum of the copies' gradients, so the step is
    unchanged (up to the order of additions).

    1. the batch is dim 0 of the `loom.input` arguments (`input_ids` first);
       a value depends on the batch when a `loom.input` argument holding
       the batch in dim 0 reaches it (a [S, S] mask is shared by the
       copies);
    2. walk the ops in order: one that reads a `#loom.param` argument named
       with a numeric component (`transformer.h.3.attn.c_attn.weight`) is a
       layer op; one that reads any other parameter is not; one that reads
       none is what the op before it was (loom-recompute's rule). Each
       maximal run of layer ops is a *stack*;
    3. per stack: every value it reads from before it that depends on the
       batch is split into copies of the rows c, c + N, c + 2N, ... (a
       reshape [B, ...] -> [B/N, N, ...], a split of dim 1, a reshape back):
       strided rows, so that a batch split over data-parallel ranks splits
       each rank's rows into local copies and no row moves between ranks;
    4. clone the stack's ops in order, each op that reads a per-copy value
       once per copy (tagged `loom.copy = c`, result types re-derived from
       the copy's), the others (casts of parameters, constants) once;
    5. every per-copy value used after the stack is joined back into the
       whole batch (reshape to [B/N, 1, ...], concat on dim 1, reshape to
       [B, ...]), and the stack's old ops are erased.
    The copies stay split from the first layer to the last: consecutive
    layers hand each other copies, with no join and split in between.

    Fails unless `copies` divides the rows one rank holds of one
    micro-batch, B / `batch-shards` (the driver passes micro-batches times
    data-parallel ranks), when the model has no layer, and when a value the
    layers read depends on the batch without holding it in dim 0. `copies`
    = 1 changes nothing. Dropout inside a layer draws each copy's mask from
    the copy's own element indices, as micro-batches do.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the function that computes the loss">,
    Option<"copies", "copies", "int64_t", /*default=*/"1",
           "Copies of the batch interleaved through the layers "
           "(fine_grain_interleave)">,
    Option<"batchShards", "batch-shards", "int64_t", /*default=*/"1",
           "Pieces the batch is cut into before one rank runs one of them "
           "(micro-batches x data-parallel ranks): copies must divide a "
           "piece's rows">,
  ];
}

def SliceMicroBatchesPass
    : Pass<"loom-slice-micro-batches", "::mlir::ModuleOp"> {
  let summary = "Split @train_step into micro-batches (gradient accumulation)";
  let description = [{
    Turns the one-micro-batch `@train_step` that `loom-autodiff` builds into
    the step of `micro-batches` micro-batches, computing the same update
    (up to rounding): the autodiff phase runs it when the user fixes the
    count, `dist-search-strategy` when a pipelined plan chooses one.
    1. find the step's three parts: the forward (the ops up to the loss's),
       the tail (from the last op that defines a part of a parameter's
       gradient on: the sums of each parameter's parts, the clipping, the
       optimizer updates, `step + 1`) and the backward between them. Each
       parameter's gradient is found from the tail (the `grad` operand of
       its update, or its `<param>.grad` result, under the clipping's
       factor) as the sum of as many parts as reverse mode gives it;
    2. slice every batch argument (those after `step`) along dim 0 into
       equal micro-batches, tagged with the `loom.fwd` of the first forward
       op that reads it;
    3. when the loss is a mean `loom.cross_entropy` of a batch argument's
       labels, count the labelled positions of the whole batch
       (`loom.label_count` per micro-batch, summed) and normalize every
       micro-batch's summed loss by that count (Megatron's per-token loss),
       so that the step equals the whole batch's whatever labels are
       ignored; other losses are averaged over the micro-batches;
    4. per micro-batch, clone the forward onto the slices and re-derive its
       result types, then rebuild the backward by reverse mode from the
       ops' VJPs (which build shapes and constants from the micro-batch's
       types), seeded with `1 / count` or `1 / micro-batches`; each
       parameter's gradient parts accumulate across the micro-batches. The
       forward ops are tagged `loom.micro_batch = m`, the backward ops also
       `loom.backward` (the pipeline's scheduling units);
    5. the loss of the step: the micro-batches' losses summed and
       normalized;
    6. clone the tail onto the accumulated parts and the new loss, erase
       the one-micro-batch step's ops, and remove dead ops.
    Fails unless every batch argument splits evenly; `micro-batches` equal
    to the step's count leaves it as it is, and a step split already into
    another count is an error. See docs/Autodiff.md.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Split the batch along dim 0 into this many micro-batches">,
  ];
}

def VerifyTrainStepPass : Pass<"loom-verify-train-step", "::mlir::ModuleOp"> {
  let summary = "Check the contract of @train_step after autodiff";
  let description = [{
    Ends the `loom-autodiff-pipeline`. Fails with a diagnostic unless:
    1. the module has a `func.func @train_step` with a body;
    2. its first result is a rank-0 float named `loss` and its last a rank-0
       i64 named `step`, and every result has a `loom.name`;
    3. every argument is a `#loom.param`, a `#loom.input` or has a
       `loom.name`, exactly one is the rank-0 i64 `step`;
    4. every other result names an argument of the same type (the updated
       parameter or optimizer state), or is `<param>.grad` (`optimizer=none`);
    5. every `loom` op in the body carries an integer `loom.fwd` (the
       forward op it belongs to), and every op is `loom`, `arith` or `func`.
    It changes nothing.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
}

def RecomputePass : Pass<"loom-recompute", "::mlir::ModuleOp"> {
  let summary = "Recompute chosen transformer layers' activations in backward";
  let description = [{
    Full per-layer activation recomputation on `@train_step` (Megatron's
    `--recompute-granularity full`): a chosen layer keeps only its inputs
    (the residual stream entering it, and whatever else it reads from
    outside) alive across the forward, and its forward runs again right
    before its backward.

    1. the forward ops are the ancestors of the returned `loss`; a maximal
       run of them in program order is one micro-batch's forward;
    2. a forward op that reads a `#loom.param` argument named with a
       numeric component (`transformer.h.3.ln_1.weight`,
       `model.layers.3.mlp.up_proj.weight`, `base1.encoder.blocks.3...`)
       starts or continues layer `<prefix through the number>`; one that
       reads any other parameter ends the layer; an op that reads none
       belongs to the layer it follows;
    3. for each chosen layer of each micro-batch: its *internal* values are
       those only its own forward ops read in the forward; clone all of its
       ops, in order, right before the first non-forward op that reads an
       internal value, point every non-forward use of an internal value at
       the clone, and erase clones nothing uses. Values the layer hands to
       later forward ops (its output, the next layer's input) stay as they
       are, so they are kept, not recomputed.

    Clones keep every attribute (`loom.fwd`, a dropout's `seed`, which
    redraws the same mask: dropout is a counter-based function of the seed
    and the element's global index) and get a `loom.recompute` unit
    attribute. The step computes bit for bit what it computed before; only
    which values are live, and when, changes (`-test-print-memory`,
    `loom-run --report-memory`). See docs/Recompute.md.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Name of the training step function">,
    Option<"layers", "layers", "std::string", /*default=*/"\"all\"",
           "Layers to recompute: all, none, plan (what the strategy "
           "search chose in the module's `dist.plan`; none without one), or "
           "a comma list of layer indices (the number in the parameter "
           "names)">,
  ];
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
