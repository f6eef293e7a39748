//===- ShardingRule.cpp - Factor-based sharding rules ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interfaces/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;

StringRef mlir::loom::stringifyFactorKind(FactorKind kind) {
  switch (kind) {
  case FactorKind::Parallel:
    return "parallel";
  case FactorKind::Reduction:
    return "reduction";
  case FactorKind::NeedReplication:
    return "need_replication";
  case FactorKind::OpPartitioned:
    return "op_partitioned";
  }
  llvm_unreachable("unknown factor kind");
}

SmallVector<int64_t> OpShardingRule::getFactorsOfKind(FactorKind kind) const {
  SmallVector<int64_t> ids;
  for (auto [id, factor] : llvm::enumerate(factors))
    if (factor.kind == kind)
      ids.push_back(id);
  return ids;
}

SmallVector<int64_t> OpShardingRule::getGlobalIndexedFactors() const {
  SmallVector<int64_t> ids;
  for (auto [id, factor] : llvm::enumerate(factors))
    if (factor.globalIndexed)
      ids.push_back(id);
  return ids;
}

std::string
OpShardingRule::verifyAssignment(ArrayRef<int64_t> blocksPerFactor) const {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (blocksPerFactor.size() != factors.size()) {
    os << "assignment has " << blocksPerFactor.size() << " factors, rule has "
       << factors.size();
    return error;
  }
  for (auto [id, factor] : llvm::enumerate(factors)) {
    int64_t blocks = blocksPerFactor[id];
    if (blocks < 1 || factor.size % blocks != 0) {
      os << "factor " << id << " (size " << factor.size
         << ") cannot be split into " << blocks << " blocks";
      return error;
    }
    if (blocks > 1 && factor.kind == FactorKind::NeedReplication) {
      os << "factor " << id << " may not be split";
      return error;
    }
  }
  // Within each compound dim, a split factor needs every factor major to it
  // split completely.
  auto checkDims = [&](ArrayRef<TensorFactorMapping> mappings) {
    for (const TensorFactorMapping &mapping : mappings) {
      for (ArrayRef<int64_t> dimFactors : mapping) {
        for (auto [i, id] : llvm::enumerate(dimFactors)) {
          if (blocksPerFactor[id] == 1)
            continue;
          for (int64_t major : dimFactors.take_front(i)) {
            if (blocksPerFactor[major] == factors[major].size)
              continue;
            os << "factor " << id << " is split but factor " << major
               << ", major to it in the same dim, is not split completely";
            return false;
          }
        }
      }
    }
    return true;
  };
  if (checkDims(operands))
    checkDims(results);
  return error;
}

/// Checks one group of tensors (operands or results) against their shapes.
static std::string verifyMappings(StringRef what,
                                  ArrayRef<TensorFactorMapping> mappings,
                                  ArrayRef<ArrayRef<int64_t>> shapes,
                                  ArrayRef<ShardingFactor> factors) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (mappings.size() != shapes.size()) {
    os << "rule maps " << mappings.size() << " " << what << "s, op has "
       << shapes.size();
    return error;
  }
  for (auto [index, mapping, shape] : llvm::enumerate(mappings, shapes)) {
    if (mapping.size() != shape.size()) {
      os << what << " #" << index << ": rule maps " << mapping.size()
         << " dims, tensor has rank " << shape.size();
      return error;
    }
    for (auto [dim, dimFactors] : llvm::enumerate(mapping)) {
      int64_t product = 1;
      for (int64_t id : dimFactors) {
        if (id < 0 || id >= static_cast<int64_t>(factors.size())) {
          os << what << " #" << index << " dim " << dim
             << ": unknown factor id " << id;
          return error;
        }
        product *= factors[id].size;
      }
      if (product != shape[dim]) {
        os << what << " #" << index << " dim " << dim << " has size "
           << shape[dim] << " but its factors multiply to " << product;
        return error;
      }
    }
  }
  return error;
}

std::string
OpShardingRule::verify(ArrayRef<ArrayRef<int64_t>> operandShapes,
                       ArrayRef<ArrayRef<int64_t>> resultShapes) const {
  std::string error =
      verifyMappings("operand", operands, operandShapes, factors);
  if (error.empty())
    error = verifyMappings("result", results, resultShapes, factors);
  return error;
}

/// Returns the printed name of factor `id`: a, b, ..., z, a1, b1, ...
static std::string factorName(int64_t id) {
  std::string name(1, static_cast<char>('a' + id % 26));
  if (id >= 26)
    name += std::to_string(id / 26);
  return name;
}

