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
#include <functional>
#include <vector>

namespace tpusim::models {

class BookingHorizon {
 public:
  // Times in SystemC's integer units (sc_time::value()). Every close() names an arrival that
  // was opened and not yet closed.
  void open(std::uint64_t arrival) { push(open_, arrival); }
  void close(std::uint64_t arrival) {
    // Closed lazily: the earliest open arrival is only dropped once it reaches the top of both
    // heaps (a node-based set cost an allocation per DMA chunk).
    push(closed_, arrival);
    while (!closed_.empty() && open_.front() == closed_.front()) {
      pop(open_);
      pop(closed_);
    }
  }
  // The earliest time a booking may still be made at, given the present.
  std::uint64_t earliest(std::uint64_t present) const {
    return open_.empty() ? present : std::min(present, open_.front());
  }

 private:
  using MinHeap = std::vector<std::uint64_t>;
  static void push(MinHeap& h, std::uint64_t v) {
    h.push_back(v);
    std::push_heap(h.begin(), h.end(), std::greater<>());
  }
  static void pop(MinHeap& h) {
    std::pop_heap(h.begin(), h.end(), std::greater<>());
    h.pop_back();
  }
  MinHeap open_, closed_;
};

}  // namespace tpusim::models
