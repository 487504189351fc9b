#pragma once
// A faster DRAM channel model (`controller.engine: timeline`): one decision per piece (the
// bursts of one memory transaction in this channel, four under the presets' mapping), not one
// per command. Each bank keeps its open row and the cycles from which it may take a column
// command, an activate or a precharge; the data bus and the activates are busy timelines, so a
// piece fills the first gap its bank allows. FR-FCFS's row-hits-first rule is kept where it
// matters most: a piece that needs another row waits until the bank's open row has no queued hit
// left, and that is decided only once the simulated present has passed the cycle, when every
// hit that could hold the precharge back has arrived. The queue holds queue_depth bursts, as the
// command engine's: a burst enters once enough have left that there is room, and a piece whose
// entry needs an undecided burst to leave waits for room, with every piece served after it
// (models/hbm/README.md, "The timeline engine"). No SystemC.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/common/busy_timeline.h"
#include "models/hbm/dram_channel.h"
#include "models/hbm/dram_controller.h"

namespace tpusim::models {

class DramTimeline {
 public:
  using PieceId = std::uint32_t;
  // What the memory reads once a piece is decided.
  struct Piece {
    std::uint64_t first_done = 0;  // cycle its first burst's data has crossed the bus
    std::uint64_t last_done = 0;   // its last
    std::uint32_t bursts = 0;
    std::uint32_t hits = 0, misses = 0, conflicts = 0, activates = 0;
    bool done = false;
    // While not done: the bank whose row change it waits for, or kNoBank while it waits for
    // room in the queue.
    std::uint32_t waits_on = 0;
  };

  explicit DramTimeline(const DramSpec& spec);

  // The `n` bursts of one piece (one transaction's bursts in this channel) reach the channel at
  // `arrival`; no request will arrive before `now` (a DRAM cycle) from here on. Decided at once
  // unless it needs its bank's row changed; then piece(id).done stays false until settle().
  PieceId serve(const DramAddress* bursts, std::uint32_t n, bool write, std::uint64_t arrival,
                std::uint64_t now);
  // Decides the row changes that fall before `now` (nothing can arrive before it any more).
  void settle(std::uint64_t now);
  const Piece& piece(PieceId id) const { return pieces_[id]; }
  // While piece `id` waits: settle() past this cycle may decide it.
  std::uint64_t not_before(PieceId id) const;
  void release(PieceId id) { free_.push_back(id); }
  // The run is over at `cycle`: waiting pieces are decided, and refreshes counted to it.
  void end_run(std::uint64_t cycle);
  DramControllerStats stats() const;

 private:
  // Row indices fit in int32: chip_config allows at most 2^24 rows.
  static constexpr std::int32_t kClosed = -1;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  static constexpr std::uint64_t kChanged = kNever - 1;
  static constexpr std::uint32_t kNoBank = ~0u;
  struct Bank {
    std::int32_t open_row = kClosed;
    // Pieces in waiting_ for this bank: kept here, on the line serve() reads anyway.
    std::uint32_t waiting = 0;
    std::uint64_t refresh_closes = 0;  // the refresh after its ACT, which closes the row
    std::uint64_t next_col = 0;        // tRCD after its ACT
    std::uint64_t next_act = 0;        // tRC after its ACT, tRP after its PRE
    std::uint64_t next_pre = 0;        // tRAS after ACT, tRTP after a read, tWR after write data
    // What settle_bank() last left waiting: the entry of the piece that needs the row changed
    // (kNever: none) and the earliest entry of a hit behind that change; kChanged once the
    // open row or the queue has changed since.
    std::uint64_t settled_changer = kChanged, settled_hit_min = kNever;
  };
  // first_switch() of a bank settle_bank() has left unchanged since.
  static std::uint64_t switch_of(const Bank& b) {
    return b.settled_changer == kNever ? kNever : std::max(b.settled_changer, b.next_pre);
  }
  // When a piece entered the controller's queue; its bursts' own entries are in entries_.
  struct Entry {
    std::uint64_t at = 0;  // its first burst: from then on it holds a precharge back
    // A piece larger than the queue: how many of its own bursts had to leave for its later
    // ones to enter (their leaves are taken already).
    std::uint32_t self_left = 0;
  };
  struct Waiting {
    PieceId id;
    std::uint32_t row;
    bool write;
    std::uint64_t arrival;  // at the controller, for its latency
    Entry entry;
    std::vector<DramAddress> bursts;
    std::vector<std::uint64_t> entries;  // per burst
  };

