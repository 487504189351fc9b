#pragma once
// One systolic array: an MxuEngine (fast formulas or the cycle-level array, `core.mxu.model`)
// decides when each instruction starts and ends; this module waits for it, holds the
// vector-memory port it streams through, and counts.

#include <array>
#include <cstdint>

#include "models/common/unit.h"
#include "models/dma/dma_engine.h"
#include "models/mxu/array_latches.h"
#include "models/mxu/mxu_engine.h"
#include "models/sram/sram.h"

namespace tpusim::models {

struct MxuStats {
  std::uint64_t weight_loads = 0;
  std::uint64_t matmuls = 0;
  std::uint64_t stream_cycles = 0;               // cycles the array's input port was busy
  std::uint64_t active_cycles = 0;               // cycles the array itself worked: shifting weights
                                                 // in (ws), streaming, filling and draining
  std::uint64_t weight_load_cycles = 0;          // cycles the weight path was shifting
  std::uint64_t weight_stall_cycles = 0;         // matmul start delayed by weights not yet in place
  std::array<std::uint64_t, kNumDTypes> macs{};  // by operand dtype, for energy
  std::uint64_t weight_bytes = 0;
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  // The same operands once each, as the array takes them in: a rounded operand type
  // (core.mxu.rounding) at the width of the precision it is rounded to.
  std::uint64_t array_weight_bytes = 0;
  std::uint64_t array_input_bytes = 0;
  // Bytes PE registers latched, by dataflow (array_latches.h): an operand per PE it crosses, a
  // sum per PE it passes or is added in. What energy charges register_per_byte for.
  std::uint64_t register_write_bytes = 0;

  std::uint64_t total_macs() const {
    std::uint64_t t = 0;
    for (std::uint64_t m : macs) t += m;
    return t;
  }
  template <class V>
  void visit(V& v) {
    v("weight_loads", weight_loads, "", "weight tiles loaded");
    v("matmuls", matmuls, "", "matmul instructions");
    v("stream_cycles", stream_cycles, "cycles", "cycles the array accepted input rows");
    v("active_cycles", active_cycles, "cycles",
      "cycles the array was working: weight shift (ws), streaming, fill and drain, overlaps once");
    v("weight_load_cycles", weight_load_cycles, "cycles", "cycles spent shifting weight tiles in");
    v("weight_stall_cycles", weight_stall_cycles, "cycles",
      "cycles matmuls waited for their weights beyond the array being free");
    for (DType t : kAllDTypes)
      v("macs_" + std::string(dtype_name(t)), macs[static_cast<std::size_t>(t)], "MAC",
        "multiply-accumulates with operands of this type");
    v("weight_bytes", weight_bytes, "B", "weight bytes read from vector memory");
    v("input_bytes", input_bytes, "B", "input bytes read from vector memory");
    v("output_bytes", output_bytes, "B", "accumulator bytes written (and read when accumulating)");
    v("array_weight_bytes", array_weight_bytes, "B",
      "weight bytes loaded into the array (rounded operands at their precision's width)");
    v("array_input_bytes", array_input_bytes, "B",
      "input bytes streamed into the array (rounded operands at their precision's width)");
    v("register_write_bytes", register_write_bytes, "B",
      "bytes PE registers latched: operands per PE crossed, sums per PE passed or added in");
  }
};

class Mxu : public Unit {
 public:
  Mxu(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
      CoreMemories memories, ArrayObserver* observer);
  const PerOpStats<MxuStats>& stats() const { return stats_; }
  // After the run: a cycle-level array finishes draining into its observer.
  void finish() { engine_->finish(); }

 private:
  void execute(const isa::Instruction& inst, std::uint32_t index) override;
  // Bytes per element of `operand` inside the array (a rounded type at its precision's width).
  std::uint64_t array_width(DType operand) const;
  // Operands latch at the array's width, sums at the accumulator's.
  std::uint64_t latch_bytes(const ArrayLatches& latches, DType operand) const;
  void wait_until_cycle(std::uint64_t cycle);
  // The array reads an operand over a window of cycles, not at once: the port time of its
  // `bytes` anywhere in it serves (the SRAM's banks interleave the streams). So an instruction
  // ready at `ready` starts then, unless the earliest free port time from then
  // (Sram::spread_end) would end after its window did; `window` is the cycles the array's own
  // pace through a port it has to itself takes to read them (MxuTiming's streams and shifts,
  // which already count a port narrower than a row: the window must too, or that is paid twice).
  std::uint64_t start_with_port(std::uint64_t ready, std::uint64_t bytes,
                                std::uint64_t window) const;
  std::uint64_t load_window(const isa::MxuLoadWeights& lw) const;
  std::uint64_t read_window(const isa::MxuMatmul& mm) const;
  // Adds the part of [start, end) not already counted; intervals arrive in start order.
  void count_active(MxuStats& s, std::uint64_t start, std::uint64_t end);

  const CoreMemories memories_;
  std::unique_ptr<MxuEngine> engine_;
  PerOpStats<MxuStats> stats_;
  std::uint64_t active_until_ = 0;
};

}  // namespace tpusim::models
