#include "models/vpu/vpu.h"

#include <algorithm>
#include <utility>
#include <vector>
#include <variant>

#include "models/vpu/vpu_datapath.h"
#include "models/vpu/vpu_timing.h"

namespace tpusim::models {

Vpu::Vpu(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
         CoreMemories memories)
    : Unit(name, ctx, semaphores, ctx.spec.core.sequencer.queue_depth), memories_(memories) {}

namespace {

// Bytes an operand of `rows` rows of `cols` elements spans: [lo, hi).
std::pair<std::uint64_t, std::uint64_t> extent(const isa::VectorOperand& o, std::uint32_t rows,
                                               std::uint32_t cols, DType dtype) {
  const std::uint64_t row_bytes = std::uint64_t{cols} * dtype_bytes(dtype);
  return {o.addr.addr, o.addr.addr + std::uint64_t{rows - 1} * o.stride + row_bytes};
}

}  // namespace

void Vpu::execute(const isa::Instruction& inst, std::uint32_t index) {
  const auto& v = std::get<isa::VectorInstr>(inst.body);
  const VpuCost cost = vpu_cost(ctx_.spec.core.vpu, ctx_.spec.clock, v);

  // Start behind the previous instruction's issue, and after any in-flight result this one
  // reads (read after write) or overwrites (write after write).
  struct Access {
    isa::Space space;
    std::pair<std::uint64_t, std::uint64_t> range;
  };
  std::vector<Access> touches = {{v.a.addr.space, extent(v.a, v.rows, v.a_cols(), v.src_dtype)},
                                 {v.dst.addr.space, extent(v.dst, v.rows, v.dst_cols(), v.dtype)}};
  if (isa::vector_arity(v.op) == isa::VectorArity::kBinary)
    touches.push_back({v.b.addr.space, extent(v.b, v.rows, v.cols, v.src_dtype)});
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  sc_core::sc_time start = std::max(now, issue_free_);
  in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(),
                                  [&](const InFlight& f) { return f.done <= now; }),
                   in_flight_.end());
  for (const InFlight& f : in_flight_)
    for (const Access& a : touches)
      if (a.space == f.space && a.range.first < f.hi && f.lo < a.range.second)
        start = std::max(start, f.done);
  if (start > now) sc_core::wait(start - now);

  if (ctx_.functional) vpu_compute(v, VpuMemories{memories_.vmem->data(), memories_.accmem->data()});
  sc_core::sc_time end = start + ctx_.cycles(cost.cycles);
  // Operands stream while the pipeline computes, taking port time wherever it is free from the
  // start (the SRAM's banks interleave them with other traffic); a narrow or busy port
  // stretches the op.
  const auto through = [&](const isa::VectorOperand& o, std::uint64_t bytes, bool write) {
    return memories_.of(o.addr.space)->spread_transfer(start, bytes, write, inst.op);
  };
  end = std::max(end, through(v.a, cost.read_bytes_a, false));
  if (cost.read_bytes_b > 0) end = std::max(end, through(v.b, cost.read_bytes_b, false));
  if (cost.read_bytes_dst > 0) end = std::max(end, through(v.dst, cost.read_bytes_dst, false));
  end = std::max(end, through(v.dst, cost.write_bytes, true));
  issue_free_ = start + ctx_.cycles(cost.issue_cycles);
  const auto dst = extent(v.dst, v.rows, v.dst_cols(), v.dtype);
  in_flight_.push_back({v.dst.addr.space, dst.first, dst.second, end});

  VpuStats& s = stats_[inst.op];
  ++s.instructions;
  s.elements[static_cast<std::size_t>(v.op)] += cost.elements;
  s.busy_cycles += cost.issue_cycles;
  trace(index, inst.op, start, end);
  complete_at(end);
}

}  // namespace tpusim::models
