//===- DistAttrs.td - dist dialect attributes --------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The layout attribute and the reduction kinds of the `dist` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTATTRS_TD
#define LOOM_DIALECT_DIST_IR_DISTATTRS_TD

include "loom/Dialect/Dist/IR/DistDialect.td"
include "loom/Dialect/BoolParameter.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "how an all_reduce combines the group's values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">
    ]> {
  let cppNamespace = "::mlir::loom::dist";
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

def Dist_LayoutAttr : AttrDef<Dist_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "how a global tensor is spread over a mesh";
  let description = [{
    `#dist.layout<@mesh, [dim axes...], partial = [axes]>` lists, for each
    dim of a tensor, the axes of `@mesh` that split it, major to minor, and
    the axes over which the value is a pending sum. An axis used nowhere is
    replicated; `partial = []` is omitted.

    ```mlir
    // A [batch, seq, hidden] activation: batch split over `dp`, hidden over
    // `tp`, and a pending sum over `x`.
    #dist.layout<@m, [["dp"], [], ["tp"]], partial = ["x"]>
    ```

    On mesh `{dp:2, tp:4}`, device (dp, tp) holds, in a dim split
    `["dp", "tp"]`, block `dp * 4 + tp` of 8. The attribute only names its
    mesh, so checks that need the mesh (axes exist, sizes divide, partial
    axes in mesh order) are made by the ops that carry it.

    Constraints:
    - C1: every axis name is a non-empty string.
    - C2: no axis appears twice (across dims and `partial`).
  }];

  let parameters = (ins
    AttrParameter<"::mlir::FlatSymbolRefAttr", "the mesh">:$mesh,
    AttrParameter<"::mlir::ArrayAttr",
                  "for each dim, an array of axis names">:$dims,
    AttrParameter<"::mlir::ArrayAttr", "the partial axis names">:$partial
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;

  let extraClassDeclaration = [{
    /// The rank of the tensors this layout fits.
    size_t getRank() const { return getDims().size(); }

    /// The axes splitting dim `dim`, major first.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(size_t dim) const;

    /// The axes the value is a pending sum over.
    ::llvm::SmallVector<::llvm::StringRef> getPartialAxes() const;

    /// The layout as the layout library sees it, checked against `mesh`
    /// (which must be the mesh this attribute names).
    ValueOrError<Layout> toLayout(const Mesh &mesh) const;

    /// The attribute for `layout` on the mesh named `mesh`.
    static LayoutAttr get(::mlir::FlatSymbolRefAttr mesh,
                          const Layout &layout);
  }];
}

//===----------------------------------------------------------------------===//
// Strategy
//===----------------------------------------------------------------------===//

def Dist_StrategyAttr : AttrDef<Dist_Dialect, "Strategy"> {
  let mnemonic = "strategy";
  let summary = "how an op's work is split: mesh axes per sharding-rule factor";
  let description = [{
    `#dist.strategy<@mesh, [factor axes...]>` lists, for each factor of the
    op's sharding rule (in the rule's factor order, as
    `-test-print-sharding-rules` prints them: a, b, c, ...), the mesh axes
    that split it, major to minor. An op carries it as its `dist.strategy`
    attribute. One strategy fixes the layout of every operand and result
    (see `deriveOpLayouts` in `loom/Analysis/Strategy/OpLayouts.h`): a dim
    is split by the axes of its factors, major factor first; a result that
    lacks a split reduction factor is a partial sum over its axes.

    ```mlir
    // matmul ([a, b, d], [c, d]) -> ([a, b, c]): batch over dp, the output
    // features over tp (a Megatron column-parallel linear).
    %y = loom.matmul %x, %w {transpose_rhs,
           dist.strategy = #dist.strategy<@m, [["dp"], [], ["tp"], []]>} : ...
    ```

    `partial = [axes]` keeps pending sums: every operand *and* every result
    is a partial sum over those axes (on top of the partial sums of split
    reduction factors), and each device applies the op to its own summand.
    That is exact only for an op linear in all its operands jointly (its
    sharding rule says `linear`: add, sub, neg, scale, reshape, transpose,
    slice, pad, concat, split, reduce_sum, reduce_mean); never for a
    product, and never when an operand is whole (a bias added to each
    summand would be counted once per device). It lets a sum of partial
    values (the input gradient of q, k and v projections split over tp)
    be reduced once instead of operand by operand.

    ```mlir
    // Both addends partial over tp: add the summands, reduce the sum once.
    %s = loom.add %dq, %dk {dist.strategy =
           #dist.strategy<@m, [["dp"], [], []], partial = ["tp"]>} : ...
    ```

    Constraints:
    - C1: every axis name is a non-empty string.
    - C2: no axis appears twice (among the factors and `partial` together).
    Checks that need the op's rule or the mesh (one entry per factor, axes
    exist, splits divide, replication factors unsplit, `partial` only on a
    linear op) are made by `deriveOpLayouts`, in the passes that read the
    strategy.
  }];

  let parameters = (ins
    AttrParameter<"::mlir::FlatSymbolRefAttr", "the mesh">:$mesh,
    AttrParameter<"::mlir::ArrayAttr",
                  "for each factor, an array of axis names">:$factors,
    AttrParameter<"::mlir::ArrayAttr",
                  "axes every operand and result is a pending sum over">:$partial
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;

  let extraClassDeclaration = [{
    /// The number of factors this strategy assigns.
    size_t getNumFactors() const { return getFactors().size(); }

    /// The axes splitting factor `factor`, major first.
    std::vector<std::string> getFactorAxes(size_t factor) const;

    /// Every factor's axes.
    std::vector<std::vector<std::string>> getAllFactorAxes() const;

    /// The axes every operand and result is a pending sum over (empty for
    /// most strategies).
    std::vector<std::string> getPartialAxes() const;

    /// The attribute for `factorAxes` (and `partial`) on the mesh named
    /// `mesh`.
    static StrategyAttr get(::mlir::FlatSymbolRefAttr mesh,
                  const std::vector<std::vector<std::string>> &factorAxes,
                  const std::vector<std::string> &partial = {});
  }];
}

