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

sc_core::sc_time Sram::earliest_free(const sc_core::sc_time& at, std::uint64_t cycles) const {
  std::uint64_t start = 0;
  best_port(at.value(), ctx_.cycles(cycles).value(), start);
  return sc_core::sc_time::from_value(start);
}

sc_core::sc_time Sram::hold(const sc_core::sc_time& at, std::uint64_t cycles, std::uint64_t bytes,
                            bool write, std::uint32_t op) {
  forget_before(at);
  const std::uint64_t duration = ctx_.cycles(cycles).value();
  std::uint64_t begin = 0;
  const std::size_t port = best_port(at.value(), duration, begin);
  ports_[port].reserve(begin, duration);
  const sc_core::sc_time start = sc_core::sc_time::from_value(begin);
  SramStats& s = stats_[op];
  (write ? s.write_bytes : s.read_bytes) += bytes;
  ++s.accesses;
  s.port_busy_cycles += cycles;
  s.port_wait_cycles += ctx_.cycles_covering(start - at);
  return start;
}

void Sram::forget_before(const sc_core::sc_time& at) {
  // Reservations a booking now could still overlap: back to the booking horizon (late bookings
  // with memory.model hbm) and to this booking itself.
  const std::uint64_t horizon =
      std::min(sc_core::sc_time(ctx_.booking_horizon_s(), sc_core::SC_SEC).value(), at.value());
  for (BusyTimeline<std::uint64_t>& port : ports_) port.forget_before(horizon);
}

sc_core::sc_time Sram::spread(const sc_core::sc_time& at, std::uint64_t cycles, bool reserve) {
  constexpr std::uint64_t kOpen = ~std::uint64_t{0} / 2;
  std::uint64_t remaining = ctx_.cycles(cycles).value(), end = at.value();
  // Each port is searched from past the pieces already taken on it.
  std::vector<std::uint64_t> from(ports_.size(), at.value());
  while (remaining > 0) {
    std::size_t best = 0;
    std::uint64_t start = 0, free_for = 0;
    for (std::size_t p = 0; p < ports_.size(); ++p) {
      std::uint64_t length = 0;
      const std::uint64_t s = ports_[p].next_free(from[p], kOpen, length);
      if (p == 0 || s < start) {
        best = p;
        start = s;
        free_for = length;
      }
    }
    const std::uint64_t take = std::min(remaining, free_for);
    // Booking changes only the chosen port past from[best], which no later search reads.
    if (reserve) ports_[best].reserve(start, take);
    from[best] = start + take;
    end = std::max(end, start + take);
    remaining -= take;
  }
  return sc_core::sc_time::from_value(end);
}

sc_core::sc_time Sram::spread_hold(const sc_core::sc_time& at, std::uint64_t cycles,
                                   std::uint64_t bytes, bool write, std::uint32_t op) {
  forget_before(at);
  const sc_core::sc_time end = spread(at, cycles, true);
  SramStats& s = stats_[op];
  (write ? s.write_bytes : s.read_bytes) += bytes;
  ++s.accesses;
  s.port_busy_cycles += cycles;
  // What the pieces were stretched by the other traffic.
  const std::uint64_t span = ctx_.cycles_covering(end - at);
  s.port_wait_cycles += span - std::min(cycles, span);
  return end;
}

sc_core::sc_time Sram::transfer(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                                std::uint32_t op) {
  const std::uint64_t width = spec_.port_width.value();
  const std::uint64_t cycles = std::max<std::uint64_t>(1, (bytes + width - 1) / width);
  const sc_core::sc_time start = hold(at, cycles, bytes, write, op);
  const std::uint64_t latency = write ? 0 : spec_.latency.cycles(ctx_.spec.clock).value();
  return start + ctx_.cycles(cycles + latency);
}

}  // namespace tpusim::models
