#include "models/common/trace.h"

#include <algorithm>

namespace tpusim::models {

void TraceRecorder::record_merged(std::uint32_t track, std::uint32_t op, std::uint64_t start_ps,
                                  std::uint64_t end_ps) {
  extend_span(op, start_ps, end_ps);
  if (!enabled_ || end_ps <= start_ps) return;
  // Transactions of one operator finish out of order, so the last interval of the same track
  // and operator is extended by any interval that touches or overlaps it.
  const std::uint64_t key = (std::uint64_t{track} << 32) | op;
  const auto it = last_merged_.find(key);
  if (it != last_merged_.end()) {
    TraceEvent& e = events_[it->second];
    if (start_ps <= e.end_ps && end_ps >= e.start_ps) {
      e.start_ps = std::min(e.start_ps, start_ps);
      e.end_ps = std::max(e.end_ps, end_ps);
      return;
    }
  }
  events_.push_back({track, kNoInstruction, op, start_ps, end_ps});
  last_merged_[key] = events_.size() - 1;
}

}  // namespace tpusim::models
