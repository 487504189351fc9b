#pragma once
// The in-order queue every unit (DMA engine, MXU, VPU) shares, with the semantics of
// isa/README.md: instructions run in queue order; a unit may overlap consecutive instructions
// internally, but a `sem.signal` in its queue fires only after all earlier work has completed,
// and a `sem.wait` holds back everything after it.

#include <cstdint>
#include <deque>
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
  // The unit's own thread settles when asked by wait_drained(), once its queue is empty; until
  // then the next instructions go ahead.
  virtual bool unsettled() const { return false; }
  virtual void settle() {}
  // A `sem.signal` reached while work is unsettled does not hold the unit's queue: the unit's
  // second thread serves such signals, oldest first, while the first goes on. settle_mark()
  // names the work a signal waits for (a DMA engine: the descriptors issued so far);
  // settle_through(mark), called on the second thread alongside execute(), completes it,
  // waiting as needed; and the unit reports through closed_through(mark) the moment all work
  // before `mark` has completed (complete_at() and reads_done_at() called for it), which fires
  // the signals waiting for it.
  virtual std::uint64_t settle_mark() const { return 0; }
  virtual void settle_through(std::uint64_t /*mark*/) { settle(); }
  void closed_through(std::uint64_t mark);
  // Records an instruction's interval on this unit's trace track.
  void trace(std::uint32_t index, std::uint32_t op, const sc_core::sc_time& start,
             const sc_core::sc_time& end);

  const SimContext& ctx_;
  Semaphores& semaphores_;

 private:
  void run();
  // Completes the work that deferred signals wait for, oldest signal first.
  void settle_signals();
  void fire(std::uint32_t sem, bool reads, const sc_core::sc_time& floor);
  // Inside a catch of an Error, with ctx_.failure set: keeps the error for the caller of
  // sc_start and stops the simulation.
  void stop_for_error();

  sc_core::sc_fifo<std::uint32_t> queue_;
  const std::uint32_t depth_;
  std::uint32_t in_flight_ = 0;  // pushed but not yet taken off the queue and executed
  sc_core::sc_time last_completion_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time last_read_ = sc_core::SC_ZERO_TIME;
  bool read_reported_ = false;
  sc_core::sc_event taken_;
  sc_core::sc_event settle_request_;
  bool settle_wanted_ = false;
  struct DeferredSignal {
    std::uint32_t sem;
    bool reads;
    sc_core::sc_time floor;  // when the unit reached it: it fires no sooner
    std::uint64_t mark;      // it waits for the work before settle_mark() as it was then
  };
  std::deque<DeferredSignal> deferred_;
  sc_core::sc_event deferred_added_;
  std::uint32_t track_;
};

}  // namespace tpusim::models
