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
#include "models/hbm/dram_recording.h"
#include "models/hbm/dram_timeline.h"
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
  // memory.model hbm: ACT commands and bytes on the DRAM data bus (whole bursts), for energy
  std::uint64_t activates = 0, burst_bytes = 0;
  std::uint64_t noc_byte_hops = 0;  // bytes x hops (crossbar 1, mesh its links), for NoC energy

  template <class V>
  void visit(V& v) {
    v("read_bytes", read_bytes, "B", "bytes read from off-chip memory");
    v("write_bytes", write_bytes, "B", "bytes written to off-chip memory");
    v("requests", requests, "", "transactions served");
    v("latency_ps", latency_ps, "ps", "sum over requests of arrival-to-completion time");
    v("row_hits", row_hits, "", "bursts that found their row open (model hbm)");
    v("row_misses", row_misses, "", "bursts that activated a closed bank (model hbm)");
    v("row_conflicts", row_conflicts, "", "bursts that closed another row first (model hbm)");
    v("activates", activates, "", "ACT commands issued for its bursts (model hbm)");
    v("burst_bytes", burst_bytes, "B", "bytes the DRAM data bus moved: whole bursts (model hbm)");
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

// Transactions whose answer may come later (what TLM-2.0's approximately-timed protocol expresses
// with BEGIN_REQ now and BEGIN_RESP later, without an event per transaction): a DMA engine posts
// each chunk when it issues it and asks for its completion when it needs the slot again, so the
// DRAM controllers decide every command knowing all requests that had arrived by then
// (models/hbm/README.md). Simple and ideal memory answer at once.
class DeferredMemoryIf : public virtual sc_core::sc_interface {
 public:
  using Ticket = std::uint32_t;
  // A transfer of `bytes` at `addr` whose data is at the memory's port from `at`; in functional
  // mode `data` is read from or written to the store at once.
  virtual Ticket post(bool write, std::uint64_t addr, std::uint8_t* data, std::uint64_t bytes,
                      const sc_core::sc_time& at, std::uint32_t op, std::uint32_t core) = 0;
  // True once the ticket's completion is decided (asking does not wait).
  virtual bool ready(Ticket ticket) = 0;
  // When the last byte arrived (at the core for reads, in memory for writes); waits until that
  // is decided. The ticket is then free.
  virtual sc_core::sc_time complete(Ticket ticket) = 0;
};

class Memory : public sc_core::sc_module, public DeferredMemoryIf {
 public:
  tlm_utils::multi_passthrough_target_socket<Memory> socket;

  Memory(sc_core::sc_module_name name, const SimContext& ctx);

  Ticket post(bool write, std::uint64_t addr, std::uint8_t* data, std::uint64_t bytes,
              const sc_core::sc_time& at, std::uint32_t op, std::uint32_t core) override;
  bool ready(Ticket ticket) override;
  sc_core::sc_time complete(Ticket ticket) override;

  // The run is over at `end`: the DRAM controllers settle what fell due until then (refresh).
  void end_run(const sc_core::sc_time& end);

  const PerOpStats<MemoryStats>& stats() const { return stats_; }
  const SimpleMemoryTiming& timing() const { return timing_; }
  BackingStore& store() { return store_; }
  // memory.model hbm: the pseudo-channels' statistics (none otherwise).
  std::size_t dram_channels() const { return dram_.size() + timeline_.size(); }
  DramControllerStats dram_stats(std::size_t channel) const {
    return timeline_.empty() ? dram_[channel].stats() : timeline_[channel].stats();
  }
  const NocTiming& noc() const { return noc_; }

 private:
  // The bursts of one transaction in one pseudo-channel: one transfer of its controller.
  struct Piece {
    std::uint32_t channel = 0;
    DramController::TransferId transfer = 0;
    DramController::BurstId first = 0;  // ids first, first + 1, ...
    std::uint32_t bursts = 0;
    std::uint64_t bytes = 0;
  };
  struct Transaction {
    bool write = false;
    bool decided = false;
    bool horizon_open = false;
    bool live = false;  // posted and not yet completed: a ticket completes once
    std::uint32_t op = 0, core = 0;
    double arrival_s = 0, done_s = 0;
    std::uint64_t arrival = 0;             // arrival_s in SystemC time units (BookingHorizon)
    std::uint64_t last_arrival_cycle = 0;  // model hbm: no burst is decided before this
    std::vector<Piece> pieces;             // model hbm
  };

  // b_transport is post + complete (it may wait, as LT allows) for initiators other than DMA.
  void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

  // Returns when the last byte has reached its destination, the interconnect crossed.
  double simple_access(std::uint64_t addr, std::uint64_t bytes, bool write, double arrival_s,
                       std::uint32_t core, MemoryStats& s);
  // The bank-level model: the request's bursts go to their pseudo-channels' controllers.
  void dram_post(Transaction& t, std::uint64_t addr, std::uint64_t bytes);
  // Advances the controllers of `t` to the present; true once every burst is done, and then
  // the data's trip back over the interconnect and the statistics are settled.
  bool dram_decide(Transaction& t);
  bool timeline_decide(Transaction& t);
  // Books each piece's data back over the interconnect and settles the statistics.
  template <class Result, class Release>
  void complete_pieces(Transaction& t, const Result& result, const Release& release);
  // The DRAM cycle from which requests may still arrive: commands before it are decidable.
  std::uint64_t decidable_until() const;
  // The booking horizon (SimContext::booking_horizon) in seconds.
  double horizon_seconds() const;
  void finish(Transaction& t);

  const SimContext& ctx_;
  SimpleMemoryTiming timing_;
  AddressMap address_map_;
  AddressMap::Shifts shifts_;
  std::vector<DramController> dram_;    // controller.engine command
  std::vector<DramTimeline> timeline_;  // controller.engine timeline
  // The timeline channels' calls, when TPUSIM_DRAM_RECORD names a file (DramRecording).
  std::unique_ptr<DramRecorder> recorder_;
  NocTiming noc_;
  double dram_ck_hz_;
  std::uint64_t dram_burst_cycles_;
  // The crossbar links read data can never queue on (UnqueuedLinks): a channel's own,
  // when each of its reads has its own stretch of the channel's time (the simple model and the
  // timeline engine) and the link is no slower than the channel; a core's, when the link is no
  // slower than the whole memory.
  UnqueuedLinks read_links_;
  std::vector<Transaction> transactions_;  // by ticket
  std::vector<Ticket> free_tickets_;
  // dram_post scratch: the piece of each channel the transaction touched; its bursts, mapped.
  std::vector<std::uint32_t> piece_of_channel_;
  std::vector<DramAddress> mapped_;
  std::vector<std::uint32_t> piece_fill_;
  std::vector<DramAddress> sorted_;
  // The last conversions of the two above, by the sc_time value they were made for: asked for
  // several times per transaction, mostly at one present.
  mutable std::uint64_t until_value_ = ~std::uint64_t{0}, until_cycle_ = 0;
  mutable std::uint64_t horizon_value_ = ~std::uint64_t{0};
  mutable double horizon_s_ = 0;
  PerOpStats<MemoryStats> stats_;
  BackingStore store_;
  std::uint32_t track_;
};

}  // namespace tpusim::models