static void printMappings(raw_ostream &os,
                          ArrayRef<TensorFactorMapping> mappings) {
  os << "(";
  llvm::interleaveComma(mappings, os, [&](const TensorFactorMapping &tensor) {
    os << "[";
    llvm::interleaveComma(tensor, os, [&](ArrayRef<int64_t> dimFactors) {
      if (dimFactors.empty()) {
        os << "1";
      } else if (dimFactors.size() == 1) {
        os << factorName(dimFactors.front());
      } else {
        os << "(";
        llvm::interleaveComma(dimFactors, os,
                              [&](int64_t id) { os << factorName(id); });
        os << ")";
      }
    });
    os << "]";
  });
  os << ")";
}

void OpShardingRule::print(raw_ostream &os) const {
  printMappings(os, operands);
  os << " -> ";
  printMappings(os, results);
  os << " {";
  llvm::interleaveComma(llvm::enumerate(factors), os, [&](auto idAndFactor) {
    os << factorName(idAndFactor.index()) << "=" << idAndFactor.value().size;
  });
  os << "}";
  auto printIds = [&](StringRef label, ArrayRef<int64_t> ids) {
    if (ids.empty())
      return;
    os << " " << label << "={";
    llvm::interleaveComma(ids, os, [&](int64_t id) { os << factorName(id); });
    os << "}";
  };
  for (FactorKind kind : {FactorKind::Reduction, FactorKind::NeedReplication,
                          FactorKind::OpPartitioned})
    printIds(stringifyFactorKind(kind), getFactorsOfKind(kind));
  printIds("global", getGlobalIndexedFactors());
  if (linear)
    os << " linear";
}

raw_ostream &mlir::loom::operator<<(raw_ostream &os,
                                    const OpShardingRule &rule) {
  rule.print(os);
  return os;
}

//===----------------------------------------------------------------------===//
// OpShardingRuleBuilder
//===----------------------------------------------------------------------===//

OpShardingRuleBuilder::OpShardingRuleBuilder(ArrayRef<int64_t> operandRanks,
                                             ArrayRef<int64_t> resultRanks) {
  for (int64_t rank : operandRanks)
    rule.operands.emplace_back(rank);
  for (int64_t rank : resultRanks)
    rule.results.emplace_back(rank);
}

static SmallVector<int64_t> getRanks(TypeRange types) {
  return llvm::map_to_vector(types, [](Type type) -> int64_t {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && shaped.hasRank() ? shaped.getRank() : 0;
  });
}

OpShardingRuleBuilder::OpShardingRuleBuilder(TypeRange operandTypes,
                                             TypeRange resultTypes)
    : OpShardingRuleBuilder(getRanks(operandTypes), getRanks(resultTypes)) {}

int64_t OpShardingRuleBuilder::addFactor(ArrayRef<int64_t> operandDims,
                                         ArrayRef<int64_t> resultDims,
                                         int64_t size, FactorKind kind,
                                         bool globalIndexed) {
  int64_t id = rule.factors.size();
  rule.factors.push_back({size, kind, globalIndexed});
  for (auto [mapping, dim] : llvm::zip_equal(rule.operands, operandDims))
    if (dim != kNoDim)
      mapping[dim].push_back(id);
  for (auto [mapping, dim] : llvm::zip_equal(rule.results, resultDims))
    if (dim != kNoDim)
      mapping[dim].push_back(id);
  return id;
}

OpShardingRuleBuilder &
OpShardingRuleBuilder::addPointwise(ArrayRef<ArrayRef<int64_t>> operandShapes,
                                    ArrayRef<int64_t> resultShape,
                                    bool globalIndexed) {
  int64_t rank = resultShape.size();
  for (int64_t dim = 0; dim < rank; ++dim) {
    SmallVector<int64_t> operandDims;
    for (ArrayRef<int64_t> shape : operandShapes) {
      // Align at the last dim; a missing or stretched dim gets no factor.
      int64_t operandDim = dim - (rank - static_cast<int64_t>(shape.size()));
      bool present =
          operandDim >= 0 &&
          (shape[operandDim] == resultShape[dim] || resultShape[dim] == 1);
      operandDims.push_back(present ? operandDim : kNoDim);
    }
    SmallVector<int64_t> resultDims(rule.results.size(), dim);
    addFactor(operandDims, resultDims, resultShape[dim], FactorKind::Parallel,
              globalIndexed);
  }
  return *this;
}
