#pragma once
// Cross-unit ordering: counting semaphores per core, and the barrier across cores.

#include <algorithm>
#include <cstdint>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include <systemc>

namespace tpusim::models {

// Per-core counting semaphores. A signal may be posted for a future time (a unit's earlier work
// completes later than the unit moves on); it takes effect then, without holding up the unit.
//
// The waits on one semaphore take their counts strictly in program order, whichever unit reaches
// its wait first: a wait that reaches a semaphore whose earlier waits have not all completed holds
// on even if the count is there. Which signals feed which wait is then fixed by the program, not
// by timing, so a program the checker's abstract run completes (isa/README.md, "Sync") cannot
// deadlock here because a busy unit reached its wait late.
class Semaphores : public sc_core::sc_module {
 public:
  // `turns`: isa::wait_turns() of the program, which outlives this module.
  Semaphores(sc_core::sc_module_name name, std::uint32_t count,
             const std::vector<std::uint32_t>& turns)
      : sc_core::sc_module(name), value_(count, 0), completed_(count, 0), turns_(turns) {
    SC_HAS_PROCESS(Semaphores);
    SC_METHOD(deliver);
    sensitive << due_;
    dont_initialize();
  }

  void signal(std::uint32_t sem) {
    ++value_.at(sem);
    changed_.notify(sc_core::SC_ZERO_TIME);
  }
  // Adds 1 to `sem` at time `at` (>= now).
  void signal_at(std::uint32_t sem, const sc_core::sc_time& at) {
    if (at <= sc_core::sc_time_stamp()) return signal(sem);
    pending_.push({at, sequence_++, sem});
    due_.notify(pending_.top().at - sc_core::sc_time_stamp());
  }
  // Blocks the calling thread until every earlier wait on `sem` (in program order) has completed
  // and the semaphore holds `count`, then takes it.
  void wait(std::uint32_t sem, std::uint32_t count, std::uint32_t instruction) {
    const std::uint32_t turn = turns_.at(instruction);
    while (completed_.at(sem) != turn || value_[sem] < count) sc_core::wait(changed_);
    value_[sem] -= count;
    ++completed_[sem];
    changed_.notify(sc_core::SC_ZERO_TIME);  // the next wait in line may go now
  }
  std::uint32_t value(std::uint32_t sem) const { return value_.at(sem); }

 private:
  struct Pending {
    sc_core::sc_time at;
    std::uint64_t sequence;  // posting order breaks ties, so delivery is deterministic
    std::uint32_t sem;
    bool operator>(const Pending& o) const {
      return std::tie(at, sequence) > std::tie(o.at, o.sequence);
    }
  };
  void deliver() {
    while (!pending_.empty() && pending_.top().at <= sc_core::sc_time_stamp()) {
      signal(pending_.top().sem);
      pending_.pop();
    }
    if (!pending_.empty()) due_.notify(pending_.top().at - sc_core::sc_time_stamp());
  }

  std::vector<std::uint32_t> value_;
  std::vector<std::uint32_t> completed_;  // waits completed per semaphore
  const std::vector<std::uint32_t>& turns_;
  sc_core::sc_event changed_;
  sc_core::sc_event due_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
  std::uint64_t sequence_ = 0;
};

// All participating cores arrive, then all continue (generation-counted, so it is reusable).
class CoreBarrier {
 public:
  explicit CoreBarrier(std::uint32_t participants) : participants_(participants) {}
  void arrive_and_wait() {
    const std::uint64_t generation = generation_;
    if (++arrived_ == participants_) {
      arrived_ = 0;
      ++generation_;
      released_.notify(sc_core::SC_ZERO_TIME);
      return;
    }
    while (generation_ == generation) sc_core::wait(released_);
  }

 private:
  std::uint32_t participants_;
  std::uint32_t arrived_ = 0;
  std::uint64_t generation_ = 0;
  sc_core::sc_event released_;
};

}  // namespace tpusim::models
