#include "models/hbm/dram_controller.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace tpusim::models {

namespace {
constexpr std::uint64_t kNoCycle = std::numeric_limits<std::uint64_t>::max();
bool is_column(DramCommand c) { return c == DramCommand::kRead || c == DramCommand::kWrite; }
DramCommand column_command(bool write) { return write ? DramCommand::kWrite : DramCommand::kRead; }
}  // namespace

DramController::DramController(const DramSpec& spec)
    : channel_(spec),
      queue_depth_(spec.queue_depth),
      fcfs_(spec.scheduler == DramScheduler::kFcfs),
      close_page_(spec.page_policy == PagePolicy::kClose),
      burst_bytes_(spec.burst_bytes().value()),
      column_interval_(std::max(channel_.timing().CCD_S, channel_.timing().BURST)),
      ring_(64),
      ring_mask_(63),
      transfers_(64),
      transfer_mask_(63),
      pool_(spec.queue_depth),
      banks_(std::size_t{spec.bank_groups} * spec.banks_per_group),
      left_at_(spec.queue_depth, 0) {
  for (std::uint32_t p = spec.queue_depth; p-- > 0;) free_places_.push_back(p);
  for (std::size_t b = 0; b < banks_.size(); ++b)
    banks_[b].group = static_cast<std::uint8_t>(b / spec.banks_per_group);
}

namespace {
// Doubles a ring of `base`..`end` (full), each element moving to its place under the wider mask.
template <class T>
void widen(std::vector<T>& ring, std::size_t& mask, std::uint64_t base, std::uint64_t end) {
  std::vector<T> wider(ring.size() * 2);
  for (std::uint64_t i = base; i < end; ++i) wider[i & (wider.size() - 1)] = ring[i & mask];
  ring.swap(wider);
  mask = ring.size() - 1;
}
}  // namespace

DramController::TransferId DramController::open_transfer() {
  if (transfer_end_ - transfer_base_ == transfers_.size())
    widen(transfers_, transfer_mask_, transfer_base_, transfer_end_);
  transfers_[transfer_end_ & transfer_mask_] = Transfer{};
  return transfer_end_++;
}

DramController::BurstId DramController::enqueue(const DramAddress& address, bool write,
                                                std::uint64_t arrival, TransferId transfer) {
  if (end_ - base_ == ring_.size()) widen(ring_, ring_mask_, base_, end_);
  Slot& s = slot(end_);
  s.address = address;
  s.write = write;
  s.started = s.done = false;
  s.arrival = arrival;
  s.transfer = transfer;
  ++transfers_[transfer & transfer_mask_].bursts;
  changed_ = true;
  return end_++;
}

void DramController::relist_row_bank(std::uint32_t b) {
  BankQueue& bq = banks_[b];
  if (bq.others > 0) {
    bq.listed = static_cast<std::uint32_t>(row_banks_.size());
    row_banks_.push_back(b);
  } else {
    const std::uint32_t last = row_banks_.back();
    row_banks_[bq.listed] = last;
    banks_[last].listed = bq.listed;
    row_banks_.pop_back();
    bq.listed = kNil;
  }
}

void DramController::count_in(std::uint32_t b, const Queued& q) {
  BankQueue& bq = banks_[b];
  bq.row_known = false;
  if (static_cast<std::int64_t>(q.row) == channel_.open_row(b)) {
    ++queued_hits_;
    if (bq.hits++ == 0 || q.entry < bq.first_hit_entry) bq.first_hit_entry = q.entry;
  } else if (bq.others++ == 0) {
    // Bursts are counted in id order, so the first is the oldest.
    bq.oldest_other = q.id;
    bq.oldest_other_entry = q.entry;
  }
}

void DramController::rebuild(std::uint32_t b) {
  BankQueue& bq = banks_[b];
  queued_hits_ -= bq.hits;
  bq.hits = bq.others = 0;
  bq.first_hit_stale = false;
  bq.row_known = false;
  for (std::uint32_t p = bq.first; p != kNil; p = pool_[p].bank_next) count_in(b, pool_[p]);
  list_row_bank(b);
}

void DramController::rebuild_all() {
  for (std::uint32_t b = 0; b < banks_.size(); ++b) rebuild(b);
}

std::uint64_t DramController::first_hit_entry(std::uint32_t b) {
  BankQueue& bq = banks_[b];
  if (bq.hits == 0) return kNoCycle;
  if (bq.first_hit_stale) {
    const std::int64_t open = channel_.open_row(b);
    bq.first_hit_entry = kNoCycle;
    for (std::uint32_t p = bq.first; p != kNil; p = pool_[p].bank_next)
      if (static_cast<std::int64_t>(pool_[p].row) == open)
        bq.first_hit_entry = std::min(bq.first_hit_entry, pool_[p].entry);
    bq.first_hit_stale = false;
  }
  return bq.first_hit_entry;
}

