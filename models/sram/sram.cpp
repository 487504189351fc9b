#include "models/sram/sram.h"

#include <algorithm>

namespace tpusim::models {

Sram::Sram(sc_core::sc_module_name name, const SimContext& ctx, const SramSpec& spec)
    : sc_core::sc_module(name),
      ctx_(ctx),
      spec_(spec),
      ports_(spec.ports) {
  if (ctx.functional) data_.assign(spec.capacity.value(), 0);
}

std::size_t Sram::best_port(std::uint64_t at, std::uint64_t duration, std::uint64_t& start) const {
  std::size_t best = 0;
  start = ports_[0].fit(at, duration);
  for (std::size_t p = 1; p < ports_.size() && start > at; ++p) {
    const std::uint64_t s = ports_[p].fit(at, duration);
    if (s < start) {
      start = s;
      best = p;
    }
  }
  return best;
}

std::uint64_t Sram::port_time(std::uint64_t bytes) const {
  const std::uint64_t period = ctx_.core_period.value();
  const std::uint64_t width = spec_.port_width.value();
  // bytes * period overflows past 2^64 / 1e9 fs only for transfers beyond a few GB.
  return std::max<std::uint64_t>(1, (bytes * period + width - 1) / width);
}

void Sram::count_access(std::uint64_t bytes, bool write, std::uint32_t op, std::uint64_t wait) {
  SramStats& s = stats_[op];
  (write ? s.write_bytes : s.read_bytes) += bytes;
  ++s.accesses;
  s.port_bytes += bytes;
  const std::uint64_t width = spec_.port_width.value();
  s.port_busy_cycles = (s.port_bytes + width - 1) / width;
  s.port_wait_cycles += wait;
}

sc_core::sc_time Sram::transfer(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                                std::uint32_t op) {
  forget_before(at);
  const std::uint64_t duration = port_time(bytes);
  std::uint64_t begin = 0;
  ports_[best_port(at.value(), duration, begin)].reserve(begin, duration);
  count_access(bytes, write, op, ctx_.cycles_covering(sc_core::sc_time::from_value(begin) - at));
  const std::uint64_t latency = write ? 0 : spec_.latency.cycles(ctx_.spec.clock).value();
  return on_edge(begin + duration) + ctx_.cycles(latency);
}

void Sram::forget_before(const sc_core::sc_time& at) {
  // Reservations a booking now could still overlap: back to the booking horizon (late bookings
  // with memory.model hbm) and to this booking itself.
  const std::uint64_t horizon = std::min<std::uint64_t>(ctx_.booking_horizon(), at.value());
  for (BusyTimeline<std::uint64_t>& port : ports_) port.forget_before(horizon);
}

sc_core::sc_time Sram::spread(const sc_core::sc_time& at, std::uint64_t bytes, bool reserve) {
  constexpr std::uint64_t kOpen = ~std::uint64_t{0} / 2;
  // One stream reads through one port at a time: each piece starts where the last one ended, on
  // whichever port is free first from there. So the stream takes the earliest port time at
  // which some port is free, and other traffic can only make it end later.
  std::uint64_t remaining = port_time(bytes), cursor = at.value();
  while (remaining > 0) {
    std::size_t best = 0;
    std::uint64_t start = 0, free_for = 0;
    for (std::size_t p = 0; p < ports_.size(); ++p) {
      std::uint64_t length = 0;
      const std::uint64_t s = ports_[p].next_free(cursor, kOpen, length);
      if (p == 0 || s < start) {
        best = p;
        start = s;
        free_for = length;
      }
    }
    const std::uint64_t take = std::min(remaining, free_for);
    if (reserve) ports_[best].reserve(start, take);
    cursor = start + take;
    remaining -= take;
  }
  return on_edge(cursor);
}

sc_core::sc_time Sram::spread_hold(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                                   std::uint32_t op) {
  forget_before(at);
  const sc_core::sc_time end = spread(at, bytes, true);
  // What the pieces were stretched by the other traffic.
  const std::uint64_t width = spec_.port_width.value();
  const std::uint64_t busy = (bytes + width - 1) / width, span = ctx_.cycles_covering(end - at);
  count_access(bytes, write, op, span - std::min(busy, span));
  return end;
}

sc_core::sc_time Sram::spread_transfer(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                                       std::uint32_t op) {
  const std::uint64_t latency = write ? 0 : spec_.latency.cycles(ctx_.spec.clock).value();
  return spread_hold(at, bytes, write, op) + ctx_.cycles(latency);
}

}  // namespace tpusim::models
