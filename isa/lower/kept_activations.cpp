#include "isa/lower/kept_activations.h"

#include <algorithm>
#include <string>

#include "isa/lower/emitter.h"

namespace tpusim::isa::lower_detail {

using workloads::Graph;
using workloads::Op;
using workloads::OpKind;
using workloads::TensorId;
using workloads::TensorRole;

KeptActivations keep_activations_in_vmem(const Graph& graph, const std::vector<TensorId>& result,
                                         const std::vector<bool>& fused,
                                         const std::vector<std::vector<std::size_t>>& readers,
                                         const std::set<TensorId>& evicted,
                                         std::deque<TensorPlacement>& placed,
                                         std::uint64_t vmem_capacity) {
  constexpr std::uint64_t kAlign = 4096;
  const std::uint64_t budget = vmem_capacity / 2 / kAlign * kAlign;
  std::set<std::string> aliased;
  for (const TensorPlacement& p : placed)
    if (!p.alias_of.empty()) aliased.insert(p.alias_of);
  const auto gathered = [&](TensorId t) {
    for (std::size_t j : readers[t]) {
      const Op& op = graph.ops[j];
      if (op.kind == OpKind::kTranspose ||
          (op.kind == OpKind::kMatmul && op.attrs.transpose_a && op.inputs[0] == t))
        return true;
    }
    return false;
  };
  struct Slot {
    std::uint64_t offset, bytes;  // from the top of vmem down
    std::size_t from, last_reader;
  };
  std::vector<Slot> live, all;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const TensorId t = result[i];
    TensorPlacement& p = placed[t];
    if (fused[i] || readers[t].empty() || p.role != TensorRole::kActivation ||
        p.storage != p.shape || !p.alias_of.empty() || aliased.count(p.name) || gathered(t) ||
        evicted.count(t))
      continue;
    // Slots whose tensor operator i no longer reads are free (one it reads is still live).
    live.erase(
        std::remove_if(live.begin(), live.end(), [&](const Slot& s) { return s.last_reader < i; }),
        live.end());
    std::sort(live.begin(), live.end(),
              [](const Slot& a, const Slot& b) { return a.offset < b.offset; });
    const std::uint64_t bytes = round_up(std::max<std::uint64_t>(1, p.storage_bytes()), kAlign);
    std::uint64_t at = 0;
    for (const Slot& s : live) {
      if (at + bytes <= s.offset) break;
      at = std::max(at, s.offset + s.bytes);
    }
    if (at + bytes > budget) continue;
    const Slot slot{at, bytes, i, *std::max_element(readers[t].begin(), readers[t].end())};
    live.push_back(slot);
    all.push_back(slot);
    p.space = Space::kVmem;
    p.base = vmem_capacity - (at + bytes);
  }
  KeptActivations kept;
  kept.above.assign(graph.ops.size(), 0);
  for (const Slot& s : all) {
    const std::size_t first = s.from > 0 ? s.from - 1 : 0;
    const std::size_t last = std::min(s.last_reader + 1, graph.ops.size() - 1);
    kept.ranges.push_back({result[s.from], first, last});
    for (std::size_t i = first; i <= last; ++i)
      kept.above[i] = std::max(kept.above[i], s.offset + s.bytes);
  }
  return kept;
}

}  // namespace tpusim::isa::lower_detail
