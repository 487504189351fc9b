#include "models/hbm/dram_timeline.h"

#include <algorithm>
#include <array>

namespace tpusim::models {

DramTimeline::DramTimeline(const DramSpec& spec)
    : t_(resolve_timing(spec)),
      banks_per_group_(spec.banks_per_group),
      act_slot_(static_cast<std::uint32_t>(std::max(t_.RRD_S, (t_.FAW + 3) / 4))),
      banks_(std::size_t{spec.bank_groups} * spec.banks_per_group),
      queue_depth_(spec.queue_depth),
      waiting_(banks_.size()),
      burst_bytes_(spec.burst_bytes().value()) {}

DramTimeline::PieceId DramTimeline::serve(const DramAddress* bursts, std::uint32_t n, bool write,
                                          std::uint64_t arrival, std::uint64_t now) {
  PieceId id;
  if (free_.empty()) {
    id = static_cast<PieceId>(pieces_.size());
    pieces_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
    pieces_[id] = Piece{};
  }
  pieces_[id].bursts = n;
  if (!waiting_banks_.empty() && now > next_settle_) settle(now);
  // A deferred piece enters no sooner than it arrived.
  const std::uint64_t floor = std::min({now, next_settle_, deferred_floor_});
  bus_.forget_before(floor);
  acts_.forget_before(floor);
  // Bursts enter in the order they are served: behind a deferred piece, or when the queue is
  // full of bursts whose leaving is not decided, the piece waits for room.
  if (deferred_first_ < deferred_.size() || !has_room()) {
    deferred_.push_back(hold(id, bursts, n, write, arrival));
    deferred_floor_ = std::min(deferred_floor_, arrival);
    pieces_[id].waits_on = kNoBank;
    return id;
  }
  const Entry in = enter(arrival, n);
  std::uint32_t row = 0;
  const std::uint32_t b = bank_to_wait_on(bursts, n, in.at, row);
  if (b == kNoBank) {
    place(id, bursts, entries_.data(), n, write, arrival, in, 0, false);
    return id;
  }
  const std::uint32_t slot = hold(id, bursts, n, write, arrival);
  Waiting& w = slab_[slot];
  w.row = row;
  w.entry = in;
  w.entries.assign(entries_.begin(), entries_.end());
  wait_on(b, slot);
  return id;
}

std::uint32_t DramTimeline::hold(PieceId id, const DramAddress* bursts, std::uint32_t n, bool write,
                                 std::uint64_t arrival) {
  const std::uint32_t slot = new_waiting();
  Waiting& w = slab_[slot];
  w.id = id;
  w.write = write;
  w.arrival = arrival;
  w.bursts.assign(bursts, bursts + n);
  return slot;
}

std::uint32_t DramTimeline::bank_to_wait_on(const DramAddress* bursts, std::uint32_t n,
                                            std::uint64_t entry, std::uint32_t& row) const {
  // A piece waits when one of its banks has another row open (FR-FCFS serves that row's hits
  // first) or already has pieces waiting for a row change (they go first).
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t b = bank_index(bursts[i]);
    const Bank& bank = banks_[b];
    const bool open = row_open(bank, bursts[i].row, entry);
    if (bank.waiting == 0) {
      if (open || bank.open_row == kClosed || entry >= bank.refresh_closes) continue;
    } else if (open && entry <= first_switch(b)) {
      continue;  // a hit that holds the waiting row change back
    }
    row = bursts[i].row;
    return b;
  }
  return kNoBank;
}

void DramTimeline::wait_on(std::uint32_t b, std::uint32_t slot) {
  const Waiting& w = slab_[slot];
  Bank& bank = banks_[b];
  if (bank.waiting++ == 0) waiting_banks_.push_back(b);
  bank.settled_changer = kChanged;
  waiting_[b].push_back(slot);
  pieces_[w.id].waits_on = b;
  waiting_bursts_ += w.bursts.size() - w.entry.self_left;
  next_settle_ = std::min(next_settle_, std::max(w.entry.at, bank.next_pre));
}

