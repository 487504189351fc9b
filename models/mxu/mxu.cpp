#include "models/mxu/mxu.h"

#include <algorithm>
#include <cmath>
#include <variant>

namespace tpusim::models {

Mxu::Mxu(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
         CoreMemories memories, ArrayObserver* observer)
    : Unit(name, ctx, semaphores, ctx.spec.core.sequencer.queue_depth),
      memories_(memories),
      engine_(make_mxu_engine(ctx.spec.core.mxu, ctx.spec.clock,
                              ctx.spec.core.vmem.port_width.value(), observer)) {}

std::uint64_t Mxu::array_width(DType operand) const {
  return dtype_bytes(mxu_precision(ctx_.spec.core.mxu, operand).value_or(operand));
}

std::uint64_t Mxu::latch_bytes(const ArrayLatches& latches, DType operand) const {
  return (latches.inputs + latches.weights) * array_width(operand) +
         latches.sums * dtype_bytes(accumulator_dtype(operand));
}

void Mxu::wait_until_cycle(std::uint64_t cycle) {
  const sc_core::sc_time at = ctx_.cycles(cycle);
  if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
}

std::uint64_t Mxu::start_with_port(std::uint64_t ready, std::uint64_t bytes,
                                   std::uint64_t window) const {
  const std::uint64_t block_end =
      ctx_.cycles_covering(memories_.vmem->spread_end(ctx_.cycles(ready), bytes));
  return std::max(ready, block_end > window ? block_end - window : 0);
}

std::uint64_t Mxu::load_window(const isa::MxuLoadWeights& lw) const {
  // ws shifts the tile through all R rows; os and is stage its K rows (MxuTiming::load_weights).
  const std::uint64_t rows =
      ctx_.spec.core.mxu.dataflow == Dataflow::kWeightStationary ? ctx_.spec.core.mxu.rows : lw.k;
  return mxu_shift_cycles(rows, std::uint64_t{lw.n} * dtype_bytes(lw.dtype),
                          ctx_.spec.core.vmem.port_width.value());
}

std::uint64_t Mxu::read_window(const isa::MxuMatmul& mm) const {
  const MxuSpec& spec = ctx_.spec.core.mxu;
  const std::uint64_t port = ctx_.spec.core.vmem.port_width.value();
  const auto stream = [&](std::uint64_t rows, std::uint64_t elements) {
    return std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(
               std::ceil(rows * mxu_cycles_per_row(spec, mm.dtype, elements, port) - 1e-9)));
  };
  std::uint64_t cycles = 0;
  switch (spec.dataflow) {
    case Dataflow::kWeightStationary:  // the M rows stream in
      return stream(mm.m, mm.k);
    case Dataflow::kOutputStationary:  // each fold of rf <= R rows reads K columns of rf inputs
      for (std::uint64_t m0 = 0; m0 < mm.m; m0 += spec.rows)
        cycles += stream(mm.k, std::min<std::uint64_t>(spec.rows, mm.m - m0));
      return cycles;
    case Dataflow::kInputStationary:  // each fold of mf <= C inputs shifts in over R rows
      for (std::uint64_t m0 = 0; m0 < mm.m; m0 += spec.cols)
        cycles += mxu_shift_cycles(
            spec.rows, std::min<std::uint64_t>(spec.cols, mm.m - m0) * dtype_bytes(mm.dtype), port);
      return cycles;
  }
  return 1;
}

void Mxu::count_active(MxuStats& s, std::uint64_t start, std::uint64_t end) {
  const std::uint64_t from = std::max(start, active_until_);
  if (end > from) s.active_cycles += end - from;
  active_until_ = std::max(active_until_, end);
}

