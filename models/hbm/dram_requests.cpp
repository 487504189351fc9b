// The controller's side toward the memory: construction, transfers and bursts coming in
// (enqueue), and results going out (not_before, schedule, stats). The scheduling itself is in
// dram_controller.cpp.

#include "models/hbm/dram_controller.h"

#include <algorithm>
#include <cassert>

namespace tpusim::models {

DramController::DramController(const DramSpec& spec)
    : channel_(spec),
      queue_depth_(spec.queue_depth),
      fcfs_(spec.scheduler == DramScheduler::kFcfs),
      close_page_(spec.page_policy == PagePolicy::kClose),
      burst_bytes_(spec.burst_bytes().value()),
      column_interval_(std::max(channel_.timing().CCD_S, channel_.timing().BURST)),
      ring_(64),
      ring_mask_(63),
      banks_(std::size_t{spec.bank_groups} * spec.banks_per_group),
      left_at_(spec.queue_depth, 0),
      short_latency_(kShortLatency, 0) {
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
  if (free_transfers_.empty()) {
    transfers_.emplace_back();
    return transfers_.size() - 1;
  }
  const std::uint32_t t = free_transfers_.back();
  free_transfers_.pop_back();
  transfers_[t] = Transfer{};
  return t;
}

DramController::BurstId DramController::enqueue(const DramAddress* addresses, std::uint32_t n,
                                                bool write, std::uint64_t arrival,
                                                TransferId transfer) {
  while (end_ - base_ + n > ring_.size()) widen(ring_, ring_mask_, base_, end_);
  const BurstId first = end_;
  Slot* const ring = ring_.data();
  const std::size_t mask = ring_mask_;
  for (std::uint32_t i = 0; i < n; ++i) {
    const DramAddress& a = addresses[i];
    Slot& s = ring[(first + i) & mask];
    s.arrival = arrival;
    s.row = a.row;
    s.transfer = static_cast<std::uint32_t>(transfer);
    s.bank = static_cast<std::uint16_t>(channel_.bank_index(a));
    s.group = static_cast<std::uint8_t>(a.bank_group);
    s.state = write ? kWrite : 0;
  }
  end_ = first + n;
  transfers_[transfer].bursts += n;
  changed_ = true;
  return first;
}

std::uint64_t DramController::not_before(BurstId id) const {
  assert(!done(id));
  if (id >= next_admit_) {
    // Still outside the queue: every burst ahead of it in line must first leave the queue, one
    // column command each, at least column_interval_ apart.
    if (next_decision_ == kNoCycle) return kNoCycle;  // nothing decided since it was enqueued
    return next_decision_ + (id - next_admit_ + 1) * column_interval_;
  }
  const Slot& s = slot(id);
  return std::max(next_decision_, channel_.earliest(next_command(s), s.bank, s.group, s.entry));
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
  s.reads = c.reads;
  s.writes = c.writes;
  s.read_bytes = s.reads * burst_bytes_;
  s.write_bytes = s.writes * burst_bytes_;
  s.activates = c.activates;
  s.precharges = c.precharges;
  s.refreshes = c.refreshes;
  s.refresh_cycles = c.refresh_cycles;
  s.data_bus_cycles = c.data_bus_cycles;
  for (std::uint32_t v = 0; v < kShortLatency; ++v)
    if (short_latency_[v]) s.latency.add(v, short_latency_[v]);
  return s;
}

}  // namespace tpusim::models