DramTimeline::Entry DramTimeline::enter(std::uint64_t arrival, std::uint32_t n) {
  Entry e;
  entries_.resize(n);
  std::uint64_t entry = arrival;
  for (std::uint32_t i = 0; i < n; ++i, ++entered_) {
    if (entered_ >= queue_depth_ && left_ <= entered_ - queue_depth_) {
      ++left_;
      if (leaves_first_ < leaves_.size()) {
        entry = std::max(entry, leaves_[leaves_first_++]);
      } else {
        // The rest of the queue is bursts still waiting for a row change and this piece's own
        // earlier bursts, which are counted as leaving first: once the piece goes, its bursts
        // go back to back, each letting the next in. (A piece that waits for a change may so
        // hold a few more bursts than the queue. With none of its own in yet, it waits for
        // room: has_room().)
        ++e.self_left;
      }
    }
    entries_[i] = entry;
  }
  e.at = entries_[0];
  return e;
}

bool DramTimeline::admit_deferred() {
  const std::size_t first = deferred_first_;
  while (deferred_first_ < deferred_.size()) {
    const std::uint32_t slot = deferred_[deferred_first_];
    Waiting& w = slab_[slot];
    const auto n = static_cast<std::uint32_t>(w.bursts.size());
    if (!has_room()) break;
    ++deferred_first_;
    w.entry = enter(w.arrival, n);
    const std::uint32_t b = bank_to_wait_on(w.bursts.data(), n, w.entry.at, w.row);
    if (b == kNoBank) {
      place(w.id, w.bursts.data(), entries_.data(), n, w.write, w.arrival, w.entry, 0, false);
      slab_free_.push_back(slot);
    } else {
      w.entries.assign(entries_.begin(), entries_.end());
      wait_on(b, slot);
    }
  }
  if (deferred_first_ == first) return false;
  if (deferred_first_ == deferred_.size()) {
    deferred_.clear();
    deferred_first_ = 0;
    deferred_floor_ = kNever;
  } else {
    if (deferred_first_ >= 64 && deferred_first_ * 2 >= deferred_.size()) {
      deferred_.erase(deferred_.begin(), deferred_.begin() + std::ptrdiff_t(deferred_first_));
      deferred_first_ = 0;
    }
    deferred_floor_ = kNever;
    for (std::size_t i = deferred_first_; i < deferred_.size(); ++i)
      deferred_floor_ = std::min(deferred_floor_, slab_[deferred_[i]].arrival);
  }
  return true;
}

void DramTimeline::insert_leave(std::uint64_t cycle) {
  if (leaves_first_ >= 64 && leaves_first_ * 2 >= leaves_.size()) {
    leaves_.erase(leaves_.begin(), leaves_.begin() + static_cast<std::ptrdiff_t>(leaves_first_));
    leaves_first_ = 0;
  }
  std::size_t i = leaves_.size();
  leaves_.push_back(cycle);
  for (; i > leaves_first_ && leaves_[i - 1] > cycle; --i) leaves_[i] = leaves_[i - 1];
  leaves_[i] = cycle;
}

std::uint32_t DramTimeline::new_waiting() {
  if (slab_free_.empty()) {
    slab_.emplace_back();
    return static_cast<std::uint32_t>(slab_.size() - 1);
  }
  const std::uint32_t slot = slab_free_.back();
  slab_free_.pop_back();
  return slot;
}

std::uint64_t DramTimeline::first_switch(std::uint32_t b) const {
  for (const std::uint32_t slot : waiting_[b]) {
    const Waiting& w = slab_[slot];
    if (!row_open(banks_[b], w.row, w.entry.at)) return std::max(w.entry.at, banks_[b].next_pre);
  }
  return kNever;
}

