#pragma once
// The busy intervals of one shared resource (an interconnect link, a memory channel, an SRAM
// port), sorted and merged. A request reserves the first gap that fits at or after the time it
// can start, not the end of the last reservation: requests reach a resource out of time order
// (a DMA load books the vector-memory port for when its data will arrive, a store books the
// memory channel for when its data has been read), and a resource booked ahead must still serve,
// in the gaps, a request that can go now.

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace tpusim::models {

template <class Time>
class BusyTimeline {
 public:
  // The start reserve() would give, without reserving.
  Time fit(Time earliest, Time duration) const {
    std::size_t i;
    return find(earliest, duration, i);
  }

  // Reserves `duration` starting no earlier than `earliest`; returns the start.
  Time reserve(Time earliest, Time duration) {
    std::size_t i;
    const Time start = find(earliest, duration, i);
    const Time end = start + duration;
    const bool joins_before = i > first_ && start <= busy_[i - 1].end + kTouch;
    const bool joins_after = i < busy_.size() && end + kTouch >= busy_[i].start;
    const auto at = busy_.begin() + static_cast<std::ptrdiff_t>(i);
    if (joins_before && joins_after) {
      busy_[i - 1].end = busy_[i].end;
      busy_.erase(at);
    } else if (joins_before) {
      busy_[i - 1].end = std::max(busy_[i - 1].end, end);
    } else if (joins_after) {
      busy_[i].start = start;
    } else {
      busy_.insert(at, Interval{start, end});
    }
    return start;
  }

  // The first free moment at or after `earliest`, and (in `free_for`) how long it stays free:
  // until the next reservation, or `open` when none follows.
  Time next_free(Time earliest, Time open, Time& free_for) const {
    std::size_t i = first_after(earliest);
    Time start = earliest;
    for (; i < busy_.size() && busy_[i].start <= start; ++i) start = std::max(start, busy_[i].end);
    free_for = i < busy_.size() ? busy_[i].start - start : open;
    return start;
  }

  // Forgets intervals that end before `now` (no later reservation can start before it).
  // Forgetting changes no result, only how far a search may look, so it waits until `now` has
  // passed the end of the first live interval as it was at the last forgetting: callers forget
  // on every request, and reading the first interval each time costs a cache miss.
  void forget_before(Time now) {
    if (!(now > forget_after_)) return;
    while (first_ < busy_.size() && busy_[first_].end < now) ++first_;
    if (first_ >= 64 && first_ * 2 >= busy_.size()) {
      busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(first_));
      first_ = 0;
    }
    // With nothing live, the next reservation will be first: check again next time.
    forget_after_ = first_ < busy_.size() ? busy_[first_].end : Time{};
  }

  std::size_t intervals() const { return busy_.size() - first_; }
  // When the last reservation ends (zero when there is none).
  Time last_end() const { return busy_.size() > first_ ? busy_.back().end : Time{}; }

 private:
  // Reservations closer than this touch and merge: 1 fs in seconds, exact for integer times.
  static constexpr Time kTouch = std::is_floating_point_v<Time> ? Time(1e-15) : Time{};
  struct Interval {
    Time start, end;
  };
  // The first live interval that ends after `earliest`. Most reservations append, so a few
  // steps back from the end find it; a booking further back (a late DRAM decision, see
  // BookingHorizon) searches by halves: the intervals are disjoint and sorted, so are their ends.
  std::size_t first_after(Time earliest) const {
    std::size_t i = busy_.size();
    for (int step = 0; i > first_ && busy_[i - 1].end > earliest; --i)
      if (++step == 4) {
        // Without branches: which part the answer is in is as good as random, and the
        // mispredicted branches of a plain binary search cost more than the comparisons. The
        // answer is base + j for some j in [0, n].
        const Interval* base = busy_.data() + first_;
        std::size_t n = i - first_;
        // By quarters while the range is long: three independent loads per step, so the chain
        // of dependent loads is half as long as by halves.
        while (n > 3) {
          const std::size_t q = n / 4;
          const std::size_t passed = std::size_t{base[q - 1].end <= earliest} +
                                     std::size_t{base[2 * q - 1].end <= earliest} +
                                     std::size_t{base[3 * q - 1].end <= earliest};
          base += passed * q;
          n -= 3 * q;  // j is within the next q - 1, or (passed == 3) within n - 3q
        }
        while (n > 1) {
          const std::size_t half = n / 2;
          // A mask, not a conditional: the compiler turns `? :` on a double back into a branch.
          const std::size_t right = 0 - static_cast<std::size_t>(base[half - 1].end <= earliest);
          base += half & right;
          n -= half;
        }
        return static_cast<std::size_t>(base - busy_.data()) + (base->end <= earliest);
      }
    return i;
  }
  // The first gap of `duration` at or after `earliest`, and the index of the interval after it.
  Time find(Time earliest, Time duration, std::size_t& i) const {
    i = first_after(earliest);
    Time start = earliest;
    for (; i < busy_.size(); ++i) {
      if (start + duration <= busy_[i].start + kTouch) break;
      start = std::max(start, busy_[i].end);
    }
    return start;
  }
  // busy_[first_..] are live; forgotten ones are dropped from the front in batches (a vector
  // indexes several times faster than a deque on this path).
  std::vector<Interval> busy_;
  std::size_t first_ = 0;
  Time forget_after_{};  // forget_before() does nothing until its `now` passes this
};

}  // namespace tpusim::models