void Mxu::execute(const isa::Instruction& inst, std::uint32_t index) {
  // Rounded up: a semaphore may fire between clock edges (a DRAM completion), and the array
  // acts on the edge after it, never before the present.
  const std::uint64_t now = ctx_.cycles_covering(sc_core::sc_time_stamp());
  MxuStats& s = stats_[inst.op];
  const std::uint8_t* vmem = ctx_.functional ? memories_.vmem->data() : nullptr;
  if (const auto* lw = std::get_if<isa::MxuLoadWeights>(&inst.body)) {
    const std::uint64_t bytes = std::uint64_t{lw->k} * lw->n * dtype_bytes(lw->dtype);
    const std::uint64_t ready = std::max(now, engine_->load_ready_at());
    const MxuLoadTiming t =
        engine_->load_weights(*lw, start_with_port(ready, bytes, load_window(*lw)), vmem);
    // Booked now, before the wait, so that another unit deciding meanwhile sees the port taken.
    memories_.vmem->spread_hold(ctx_.cycles(ready), bytes, false, inst.op);
    wait_until_cycle(t.start);
    if (ctx_.functional) engine_->start_load(*lw, vmem);
    ++s.weight_loads;
    s.weight_load_cycles += t.end - t.start;
    // A ws tile shifts through the array's own registers; os and is stage it beside the array.
    if (ctx_.spec.core.mxu.dataflow == Dataflow::kWeightStationary) count_active(s, t.start, t.end);
    s.weight_bytes += bytes;
    s.array_weight_bytes += std::uint64_t{lw->k} * lw->n * array_width(lw->dtype);
    s.register_write_bytes += latch_bytes(load_latches(ctx_.spec.core.mxu, *lw), lw->dtype);
    trace(index, inst.op, ctx_.cycles(t.start), ctx_.cycles(t.end));
    complete_at(ctx_.cycles(t.end));
    reads_done_at(ctx_.cycles(t.end));  // the tile has shifted out of vector memory
    return;
  }
  const auto& mm = std::get<isa::MxuMatmul>(inst.body);
  // Start no earlier than a vector-memory port can feed the array, from when the array can
  // take the rows (booked before the wait, as for a weight load).
  const std::uint64_t input_bytes = std::uint64_t{mm.m} * mm.k * dtype_bytes(mm.dtype);
  const std::uint64_t ready = std::max(now, engine_->matmul_ready_at(mm.keep));
  const std::uint64_t window = read_window(mm);
  const std::uint64_t ready_but_weights =
      start_with_port(std::max(now, engine_->input_free_at()), input_bytes, window);
  const MxuMatmulTiming t = engine_->matmul(mm, start_with_port(ready, input_bytes, window), vmem);
  s.weight_stall_cycles += t.start - std::min(t.start, ready_but_weights);
  memories_.vmem->spread_hold(ctx_.cycles(ready), input_bytes, false, inst.op);
  // Results leave the array a row per cycle and go to accumulator memory (read-modify-write when
  // accumulating), taking bytes / width of a port's time from the start, wherever it is free,
  // so DMA stores and VPU reads of accumulators contend with them. A port too narrow or too
  // busy to take the results by the array's last row delays the instruction's completion.
  const std::uint64_t result_bytes = std::uint64_t{mm.m} * mm.n * 4;
  const std::uint64_t output_bytes = result_bytes * (mm.accumulate ? 2 : 1);
  std::uint64_t end = t.end;
  if (mm.accumulate)
    end = std::max(end, ctx_.cycles_covering(memories_.accmem->spread_hold(
                            ctx_.cycles(t.start), result_bytes, false, inst.op)));
  end = std::max(end, ctx_.cycles_covering(memories_.accmem->spread_hold(
                          ctx_.cycles(t.start), result_bytes, true, inst.op)));
  wait_until_cycle(t.start);
  // Values are computed when the first row enters; whoever reads the results waits for this
  // instruction's completion through a semaphore.
  if (ctx_.functional) engine_->start_matmul(mm, vmem, memories_.accmem->data());
  ++s.matmuls;
  s.stream_cycles += t.stream_cycles;
  count_active(s, t.start, t.array_end);
  s.macs[static_cast<std::size_t>(mm.dtype)] += t.macs;
  s.input_bytes += input_bytes;
  s.array_input_bytes += std::uint64_t{mm.m} * mm.k * array_width(mm.dtype);
  s.register_write_bytes += latch_bytes(matmul_latches(ctx_.spec.core.mxu, mm), mm.dtype);
  s.output_bytes += output_bytes;
  trace(index, inst.op, ctx_.cycles(t.start), ctx_.cycles(end));
  complete_at(ctx_.cycles(end));
  reads_done_at(ctx_.cycles(t.input_end));  // the last input row has entered the array
  // No wait for the stream to end: MxuTiming keeps the array's input port busy until then, and
  // the next instruction may be a weight load that overlaps this stream (double buffering).
}

}  // namespace tpusim::models