void DramTimeline::place(PieceId id, const DramAddress* bursts, const std::uint64_t* entries,
                         std::uint32_t n, bool write, std::uint64_t arrival, Entry entry,
                         std::uint64_t switch_at, bool waited) {
  Piece& p = pieces_[id];
  const std::uint64_t at = std::max(entry.at, switch_at);
  reserve_refreshes(std::max(at, tail_end_) + t_.REFI);
  ready_.resize(n);
  order_.resize(n);
  offsets_.resize(n);
  // Raw pointers: the compiler would reload a member vector's data after every store.
  std::uint64_t* const ready_at = ready_.data();
  std::uint32_t* const order = order_.data();
  std::uint64_t* const offsets = offsets_.data();
  Bank* const banks = banks_.data();
  std::uint64_t groups_seen = 0;
  bool group_repeats = false;
  bool reopened_waiting = false;
  for (std::uint32_t i = 0; i < n; ++i) {
    const DramAddress& a = bursts[i];
    Bank& bank = banks[bank_index(a)];
    const std::uint64_t group_bit = std::uint64_t{1} << (a.bank_group & 63);
    group_repeats = group_repeats || (groups_seen & group_bit);
    groups_seen |= group_bit;
    if (row_open(bank, a.row, at)) {
      ++p.hits;
    } else {
      std::uint64_t act_floor = std::max(at, bank.next_act);
      const bool conflict = bank.open_row != kClosed && at < bank.refresh_closes;
      if (conflict) {
        const std::uint64_t pre = std::max(at, bank.next_pre);
        act_floor = std::max(act_floor, pre + t_.RP);
        ++p.conflicts;
        ++stats_.precharges;
      } else {
        ++p.misses;
      }
      const std::uint64_t act = acts_.reserve(act_floor, act_slot_);
      bank.settled_changer = kChanged;
      reopened_waiting = reopened_waiting || (bank.waiting > 0 && &bank != settling_);
      bank.open_row = static_cast<std::int32_t>(a.row);
      bank.refresh_closes = (act / t_.REFI + 1) * t_.REFI;
      bank.next_col = act + t_.RCD;
      bank.next_act = act + t_.RC;
      bank.next_pre = act + t_.RAS;
      ++p.activates;
    }
    // The bursts whose banks are ready first go first: a hit need not wait behind an activate.
    // Pieces are a few bursts, most already in order: an insertion sort, stable.
    const std::uint64_t ready = std::max(bank.next_col, entries[i]);
    // Two plain arrays: a pair built on the stack and copied in stalls on store forwarding.
    std::uint32_t k = i;
    for (; k > 0 && ready_at[k - 1] > ready; --k) {
      ready_at[k] = ready_at[k - 1];
      order[k] = order[k - 1];
    }
    ready_at[k] = ready;
    order[k] = i;
  }
  // Each burst's place in the train: tCCD_S after the one before, tCCD_L after the last one of
  // its bank group.
  const std::uint64_t spacing = std::max(t_.BURST, t_.CCD_S);
  for (std::uint32_t j = 0; j < n; ++j) offsets[j] = j * spacing;
  if (group_repeats) {
    std::array<std::uint64_t, 64> group_free{};  // each group's next burst no sooner
    for (std::uint32_t j = 0; j < n; ++j) {
      const std::uint32_t g = bursts[order[j]].bank_group & 63;
      offsets[j] = std::max(j == 0 ? 0 : offsets[j - 1] + spacing, group_free[g]);
      group_free[g] = offsets[j] + t_.CCD_L;
    }
  }
  const std::uint64_t length = offsets[n - 1] + t_.BURST;
  const std::uint64_t latency = write ? t_.WL : t_.CL;
  std::uint64_t column_ready = 0;
  for (std::uint32_t j = 0; j < n; ++j) {
    const std::uint64_t ready = ready_at[j];
    column_ready = std::max(column_ready, ready > offsets[j] ? ready - offsets[j] : 0);
  }
  std::uint64_t earliest = column_ready + latency;
  if (write != tail_write_ && bus_.fit(earliest, length) >= tail_end_) {
    // Appended after data of the other direction: the turnaround.
    earliest = std::max(earliest,
                        write ? tail_command_ + t_.RTW + latency : tail_end_ + t_.WTR_S + latency);
  }
  const std::uint64_t start = bus_.reserve(earliest, length);
  const std::uint64_t end = start + length;
  const std::uint64_t last_command = end - t_.BURST - latency;
  if (end >= tail_end_) {
    tail_end_ = end;
    tail_write_ = write;
    tail_command_ = last_command;
  }
  p.first_done = start + t_.BURST;
  p.last_done = end;
  p.done = true;
  if (waited) waiting_bursts_ -= n - entry.self_left;
  std::uint32_t* const short_latency = short_latency_.data();
  std::uint64_t latency_sum = 0;
  // The train waits for its last bank; the command engine would issue the bursts of banks ready
  // sooner as they become ready, and they would leave the queue then. So each burst leaves as
  // if the train had started with the first one ready, but no sooner than its own bank is.
  const std::uint64_t train_wait = column_ready - ready_at[0];
  for (std::uint32_t j = 0; j < n; ++j) {
    const std::uint64_t done = start + offsets[j] + t_.BURST;
    const std::uint64_t command = done - t_.BURST - latency;
    Bank& bank = banks[bank_index(bursts[order[j]])];
    bank.next_pre = std::max(bank.next_pre, write ? done + t_.WR : command + t_.RTP);
    // It leaves the queue (see train_wait), unless the piece's own later bursts took its
    // leaving already.
    if (j >= entry.self_left) add_leave(std::max(ready_at[j], command - train_wait));
    const std::uint64_t wait = done - arrival;
    if (wait < kShortLatency)
      ++short_latency[wait];
    else
      stats_.latency.add(wait);
    latency_sum += wait;
  }
  stats_.latency_cycles += latency_sum;
  (write ? stats_.writes : stats_.reads) += n;
  stats_.row_hits += p.hits;
  stats_.row_misses += p.misses;
  stats_.row_conflicts += p.conflicts;
  stats_.activates += p.activates;
  stats_.data_bus_cycles += std::uint64_t{n} * t_.BURST;
  stats_.last_done_cycle = std::max(stats_.last_done_cycle, end);
  // A piece settled for one bank opened another row in another bank with waiting pieces: that
  // bank may now have an earlier change (its old change became a hit), perhaps already due.
  // next_settle_ must not stay above it: settle() would not run, and the timelines would forget
  // what that change's activate must not overlap.
  if (reopened_waiting)
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t b = bank_index(bursts[i]);
      if (banks_[b].waiting > 0 && &banks_[b] != settling_)
        next_settle_ = std::min(next_settle_, first_switch(b));
    }
}

