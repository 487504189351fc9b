#include "models/sram/sram.h"

#include <algorithm>

namespace tpusim::models {

Sram::Sram(sc_core::sc_module_name name, const SimContext& ctx, const SramSpec& spec)
    : sc_core::sc_module(name),
      ctx_(ctx),
      spec_(spec),
      port_free_at_(spec.ports, sc_core::SC_ZERO_TIME) {
  if (ctx.functional) data_.assign(spec.capacity.value(), 0);
}

std::size_t Sram::free_port() const {
  return static_cast<std::size_t>(
      std::min_element(port_free_at_.begin(), port_free_at_.end()) - port_free_at_.begin());
}

sc_core::sc_time Sram::earliest_free(const sc_core::sc_time& at) const {
  return std::max(at, port_free_at_[free_port()]);
}

sc_core::sc_time Sram::hold(const sc_core::sc_time& at, std::uint64_t cycles, std::uint64_t bytes,
                            bool write, std::uint32_t op) {
  const std::size_t port = free_port();
  const sc_core::sc_time start = std::max(at, port_free_at_[port]);
  port_free_at_[port] = start + ctx_.cycles(cycles);
  SramStats& s = stats_[op];
  (write ? s.write_bytes : s.read_bytes) += bytes;
  ++s.accesses;
  s.port_busy_cycles += cycles;
  s.port_wait_cycles += ctx_.cycles_covering(start - at);
  return start;
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
