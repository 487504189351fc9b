#pragma once
// The vector unit of a core, a pipeline: an instruction issues its elements lanes x sublanes at a
// time, and the next may issue right behind it, unless it reads or overwrites memory that an
// instruction still in the pipeline writes (then it waits for that result). Operands stream
// through the ports of vector or accumulator memory; an instruction ends at the later of its
// pipeline latency and its operand traffic.

#include <array>
#include <cstdint>
#include <vector>

#include "models/common/unit.h"
#include "models/dma/dma_engine.h"
#include "models/sram/sram.h"

namespace tpusim::models {

struct VpuStats {
  std::uint64_t instructions = 0;
  std::uint64_t busy_cycles = 0;
  std::array<std::uint64_t, kNumVectorOps> elements{};  // per op, for energy

  template <class V>
  void visit(V& v) {
    v("instructions", instructions, "", "vector instructions executed");
    v("busy_cycles", busy_cycles, "cycles", "cycles the vector unit was occupied");
    for (std::size_t i = 0; i < kNumVectorOps; ++i)
      v("elements_" + std::string(vector_op_name(static_cast<VectorOp>(i))), elements[i], "",
        "elements processed by this op");
  }
};

class Vpu : public Unit {
 public:
  Vpu(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
      CoreMemories memories);
  const PerOpStats<VpuStats>& stats() const { return stats_; }

 private:
  void execute(const isa::Instruction& inst, std::uint32_t index) override;

  struct InFlight {
    isa::Space space;
    std::uint64_t lo, hi;  // byte range written
    sc_core::sc_time done;
  };

  const CoreMemories memories_;
  sc_core::sc_time issue_free_ = sc_core::SC_ZERO_TIME;
  std::vector<InFlight> in_flight_;
  PerOpStats<VpuStats> stats_;
};

}  // namespace tpusim::models