std::uint32_t DramController::admit() {
  std::uint32_t first = kNil;
  while (!free_places_.empty() && next_admit_ < end_) {
    Slot& s = slot(next_admit_);
    // left_at_[enter_slot_] holds when the burst queue_depth places ahead left the queue.
    std::uint64_t entry = s.arrival;
    if (entered_ >= queue_depth_) entry = std::max(entry, left_at_[enter_slot_]);
    if (++enter_slot_ == queue_depth_) enter_slot_ = 0;
    ++entered_;
    const DramAddress& a = s.address;
    const std::uint32_t p = free_places_.back();
    free_places_.pop_back();
    s.queued = p;
    if (first == kNil) first = p;
    Queued& q = pool_[p];
    q.id = next_admit_++;
    q.entry = entry;
    q.row = a.row;
    q.bank = static_cast<std::uint16_t>(channel_.bank_index(a));
    q.group = static_cast<std::uint8_t>(a.bank_group);
    q.write = s.write;
    q.prev = tail_;
    q.next = kNil;
    (tail_ == kNil ? head_ : pool_[tail_].next) = p;
    tail_ = p;
    BankQueue& bq = banks_[q.bank];
    q.bank_prev = bq.last;
    q.bank_next = kNil;
    (bq.last == kNil ? bq.first : pool_[bq.last].bank_next) = p;
    bq.last = p;
    ++(q.write ? queued_writes_ : queued_reads_);
    count_in(q.bank, q);
    list_row_bank(q.bank);
  }
  return first;
}

void DramController::leave(std::uint32_t p) {
  const Queued& q = pool_[p];
  BankQueue& bq = banks_[q.bank];
  --bq.hits;  // only a row hit leaves
  --queued_hits_;
  if (q.entry == bq.first_hit_entry) bq.first_hit_stale = true;
  bq.row_known = false;
  --(q.write ? queued_writes_ : queued_reads_);
  (q.prev == kNil ? head_ : pool_[q.prev].next) = q.next;
  (q.next == kNil ? tail_ : pool_[q.next].prev) = q.prev;
  (q.bank_prev == kNil ? bq.first : pool_[q.bank_prev].bank_next) = q.bank_next;
  (q.bank_next == kNil ? bq.last : pool_[q.bank_next].bank_prev) = q.bank_prev;
  free_places_.push_back(p);
}

bool DramController::others_hit(std::uint32_t bank, std::uint64_t entered_by) const {
  const std::int64_t row = channel_.open_row(bank);
  for (std::uint32_t p = banks_[bank].first; p != kNil; p = pool_[p].bank_next)
    if (pool_[p].entry <= entered_by && static_cast<std::int64_t>(pool_[p].row) == row) return true;
  return false;
}

DramCommand DramController::next_command(const Queued& q) const {
  const std::int64_t open = channel_.open_row(q.bank);
  if (open == static_cast<std::int64_t>(q.row)) return column_command(q.write);
  return open < 0 ? DramCommand::kActivate : DramCommand::kPrecharge;
}

void DramController::select_fcfs(Choice& best) const {
  // Only the oldest queued burst may issue.
  best.at = kNoCycle;
  if (head_ == kNil) return;
  const Queued& q = pool_[head_];
  best.cmd = next_command(q);
  best.at = channel_.earliest(best.cmd, slot(q.id).address, q.entry);
  best.id = q.id;
  best.column = is_column(best.cmd);
  best.bank = q.bank;
  best.place = head_;
}

