#include "models/sequencer/sequencer.h"

#include <variant>

namespace tpusim::models {

Sequencer::Sequencer(sc_core::sc_module_name name, const SimContext& ctx,
                     std::vector<std::uint32_t> program, std::vector<Unit*> dma,
                     std::vector<Unit*> mxu, Unit* vpu, Semaphores& semaphores,
                     CoreBarrier& barrier)
    : sc_core::sc_module(name),
      ctx_(ctx),
      program_(std::move(program)),
      dma_(std::move(dma)),
      mxu_(std::move(mxu)),
      vpu_(vpu),
      semaphores_(semaphores),
      barrier_(barrier),
      track_(ctx.trace.add_track(this->name())) {
  SC_HAS_PROCESS(Sequencer);
  SC_THREAD(run);
}

std::uint32_t Sequencer::next_instruction() const {
  return position_ < program_.size() ? program_[position_] : kNoInstruction;
}

Unit* Sequencer::target(const isa::Instruction& inst) const {
  const isa::Unit u = inst.unit();
  switch (u.kind) {
    case isa::UnitKind::kDma: return dma_.at(u.index);
    case isa::UnitKind::kMxu: return mxu_.at(u.index);
    case isa::UnitKind::kVpu: return vpu_;
    case isa::UnitKind::kSeq: return nullptr;
  }
  return nullptr;
}

void Sequencer::drain_all() {
  for (Unit* u : dma_) u->wait_drained();
  for (Unit* u : mxu_) u->wait_drained();
  vpu_->wait_drained();
}

void Sequencer::run() {
  const sc_core::sc_time dispatch =
      ctx_.cycles(ctx_.spec.core.sequencer.dispatch_latency.cycles(ctx_.spec.clock).value());
  for (; position_ < program_.size(); ++position_) {
    const std::uint32_t index = program_[position_];
    const isa::Instruction& inst = ctx_.program.instructions[index];
    SequencerStats& s = stats_[inst.op];
    if (dispatch > sc_core::SC_ZERO_TIME) sc_core::wait(dispatch);
    ++s.dispatched;
    const sc_core::sc_time before = sc_core::sc_time_stamp();
    // The sequencer's track shows where dispatch stood still: full queues, waits, barriers.
    const auto stalled = [&] {
      const sc_core::sc_time now = sc_core::sc_time_stamp();
      ctx_.trace.record_stall(track_, index, inst.op, ctx_.ps(before), ctx_.ps(now));
      return ctx_.cycles_covering(now - before);
    };
    if (Unit* unit = target(inst)) {
      unit->push(index);
      const std::uint64_t full = stalled();
      s.queue_full_cycles += full;
      switch (inst.unit().kind) {
        case isa::UnitKind::kDma:
          s.queue_full_dma_cycles += full;
          break;
        case isa::UnitKind::kMxu:
          s.queue_full_mxu_cycles += full;
          break;
        default:
          s.queue_full_vpu_cycles += full;
          break;
      }
      continue;
    }
    if (const auto* signal = std::get_if<isa::SemSignal>(&inst.body)) {
      semaphores_.signal(signal->sem);
    } else if (const auto* w = std::get_if<isa::SemWait>(&inst.body)) {
      semaphores_.wait(w->sem, w->count, index);
      s.sem_wait_cycles += stalled();
    } else if (std::holds_alternative<isa::Barrier>(inst.body)) {
      drain_all();
      barrier_.arrive_and_wait();
      s.barrier_cycles += stalled();
    } else if (std::holds_alternative<isa::Halt>(inst.body)) {
      break;
    }
  }
  drain_all();
  done_ = true;
  done_at_ = sc_core::sc_time_stamp();
}

}  // namespace tpusim::models