void DramTimeline::reserve_refreshes(std::uint64_t cycle) {
  while ((refreshes_reserved_ + 1) * t_.REFI <= cycle) {
    const std::uint64_t due = ++refreshes_reserved_ * t_.REFI;
    // Precharge-all, then the refresh; no column or activate in between.
    const std::uint64_t start = bus_.reserve(due, t_.RP + t_.RFC);
    acts_.reserve(start, t_.RP + t_.RFC);
  }
}

void DramTimeline::settle(std::uint64_t now) {
  while (deferred_first_ < deferred_.size()) {
    // A deferred piece may enter before a row change and hit the open row, holding the change
    // back, so with pieces deferred the changes are decided one at a time, earliest first,
    // letting deferred pieces in after each. Hits that can go need no decision in time
    // (settle_banks(0)): they go first, and their leaving may be the room a piece waits for.
    settle_banks(0);
    if (admit_deferred()) continue;
    if (next_settle_ >= now) return;
    settle_banks(next_settle_ + 1);
    admit_deferred();  // on the change's leaves, before hits elsewhere go (settle_banks(0))
  }
  settle_banks(now);
}

void DramTimeline::settle_banks(std::uint64_t now) {
  next_settle_ = kNever;
  for (std::size_t i = 0; i < waiting_banks_.size();) {
    const std::uint32_t b = waiting_banks_[i];
    Bank& bank = banks_[b];
    // Neither its row nor its queue changed since it was last settled (pieces that hit may
    // have moved its precharge floor): settle_bank() would find the same piece to change the
    // row for, so it has nothing to do unless a hit has become placeable or the change is due.
    if (bank.settled_changer == kChanged || bank.settled_hit_min <= switch_of(bank) ||
        switch_of(bank) < now)
      settle_bank(b, now);
    if (bank.waiting == 0) {
      waiting_banks_[i] = waiting_banks_.back();
      waiting_banks_.pop_back();
    } else {
      // Equal to first_switch(b): settle_bank() left the bank so, or nothing it reads changed.
      next_settle_ = std::min(next_settle_, switch_of(bank));
      ++i;
    }
  }
}

