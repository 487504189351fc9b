#pragma once
// The controller of one DRAM channel (an HBM pseudo-channel or a DDR channel): a request queue
// of `queue_depth` bursts, scheduled at command level by FR-FCFS (the earliest-issuable command
// first; at equal times a row hit's column command first, then the oldest request) or FCFS (only
// the oldest request may issue), with an open- or close-page policy. No SystemC: the memory
// enqueues bursts as they arrive and advances the controller to the present when an initiator
// asks for a result (models/hbm/README.md).

#include <cstdint>
#include <deque>
#include <vector>

#include "models/common/histogram.h"
#include "models/hbm/dram_channel.h"

namespace tpusim::models {

enum class RowOutcome : std::uint8_t { kHit, kMiss, kConflict };

// One burst request to this channel.
struct DramRequest {
  DramAddress address;
  bool write = false;
  std::uint64_t arrival = 0;  // DRAM cycle it reaches the controller
  // Set when its column command issues (read through burst(), or filled in by schedule()):
  std::uint64_t done = 0;  // cycle its data has crossed the bus
  RowOutcome outcome = RowOutcome::kHit;
};

// Per-channel statistics: request outcomes counted by the controller, commands by the channel.
struct DramControllerStats {
  std::uint64_t reads = 0, writes = 0;  // bursts
  std::uint64_t read_bytes = 0, write_bytes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t activates = 0, precharges = 0;
  std::uint64_t refreshes = 0, refresh_cycles = 0;
  std::uint64_t data_bus_cycles = 0;
  std::uint64_t latency_cycles = 0;  // summed arrival-to-data over bursts
  std::uint64_t last_done_cycle = 0;
  LatencyHistogram latency;  // per burst, DRAM cycles; not a scalar field, read by the report

  template <class V>
  void visit(V& v) {
    v("reads", reads, "", "read bursts served");
    v("writes", writes, "", "write bursts served");
    v("read_bytes", read_bytes, "B", "bytes read");
    v("write_bytes", write_bytes, "B", "bytes written");
    v("row_hits", row_hits, "", "bursts whose row was already open");
    v("row_misses", row_misses, "", "bursts that found their bank closed (ACT)");
    v("row_conflicts", row_conflicts, "", "bursts that found another row open (PRE + ACT)");
    v("activates", activates, "", "ACT commands (each with its PRE, charged activate_energy)");
    v("precharges", precharges, "", "PRE commands, refresh precharge-all excluded");
    v("refreshes", refreshes, "", "all-bank refreshes");
    v("refresh_cycles", refresh_cycles, "tCK", "DRAM cycles the banks were held by refresh");
    v("data_bus_cycles", data_bus_cycles, "tCK", "DRAM cycles the data bus carried bursts");
    v("latency_cycles", latency_cycles, "tCK", "sum over bursts of arrival to last data beat");
    v("last_done_cycle", last_done_cycle, "tCK", "when the last burst's data crossed the bus");
  }
};

class DramController {
 public:
  using BurstId = std::uint64_t;

  explicit DramController(const DramSpec& spec);

  // Adds a burst that reaches the controller at cycle `arrival`; bursts must be added in the
  // order their arrivals become known, never with an arrival before a cycle already decided.
  BurstId enqueue(const DramAddress& address, bool write, std::uint64_t arrival);
  // Issues, in time order, every command that can issue at a cycle before `until`. A decision
  // at cycle t depends only on bursts that arrived by t, so advancing late changes nothing.
  void advance(std::uint64_t until);
  bool done(BurstId id) const { return slot(id).done; }
  const DramRequest& burst(BurstId id) const { return slot(id).request; }
  // A cycle before which burst `id` cannot have its column command decided (valid after
  // advance(), while the burst is not done): advance to just past it, then ask again.
  std::uint64_t not_before(BurstId id) const;
  // The caller has read the burst's result; its storage may be reused.
  void release(BurstId id);

  // Enqueues `batch` (oldest first) and advances until all of it is done, filling in `done`
  // and `outcome`; returns the latest `done`. For tests and one-shot use.
  std::uint64_t schedule(std::vector<DramRequest>& batch);

  const DramChannel& channel() const { return channel_; }
  // Request counts plus the channel's command counts, assembled for the report.
  DramControllerStats stats() const;

 private:
  struct Slot {
    DramRequest request;
    std::uint64_t entry = 0;  // cycle it entered the queue (>= arrival)
    bool started = false, done = false, released = false;
  };
  Slot& slot(BurstId id) { return bursts_[static_cast<std::size_t>(id - base_)]; }
  const Slot& slot(BurstId id) const { return bursts_[static_cast<std::size_t>(id - base_)]; }
  void admit();
  struct Queued;
  // The next command a queued burst needs, given its bank's row state.
  DramCommand next_command(const Queued& q) const;
  std::uint32_t bank_index(const DramAddress& a) const {
    return a.bank_group * banks_per_group_ + a.bank;
  }
  bool others_hit(const DramAddress& a, std::uint64_t entered_by) const;
  const Queued* queued(BurstId id) const;

  DramChannel channel_;
  const std::uint32_t queue_depth_;
  const bool fcfs_;
  const bool close_page_;
  const std::uint64_t burst_bytes_;
  const std::uint64_t column_interval_;  // the closest two column commands can be
  std::deque<Slot> bursts_;              // ids base_, base_ + 1, ...
  BurstId base_ = 0;
  BurstId next_admit_ = 0;  // oldest burst not yet in the queue
  // The queue, by bank, each list oldest first (ids grow with age): selection looks at each
  // bank's state once and can stop early within a bank (dram_controller.cpp).
  struct Queued {
    BurstId id;
    std::uint64_t entry;
    DramAddress address;
    bool write;
  };
  std::vector<std::vector<Queued>> queue_;
  std::uint32_t queued_ = 0;
  std::vector<std::uint32_t> busy_banks_;  // banks with a non-empty list, for iteration
  std::uint64_t next_decision_ = 0;        // cycle of the command advance() stopped before
  bool changed_ = true;                    // a burst arrived since advance() stopped
  std::uint32_t banks_per_group_;
  // When each of the last queue_depth bursts left the queue (its column command), in leaving
  // order: a burst enters only once the burst queue_depth places ahead of it has left.
  std::vector<std::uint64_t> left_at_;
  std::uint64_t entered_ = 0;
  std::uint32_t enter_slot_ = 0, leave_slot_ = 0;
  DramControllerStats stats_;
};

}  // namespace tpusim::models
