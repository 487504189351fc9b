#pragma once
// Off-chip memory behind a TLM-2.0 loosely-timed target socket (STYLE rule 15): initiators call
// b_transport with their local time offset; the memory adds the time the request takes,
// contention included. The detailed HBM model plugs into the same socket.

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/common/sim_context.h"
#include "models/common/stats.h"
#include "models/hbm/address_map.h"
#include "models/hbm/dram_controller.h"
#include "models/memory/memory_timing.h"
#include "models/noc/noc_timing.h"

namespace tpusim::models {

// Which operator (and core) a transaction belongs to, for per-operator statistics.
struct OpExtension : tlm::tlm_extension<OpExtension> {
  std::uint32_t op = 0;
  std::uint32_t core = 0;
  tlm::tlm_extension_base* clone() const override { return new OpExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const OpExtension&>(other);
  }
};

struct MemoryStats {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t requests = 0;
  std::uint64_t latency_ps = 0;  // summed request latency (arrival to last byte)
  // memory.model hbm: the row outcome of each burst, so activation energy is per operator
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t noc_byte_hops = 0;  // bytes x links crossed, for NoC energy

  template <class V>
  void visit(V& v) {
    v("read_bytes", read_bytes, "B", "bytes read from off-chip memory");
    v("write_bytes", write_bytes, "B", "bytes written to off-chip memory");
    v("requests", requests, "", "transactions served");
    v("latency_ps", latency_ps, "ps", "sum over requests of arrival-to-completion time");
    v("row_hits", row_hits, "", "bursts that found their row open (model hbm)");
    v("row_misses", row_misses, "", "bursts that activated a closed bank (model hbm)");
    v("row_conflicts", row_conflicts, "", "bursts that closed another row first (model hbm)");
    v("noc_byte_hops", noc_byte_hops, "B", "bytes times interconnect hops they crossed");
  }
};

// Pages allocated on first touch, so a 32 GiB memory costs nothing until used (functional mode).
class BackingStore {
 public:
  void read(std::uint64_t addr, std::uint8_t* out, std::uint64_t bytes);
  void write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t bytes);

 private:
  static constexpr std::uint64_t kPage = 64 * 1024;
  std::uint8_t* page(std::uint64_t index, bool create);
  std::unordered_map<std::uint64_t, std::unique_ptr<std::uint8_t[]>> pages_;
};

class Memory : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Memory> socket;

  Memory(sc_core::sc_module_name name, const SimContext& ctx);

  const PerOpStats<MemoryStats>& stats() const { return stats_; }
  const SimpleMemoryTiming& timing() const { return timing_; }
  BackingStore& store() { return store_; }
  // memory.model hbm: one controller per pseudo-channel (empty otherwise).
  const std::vector<DramController>& controllers() const { return dram_; }
  const NocTiming& noc() const { return noc_; }

 private:
  void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

  // Both return when the last byte has reached its destination (the core for reads, the
  // memory for writes), the interconnect crossed; times in seconds.
  double simple_access(std::uint64_t addr, std::uint64_t bytes, bool write, double arrival_s,
                       std::uint32_t core, MemoryStats& s);
  // The bank-level model: the request's bursts go to their pseudo-channels' controllers, one
  // batch per channel (models/hbm/README.md).
  double dram_access(std::uint64_t addr, std::uint64_t bytes, bool write, double arrival_s,
                     std::uint32_t core, MemoryStats& s);

  const SimContext& ctx_;
  SimpleMemoryTiming timing_;
  AddressMap address_map_;
  std::vector<DramController> dram_;
  NocTiming noc_;
  double dram_ck_hz_;
  // dram_access scratch: bursts per channel, the channels a request touched, bytes per channel.
  std::vector<std::vector<DramRequest>> pending_;
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint64_t> piece_bytes_;
  PerOpStats<MemoryStats> stats_;
  BackingStore store_;
  std::uint32_t track_;
};

}  // namespace tpusim::models
