#pragma once
// compiler.activations: vmem (docs/config.md): which operator outputs the lowering keeps in
// vector memory, and where (isa/lower/README.md, "Activations kept in vmem").

#include <cstdint>
#include <deque>
#include <set>
#include <vector>

#include "isa/lower/lower.h"

namespace tpusim::isa::lower_detail {

// compiler.activations: vmem. The outputs of operators that only later operators read (role
// activation, stored without a halo, neither a reshape alias nor aliased, not read by an
// element-wise gather, which is slower through vmem ports than through HBM) are placed, first fit
// over their live ranges (from the operator that writes one to the last that reads it), in the
// top half of vector memory, counted down from its top; one that does not fit stays in HBM.
// Tensors in `evicted` stay in HBM (an operator did not fit beside them, see lower()). Sets, per
// operator, the bytes at the top that slots live while it runs hold (its neighbours may run
// beside it: their slots count too); the operator plans its buffers below them. Reusing a slot
// is safe under operator overlap: the overlap check sees vmem as it sees HBM (overlap.cpp).
struct KeptActivations {
  std::vector<std::uint64_t> above;  // per operator
  struct Range {
    workloads::TensorId tensor;
    std::size_t first_op, last_op;  // the operators whose buffers must stay below it
  };
  std::vector<Range> ranges;
};

KeptActivations keep_activations_in_vmem(const workloads::Graph& graph,
                                         const std::vector<workloads::TensorId>& result,
                                         const std::vector<bool>& fused,
                                         const std::vector<std::vector<std::size_t>>& readers,
                                         const std::set<workloads::TensorId>& evicted,
                                         std::deque<TensorPlacement>& placed,
                                         std::uint64_t vmem_capacity);

}  // namespace tpusim::isa::lower_detail