// FR-FCFS: the command that can issue first; at equal cycles a column command (a row hit)
// beats a row command, then the older burst (smaller id). A command's earliest cycle is
// max(its bank's, its bank group's and the channel's floors, the burst's entry); the channel
// floor is common to all, so the oldest row hit that reaches the least column floor wins
// outright and the scan stops there (in a backlogged stream, within the first few bursts).
void DramController::select_frfcfs(Choice& best) {
  best.at = kNoCycle;
  best.column = false;
  if (queued_hits_ > 0) {
    const std::uint64_t floor_read = channel_.channel_floor(DramCommand::kRead);
    const std::uint64_t floor_write = channel_.channel_floor(DramCommand::kWrite);
    const std::uint64_t least =
        std::min(queued_reads_ ? floor_read : kNoCycle, queued_writes_ ? floor_write : kNoCycle);
    std::uint32_t hits_left = queued_hits_;  // the scan ends at the youngest hit
    for (std::uint32_t p = head_; hits_left > 0; p = pool_[p].next) {
      const Queued& q = pool_[p];
      if (static_cast<std::int64_t>(q.row) != channel_.open_row(q.bank)) continue;
      --hits_left;
      const DramCommand cmd = column_command(q.write);
      const std::uint64_t at =
          std::max({q.entry, q.write ? floor_write : floor_read, channel_.bank_floor(cmd, q.bank),
                    channel_.group_floor(cmd, q.group)});
      if (at < best.at) {
        best = Choice{at, q.id, cmd, true, q.bank, p};
        if (at <= least) break;
      }
    }
  }
  // Row commands lose a tie to column commands, and to older bursts' row commands.
  for (const std::uint32_t b : row_banks_) {
    BankQueue& bq = banks_[b];
    if (!bq.row_known) find_row_command(b);
    if (bq.row_at < best.at ||
        (bq.row_at == best.at && bq.row_at != kNoCycle && !best.column && bq.row_id < best.id))
      best = Choice{bq.row_at, bq.row_id, bq.row_cmd, false, b, kNil};
  }
}

void DramController::find_row_command(std::uint32_t b) {
  BankQueue& bq = banks_[b];
  bq.row_known = true;
  bq.row_at = kNoCycle;
  const std::int64_t open = channel_.open_row(b);
  const DramCommand cmd = open < 0 ? DramCommand::kActivate : DramCommand::kPrecharge;
  bq.row_cmd = cmd;
  std::uint64_t e_row = channel_.bank_floor(cmd, b);
  // Row hits first: the open row stays open while a queued burst that the controller could
  // have seen by the precharge's cycle still hits it. Every candidate is at e_row or later.
  const std::uint64_t hit_entry = cmd == DramCommand::kPrecharge ? first_hit_entry(b) : kNoCycle;
  if (hit_entry <= e_row) return;
  if (cmd == DramCommand::kActivate)
    e_row = std::max({e_row, channel_.group_floor(cmd, bq.group), channel_.channel_floor(cmd)});
  if (bq.oldest_other_entry <= e_row) {
    // The oldest such burst reaches the bank's least cycle: no other of the bank beats it.
    bq.row_at = e_row;
    bq.row_id = bq.oldest_other;
    return;
  }
  for (std::uint32_t p = bq.first; p != kNil; p = pool_[p].bank_next) {
    const Queued& q = pool_[p];
    if (static_cast<std::int64_t>(q.row) == open) continue;
    const std::uint64_t at = std::max(e_row, q.entry);
    if (hit_entry <= at) continue;
    if (at < bq.row_at) {  // in id order: a tie keeps the older
      bq.row_at = at;
      bq.row_id = q.id;
    }
    if (q.entry <= e_row) break;
  }
}

bool DramController::merge_entered(std::uint32_t p, Choice& best) {
  // Its id is the largest queued: it wins only by an earlier cycle, or a column command's tie
  // with a row command.
  const Queued& q = pool_[p];
  const std::int64_t open = channel_.open_row(q.bank);
  if (static_cast<std::int64_t>(q.row) == open) {
    if (!best.column && best.cmd == DramCommand::kPrecharge && best.bank == q.bank &&
        q.entry <= best.at)
      return false;  // now held back: row hits first
    const DramCommand cmd = column_command(q.write);
    const std::uint64_t at =
        std::max({q.entry, channel_.channel_floor(cmd), channel_.bank_floor(cmd, q.bank),
                  channel_.group_floor(cmd, q.group)});
    if (at < best.at || (at == best.at && !best.column))
      best = Choice{at, q.id, cmd, true, q.bank, p};
    return true;
  }
  const DramCommand cmd = open < 0 ? DramCommand::kActivate : DramCommand::kPrecharge;
  std::uint64_t at = std::max(q.entry, channel_.bank_floor(cmd, q.bank));
  if (cmd == DramCommand::kActivate)
    at = std::max({at, channel_.group_floor(cmd, q.group), channel_.channel_floor(cmd)});
  else if (first_hit_entry(q.bank) <= at)
    return true;  // held back
  if (at < best.at) best = Choice{at, q.id, cmd, false, q.bank, kNil};
  return true;
}

