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
class Semaphores : public sc_core::sc_module {
 public:
  Semaphores(sc_core::sc_module_name name, std::uint32_t count)
      : sc_core::sc_module(name), value_(count, 0) {
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
  // Blocks the calling thread until the semaphore holds `count`, then takes it. When several
  // waits on one semaphore could be satisfied, the one earliest in program order (`instruction`)
  // takes the count first; the checker assumes the same rule.
  void wait(std::uint32_t sem, std::uint32_t count, std::uint32_t instruction) {
    waiters_.push_back({sem, count, instruction});
    while (!may_take(sem, count, instruction)) sc_core::wait(changed_);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), Waiter{sem, count, instruction}));
    value_[sem] -= count;
    if (!waiters_.empty()) changed_.notify(sc_core::SC_ZERO_TIME);  // the next may go now
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

  struct Waiter {
    std::uint32_t sem, count, instruction;
    bool operator==(const Waiter& o) const {
      return sem == o.sem && count == o.count && instruction == o.instruction;
    }
  };
  bool may_take(std::uint32_t sem, std::uint32_t count, std::uint32_t instruction) const {
    if (value_.at(sem) < count) return false;
    for (const Waiter& w : waiters_)
      if (w.sem == sem && w.instruction < instruction && value_[sem] >= w.count) return false;
    return true;
  }

  std::vector<std::uint32_t> value_;
  std::vector<Waiter> waiters_;
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
