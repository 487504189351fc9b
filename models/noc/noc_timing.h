#pragma once
// The on-chip interconnect between cores (their DMA engines) and memory channels, as a pure
// timing model used by the memory path. Topologies:
//   crossbar  every node has one link into the switch and one out of it; a transfer crosses the
//             source's link and the destination's link, one hop.
//   mesh      nodes on a grid of `mesh_columns` columns, row-major: the cores first, then the
//             memory channels (docs/config.md); dimension-order (XY) routing, one hop per link.
// A link carries `link_width` bytes per core cycle per direction. Each link keeps a timeline of
// busy intervals: a transfer reserves bytes / link_width on every link of its route (cut-through:
// link k+1 starts one hop_latency after link k), in the first gap that fits, so flows that share
// a link share its bandwidth and flows that do not share one do not interact. (Crossbar links
// that could never make a transfer wait are counted without being booked: UnqueuedLinks.)

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/busy_timeline.h"
#include "sim/base/spec/memory_spec.h"

namespace tpusim::models {

struct NocLinkStats {
  std::uint64_t bytes = 0;
  std::uint64_t transfers = 0;
  std::uint64_t busy_ps = 0;  // summed reservation time

  template <class V>
  void visit(V& v) {
    v("bytes", bytes, "B", "bytes carried");
    v("transfers", transfers, "", "transfers that crossed the link");
    v("busy_ps", busy_ps, "ps", "time the link was reserved");
  }
};

// Crossbar links the caller knows cannot delay a transfer: counted but not booked. A booking
// holds a link for bytes / link_width at the end of the data's window, so transfers whose
// windows overlap queue there even when the link is never asked for more than it carries, as
// the data in fact crosses while it leaves its source. A mesh books every link: its links
// also carry traffic passing through.
struct UnqueuedLinks {
  // The source's transfers occupy disjoint windows [head, tail], each at most one link's rate
  // (one memory channel's reads, each in its own stretch of the channel's time).
  bool source = false;
  // Everything sent to the destination comes from sources that together send at most one
  // link's rate (a core's reads from a memory whose peak is no more than the link's).
  bool destination = false;
};

// Busy intervals of one link: reserve() fills the first gap that fits.
using LinkTimeline = BusyTimeline<double>;

class NocTiming {
 public:
  NocTiming(const NocSpec& spec, std::uint32_t cores, std::uint32_t memory_nodes, Hertz clock);

  std::uint32_t core_node(std::uint32_t core) const { return core; }
  std::uint32_t memory_node(std::uint32_t channel) const { return cores_ + channel; }
  std::uint32_t nodes() const { return cores_ + memory_nodes_; }

  // Moves `bytes` from node `src` to node `dst`. Its data becomes available at the source from
  // `head_s` (first byte) to `tail_s` (last byte); returns when the last byte reaches `dst`.
  // `now_s` is the present: no later transfer starts before it, so older intervals are dropped.
  double transfer(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, double head_s,
                  double tail_s, double now_s, UnqueuedLinks unqueued = {});
  // Seconds one link takes to carry `bytes`.
  double link_seconds(std::uint64_t bytes) const { return double(bytes) * seconds_per_byte_; }
  // Latency only, for a request header that carries no payload.
  double latency(std::uint32_t src, std::uint32_t dst) const { return hops(src, dst) * hop_s_; }
  std::uint32_t hops(std::uint32_t src, std::uint32_t dst) const;

  std::size_t links() const { return names_.size(); }
  const std::string& link_name(std::size_t i) const { return names_[i]; }
  NocLinkStats link_stats(std::size_t i) const {
    NocLinkStats s = stats_[i];
    s.busy_ps = static_cast<std::uint64_t>(busy_s_[i] * 1e12 + 0.5);
    return s;
  }

 private:
  enum Dir { kEast, kWest, kNorth, kSouth };
  std::uint32_t mesh_link(std::uint32_t position, Dir d) const { return position * 4 + d; }

  const bool mesh_;
  const std::uint32_t cores_, memory_nodes_, columns_;
  const double seconds_per_byte_;  // one link
  const double hop_s_;
  std::vector<std::string> names_;
  std::vector<LinkTimeline> timelines_;
  std::vector<NocLinkStats> stats_;
  // Reserved time per link, summed unrounded: a 2 B transfer on a 4 KiB link is a fraction of a
  // picosecond, and rounding each one lost them all.
  std::vector<double> busy_s_;
};

}  // namespace tpusim::models
