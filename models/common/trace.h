#pragma once
// Activity intervals per unit, for trace.json (Chrome trace event format, opens in Perfetto).
// Recording is off unless a trace was asked for, so the timing-only path pays one branch.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tpusim::models {

inline constexpr std::uint32_t kNoInstruction = ~0u;

struct TraceEvent {
  std::uint32_t track = 0;
  std::uint32_t instruction = kNoInstruction;  // index into the program, or kNoInstruction
  std::uint32_t op = 0;                        // operator id
  std::uint64_t start_ps = 0;
  std::uint64_t end_ps = 0;
};

// First start and last end of any activity of one operator, whether or not tracing is on.
struct OpSpan {
  std::uint64_t start_ps = ~std::uint64_t{0};
  std::uint64_t end_ps = 0;
  bool seen() const { return end_ps >= start_ps && start_ps != ~std::uint64_t{0}; }
};

class TraceRecorder {
 public:
  explicit TraceRecorder(bool enabled) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  // A track per unit, named by its sc_object path ("chip.core0.mxu1").
  std::uint32_t add_track(std::string name) {
    tracks_.push_back(std::move(name));
    return static_cast<std::uint32_t>(tracks_.size() - 1);
  }
  void record(std::uint32_t track, std::uint32_t instruction, std::uint32_t op,
              std::uint64_t start_ps, std::uint64_t end_ps) {
    extend_span(op, start_ps, end_ps);
    record_stall(track, instruction, op, start_ps, end_ps);
  }
  // An interval a unit spent waiting on an operator's behalf (the sequencer's dispatch stalls):
  // traced, but not the operator's work, so its span (first start to last end of its
  // instructions on the units that execute them) does not take it in.
  void record_stall(std::uint32_t track, std::uint32_t instruction, std::uint32_t op,
                    std::uint64_t start_ps, std::uint64_t end_ps) {
    if (enabled_ && end_ps > start_ps)
      events_.push_back({track, instruction, op, start_ps, end_ps});
  }
  // For units whose activity comes in many small overlapping pieces (the memory's transactions):
  // extends the last interval of the track and operator when the new one touches it, so a
  // stream is one event, not thousands.
  void record_merged(std::uint32_t track, std::uint32_t op, std::uint64_t start_ps,
                     std::uint64_t end_ps);

  const std::vector<std::string>& tracks() const { return tracks_; }
  const std::vector<OpSpan>& op_spans() const { return spans_; }
  const std::vector<TraceEvent>& events() const { return events_; }

 private:
  bool enabled_;
  std::vector<std::string> tracks_;
  std::vector<TraceEvent> events_;
  std::unordered_map<std::uint64_t, std::size_t> last_merged_;  // by (track, op): event index
  std::vector<OpSpan> spans_;

  void extend_span(std::uint32_t op, std::uint64_t start_ps, std::uint64_t end_ps) {
    if (op >= spans_.size()) spans_.resize(op + 1);
    OpSpan& s = spans_[op];
    if (start_ps < s.start_ps) s.start_ps = start_ps;
    if (end_ps > s.end_ps) s.end_ps = end_ps;
  }
};

}  // namespace tpusim::models
