//===- LoomAttrs.td - loom dialect attributes --------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Attributes of the `loom` dialect: the enums ops take (the GELU form), and
// the function-argument attributes that say which arguments of a model are
// trainable parameters (`#loom.param`, with the parameter's ecosystem name,
// initializer and weight-decay flag) and which are data inputs
// (`#loom.input`, with the input's role). LoomDialect.cpp verifies where the
// argument attributes may appear.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD

include "loom/Dialect/Loom/IR/LoomDialect.td"
include "loom/Dialect/BoolParameter.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Loom_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Loom_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// GELU approximation
//===----------------------------------------------------------------------===//

def Loom_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how loom.gelu evaluates the Gaussian CDF", [
      // PyTorch's approximate='none' (its default): the exact erf form.
      I32EnumAttrCase<"None", 0, "none">,
      // PyTorch's approximate='tanh', GPT-2's `gelu_new`.
      I32EnumAttrCase<"Tanh", 1, "tanh">]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

// Prints as a bare keyword inside an op (`approximate = tanh`).
def Loom_GeluApproximationAttr
    : EnumAttr<Loom_Dialect, Loom_GeluApproximation, "gelu_approximation">;

//===----------------------------------------------------------------------===//
// Parameter initializers
//===----------------------------------------------------------------------===//

def Loom_InitKind : I32EnumAttr<"InitKind", "parameter initializer kind", [
      I32EnumAttrCase<"Normal", 0, "normal">,
      I32EnumAttrCase<"Zeros", 1, "zeros">,
      I32EnumAttrCase<"Ones", 2, "ones">,
      I32EnumAttrCase<"Uniform", 3, "uniform">,
      I32EnumAttrCase<"ScaledNormal", 4, "scaled_normal">]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_InitializerAttr : Loom_Attr<"Initializer", "init"> {
  let summary = "how a parameter's initial value is drawn";
  let description = [{
    The distribution a trainable parameter starts from, written like a call:

    - `normal(std)`: each element from N(0, std^2); `std > 0`.
    - `zeros`, `ones`: constant 0 or 1 (biases, norm weights).
    - `uniform(low, high)`: each element from U[low, high); `low < high`.
    - `scaled_normal(std, factor)`: each element from
      N(0, (std / sqrt(factor))^2); `std > 0`, `factor > 0`. GPT-2 draws
      the weights of the projections that write into the residual stream
      (attention output, MLP down-projection) this way with std = 0.02 and
      factor = 2 * n_layer, because each layer adds two residual branches.
      Keeping `std` and `factor` apart (rather than folding them into one
      std) records the model's hyperparameters as the model code states
      them, so the IR reads like the model it came from.

    Standalone it prints as `#loom<init normal(2.000000e-02)>`; inside
    `#loom.param` only the call form appears.
  }];

  let parameters = (ins
    EnumParameter<Loom_InitKind>:$kind,
    // The call's arguments, as many as the kind takes.
    "DenseF64ArrayAttr":$args);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;

  let extraClassDeclaration = [{
    /// The number of arguments an initializer of `kind` takes.
    static unsigned getNumArgs(InitKind kind);
  }];
}

//===----------------------------------------------------------------------===//
// Argument attributes
//===----------------------------------------------------------------------===//

def Loom_BoolParameter : Loom_BoolParameterOf<"true or false">;

def Loom_ParamAttr : Loom_Attr<"Param", "param"> {
  let summary = "marks a function argument as a trainable parameter";
  let description = [{
    Attached as `loom.param` to a `func.func` argument holding a trainable
    floating-point tensor:

    ```mlir
    func.func @gpt2(
        %wte: tensor<50257x768xf32> {loom.param = #loom.param<
            "transformer.wte.weight", init = normal(2.000000e-02), decay = true>},
        ...)
    ```

    - `name`: the parameter's name in its source ecosystem (the PyTorch
      state-dict key), so checkpoints load and save by name; not empty.
    - `init`: the initializer (`#loom.init`) used when training starts from
      scratch.
    - `decay`: whether the optimizer applies weight decay to it. GPT-2
      recipes decay the weight matrices and embeddings but not biases or
      norm weights; recipes differ, so the flag records the choice per
      parameter.
  }];

  let parameters = (ins
    StringRefParameter<"the parameter's name in its source ecosystem">:$name,
    "InitializerAttr":$init,
    Loom_BoolParameter:$decay);
  let assemblyFormat = [{
    `<` $name `,` `init` `=` $init `,` `decay` `=` $decay `>`
  }];
  let genVerifyDecl = 1;
}

def Loom_InputRole : I32EnumAttr<"InputRole", "role of a data input", [
      // Token ids fed to the (encoder's) embedding.
      I32EnumAttrCase<"InputIds", 0, "input_ids">,
      // Target token ids of the loss.
      I32EnumAttrCase<"Labels", 1, "labels">,
      // Position ids.
      I32EnumAttrCase<"Positions", 2, "positions">,
      // Attention mask: boolean (keep) or additive (float).
      I32EnumAttrCase<"Mask", 3, "mask">,
      // Token ids fed to the decoder of an encoder-decoder model.
      I32EnumAttrCase<"DecoderInputIds", 4, "decoder_input_ids">]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_InputAttr : EnumAttr<Loom_Dialect, Loom_InputRole, "input"> {
  let summary = "marks a function argument as a data input with a role";
  let description = [{
    Attached as `loom.input` to a `func.func` argument that receives a batch
    of data each step: `{loom.input = #loom.input<labels>}`. Roles:
    `input_ids`, `labels`, `positions` and `decoder_input_ids` hold integer
    ids; `mask` holds a boolean or additive floating-point attention mask.
  }];
  let assemblyFormat = "`<` $value `>`";
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD
