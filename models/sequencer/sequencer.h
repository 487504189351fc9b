#pragma once
// A core's sequencer: takes the core's instructions in program order and appends each to the
// queue of the unit that runs it, stalling while that queue is full. Semaphore operations on
// `seq`, barriers and halt run here (isa/README.md, "Machine model").

#include <cstdint>
#include <vector>

#include "models/common/stats.h"
#include "models/common/unit.h"

namespace tpusim::models {

struct SequencerStats {
  std::uint64_t dispatched = 0;
  std::uint64_t queue_full_cycles = 0;  // dispatch stalled on a full unit queue
  // The same by the kind of unit whose queue was full: a queue that fills behind a long wait
  // holds back every unit's later instructions (in-order dispatch).
  std::uint64_t queue_full_dma_cycles = 0, queue_full_mxu_cycles = 0, queue_full_vpu_cycles = 0;
  std::uint64_t sem_wait_cycles = 0;    // dispatch stopped by `sem.wait seq`
  std::uint64_t barrier_cycles = 0;     // draining and waiting at barriers

  template <class V>
  void visit(V& v) {
    v("dispatched", dispatched, "", "instructions dispatched");
    v("queue_full_cycles", queue_full_cycles, "cycles", "dispatch stalled on a full unit queue");
    v("queue_full_dma_cycles", queue_full_dma_cycles, "cycles",
      "dispatch stalled on a full DMA engine queue");
    v("queue_full_mxu_cycles", queue_full_mxu_cycles, "cycles",
      "dispatch stalled on a full MXU queue");
    v("queue_full_vpu_cycles", queue_full_vpu_cycles, "cycles",
      "dispatch stalled on the vector unit's full queue");
    v("sem_wait_cycles", sem_wait_cycles, "cycles", "dispatch stopped by a semaphore wait on seq");
    v("barrier_cycles", barrier_cycles, "cycles", "cycles spent draining and waiting at barriers");
  }
};

class Sequencer : public sc_core::sc_module {
 public:
  Sequencer(sc_core::sc_module_name name, const SimContext& ctx, std::vector<std::uint32_t> program,
            std::vector<Unit*> dma, std::vector<Unit*> mxu, Unit* vpu, Semaphores& semaphores,
            CoreBarrier& barrier);

  bool done() const { return done_; }
  sc_core::sc_time done_at() const { return done_at_; }
  // Where dispatch stands, for deadlock reports.
  std::uint32_t next_instruction() const;
  const PerOpStats<SequencerStats>& stats() const { return stats_; }

 private:
  void run();
  Unit* target(const isa::Instruction& inst) const;
  void drain_all();

  const SimContext& ctx_;
  const std::vector<std::uint32_t> program_;  // indices of this core's instructions
  const std::vector<Unit*> dma_;
  const std::vector<Unit*> mxu_;
  Unit* const vpu_;
  Semaphores& semaphores_;
  CoreBarrier& barrier_;
  std::size_t position_ = 0;
  bool done_ = false;
  sc_core::sc_time done_at_;
  PerOpStats<SequencerStats> stats_;
  std::uint32_t track_;
};

}  // namespace tpusim::models
