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
  // Every route, worked out once: transfer() runs for each piece of every DMA chunk.
  std::vector<std::uint32_t> links;
  route_start_.reserve(std::size_t{n} * n + 1);
  for (std::uint32_t src = 0; src < n; ++src)
    for (std::uint32_t dst = 0; dst < n; ++dst) {
      route_start_.push_back(static_cast<std::uint32_t>(route_links_.size()));
      route(src, dst, links);
      route_links_.insert(route_links_.end(), links.begin(), links.end());
    }
  route_start_.push_back(static_cast<std::uint32_t>(route_links_.size()));
}

std::uint32_t NocTiming::hops(std::uint32_t src, std::uint32_t dst) const {
  if (!mesh_) return 1;
  const int dx = int(src % columns_) - int(dst % columns_);
  const int dy = int(src / columns_) - int(dst / columns_);
  return static_cast<std::uint32_t>(std::abs(dx) + std::abs(dy));
}

void NocTiming::route(std::uint32_t src, std::uint32_t dst, std::vector<std::uint32_t>& out) const {
  out.clear();
  if (!mesh_) {
    out.push_back(src * 2);
    out.push_back(dst * 2 + 1);
    return;
  }
  std::uint32_t x = src % columns_, y = src / columns_;
  const std::uint32_t tx = dst % columns_, ty = dst / columns_;
  while (x != tx) {
    out.push_back(mesh_link(y * columns_ + x, x < tx ? kEast : kWest));
    x = x < tx ? x + 1 : x - 1;
  }
  while (y != ty) {
    out.push_back(mesh_link(y * columns_ + x, y < ty ? kSouth : kNorth));
    y = y < ty ? y + 1 : y - 1;
  }
}

double NocTiming::transfer(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, double head_s,
                           double tail_s, double now_s) {
  const std::size_t pair = std::size_t{src} * nodes() + dst;
  const std::uint32_t* const links = route_links_.data();
  const double duration = double(bytes) * seconds_per_byte_;
  // A crossbar's two links are the two sides of one switch traversal: one hop of latency.
  const double per_link_hop = mesh_ ? hop_s_ : 0;
  double head = head_s, tail = tail_s;
  for (std::uint32_t r = route_start_[pair]; r < route_start_[pair + 1]; ++r) {
    const std::uint32_t link = links[r];
    LinkTimeline& timeline = timelines_[link];
    timeline.forget_before(now_s);
    // The link may carry the data while it still arrives, but cannot finish before its tail.
    const double start = timeline.reserve(std::max(head, tail - duration), duration);
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
