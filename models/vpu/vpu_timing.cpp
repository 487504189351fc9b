#include "models/vpu/vpu_timing.h"

#include <algorithm>
#include <cmath>

namespace tpusim::models {

VpuCost vpu_cost(const VpuSpec& spec, Hertz clock, const isa::VectorInstr& v) {
  const VectorOpTiming& t = spec.ops[static_cast<std::size_t>(v.op)];
  VpuCost c;
  c.elements = std::uint64_t{v.rows} * v.cols;
  const double per_cycle = double(spec.lanes) * spec.sublanes * t.throughput;
  const auto issue = static_cast<std::uint64_t>(std::ceil(double(c.elements) / per_cycle - 1e-9));
  std::uint64_t tree = 0;
  if (v.op == VectorOp::kReduceSum || v.op == VectorOp::kReduceMax) {
    for (std::uint64_t width = 1; width < v.cols; width *= 2) ++tree;
  }
  const std::uint64_t latency = t.latency.cycles(clock).value();
  c.issue_cycles = std::max<std::uint64_t>(1, issue);
  c.cycles = latency + c.issue_cycles - 1 + tree;
  // A zero-stride operand (one row repeated: a bias, a filter tap) is read once.
  const auto rows_read = [&](const isa::VectorOperand& o) {
    return o.stride == 0 ? std::uint64_t{1} : std::uint64_t{v.rows};
  };
  c.read_bytes_a = rows_read(v.a) * v.a_cols() * dtype_bytes(v.src_dtype);
  if (isa::vector_arity(v.op) == isa::VectorArity::kBinary)
    c.read_bytes_b = rows_read(v.b) * v.cols * dtype_bytes(v.src_dtype);
  c.write_bytes = std::uint64_t{v.rows} * v.dst_cols() * dtype_bytes(v.dtype);
  if (v.op == VectorOp::kMac) c.read_bytes_dst = c.write_bytes;
  return c;
}

}  // namespace tpusim::models