  std::uint32_t bank_index(const DramAddress& a) const {
    return a.bank_group * banks_per_group_ + a.bank;
  }
  bool row_open(const Bank& b, std::uint32_t row, std::uint64_t at) const {
    return std::int64_t{b.open_row} == std::int64_t{row} && at < b.refresh_closes;
  }
  // Whether a piece's first burst can enter now: the queue has room, or the leave that makes
  // room is decided. Otherwise every burst in the queue waits for a row change (the queue holds
  // the untaken leaves and waiting_bursts_, no more).
  bool has_room() const {
    return entered_ - left_ < queue_depth_ || leaves_first_ < leaves_.size();
  }
  // When `n` bursts arriving at `arrival` enter the queue (each in entries_), each once enough
  // have left that the queue has room; counts them as entered. Only when has_room().
  Entry enter(std::uint64_t arrival, std::uint32_t n);
  // The bank whose row change a piece entering at `entry` waits for (and the row it needs
  // there), or kNoBank: it is placed at once.
  std::uint32_t bank_to_wait_on(const DramAddress* bursts, std::uint32_t n, std::uint64_t entry,
                                std::uint32_t& row) const;
  // A slab slot holding piece `id`'s bursts while it waits (its entry still unset).
  std::uint32_t hold(PieceId id, const DramAddress* bursts, std::uint32_t n, bool write,
                     std::uint64_t arrival);
  // Slab slot `slot` (its entry known) waits in bank `b`'s queue.
  void wait_on(std::uint32_t b, std::uint32_t slot);
  // Deferred pieces enter, oldest first, while the queue has room; whether any did.
  bool admit_deferred();
  // Places the piece now: activates for closed banks, precharges first where another row is
  // open (no sooner than `switch_at`), its data in the bus's first fitting gap, each burst no
  // sooner than it entered (`entries`). `waited`: it waited for a row change (in
  // waiting_bursts_).
  void place(PieceId id, const DramAddress* bursts, const std::uint64_t* entries, std::uint32_t n,
             bool write, std::uint64_t arrival, Entry entry, std::uint64_t switch_at, bool waited);
  void place(PieceId id, const Waiting& w, std::uint64_t switch_at) {
    place(id, w.bursts.data(), w.entries.data(), static_cast<std::uint32_t>(w.bursts.size()),
          w.write, w.arrival, w.entry, switch_at, true);
  }
  // Settles every bank's waiting pieces whose decisions fall before `now`.
  void settle_banks(std::uint64_t now);
  // Settles bank `b`'s waiting pieces whose decisions fall before `now`.
  void settle_bank(std::uint32_t b, std::uint64_t now);
  // The cycle bank `b`'s oldest waiting piece that needs another row would precharge, were no
  // other hit to come (kNever: none needs one).
  std::uint64_t first_switch(std::uint32_t b) const;
  void remove_waiting(std::uint32_t b, std::size_t i);
  std::uint32_t new_waiting();  // a free slot of slab_
  // Reserves the all-bank refresh windows up to `cycle` on the bus and activate timelines.
  void reserve_refreshes(std::uint64_t cycle);

  DramCycles t_;
  std::uint32_t banks_per_group_;
  std::uint32_t act_slot_;  // activate-timeline cycles per ACT: tRRD_S, or tFAW / 4 if longer
  std::vector<Bank> banks_;
  BusyTimeline<std::uint64_t> bus_, acts_;
  std::uint64_t refreshes_reserved_ = 0;  // refresh windows already on the timelines
  // The direction and last column command of the latest data on the bus (turnaround).
  bool tail_write_ = false;
  std::uint64_t tail_end_ = 0, tail_command_ = 0;
  // The queue limit, as the command engine's: bursts enter in the order they are served, the
  // e-th (from 0) once e - queue_depth + 1 have left, a burst leaving about when its column
  // command would issue on its own (place()).
  std::uint32_t queue_depth_;
  std::uint64_t entered_ = 0, left_ = 0;  // bursts entered; leaves taken by entries
  // Leaving cycles of placed bursts that no entry has taken yet, ascending from
  // leaves_[leaves_first_]. Most are later than all before them: inserted from the back.
  std::vector<std::uint64_t> leaves_;
  std::size_t leaves_first_ = 0;
  void add_leave(std::uint64_t cycle) {
    // Most leave after every leave before them, and the vector has room: appended here.
    if (leaves_.size() < leaves_.capacity() &&
        (leaves_.size() == leaves_first_ || leaves_.back() <= cycle))
      leaves_.push_back(cycle);
    else
      insert_leave(cycle);
  }
  void insert_leave(std::uint64_t cycle);  // the general case, which also drops taken leaves
  // Bursts of waiting pieces: they hold places in the queue, their leaving still unknown.
  std::uint64_t waiting_bursts_ = 0;
  // Pieces waiting for room (slab slots, from deferred_[deferred_first_] in serve order): their
  // entry needs a waiting burst to leave, so it is not known yet, nor is any later piece's.
  std::vector<std::uint32_t> deferred_;
  std::size_t deferred_first_ = 0;
  std::uint64_t deferred_floor_ = kNever;  // no deferred piece arrived before it
  std::vector<std::uint64_t> entries_;                          // enter(): per burst
  std::vector<std::uint64_t> offsets_;                          // place(): per burst on the bus
  std::vector<std::uint32_t> order_;                            // place(): bursts by readiness
  std::vector<std::uint64_t> ready_;                            // place(): when each can go
  std::vector<Piece> pieces_;
  std::vector<PieceId> free_;
  // Waiting pieces stay where they are in slab_ (their vectors keep their storage when freed);
  // the queues hold their slots.
  std::vector<Waiting> slab_;
  std::vector<std::uint32_t> slab_free_;
  std::vector<std::vector<std::uint32_t>> waiting_;  // per bank, slots in arrival order
  std::vector<std::uint32_t> waiting_banks_;         // banks with waiting pieces
  // No waiting piece can be decided before this cycle: settle() is skipped until then.
  std::uint64_t next_settle_ = kNever;
  const Bank* settling_ = nullptr;  // the bank settle_bank() is deciding for
  std::uint64_t burst_bytes_;
  static constexpr std::uint32_t kShortLatency = 1024;
  std::vector<std::uint32_t> short_latency_ = std::vector<std::uint32_t>(kShortLatency, 0);
  DramControllerStats stats_;
  std::uint64_t end_cycle_ = 0;
};

}  // namespace tpusim::models
