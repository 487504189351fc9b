#include "models/vpu/vpu.h"

#include <algorithm>
#include <variant>

#include "models/vpu/vpu_datapath.h"
#include "models/vpu/vpu_timing.h"

namespace tpusim::models {

Vpu::Vpu(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
         CoreMemories memories)
    : Unit(name, ctx, semaphores, ctx.spec.core.sequencer.queue_depth), memories_(memories) {}

void Vpu::execute(const isa::Instruction& inst, std::uint32_t index) {
  const auto& v = std::get<isa::VectorInstr>(inst.body);
  const VpuCost cost = vpu_cost(ctx_.spec.core.vpu, ctx_.spec.clock, v);
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  if (ctx_.functional) vpu_compute(v, VpuMemories{memories_.vmem->data(), memories_.accmem->data()});
  sc_core::sc_time end = start + ctx_.cycles(cost.cycles);
  // Operands stream while the pipeline computes; a narrow or busy port stretches the op.
  end = std::max(end, memories_.of(v.a.addr.space)->transfer(start, cost.read_bytes_a, false, inst.op));
  if (cost.read_bytes_b > 0)
    end = std::max(end, memories_.of(v.b.addr.space)->transfer(start, cost.read_bytes_b, false, inst.op));
  end = std::max(end, memories_.of(v.dst.addr.space)->transfer(start, cost.write_bytes, true, inst.op));

  VpuStats& s = stats_[inst.op];
  ++s.instructions;
  s.elements[static_cast<std::size_t>(v.op)] += cost.elements;
  s.busy_cycles += ctx_.cycles_covering(end - start);
  if (end > start) sc_core::wait(end - start);
  trace(index, inst.op, start, end);
  complete_at(end);
}

}  // namespace tpusim::models
