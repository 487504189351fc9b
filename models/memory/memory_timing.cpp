#include "models/memory/memory_timing.h"

#include <algorithm>

namespace tpusim::models {

SimpleMemoryTiming::SimpleMemoryTiming(const MemorySpec& spec, Hertz core_clock)
    : ideal_(spec.model == MemoryModel::kIdeal),
      channel_bw_(spec.bandwidth.bytes_per_second(core_clock).value() / spec.channels),
      latency_s_(spec.latency.seconds(core_clock).value()),
      channels_(spec.channels) {}

double SimpleMemoryTiming::access(std::uint64_t addr, std::uint64_t bytes, double arrival_s,
                                  double present_s) {
  double done = arrival_s;
  if (ideal_ || bytes == 0) return done;
  // Split at interleave boundaries; each piece queues on its own channel.
  std::uint64_t at = addr;
  const std::uint64_t end = addr + bytes;
  while (at < end) {
    const std::uint64_t block_end = (at / kChannelInterleaveBytes + 1) * kChannelInterleaveBytes;
    const std::uint64_t piece = std::min(end, block_end) - at;
    BusyTimeline<double>& channel = channels_[channel_of(at)];
    channel.forget_before(present_s);
    const double transfer = double(piece) / channel_bw_;
    const double start = channel.reserve(arrival_s, transfer);
    done = std::max(done, start + transfer + latency_s_);
    at += piece;
  }
  return done;
}

}  // namespace tpusim::models
