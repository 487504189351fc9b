#pragma once
// How far back in simulated time shared resources (SRAM ports, interconnect links) must keep
// their reservations. Usually the present: nothing is booked in the past. With memory.model hbm
// a DMA engine learns when a chunk arrived only once the DRAM controllers have decided it,
// possibly after the simulation moved on, and then books the port its data is written through
// (and the memory books the interconnect for the data's return) at that past time. Each such
// transaction is open from its arrival until it completes; resources keep reservations that end
// after the earliest open arrival, so a late booking still sees what it must not overlap.

#include <algorithm>
#include <cstdint>
#include <set>

namespace tpusim::models {

class BookingHorizon {
 public:
  // Times in SystemC's integer units (sc_time::value()).
  void open(std::uint64_t arrival) { open_.insert(arrival); }
  void close(std::uint64_t arrival) {
    const auto it = open_.find(arrival);
    if (it != open_.end()) open_.erase(it);
  }
  // The earliest time a booking may still be made at, given the present.
  std::uint64_t earliest(std::uint64_t present) const {
    return open_.empty() ? present : std::min(present, *open_.begin());
  }

 private:
  std::multiset<std::uint64_t> open_;
};

}  // namespace tpusim::models
