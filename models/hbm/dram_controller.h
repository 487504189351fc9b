#pragma once
// The controller of one DRAM channel (an HBM pseudo-channel or a DDR channel): a request queue
// of `queue_depth` bursts, scheduled at command level by FR-FCFS (the earliest-issuable command
// first; at equal times a row hit's column command first, then the oldest request) or FCFS (only
// the oldest request may issue), with an open- or close-page policy. No SystemC: the memory
// enqueues bursts as they arrive and advances the controller to the present when an initiator
// asks for a result (models/hbm/README.md).

#include <cstdint>
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
  // Filled in by schedule():
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
  using TransferId = std::uint64_t;
  // A transfer is a group of bursts whose completion the caller reads once (the bursts of one
  // memory transaction in this channel), counted as each burst's column command issues.
  struct Transfer {
    std::uint32_t bursts = 0, done = 0;
    std::uint64_t first_done = ~std::uint64_t{0};  // earliest cycle a burst's data crossed the bus
    std::uint64_t last_done = 0;                   // latest
    std::uint32_t hits = 0, misses = 0, conflicts = 0;  // by the first command each burst needed
    bool released = false;
  };

  explicit DramController(const DramSpec& spec);

  // Starts an empty transfer.
  TransferId open_transfer();
  // Adds a burst of `transfer` that reaches the controller at cycle `arrival`; bursts must be
  // added in the order their arrivals become known, never with an arrival before a cycle
  // already decided.
  BurstId enqueue(const DramAddress& address, bool write, std::uint64_t arrival,
                  TransferId transfer);
  // Issues, in time order, every command that can issue at a cycle before `until`. A decision
  // at cycle t depends only on bursts that arrived by t, so advancing late changes nothing.
  void advance(std::uint64_t until);
  bool done(BurstId id) const { return id < base_ || slot(id).done; }
  const Transfer& transfer(TransferId t) const { return transfers_[t & transfer_mask_]; }
  // A cycle before which burst `id` cannot have its column command decided (valid after
  // advance(), while the burst is not done): advance to just past it, then ask again.
  std::uint64_t not_before(BurstId id) const;
  // The caller has read the transfer's result; its storage may be reused.
  void release(TransferId t) {
    transfers_[t & transfer_mask_].released = true;
    while (transfer_base_ < transfer_end_ && transfer(transfer_base_).released) ++transfer_base_;
  }

  // Enqueues `batch` (oldest first) and advances until all of it is done, filling in `done`
  // and `outcome`; returns the latest `done`. For tests and one-shot use.
  std::uint64_t schedule(std::vector<DramRequest>& batch);

  const DramChannel& channel() const { return channel_; }
  // Request counts plus the channel's command counts, assembled for the report.
  DramControllerStats stats() const;

 private:
  static constexpr std::uint32_t kNil = ~0u;
  // A burst until its column command issues (kept until the oldest not done passes it).
  struct Slot {
    DramAddress address;
    bool write = false, started = false, done = false;
    RowOutcome outcome = RowOutcome::kHit;
    std::uint32_t queued = kNil;  // its place in pool_ while queued
    std::uint64_t arrival = 0;
    TransferId transfer = 0;
  };
  // A queued burst: what selection reads of it, linked oldest first into the queue and into its
  // bank's list (a place in pool_, so a burst leaves without moving the others).
  struct Queued {
    BurstId id;
    std::uint64_t entry;  // cycle it entered the queue (>= arrival)
    std::uint32_t row;
    std::uint16_t bank;  // DramChannel::bank_index
    std::uint8_t group;
    bool write;
    std::uint32_t prev, next;            // the queue
    std::uint32_t bank_prev, bank_next;  // the bank's list
  };
  // One bank's queued bursts and what selection needs to know of them: kept as bursts enter
  // and leave, rebuilt when the bank's open row changes (only a row hit leaves the queue, so
  // the bursts that need a row command change only then or when one enters).
  struct BankQueue {
    std::uint32_t first = kNil, last = kNil;  // its list, oldest first
    std::uint32_t hits = 0, others = 0;       // queued bursts that hit / miss the open row
    std::uint64_t first_hit_entry = 0;        // least entry over the hits (the PRE hold-back)
    bool first_hit_stale = false;             // a hit with that entry left: recompute on demand
    BurstId oldest_other = 0;                 // the oldest burst that needs a row command
    std::uint64_t oldest_other_entry = 0;
    std::uint32_t listed = kNil;  // position in row_banks_
    std::uint8_t group = 0;
    // The bank's best row command (row_at kNoCycle: none may issue). It depends on the bank's
    // queue and state and on the ACT floors only, so it is kept until one of them changes: in
    // a stream, column commands elsewhere leave it as it was.
    bool row_known = false;
    DramCommand row_cmd = DramCommand::kActivate;
    std::uint64_t row_at = 0;
    BurstId row_id = 0;
  };
  // The command selection settled on.
  struct Choice {
    std::uint64_t at;
    BurstId id;
    DramCommand cmd;
    bool column;
    std::uint32_t bank;
    std::uint32_t place;  // in pool_, for a column command
  };

  Slot& slot(BurstId id) { return ring_[static_cast<std::size_t>(id) & ring_mask_]; }
  const Slot& slot(BurstId id) const { return ring_[static_cast<std::size_t>(id) & ring_mask_]; }
  // Moves bursts from the line into the queue while it has room; returns the place of the
  // first that entered (kNil if none), the others following it in the queue.
  std::uint32_t admit();
  void leave(std::uint32_t place);
  void select_frfcfs(Choice& best);
  void select_fcfs(Choice& best) const;
  // The command a burst that just entered the queue could issue, if it beats `best`; false if
  // its arrival may change another burst's candidate (a hit holding back a precharge).
  bool merge_entered(std::uint32_t place, Choice& best);
  // Works out the best row command of bank `b` (one with queued bursts that miss its open row).
  void find_row_command(std::uint32_t b);
  void count_in(std::uint32_t b, const Queued& q);
  void rebuild(std::uint32_t b);
  void rebuild_all();
  // Keeps row_banks_ listing exactly the banks with bursts that need a row command.
  void list_row_bank(std::uint32_t b) {
    if ((banks_[b].others > 0) != (banks_[b].listed != kNil)) relist_row_bank(b);
  }
  void relist_row_bank(std::uint32_t b);
  std::uint64_t first_hit_entry(std::uint32_t b);
  // The next command a queued burst needs, given its bank's row state.
  DramCommand next_command(const Queued& q) const;
  bool others_hit(std::uint32_t bank, std::uint64_t entered_by) const;

  DramChannel channel_;
  const std::uint32_t queue_depth_;
  const bool fcfs_;
  const bool close_page_;
  const std::uint64_t burst_bytes_;
  const std::uint64_t column_interval_;  // the closest two column commands can be
  // Bursts by id, from the oldest not yet done (base_) to the next to come (end_), and
  // transfers likewise from the oldest not released, each in a ring whose size is a power of
  // two (doubled when full).
  std::vector<Slot> ring_;
  std::size_t ring_mask_;
  BurstId base_ = 0, end_ = 0;
  std::vector<Transfer> transfers_;
  std::size_t transfer_mask_;
  TransferId transfer_base_ = 0, transfer_end_ = 0;
  BurstId next_admit_ = 0;    // oldest burst not yet in the queue
  std::vector<Queued> pool_;  // queue_depth places
  std::vector<std::uint32_t> free_places_;
  std::uint32_t head_ = kNil, tail_ = kNil;  // the queue, oldest first (ids grow with age)
  std::uint32_t queued_reads_ = 0, queued_writes_ = 0, queued_hits_ = 0;
  std::vector<BankQueue> banks_;
  std::vector<std::uint32_t> row_banks_;  // banks with a burst that needs a row command
  std::uint64_t next_decision_ = 0;       // cycle of the command advance() stopped before
  // The choice advance() stopped before, still valid while no command issues: bursts that enter
  // later are merged into it rather than choosing among all again.
  Choice pending_{};
  bool pending_valid_ = false;
  bool changed_ = true;  // a burst arrived since advance() stopped
  // When each of the last queue_depth bursts left the queue (its column command), in leaving
  // order: a burst enters only once the burst queue_depth places ahead of it has left.
  std::vector<std::uint64_t> left_at_;
  std::uint64_t entered_ = 0;
  std::uint32_t enter_slot_ = 0, leave_slot_ = 0;
  DramControllerStats stats_;
};

}  // namespace tpusim::models
