#include "models/hbm/dram_controller.h"

#include <algorithm>
#include <cassert>

namespace tpusim::models {

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

void DramController::count_in(BankQueue& bq, Slot& s, BurstId id, std::int64_t open_row) {
  if (static_cast<std::int64_t>(s.row) == open_row) {
    s.state |= kHit;
    ++queued_hits_;
    if (bq.hits++ == 0 || s.entry < bq.first_hit_entry) bq.first_hit_entry = s.entry;
  } else {
    s.state &= static_cast<std::uint8_t>(~kHit);
    if (bq.others++ == 0) {
      // Bursts are counted in id order, so the first is the oldest.
      bq.oldest_other = id;
      bq.oldest_other_entry = s.entry;
    }
  }
}

void DramController::link_hit(BurstId id, Slot& s, bool append, BurstId after) {
  const int d = s.state & kWrite;
  BurstId next = kNone;
  if (!append)  // a burst that waited for its row: usually among the oldest
    for (next = after == kNone ? hit_first_[d] : slot(after).hit_next; next != kNone && next < id;
         next = slot(next).hit_next) {
    }
  const BurstId prev = next == kNone ? hit_last_[d] : slot(next).hit_prev;
  s.hit_prev = prev;
  s.hit_next = next;
  (prev == kNone ? hit_first_[d] : slot(prev).hit_next) = id;
  (next == kNone ? hit_last_[d] : slot(next).hit_prev) = id;
}

void DramController::unlink_hit(Slot& s) {
  const int d = s.state & kWrite;
  (s.hit_prev == kNone ? hit_first_[d] : slot(s.hit_prev).hit_next) = s.hit_next;
  (s.hit_next == kNone ? hit_last_[d] : slot(s.hit_next).hit_prev) = s.hit_prev;
}

void DramController::rebuild(std::uint32_t b) {
  BankQueue& bq = banks_[b];
  const std::int64_t open = channel_.open_row(b);
  queued_hits_ -= bq.hits;
  bq.hits = bq.others = 0;
  bq.first_hit_stale = false;
  bq.pre_known = false;
  // The bank's bursts come in id order, so each that hits is linked after the last linked.
  BurstId linked[2] = {kNone, kNone};
  for (BurstId id = bq.first; id != kNone;) {
    Slot& s = slot(id);
    if (s.state & kHit) unlink_hit(s);
    count_in(bq, s, id, open);
    if (s.state & kHit) {
      BurstId& last = linked[s.state & kWrite];
      link_hit(id, s, false, last);
      last = id;
    }
    id = s.bank_next;
  }
  list_row_bank(b);
}

void DramController::rebuild_all() {
  for (std::uint32_t b = 0; b < banks_.size(); ++b) rebuild(b);
  row_floor_known_ = false;
}

std::uint64_t DramController::first_hit_entry(std::uint32_t b) {
  BankQueue& bq = banks_[b];
  if (bq.hits == 0) return kNoCycle;
  if (bq.first_hit_stale) {
    bq.first_hit_entry = kNoCycle;
    for (BurstId id = bq.first; id != kNone; id = slot(id).bank_next)
      if (slot(id).state & kHit) bq.first_hit_entry = std::min(bq.first_hit_entry, slot(id).entry);
    bq.first_hit_stale = false;
  }
  return bq.first_hit_entry;
}

DramController::BurstId DramController::admit() {
  const BurstId first = next_admit_;
  Slot* const ring = ring_.data();
  const std::size_t mask = ring_mask_;
  BurstId id = first;
  const BurstId stop = std::min(end_, first + (queue_depth_ - queued_));
  for (; id < stop; ++id) {
    Slot& s = ring[id & mask];
    s.entry = entry_cycle(s.arrival);
    s.state |= kQueued;
    ++((s.state & kWrite) ? queued_writes_ : queued_reads_);
    const std::uint32_t bank = s.bank;
    BankQueue& bq = banks_[bank];
    s.bank_prev = bq.last;
    s.bank_next = kNone;
    (bq.last == kNone ? bq.first : ring[bq.last & mask].bank_next) = id;
    bq.last = id;
    bq.pre_known = false;
    const std::int64_t open = channel_.open_row(bank);
    count_in(bq, s, id, open);
    if (s.state & kHit) {
      link_hit(id, s, true);
    } else {
      list_row_bank(bank);
      // Its own row command (a precharge perhaps held back later): the bound holds.
      row_floor_ = std::min(
          row_floor_, channel_.earliest(open < 0 ? DramCommand::kActivate : DramCommand::kPrecharge,
                                        bank, s.group, s.entry));
    }
  }
  queued_ += static_cast<std::uint32_t>(id - first);
  next_admit_ = id;
  return first < id ? first : kNone;
}

bool DramController::others_hit(std::uint32_t bank, std::uint64_t entered_by) const {
  for (BurstId id = banks_[bank].first; id != kNone; id = slot(id).bank_next)
    if (slot(id).entry <= entered_by && (slot(id).state & kHit)) return true;
  return false;
}

DramCommand DramController::next_command(const Slot& s) const {
  if (s.state & kHit) return column_command(s.state & kWrite);
  return channel_.open_row(s.bank) < 0 ? DramCommand::kActivate : DramCommand::kPrecharge;
}

void DramController::select_fcfs(Choice& best) const {
  // Only the oldest queued burst may issue.
  best.at = kNoCycle;
  if (queued_ == 0) return;
  const Slot& s = slot(base_);
  best.cmd = next_command(s);
  best.at = channel_.earliest(best.cmd, s.bank, s.group, s.entry);
  best.id = base_;
  best.column = s.state & kHit;
  best.bank = s.bank;
}

std::uint64_t DramController::column_at(const Slot& s) const {
  const DramCommand cmd = column_command(s.state & kWrite);
  return std::max(std::max(s.entry, channel_.channel_floor(cmd)),
                  std::max(channel_.bank_floor(cmd, s.bank), channel_.group_floor(cmd, s.group)));
}

std::uint64_t DramController::least_column_floor() const {
  return std::min(queued_reads_ ? channel_.channel_floor(DramCommand::kRead) : kNoCycle,
                  queued_writes_ ? channel_.channel_floor(DramCommand::kWrite) : kNoCycle);
}

// The column command of a row hit that can issue first; at equal cycles the older burst's. A
// command's earliest cycle is max(its bank's, its bank group's and the channel's floors, the
// burst's entry); the channel floor is common to every hit of one direction, so within a
// direction the oldest hit that reaches it wins outright and the scan stops there (in a
// backlogged stream, at the first).
void DramController::best_column(Choice& best) {
  best.at = kNoCycle;
  best.column = false;
  for (int d = 0; d < 2; ++d) {
    const std::uint64_t floor =
        channel_.channel_floor(d ? DramCommand::kWrite : DramCommand::kRead);
    for (BurstId id = hit_first_[d]; id != kNone;) {
      const Slot& s = slot(id);
      const std::uint64_t at = column_at(s);
      if (at < best.at || (at == best.at && id < best.id))
        best = Choice{at, id, d ? DramCommand::kWrite : DramCommand::kRead, true, s.bank};
      if (at <= floor) break;  // every later hit of this direction is at `floor` or later
      id = s.hit_next;
    }
  }
}

// FR-FCFS: the command that can issue first; at equal cycles a column command (a row hit)
// beats a row command, then the older burst (smaller id).
void DramController::select_frfcfs(Choice& best) {
  best_column(best);
  // No row command comes earlier: they need not be weighed at all.
  if (row_floor_known_ && best.at <= row_floor_) return;
  // Row commands lose a tie to column commands, and to older bursts' row commands.
  row_floor_known_ = true;
  row_floor_ = kNoCycle;
  const std::uint64_t act_floor = channel_.channel_floor(DramCommand::kActivate);
  for (const std::uint32_t b : row_banks_) {
    BankQueue& bq = banks_[b];
    std::uint64_t at;
    BurstId id = kNone;
    const bool closed = channel_.open_row(b) < 0;
    if (closed) {
      const std::uint64_t floor =
          std::max(std::max(channel_.bank_floor(DramCommand::kActivate, b), act_floor),
                   channel_.group_floor(DramCommand::kActivate, bq.group));
      if (bq.oldest_other_entry <= floor) {
        // The oldest such burst reaches the bank's least cycle: no other of the bank beats it.
        at = floor;
        id = bq.oldest_other;
      } else {
        find_row_command(b, floor, at, id);
      }
    } else {
      if (!bq.pre_known) {
        bq.pre_known = true;
        find_row_command(b, channel_.bank_floor(DramCommand::kPrecharge, b), bq.pre_at, bq.pre_id);
      }
      at = bq.pre_at;
      id = bq.pre_id;
    }
    row_floor_ = std::min(row_floor_, at);
    if (at < best.at || (at == best.at && at != kNoCycle && !best.column && id < best.id))
      best = Choice{at, id, closed ? DramCommand::kActivate : DramCommand::kPrecharge, false, b};
  }
}

void DramController::find_row_command(std::uint32_t b, std::uint64_t floor, std::uint64_t& best_at,
                                      BurstId& best_id) {
  BankQueue& bq = banks_[b];
  best_at = kNoCycle;
  // Row hits first: the open row stays open while a queued burst that the controller could
  // have seen by the precharge's cycle still hits it. Every candidate is at `floor` or later.
  const std::uint64_t hit_entry = channel_.open_row(b) >= 0 ? first_hit_entry(b) : kNoCycle;
  if (hit_entry <= floor) return;
  if (bq.oldest_other_entry <= floor) {
    best_at = floor;
    best_id = bq.oldest_other;
    return;
  }
  for (BurstId id = bq.first; id != kNone; id = slot(id).bank_next) {
    const Slot& s = slot(id);
    if (s.state & kHit) continue;
    const std::uint64_t at = std::max(floor, s.entry);
    if (hit_entry <= at) continue;
    if (at < best_at) {  // in id order: a tie keeps the older
      best_at = at;
      best_id = id;
    }
    if (s.entry <= floor) break;
  }
}

bool DramController::merge_entered(BurstId id, Choice& best) {
  // Its id is the largest queued: it wins only by an earlier cycle, or a column command's tie
  // with a row command.
  const Slot& s = slot(id);
  if (s.state & kHit) {
    if (!best.column && best.cmd == DramCommand::kPrecharge && best.bank == s.bank &&
        s.entry <= best.at)
      return false;  // now held back: row hits first
    const std::uint64_t at = column_at(s);
    if (at < best.at || (at == best.at && !best.column))
      best = Choice{at, id, column_command(s.state & kWrite), true, s.bank};
    return true;
  }
  const DramCommand cmd =
      channel_.open_row(s.bank) < 0 ? DramCommand::kActivate : DramCommand::kPrecharge;
  const std::uint64_t at = channel_.earliest(cmd, s.bank, s.group, s.entry);
  if (cmd == DramCommand::kPrecharge && first_hit_entry(s.bank) <= at) return true;  // held back
  if (at < best.at) best = Choice{at, id, cmd, false, s.bank};
  return true;
}

void DramController::issue_row(const Choice& c) {
  Slot& s = slot(c.id);
  if (!(s.state & kStarted)) {
    s.state |= c.cmd == DramCommand::kActivate ? kStarted : kStarted | kConflict;
    ++(c.cmd == DramCommand::kActivate ? stats_.row_misses : stats_.row_conflicts);
  }
  if (c.cmd == DramCommand::kActivate) {
    channel_.issue_activate(c.bank, s.group, s.row, c.at);
    ++transfers_[s.transfer].activates;
  } else {
    channel_.issue_precharge(c.bank, c.at);
  }
  // The open row changed. A precharge of a bank none of whose queued bursts hit changes none
  // of them: each still needs a row command, the oldest first (half the row commands).
  if (c.cmd == DramCommand::kPrecharge && banks_[c.bank].hits == 0)
    banks_[c.bank].pre_known = false;
  else
    rebuild(c.bank);
  row_floor_known_ = false;
}

void DramController::leave_queue(Slot& s, std::uint64_t at) {
  const std::uint8_t state = s.state;
  const bool write = state & kWrite;
  const std::uint64_t end = channel_.issue_column(s.bank, s.group, write, at);
  Transfer& t = transfers_[s.transfer];
  ++t.done;
  t.first_done = std::min(t.first_done, end);
  t.last_done = std::max(t.last_done, end);
  if (!(state & kStarted)) {
    ++t.hits;
    ++stats_.row_hits;
  } else {
    ++((state & kConflict) ? t.conflicts : t.misses);
  }
  const std::uint64_t latency = end - s.arrival;
  stats_.last_done_cycle = std::max(stats_.last_done_cycle, end);
  stats_.latency_cycles += latency;
  if (latency < kShortLatency)
    ++short_latency_[latency];
  else
    stats_.latency.add(latency);
  left_at_[leave_slot_] = at;
  if (++leave_slot_ == queue_depth_) leave_slot_ = 0;
  // Only a row hit leaves the queue.
  s.state = static_cast<std::uint8_t>((state & ~kQueuedHit) | kDone);
  --queued_;
  --(write ? queued_writes_ : queued_reads_);
}

void DramController::complete_column(BurstId id, std::uint64_t at) {
  Slot* const ring = ring_.data();
  const std::size_t mask = ring_mask_;
  Slot& s = ring[id & mask];
  const std::uint32_t bank = s.bank;
  leave_queue(s, at);
  --queued_hits_;
  unlink_hit(s);
  BankQueue& bq = banks_[bank];
  --bq.hits;
  if (s.entry == bq.first_hit_entry) bq.first_hit_stale = true;
  const BurstId prev = s.bank_prev, next = s.bank_next;
  (prev == kNone ? bq.first : ring[prev & mask].bank_next) = next;
  (next == kNone ? bq.last : ring[next & mask].bank_prev) = prev;
  if (bq.others == 0) {
    bq.pre_known = false;
  } else {
    // Its precharge may have moved (tRTP, tWR; a hit that held it back left): the one row
    // command that can, so lower the bound to it.
    bq.pre_known = true;
    find_row_command(bank, channel_.bank_floor(DramCommand::kPrecharge, bank), bq.pre_at,
                     bq.pre_id);
    row_floor_ = std::min(row_floor_, bq.pre_at);
  }
  if (id == base_)
    while (base_ < next_admit_ && (ring[base_ & mask].state & kDone)) ++base_;
}

void DramController::complete_in_order(BurstId id, std::uint64_t at) {
  leave_queue(slot(id), at);
  base_ = id + 1;  // it was the oldest, and the queue has no gaps
}

void DramController::issue_column(const Choice& c) {
  complete_column(c.id, c.at);
  // Close-page precharges at once unless a queued burst still hits the row (DRAMsim3's
  // close-page rule), so a burst train within one row is not split by needless ACTs.
  if (close_page_ && !others_hit(c.bank, c.at)) {
    channel_.issue_precharge(
        c.bank, channel_.earliest(DramCommand::kPrecharge, c.bank, banks_[c.bank].group, c.at));
    rebuild(c.bank);
    row_floor_known_ = false;
  }
}

void DramController::leave_in_order() {
  in_order_ = false;
  row_floor_known_ = false;
  pending_valid_ = false;
  hit_first_[0] = hit_first_[1] = hit_last_[0] = hit_last_[1] = kNone;
  queued_hits_ = 0;
  for (BankQueue& bq : banks_) {
    bq.first = bq.last = kNone;
    bq.hits = bq.others = 0;
    bq.first_hit_stale = bq.pre_known = false;
  }
  // The queue has no gaps in this mode: it is every burst from base_ to next_admit_.
  for (BurstId id = base_; id < next_admit_; ++id) {
    Slot& s = slot(id);
    BankQueue& bq = banks_[s.bank];
    s.bank_prev = bq.last;
    s.bank_next = kNone;
    (bq.last == kNone ? bq.first : slot(bq.last).bank_next) = id;
    bq.last = id;
    count_in(bq, s, id, channel_.open_row(s.bank));
    if (s.state & kHit)
      link_hit(id, s, true);
    else
      list_row_bank(s.bank);
  }
}

bool DramController::advance_in_order(std::uint64_t until) {
  Slot* const ring = ring_.data();
  const std::size_t mask = ring_mask_;
  for (;;) {
    while (queued_ < queue_depth_ && next_admit_ < end_) {
      Slot& s = ring[next_admit_ & mask];
      s.entry = entry_cycle(s.arrival);
      ++queued_;
      ++next_admit_;
      ++((s.state & kWrite) ? queued_writes_ : queued_reads_);
      if (static_cast<std::int64_t>(s.row) != channel_.open_row(s.bank)) {
        s.state |= kQueued;
        leave_in_order();  // a row command is needed
        return true;
      }
      s.state |= kQueuedHit;
    }
    Choice& best = pending_;
    if (queued_ == 0) {
      best.at = next_decision_ = kNoCycle;
      pending_valid_ = true;
      return false;
    }
    const Slot& s = ring[base_ & mask];
    const std::uint64_t at = column_at(s);
    if (at > least_column_floor()) {  // a younger hit may go first
      leave_in_order();
      return true;
    }
    best = Choice{at, base_, column_command(s.state & kWrite), true, s.bank};
    next_decision_ = at;
    pending_valid_ = at >= until;
    if (pending_valid_) return false;
    if (channel_.next_refresh() <= at) {
      leave_in_order();
      return true;
    }
    complete_in_order(base_, at);
  }
}

[[gnu::flatten]] void DramController::advance(std::uint64_t until) {
  // Nothing new since the last call stopped at next_decision_: nothing more to decide yet.
  if (!changed_ && until <= next_decision_) return;
  changed_ = false;
  for (;;) {
    if (in_order_ && !advance_in_order(until)) return;
    const BurstId entered = next_admit_ < end_ && queued_ < queue_depth_ ? admit() : kNone;
    Choice& best = pending_;
    bool valid = pending_valid_ && !fcfs_;
    if (entered != kNone)
      for (BurstId id = entered; valid && id < next_admit_; ++id) valid = merge_entered(id, best);
    if (!valid) {
      if (fcfs_)
        select_fcfs(best);
      else
        select_frfcfs(best);
    }
    next_decision_ = best.at;
    pending_valid_ = best.at >= until;
    if (best.at >= until) return;
    // Refreshes that fall due first go first (they close rows: choose again).
    if (channel_.next_refresh() <= best.at) {
      channel_.refresh_until(best.at);
      rebuild_all();
      continue;
    }
    if (!best.column) {
      issue_row(best);
      continue;
    }
    issue_column(best);
    if (fcfs_ || close_page_) continue;
    if (row_banks_.empty() && queued_ == next_admit_ - base_) {
      in_order_ = true;
      continue;
    }
    // The run of column commands that select_frfcfs() would choose one by one, decided without
    // weighing the row commands: none comes before row_floor_ (kept a bound as bursts enter and
    // leave, see row_floor_known_). A refresh due ends the run, as does a row command.
    while (row_floor_known_ && queued_hits_ > 0) {
      if (next_admit_ < end_ && queued_ < queue_depth_) admit();
      best_column(best);
      if (best.at > row_floor_ || channel_.next_refresh() <= best.at) break;
      if (best.at >= until) {
        next_decision_ = best.at;
        pending_valid_ = true;
        return;
      }
      complete_column(best.id, best.at);
    }
  }
}

}  // namespace tpusim::models