void DramTimeline::settle_bank(std::uint32_t b, std::uint64_t now) {
  std::vector<std::uint32_t>& queue = waiting_[b];
  settling_ = &banks_[b];
  for (;;) {
    // The oldest piece needing the row changed: the precharge for it issues once no hit that
    // arrived by then is left.
    std::size_t changer = queue.size();
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const Waiting& w = slab_[queue[i]];
      if (!row_open(banks_[b], w.row, w.entry.at)) {
        changer = i;
        break;
      }
    }
    const std::uint64_t changer_at =
        changer < queue.size() ? slab_[queue[changer]].entry.at : kNever;
    const std::uint64_t switch_at =
        changer < queue.size() ? std::max(changer_at, banks_[b].next_pre) : kNever;
    std::uint64_t hit_min = kNever;  // the earliest entry of a hit that must wait
    bool placed = false;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const Waiting& w = slab_[queue[i]];
      if (i == changer || !row_open(banks_[b], w.row, w.entry.at)) continue;
      // A hit that arrived after the row change waits for its row to come back.
      if (w.entry.at > switch_at) {
        hit_min = std::min(hit_min, w.entry.at);
        continue;
      }
      place(w.id, w, 0);
      remove_waiting(b, i);
      placed = true;
      break;
    }
    if (placed) continue;
    if (changer == queue.size() || switch_at >= now) {
      banks_[b].settled_changer = changer_at;
      banks_[b].settled_hit_min = hit_min;
      settling_ = nullptr;
      return;
    }
    const Waiting& w = slab_[queue[changer]];
    place(w.id, w, switch_at);
    remove_waiting(b, changer);
  }
}

void DramTimeline::remove_waiting(std::uint32_t b, std::size_t i) {
  std::vector<std::uint32_t>& queue = waiting_[b];
  slab_free_.push_back(queue[i]);
  --banks_[b].waiting;
  queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
}

std::uint64_t DramTimeline::not_before(PieceId id) const {
  if (pieces_[id].done) return 0;
  // Waiting for room: the earliest row change may let a waiting burst leave.
  const std::uint64_t at =
      pieces_[id].waits_on == kNoBank ? next_settle_ : first_switch(pieces_[id].waits_on);
  return at == kNever ? 0 : at;
}

void DramTimeline::end_run(std::uint64_t cycle) {
  settle(kNever);
  end_cycle_ = cycle;
}

DramControllerStats DramTimeline::stats() const {
  DramControllerStats s = stats_;
  s.read_bytes = s.reads * burst_bytes_;
  s.write_bytes = s.writes * burst_bytes_;
  s.refreshes = end_cycle_ > 0 ? (end_cycle_ - 1) / t_.REFI : 0;
  s.refresh_cycles = s.refreshes * t_.RFC;
  for (std::uint32_t v = 0; v < kShortLatency; ++v)
    if (short_latency_[v]) s.latency.add(v, short_latency_[v]);
  return s;
}

}  // namespace tpusim::models
