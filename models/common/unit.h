#pragma once
// The in-order queue every unit (DMA engine, MXU, VPU) shares, with the semantics of
// isa/README.md: instructions run in queue order; a unit may overlap consecutive instructions
// internally, but a `sem.signal` in its queue fires only after all earlier work has completed,
// and a `sem.wait` holds back everything after it.

#include <cstdint>
#include <string>

#include <systemc>

#include "models/common/sim_context.h"
#include "models/common/sync.h"

namespace tpusim::models {

class Unit : public sc_core::sc_module {
 public:
  Unit(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
       std::uint32_t queue_depth);

  // Called by the sequencer's thread; blocks while the queue is full.
  void push(std::uint32_t instruction);
  // True when every pushed instruction has been taken and its work is complete.
  bool drained() const;
  // Blocks the calling thread until drained().
  void wait_drained();

 protected:
  // Executes one non-sync instruction. Returns when the unit may take the next one; sets
  // completion through complete_at(). Runs in the unit's thread, so it may wait().
  virtual void execute(const isa::Instruction& inst, std::uint32_t index) = 0;
  void complete_at(const sc_core::sc_time& t) {
    if (t > last_completion_) last_completion_ = t;
  }
  // When the instruction being executed has read all its sources (its completion when not
  // given): a `sem.signal ... reads` waits for this of every earlier instruction.
  void reads_done_at(const sc_core::sc_time& t) {
    if (t > last_read_) last_read_ = t;
    read_reported_ = true;
  }
  // A unit may leave work whose completion is not yet known when execute() returns (a DMA
  // engine's chunks still in the DRAM controllers): settle() completes it, calling complete_at().
  // The unit's own thread settles before a `sem.signal` and, when asked by wait_drained(), once
  // its queue is empty; until then the next instructions go ahead.
  virtual bool unsettled() const { return false; }
  virtual void settle() {}
  // Records an instruction's interval on this unit's trace track.
  void trace(std::uint32_t index, std::uint32_t op, const sc_core::sc_time& start,
             const sc_core::sc_time& end);

  const SimContext& ctx_;
  Semaphores& semaphores_;

 private:
  void run();

  sc_core::sc_fifo<std::uint32_t> queue_;
  const std::uint32_t depth_;
  std::uint32_t in_flight_ = 0;  // pushed but not yet taken off the queue and executed
  sc_core::sc_time last_completion_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time last_read_ = sc_core::SC_ZERO_TIME;
  bool read_reported_ = false;
  sc_core::sc_event taken_;
  sc_core::sc_event settle_request_;
  bool settle_wanted_ = false;
  std::uint32_t track_;
};

}  // namespace tpusim::models
