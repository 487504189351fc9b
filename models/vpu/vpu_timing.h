#pragma once
// Cost of one vector instruction on a lanes x sublanes SIMD unit (no SystemC).
// Elements are processed lanes*sublanes at a time at the op's throughput (results per ALU slot
// per cycle); the first result needs the op's pipeline latency. Row reductions add the depth
// of their combining tree, ceil(log2(cols)).
//   cycles = latency + ceil(rows*cols / (lanes*sublanes*throughput)) - 1 + tree_depth
// Elements count as if packed densely into the lanes. A TPU's vector registers are (8, 128)
// tiles with a row's elements on the lanes, so rows narrower than 128 leave lanes idle unless
// the compiler repacks them; that cost is not modelled (an optimistic simplification for narrow
// tensors, e.g. depthwise layers with few channels).

#include <cstdint>

#include "isa/program.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

struct VpuCost {
  std::uint64_t cycles = 0;        // first issue to last result
  std::uint64_t issue_cycles = 0;  // cycles the pipeline's issue slots are taken (>= 1)
  std::uint64_t elements = 0;
  std::uint64_t read_bytes_a = 0;
  std::uint64_t read_bytes_b = 0;
  std::uint64_t read_bytes_dst = 0;  // mac reads the accumulator it adds to, where it writes
  std::uint64_t write_bytes = 0;
};

VpuCost vpu_cost(const VpuSpec& spec, Hertz clock, const isa::VectorInstr& v);

}  // namespace tpusim::models
