#pragma once
// The simple off-chip memory: `channels` independent channels share the peak bandwidth equally;
// consecutive 256 B blocks of the address space go to consecutive channels, so a stream spreads
// over all of them. The channel is the sum of the block number's base-`channels` digits, as
// memory controllers hash upper address bits into the channel: a power-of-two stride (the rows
// of a tile cut from a wider matrix) then also spreads instead of hitting a few channels. A
// request occupies its channel for bytes / channel bandwidth, in the first gap of the channel's
// timeline at or after its arrival, and its data arrives `latency` after that. `ideal` memory
// (SCALE-Sim's assumption) answers at once.

#include <cstdint>
#include <vector>

#include "models/common/busy_timeline.h"
#include "sim/base/spec/memory_spec.h"

namespace tpusim::models {

inline constexpr std::uint64_t kChannelInterleaveBytes = 256;

class SimpleMemoryTiming {
 public:
  SimpleMemoryTiming(const MemorySpec& spec, Hertz core_clock);

  // A request of `bytes` at `addr` arriving at `arrival_s` seconds; returns when its last byte
  // has arrived. Requests come in any order of arrival (a write arrives once its data has crossed
  // the interconnect), none before `present_s`, the simulated present.
  double access(std::uint64_t addr, std::uint64_t bytes, double arrival_s, double present_s);

  // How long a channel takes to move `bytes` (its share of the bandwidth).
  double transfer_seconds(std::uint64_t bytes) const {
    return ideal_ ? 0.0 : double(bytes) / channel_bw_;
  }

  std::uint32_t channel_of(std::uint64_t addr) const {
    const std::uint64_t channels = channels_.size();
    if (channels == 1) return 0;
    std::uint64_t digits = 0;
    for (std::uint64_t block = addr / kChannelInterleaveBytes; block != 0; block /= channels)
      digits += block % channels;
    return static_cast<std::uint32_t>(digits % channels);
  }

 private:
  bool ideal_;
  double channel_bw_;
  double latency_s_;
  std::vector<BusyTimeline<double>> channels_;
};

}  // namespace tpusim::models
