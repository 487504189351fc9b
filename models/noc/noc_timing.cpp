#include "models/noc/noc_timing.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace tpusim::models {

NocTiming::NocTiming(const NocSpec& spec, std::uint32_t cores, std::uint32_t memory_nodes,
                     Hertz clock)
    : mesh_(spec.topology == NocTopology::kMesh),
      cores_(cores),
      memory_nodes_(memory_nodes),
      columns_(std::max<std::uint32_t>(1, spec.mesh_columns)),
      seconds_per_byte_(1.0 / (double(spec.link_width.value()) * clock.value())),
      hop_s_(spec.hop_latency.seconds(clock).value()) {
  const std::uint32_t n = nodes();
  const auto node_name = [&](std::uint32_t node) {
    return node < cores_ ? "core" + std::to_string(node) : "ch" + std::to_string(node - cores_);
  };
  if (mesh_) {
    // Every grid position is a router, including those of an unfilled last row.
    const std::uint32_t rows = (n + columns_ - 1) / columns_;
    const char* dirs[] = {"east", "west", "north", "south"};
    for (std::uint32_t p = 0; p < rows * columns_; ++p)
      for (const char* d : dirs)
        names_.push_back("x" + std::to_string(p % columns_) + "y" + std::to_string(p / columns_) +
                         "." + d);
  } else {
    for (std::uint32_t node = 0; node < n; ++node) {
      names_.push_back(node_name(node) + ".to_switch");
      names_.push_back(node_name(node) + ".from_switch");
    }
  }
  timelines_.resize(names_.size());
  stats_.resize(names_.size());
  busy_s_.assign(names_.size(), 0.0);
}

std::uint32_t NocTiming::hops(std::uint32_t src, std::uint32_t dst) const {
  if (!mesh_) return 1;
  const int dx = int(src % columns_) - int(dst % columns_);
  const int dy = int(src / columns_) - int(dst / columns_);
  return static_cast<std::uint32_t>(std::abs(dx) + std::abs(dy));
}

double NocTiming::transfer(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, double head_s,
                           double tail_s, double now_s, UnqueuedLinks unqueued) {
  const double duration = link_seconds(bytes);
  // A crossbar's two links are the two sides of one switch traversal: one hop of latency.
  const double per_link_hop = mesh_ ? hop_s_ : 0;
  // The route is walked, not tabled: a table of every pair's route grows as nodes^2 x hops. On a
  // mesh: along the row to the destination's column (x_hops links), then along that column.
  std::uint32_t links = 2, x_hops = 0, position = 0, x_step = 0, y_step = 0;
  Dir x_dir = kEast, y_dir = kSouth;
  if (mesh_) {
    const std::uint32_t x = src % columns_, y = src / columns_;
    const std::uint32_t tx = dst % columns_, ty = dst / columns_;
    x_hops = x < tx ? tx - x : x - tx;
    links = x_hops + (y < ty ? ty - y : y - ty);
    position = src;
    if (x > tx) x_dir = kWest;
    if (y > ty) y_dir = kNorth;
    x_step = x_dir == kEast ? 1u : ~0u;  // unsigned arithmetic: ~0u steps back by one
    y_step = y_dir == kSouth ? columns_ : 0u - columns_;
  }
  double head = head_s, tail = tail_s;
  for (std::uint32_t k = 0; k < links; ++k) {
    std::uint32_t link;
    if (!mesh_) {
      link = k == 0 ? src * 2 : dst * 2 + 1;
    } else if (k < x_hops) {
      link = mesh_link(position, x_dir);
      position += x_step;
    } else {
      link = mesh_link(position, y_dir);
      position += y_step;
    }
    // The link may carry the data while it still arrives, but cannot finish before its tail.
    const double earliest = std::max(head, tail - duration);
    double start = earliest;
    const bool booked = mesh_ || !(k == 0 ? unqueued.source : unqueued.destination);
    if (booked) {
      LinkTimeline& timeline = timelines_[link];
      timeline.forget_before(now_s);
      start = timeline.reserve(earliest, duration);
    }
    NocLinkStats& s = stats_[link];
    s.bytes += bytes;
    ++s.transfers;
    busy_s_[link] += duration;
    head = start + per_link_hop;
    tail = std::max(tail, start + duration) + per_link_hop;
  }
  return mesh_ ? tail : tail + hop_s_;
}

}  // namespace tpusim::models
