#pragma once
// One on-chip SRAM (vector, accumulator or common memory): `ports` independent ports, each moving
// `port_width` bytes per cycle. An access takes the port that can serve it first; units contend
// here. Accesses are not requested in time order (a DMA load books the port for when its data
// will arrive from memory), so each port keeps a timeline and an access takes the first gap that
// fits at or after the time it can start: a port booked ahead still serves accesses that can go
// now.

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "models/common/busy_timeline.h"
#include "models/common/sim_context.h"
#include "models/common/stats.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

struct SramStats {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t accesses = 0;
  std::uint64_t port_bytes = 0;        // through the shared ports
  std::uint64_t port_busy_cycles = 0;  // port_bytes / port_width, rounded up
  std::uint64_t port_wait_cycles = 0;

  template <class V>
  void visit(V& v) {
    v("read_bytes", read_bytes, "B", "bytes read");
    v("write_bytes", write_bytes, "B", "bytes written");
    v("accesses", accesses, "", "port reservations");
    v("port_bytes", port_bytes, "B", "bytes through the shared ports");
    v("port_busy_cycles", port_busy_cycles, "cycles",
      "port-cycles spent moving data (port_bytes / port_width, rounded up)");
    v("port_wait_cycles", port_wait_cycles, "cycles", "cycles accesses waited for a free port");
  }
};

class Sram : public sc_core::sc_module {
 public:
  Sram(sc_core::sc_module_name name, const SimContext& ctx, const SramSpec& spec);

  // Port time is exact: `bytes` take bytes / port_width cycles of one port, so eight 512 B DMA
  // chunks share one cycle of a 4 KiB port. The times returned are rounded up to whole cycles.

  // Moves `bytes` through one port in one piece, starting no earlier than `at`. Returns when
  // the data is through the port (plus the array's latency for reads).
  sc_core::sc_time transfer(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                            std::uint32_t op);
  // Port time for `bytes` in the earliest free moments of any port from `at`, not necessarily in
  // one piece, but one piece at a time (a stream never holds two ports at once): for a unit that
  // reads or writes a fraction of a port's width each cycle over a window (the MXU, the VPU), which
  // the SRAM's banks interleave with other traffic. Returns when the last piece ends; spread_hold()
  // also books the pieces and counts `bytes`, and spread_transfer() adds the array's latency for
  // reads.
  sc_core::sc_time spread_end(const sc_core::sc_time& at, std::uint64_t bytes) {
    return spread(at, bytes, false);
  }
  sc_core::sc_time spread_hold(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                               std::uint32_t op);
  sc_core::sc_time spread_transfer(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                                   std::uint32_t op);

  const SramSpec& spec() const { return spec_; }
  const PerOpStats<SramStats>& stats() const { return stats_; }
  std::uint8_t* data() { return data_.empty() ? nullptr : data_.data(); }

 private:
  sc_core::sc_time spread(const sc_core::sc_time& at, std::uint64_t bytes, bool reserve);
  void forget_before(const sc_core::sc_time& at);
  // The port whose first gap of `duration` at or after `at` starts first, and that start.
  std::size_t best_port(std::uint64_t at, std::uint64_t duration, std::uint64_t& start) const;
  // Port time of `bytes`, in SystemC time units (at least one).
  std::uint64_t port_time(std::uint64_t bytes) const;
  // A time rounded up to the next core clock edge.
  sc_core::sc_time on_edge(std::uint64_t value) const {
    const std::uint64_t period = ctx_.core_period.value();
    return ctx_.core_period * double((value + period - 1) / period);
  }
  // Counts an access of `bytes` through the ports that waited `wait` cycles for them.
  void count_access(std::uint64_t bytes, bool write, std::uint32_t op, std::uint64_t wait);

  const SimContext& ctx_;
  const SramSpec spec_;
  std::vector<BusyTimeline<std::uint64_t>> ports_;  // in sc_time resolution units
  PerOpStats<SramStats> stats_;
  std::vector<std::uint8_t> data_;  // functional mode only
};

}  // namespace tpusim::models