void DramController::advance(std::uint64_t until) {
  // Nothing new since the last call stopped at next_decision_: nothing more to decide yet.
  if (!changed_ && until <= next_decision_) return;
  changed_ = false;
  for (;;) {
    const std::uint32_t entered = next_admit_ < end_ && !free_places_.empty() ? admit() : kNil;
    Choice& best = pending_;
    bool valid = pending_valid_ && !fcfs_;
    for (std::uint32_t p = entered; valid && p != kNil; p = pool_[p].next)
      valid = merge_entered(p, best);
    if (!valid && fcfs_) select_fcfs(best);
    if (!valid && !fcfs_) select_frfcfs(best);
    next_decision_ = best.at;
    pending_valid_ = best.at >= until;
    if (best.at >= until) return;
    // Refreshes that fall due first go first (they close rows: choose again).
    if (channel_.next_refresh() <= best.at) {
      channel_.refresh_until(best.at);
      rebuild_all();
      continue;
    }
    Slot& s = slot(best.id);
    if (!s.started) {
      s.started = true;
      s.outcome = best.column                          ? RowOutcome::kHit
                  : best.cmd == DramCommand::kActivate ? RowOutcome::kMiss
                                                       : RowOutcome::kConflict;
      ++(s.outcome == RowOutcome::kHit    ? stats_.row_hits
         : s.outcome == RowOutcome::kMiss ? stats_.row_misses
                                          : stats_.row_conflicts);
    }
    const std::uint64_t end = channel_.issue(best.cmd, s.address, best.at);
    banks_[best.bank].row_known = false;     // its earliest PRE may have moved
    if (best.cmd == DramCommand::kActivate)  // so did every bank's earliest ACT
      for (const std::uint32_t b : row_banks_) banks_[b].row_known = false;
    if (!best.column) {
      rebuild(best.bank);  // the open row changed
      continue;
    }

    s.done = true;
    Transfer& t = transfers_[s.transfer & transfer_mask_];
    ++t.done;
    t.first_done = std::min(t.first_done, end);
    t.last_done = std::max(t.last_done, end);
    ++(s.outcome == RowOutcome::kHit    ? t.hits
       : s.outcome == RowOutcome::kMiss ? t.misses
                                        : t.conflicts);
    ++(s.write ? stats_.writes : stats_.reads);
    (s.write ? stats_.write_bytes : stats_.read_bytes) += burst_bytes_;
    stats_.latency_cycles += end - s.arrival;
    stats_.latency.add(end - s.arrival);
    stats_.last_done_cycle = std::max(stats_.last_done_cycle, end);
    left_at_[leave_slot_] = best.at;
    if (++leave_slot_ == queue_depth_) leave_slot_ = 0;
    leave(best.place);
    // Close-page precharges at once unless a queued burst still hits the row (DRAMsim3's
    // close-page rule), so a burst train within one row is not split by needless ACTs.
    if (close_page_ && !others_hit(best.bank, best.at)) {
      channel_.issue(DramCommand::kPrecharge, s.address,
                     channel_.earliest(DramCommand::kPrecharge, s.address, best.at));
      rebuild(best.bank);
    }
    while (base_ < next_admit_ && slot(base_).done) ++base_;
  }
}

std::uint64_t DramController::not_before(BurstId id) const {
  assert(!done(id));
  const Slot& s = slot(id);
  if (id >= next_admit_) {
    // Still outside the queue: every burst ahead of it in line must first leave the queue, one
    // column command each, at least column_interval_ apart.
    if (next_decision_ == kNoCycle) return kNoCycle;  // nothing decided since it was enqueued
    return next_decision_ + (id - next_admit_ + 1) * column_interval_;
  }
  const Queued& q = pool_[s.queued];
  return std::max(next_decision_, channel_.earliest(next_command(q), s.address, q.entry));
}

std::uint64_t DramController::schedule(std::vector<DramRequest>& batch) {
  std::vector<BurstId> ids;
  std::vector<TransferId> transfers;
  for (const DramRequest& r : batch) {
    transfers.push_back(open_transfer());
    ids.push_back(enqueue(r.address, r.write, r.arrival, transfers.back()));
  }
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    while (!done(ids[i])) {
      const std::uint64_t cycle = not_before(ids[i]);
      advance(cycle == kNoCycle ? cycle : cycle + 1);
    }
    const Transfer& t = transfer(transfers[i]);
    batch[i].done = t.last_done;
    batch[i].outcome = t.hits     ? RowOutcome::kHit
                       : t.misses ? RowOutcome::kMiss
                                  : RowOutcome::kConflict;
    last = std::max(last, batch[i].done);
  }
  for (TransferId t : transfers) release(t);
  return last;
}

DramControllerStats DramController::stats() const {
  DramControllerStats s = stats_;
  const DramChannelStats& c = channel_.stats();
  s.activates = c.activates;
  s.precharges = c.precharges;
  s.refreshes = c.refreshes;
  s.refresh_cycles = c.refresh_cycles;
  s.data_bus_cycles = c.data_bus_cycles;
  return s;
}

}  // namespace tpusim::models
