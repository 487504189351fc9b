#pragma once
// How far back in simulated time shared resources (SRAM ports, interconnect links) must keep
// their reservations. Usually the present: nothing is booked in the past. With memory.model hbm
// a DMA engine learns when a chunk arrived only once the DRAM controllers have decided it,
// possibly after the simulation moved on, and then books the port its data is written through
// (and the memory books the interconnect for the data's return) at that past time. Each such
// transaction is open from its arrival until it completes; resources keep reservations that end
// after the earliest open arrival, so a late booking still sees what it must not overlap.

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpusim::models {

class BookingHorizon {
 public:
  // Times in SystemC's integer units (sc_time::value()). Every close() names an arrival that
  // was opened and not yet closed.
  void open(std::uint64_t arrival) {
    if (first_ >= 64 && first_ * 2 >= open_.size()) {
      open_.erase(open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(first_));
      first_ = 0;
    }
    // Kept sorted. Transactions are posted at the present or later, so most arrivals come in
    // order and are appended.
    std::size_t i = open_.size();
    open_.push_back({arrival, false});
    for (; i > first_ && open_[i - 1].arrival > arrival; --i) open_[i] = open_[i - 1];
    open_[i] = {arrival, false};
  }
  void close(std::uint64_t arrival) {
    // Marked closed where it is; the earliest open arrival moves on past closed ones.
    auto it =
        std::lower_bound(open_.begin() + static_cast<std::ptrdiff_t>(first_), open_.end(), arrival,
                         [](const Open& o, std::uint64_t t) { return o.arrival < t; });
    while (it != open_.end() && it->arrival == arrival && it->closed) ++it;  // opened twice
    assert(it != open_.end() && it->arrival == arrival);  // it was opened and is not closed
    it->closed = true;
    while (first_ < open_.size() && open_[first_].closed) ++first_;
  }
  // The earliest time a booking may still be made at, given the present.
  std::uint64_t earliest(std::uint64_t present) const {
    return first_ < open_.size() ? std::min(present, open_[first_].arrival) : present;
  }

 private:
  struct Open {
    std::uint64_t arrival;
    bool closed;
  };
  std::vector<Open> open_;  // sorted by arrival from first_; the ones before are closed
  std::size_t first_ = 0;
};

}  // namespace tpusim::models
