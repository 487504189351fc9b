#pragma once
// One on-chip SRAM (vector, accumulator or common memory): `ports` independent ports, each moving
// `port_width` bytes per cycle. An access takes the port that frees first; units contend here.
// Accesses are requested in simulated-time order (units wait() until an access starts before
// asking), so a busy-until time per port is an exact FCFS arbiter.

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "models/common/sim_context.h"
#include "models/common/stats.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

struct SramStats {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t accesses = 0;
  std::uint64_t port_busy_cycles = 0;
  std::uint64_t port_wait_cycles = 0;

  template <class V>
  void visit(V& v) {
    v("read_bytes", read_bytes, "B", "bytes read");
    v("write_bytes", write_bytes, "B", "bytes written");
    v("accesses", accesses, "", "port reservations");
    v("port_busy_cycles", port_busy_cycles, "cycles", "port-cycles spent moving data");
    v("port_wait_cycles", port_wait_cycles, "cycles", "cycles accesses waited for a free port");
  }
};

class Sram : public sc_core::sc_module {
 public:
  Sram(sc_core::sc_module_name name, const SimContext& ctx, const SramSpec& spec);

  // Moves `bytes` through one port, starting no earlier than `at`. Returns when the data is
  // through the port (plus the array's latency for reads).
  sc_core::sc_time transfer(const sc_core::sc_time& at, std::uint64_t bytes, bool write,
                            std::uint32_t op);
  // Holds one port for `cycles` from no earlier than `at` (a unit streaming at its own pace),
  // counting `bytes`. Returns when the hold starts.
  sc_core::sc_time hold(const sc_core::sc_time& at, std::uint64_t cycles, std::uint64_t bytes,
                        bool write, std::uint32_t op);
  // Counts traffic that uses a unit's dedicated path rather than a shared port.
  void count(std::uint64_t bytes, bool write, std::uint32_t op) {
    SramStats& s = stats_[op];
    (write ? s.write_bytes : s.read_bytes) += bytes;
  }
  // When a port is next free at or after `at`.
  sc_core::sc_time earliest_free(const sc_core::sc_time& at) const;

  const SramSpec& spec() const { return spec_; }
  const PerOpStats<SramStats>& stats() const { return stats_; }
  std::uint8_t* data() { return data_.empty() ? nullptr : data_.data(); }

 private:
  std::size_t free_port() const;

  const SimContext& ctx_;
  const SramSpec spec_;
  std::vector<sc_core::sc_time> port_free_at_;
  PerOpStats<SramStats> stats_;
  std::vector<std::uint8_t> data_;  // functional mode only
};

}  // namespace tpusim::models
