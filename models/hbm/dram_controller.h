#pragma once
// The controller of one DRAM channel (an HBM pseudo-channel or a DDR channel): a request queue
// of `queue_depth` bursts, scheduled at command level by FR-FCFS (the earliest-issuable command
// first; at equal times a row hit's column command first, then the oldest request) or FCFS (only
// the oldest request may issue), with an open- or close-page policy. No SystemC: the memory
// enqueues bursts as they arrive and advances the controller to the present when an initiator
// asks for a result (models/hbm/README.md).

#include <algorithm>
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
    // ACT commands issued for its bursts. Not misses + conflicts: a refresh that closes a row
    // before a started burst's column command costs it a second ACT, and a row opened for one
    // burst may serve another that had already counted its own precharge.
    std::uint32_t activates = 0;
  };

  explicit DramController(const DramSpec& spec);

  // Starts an empty transfer.
  TransferId open_transfer();
  // Adds a burst of `transfer` that reaches the controller at cycle `arrival`; bursts must be
  // added in the order their arrivals become known, never with an arrival before a cycle
  // already decided.
  BurstId enqueue(const DramAddress& address, bool write, std::uint64_t arrival,
                  TransferId transfer) {
    return enqueue(&address, 1, write, arrival, transfer);
  }
  // Adds `n` bursts at once (ids first, first + 1, ...; returns first), same rules.
  BurstId enqueue(const DramAddress* addresses, std::uint32_t n, bool write, std::uint64_t arrival,
                  TransferId transfer);
  // Issues, in time order, every command that can issue at a cycle before `until`. A decision
  // at cycle t depends only on bursts that arrived by t, so advancing late changes nothing.
  void advance(std::uint64_t until);
  bool done(BurstId id) const { return id < base_ || (slot(id).state & kDone); }
  const Transfer& transfer(TransferId t) const { return transfers_[t]; }
  // A cycle before which burst `id` cannot have its column command decided (valid after
  // advance(), while the burst is not done): advance to just past it, then ask again.
  std::uint64_t not_before(BurstId id) const;
  // The caller has read the transfer's result; its storage may be reused.
  void release(TransferId t) { free_transfers_.push_back(static_cast<std::uint32_t>(t)); }

  // The run ends at `cycle`: performs the refreshes that fell due before it after the last
  // command (refresh is otherwise issued only ahead of a command), so the statistics count a
  // quiet tail's refreshes too.
  void end_run(std::uint64_t cycle) {
    advance(cycle);
    if (cycle > 0) channel_.refresh_until(cycle - 1);
  }

  // Enqueues `batch` (oldest first) and advances until all of it is done, filling in `done`
  // and `outcome`; returns the latest `done`. For tests and one-shot use.
  std::uint64_t schedule(std::vector<DramRequest>& batch);

  const DramChannel& channel() const { return channel_; }
  // Request counts plus the channel's command counts, assembled for the report.
  DramControllerStats stats() const;

 private:
  static constexpr std::uint32_t kNil = ~0u;
  static constexpr BurstId kNone = ~BurstId{0};
  static constexpr std::uint64_t kNoCycle = ~std::uint64_t{0};
  static DramCommand column_command(bool write) {
    return write ? DramCommand::kWrite : DramCommand::kRead;
  }
  // A burst from enqueue() until the oldest not done passes it: it waits in line (id >=
  // next_admit_), is queued, then done. The queue is every burst between base_ and next_admit_
  // not yet done, in id order; each bank's queued bursts are also linked, oldest first.
  struct Slot {
    std::uint64_t arrival;
    std::uint64_t entry;  // cycle it entered the queue (>= arrival)
    BurstId bank_prev, bank_next;
    BurstId hit_prev, hit_next;  // while a queued hit: the hits of its direction, oldest first
    std::uint32_t row;
    std::uint32_t transfer;  // its TransferId
    std::uint16_t bank;      // DramChannel::bank_index
    std::uint8_t group;
    std::uint8_t state;  // State bits
  };
  enum State : std::uint8_t {
    kWrite = 1,
    kQueued = 2,     // entered and not done
    kHit = 4,        // queued and its row is open: its next command is its column command
    kDone = 8,       // its column command has issued
    kStarted = 16,   // its first command has issued: a row command, so a miss...
    kConflict = 32,  // ... or a conflict
    kQueuedHit = kQueued | kHit,
  };
  static bool is_queued_hit(const Slot& s) { return (s.state & kQueuedHit) == kQueuedHit; }
  // One bank's queued bursts and what selection needs to know of them: kept as bursts enter
  // and leave, rebuilt when the bank's open row changes (only a row hit leaves the queue, so
  // the bursts that need a row command change only then or when one enters).
  struct BankQueue {
    BurstId first = kNone, last = kNone;  // its list, oldest first
    std::uint32_t hits = 0, others = 0;   // queued bursts that hit / miss the open row
    std::uint64_t first_hit_entry = 0;    // least entry over the hits (the PRE hold-back)
    bool first_hit_stale = false;         // a hit with that entry left: recompute on demand
    BurstId oldest_other = kNone;         // the oldest burst needing a row command
    std::uint64_t oldest_other_entry = 0;
    std::uint32_t listed = kNil;  // position in row_banks_
    std::uint8_t group = 0;
    // With a row open, the bank's best precharge (pre_at kNoCycle: none may issue). It depends
    // on the bank's queue and state only, so it is kept until one of them changes. (An
    // activate's cycle depends on every ACT in the channel and is worked out when needed.)
    bool pre_known = false;
    std::uint64_t pre_at = 0;
    BurstId pre_id = kNone;
  };
  // A command selection settled on.
  struct Choice {
    std::uint64_t at;
    BurstId id;
    DramCommand cmd;
    bool column;
    std::uint32_t bank;
  };

  Slot& slot(BurstId id) { return ring_[static_cast<std::size_t>(id) & ring_mask_]; }
  const Slot& slot(BurstId id) const { return ring_[static_cast<std::size_t>(id) & ring_mask_]; }
  // Moves bursts from the line into the queue while it has room; returns the first that
  // entered (kNone if none), the others following it up to next_admit_.
  BurstId admit();
  // The cycle the next burst to enter does so: its arrival, and no earlier than the burst
  // queue_depth places ahead of it left (left_at_[enter_slot_]). Counts it as entered.
  std::uint64_t entry_cycle(std::uint64_t arrival) {
    std::uint64_t entry = arrival;
    if (entered_ >= queue_depth_) entry = std::max(entry, left_at_[enter_slot_]);
    if (++enter_slot_ == queue_depth_) enter_slot_ = 0;
    ++entered_;
    return entry;
  }
  void select_frfcfs(Choice& best);
  // The best column command (at kNoCycle: no queued hit).
  void best_column(Choice& best);
  void select_fcfs(Choice& best) const;
  // The best row command of bank `b` (one with queued bursts that miss its open row) given
  // `floor`, the least cycle of its command: sets `at` (kNoCycle: none) and `id`.
  void find_row_command(std::uint32_t b, std::uint64_t floor, std::uint64_t& at, BurstId& id);
  // The command a burst that just entered the queue could issue, if it beats `best`; false if
  // its arrival may change another burst's candidate (a hit holding back a precharge).
  bool merge_entered(BurstId id, Choice& best);
  void count_in(BankQueue& bq, Slot& s, BurstId id, std::int64_t open_row);
  // A queued hit joins its direction's list in id order (at the end: `append`; else after
  // `after`, an older hit of its direction, or from the list's head), or leaves it.
  void link_hit(BurstId id, Slot& s, bool append, BurstId after = kNone);
  void unlink_hit(Slot& s);
  void rebuild(std::uint32_t b);
  void rebuild_all();
  // Keeps row_banks_ listing exactly the banks with bursts that need a row command.
  void list_row_bank(std::uint32_t b) {
    if ((banks_[b].others > 0) != (banks_[b].listed != kNil)) relist_row_bank(b);
  }
  void relist_row_bank(std::uint32_t b);
  std::uint64_t first_hit_entry(std::uint32_t b);
  // A queued hit's column command: its earliest cycle.
  std::uint64_t column_at(const Slot& s) const;
  // The least channel floor over the directions of the queued bursts: no column command is
  // earlier.
  std::uint64_t least_column_floor() const;
  // The next command a queued burst needs, given its bank's row state.
  DramCommand next_command(const Slot& s) const;
  bool others_hit(std::uint32_t bank, std::uint64_t entered_by) const;
  // In order: while every queued burst is a row hit (no bank needs a row command) and the
  // queue has no gaps, the oldest burst's column command is FR-FCFS's choice whenever it reaches
  // the least column floor, and nothing else need be kept: no lists, no bank summaries. Decides
  // in that mode; returns false where advance() stops (the next decision is at `until` or
  // later), true once it left the mode (lists rebuilt) for the general selection to go on.
  bool advance_in_order(std::uint64_t until);
  // Leaves the in-order mode: rebuilds the lists and bank summaries from the queue.
  void leave_in_order();
  // Issues the chosen command and settles what it changes.
  void issue_row(const Choice& c);
  void issue_column(const Choice& c);
  // The column command of queued burst `id` at `at`: the channel, the burst's transfer and
  // the statistics; it leaves the queue.
  void complete_column(BurstId id, std::uint64_t at);
  // What every column command settles: the channel, the burst's transfer, the statistics, the
  // queue's count and the moment it left (no lists: the callers keep theirs).
  void leave_queue(Slot& s, std::uint64_t at);
  // complete_column() in the in-order mode: the oldest queued burst, no lists kept.
  void complete_in_order(BurstId id, std::uint64_t at);

  DramChannel channel_;
  const std::uint32_t queue_depth_;
  const bool fcfs_;
  const bool close_page_;
  const std::uint64_t burst_bytes_;
  const std::uint64_t column_interval_;  // the closest two column commands can be
  // Bursts by id, from the oldest not yet done (base_) to the next to come (end_), in a ring
  // whose size is a power of two (doubled when full).
  std::vector<Slot> ring_;
  std::size_t ring_mask_;
  BurstId base_ = 0, end_ = 0;
  // Transfers by id; a released one's place is reused, the most recently released first: it is
  // still in cache, where the next in a ring would have gone cold (the memory opens four per
  // chunk across 32 controllers).
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  BurstId next_admit_ = 0;  // oldest burst not yet in the queue
  // The queued hits of each direction (reads, writes), linked oldest first.
  BurstId hit_first_[2] = {kNone, kNone}, hit_last_[2] = {kNone, kNone};
  std::uint32_t queued_ = 0, queued_reads_ = 0, queued_writes_ = 0, queued_hits_ = 0;
  std::vector<BankQueue> banks_;
  std::vector<std::uint32_t> row_banks_;  // banks with a burst that needs a row command
  // While row_floor_known_: no row command of a queued burst can issue before row_floor_
  // (kNoCycle: none can issue). select_frfcfs() sets it to the least row command; it stays a
  // bound while only hits leave banks without such bursts and bursts enter (each lowers it to
  // its own command's cycle), and lets the next selection look at the oldest hit alone.
  bool row_floor_known_ = false;
  std::uint64_t row_floor_ = 0;
  bool in_order_ = false;            // see advance_in_order()
  std::uint64_t next_decision_ = 0;  // cycle of the command advance() stopped before
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
  // Burst latencies below kShortLatency counted one counter each, folded into stats_.latency
  // by stats(): a cheaper update per burst than the histogram's own.
  static constexpr std::uint32_t kShortLatency = 1024;
  std::vector<std::uint32_t> short_latency_;
};

}  // namespace tpusim::models
