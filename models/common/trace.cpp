#include "models/common/trace.h"

namespace tpusim::models {

void TraceRecorder::record_merged(std::uint32_t track, std::uint32_t op, std::uint64_t start_ps,
                                  std::uint64_t end_ps) {
  extend_span(op, start_ps, end_ps);
  if (!enabled_ || end_ps <= start_ps) return;
  constexpr std::size_t kNone = ~std::size_t{0};
  if (last_event_of_track_.size() < tracks_.size()) last_event_of_track_.resize(tracks_.size(), kNone);
  std::size_t& last = last_event_of_track_[track];
  if (last != kNone) {
    TraceEvent& e = events_[last];
    if (e.op == op && start_ps <= e.end_ps && start_ps >= e.start_ps) {
      if (end_ps > e.end_ps) e.end_ps = end_ps;
      return;
    }
  }
  events_.push_back({track, kNoInstruction, op, start_ps, end_ps});
  last = events_.size() - 1;
}

}  // namespace tpusim::models