//===----------------------------------------------------------------------===//
// Plan
//===----------------------------------------------------------------------===//

// A double printed exactly (the shortest text that reads back to the same
// bits), so that a plan round-trips through textual IR unchanged.
class Dist_ExactF64Parameter<string desc> : APFloatParameter<desc> {
  let printer = [{ $_printer.printFloat($_self) }];
  let parser = [{ ::mlir::loom::dist::parseExactF64($_parser) }];
}

def Dist_PlanAttr : AttrDef<Dist_Dialect, "Plan"> {
  let mnemonic = "plan";
  let summary = "the strategy search's outer choices and its predictions";
  let description = [{
    `dist-search-strategy` writes its result on the module as `dist.plan`:
    the outer choices the per-op strategies were searched under, and what
    the cost model predicts for the chosen plan.

    ```mlir
    module attributes {dist.plan = #dist.plan<zero = 1, recompute = false,
        step_time_s = 2.5e-01, compute_s = 2.0e-01, comm_s = 5.0e-02,
        bubble_s = 0.0, memory_bytes_per_device = 123456789,
        model_flops_per_step = 1.2e+15>} { ... }
    ```

    - `zero`: the ZeRO stage (0: none; 1: optimizer states sharded over the
      data-parallel axis; 2: the accumulated gradients too; 3: the stored
      parameters too); `dist-insert-reshards` applies it unless the user
      set one.
    - `recompute`: whether every layer's forward is recomputed in the
      backward (`loom-recompute{layers=plan}` applies it).
    - `step_time_s`: the predicted step; without a pipeline
      `compute_s + comm_s`, with one the schedule's simulation.
    - `compute_s`, `comm_s`: compute and communication (of the slowest
      stage with a pipeline); `bubble_s`: the pipeline bubble (0 without).
    - `memory_bytes_per_device`: the predicted peak (the fullest stage's).
    - `model_flops_per_step`: the global FLOPs of every op of the step.

    Constraints:
    - C1: `zero` >= 0 and `memory_bytes_per_device` >= 0.
    - C2: every time and the FLOPs are finite and >= 0.
  }];

  let parameters = (ins
    "int64_t":$zero,
    Loom_BoolParameterOf<"recompute every layer">:$recompute,
    Dist_ExactF64Parameter<"predicted step time (s)">:$step_time_s,
    Dist_ExactF64Parameter<"predicted compute time (s)">:$compute_s,
    Dist_ExactF64Parameter<"predicted communication time (s)">:$comm_s,
    Dist_ExactF64Parameter<"predicted pipeline bubble (s)">:$bubble_s,
    "int64_t":$memory_bytes_per_device,
    Dist_ExactF64Parameter<"global model FLOPs per step">:$model_flops_per_step
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "int64_t":$zero, "bool":$recompute, "double":$stepTime,
                     "double":$compute, "double":$comm, "double":$bubble,
                     "int64_t":$memoryBytes, "double":$modelFlops), [{
      return $_get($_ctxt, zero, recompute, ::llvm::APFloat(stepTime),
                   ::llvm::APFloat(compute), ::llvm::APFloat(comm),
                   ::llvm::APFloat(bubble), memoryBytes,
                   ::llvm::APFloat(modelFlops));
    }]>
  ];
  let extraClassDeclaration = [{
    /// The predictions as doubles (seconds and FLOPs).
    double getStepTime() const { return getStepTimeS().convertToDouble(); }
    double getCompute() const { return getComputeS().convertToDouble(); }
    double getComm() const { return getCommS().convertToDouble(); }
    double getBubble() const { return getBubbleS().convertToDouble(); }
    double getModelFlops() const {
      return getModelFlopsPerStep().convertToDouble();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Pipeline
//===----------------------------------------------------------------------===//

// A list of doubles printed exactly (`[1.5, 2.0E-3]`), held as a dense
// array attribute.
def Dist_ExactF64ListParameter
    : AttrOrTypeParameter<"::mlir::DenseF64ArrayAttr", "a list of doubles"> {
  let printer = [{ ::mlir::loom::dist::printExactF64List($_printer, $_self) }];
  let parser = [{ ::mlir::loom::dist::parseExactF64List($_parser) }];
}

def Dist_PipelinePredictionAttr
    : AttrDef<Dist_Dialect, "PipelinePrediction"> {
  let mnemonic = "pipeline_prediction";
  let summary = "what the search's schedule simulation predicts per stage";
  let description = [{
    The `predicted` field of a searched `#dist.pipeline`:

    ```mlir
    #dist.pipeline_prediction<step_time_s = 0.25, bubble_s = 0.05,
        p2p_s = 1.0e-05, stage_forward_s = [0.01, 0.01],
        stage_backward_s = [0.02, 0.02], stage_memory_bytes = [1000, 900]>
    ```

    - `step_time_s`, `bubble_s`: the simulated step and its bubble;
      `p2p_s`: one activation's point-to-point transfer between stages.
    - `stage_forward_s`, `stage_backward_s`: each stage's forward and
      backward of one micro-batch (under interleaved 1F1B: each chunk's,
      in global chunk order); `stage_memory_bytes`: each stage's
      predicted peak per device.

    Constraints:
    - C1: every time is finite and >= 0, every memory size >= 0.
    - C2: the forward and backward lists have the same length, a multiple
      of the memory list's (one entry per chunk, V per stage).
  }];
  let parameters = (ins
    Dist_ExactF64Parameter<"simulated step time (s)">:$step_time_s,
    Dist_ExactF64Parameter<"pipeline bubble (s)">:$bubble_s,
    Dist_ExactF64Parameter<"one inter-stage transfer (s)">:$p2p_s,
    Dist_ExactF64ListParameter:$stage_forward_s,
    Dist_ExactF64ListParameter:$stage_backward_s,
    "::mlir::DenseI64ArrayAttr":$stage_memory_bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    double getStepTime() const { return getStepTimeS().convertToDouble(); }
    double getBubble() const { return getBubbleS().convertToDouble(); }
    double getP2P() const { return getP2pS().convertToDouble(); }
  }];
}

// A pipeline schedule, printed as a string (`"1f1b"` is no keyword).
def Dist_ScheduleParameter
    : AttrOrTypeParameter<"::loom::pipeline::ScheduleKind",
                          "the pipeline schedule"> {
  let printer = [{ ::mlir::loom::dist::printSchedule($_printer, $_self) }];
  let parser = [{ ::mlir::loom::dist::parseSchedule($_parser) }];
  let defaultValue = "::loom::pipeline::ScheduleKind::OneFOneB";
}

// Half-open layer ranges, printed `[[0, 2], [2, 4]]`.
def Dist_StageLayersParameter
    : OptionalArrayRefParameter<"::mlir::loom::dist::LayerRange",
                                "per stage, its layers [first, end)"> {
  let printer = [{ ::mlir::loom::dist::printStageLayers($_printer, $_self) }];
  let parser = [{ ::mlir::loom::dist::parseStageLayers($_parser) }];
}

def Dist_PipelineAttr : AttrDef<Dist_Dialect, "Pipeline"> {
  let mnemonic = "pipeline";
  let summary = "how the training step is split into pipeline stages";
  let description = [{
    The module attribute `dist.pipeline` (docs/Pipeline.md): which mesh axis
    is the pipeline, how many stages and micro-batches, the schedule, the
    layers of each stage, and, when the search chose the pipeline, its
    prediction.

    ```mlir
    module attributes {dist.pipeline = #dist.pipeline<stages = 2,
        micro_batches = 4, schedule = "1f1b",
        stage_layers = [[0, 2], [2, 4]]>} { ... }
    ```

    - `axis` (default `"pp"`): the mesh axis whose coordinate is the stage.
    - `stages`, `micro_batches` (default 1): counts.
    - `schedule` (default `"1f1b"`): `"1f1b"`, `"gpipe"` or
      `"interleaved-1f1b"`.
    - `virtual_stages` (default 1): chunks per stage under
      `"interleaved-1f1b"` (Megatron's virtual pipeline size); the layers
      are cut into `stages` × `virtual_stages` chunks and chunk c runs on
      stage c mod `stages`.

    Fields at their defaults are not printed.
    - `stage_layers` (may be absent): per chunk (per stage without
      virtual stages), its half-open range `[first, end)` of layer
      ordinals (transformer layers in forward order).
    - `predicted` (may be absent): a `#dist.pipeline_prediction`; a
      hand-given split has none.

    Constraints:
    - C1: `stages` >= 1 and `micro_batches` >= 1; `virtual_stages` >= 1,
      and > 1 exactly under `"interleaved-1f1b"`, which also needs
      `micro_batches` a multiple of `stages`.
    - C2: `stage_layers` is empty or has one range per chunk, each with
      0 <= first < end, in order (a chunk starts at or after the previous
      one's end).
    - C3: `predicted`'s memory list has one entry per stage, its time
      lists one per chunk.
  }];
  let parameters = (ins
    StringRefParameter<"the pipeline's mesh axis", "\"pp\"">:$axis,
    "int64_t":$stages,
    DefaultValuedParameter<"int64_t", "1", "micro-batches per step">:
        $micro_batches,
    Dist_ScheduleParameter:$schedule,
    DefaultValuedParameter<"int64_t", "1", "chunks per stage">:
        $virtual_stages,
    Dist_StageLayersParameter:$stage_layers,
    OptionalParameter<"::mlir::loom::dist::PipelinePredictionAttr",
                      "the search's prediction">:$predicted
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // LOOM_DIALECT_DIST_IR_DISTATTRS_TD
