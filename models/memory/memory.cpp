#include "models/memory/memory.h"

#include <algorithm>
#include <cstring>

#include "sim/base/errors.h"

namespace tpusim::models {

std::uint8_t* BackingStore::page(std::uint64_t index, bool create) {
  auto it = pages_.find(index);
  if (it != pages_.end()) return it->second.get();
  if (!create) return nullptr;
  auto& slot = pages_[index];
  slot.reset(new std::uint8_t[kPage]());
  return slot.get();
}

void BackingStore::read(std::uint64_t addr, std::uint8_t* out, std::uint64_t bytes) {
  while (bytes > 0) {
    const std::uint64_t offset = addr % kPage;
    const std::uint64_t n = std::min(bytes, kPage - offset);
    if (const std::uint8_t* p = page(addr / kPage, false))
      std::memcpy(out, p + offset, n);
    else
      std::memset(out, 0, n);  // never written: reads as zeros
    addr += n;
    out += n;
    bytes -= n;
  }
}

void BackingStore::write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t bytes) {
  while (bytes > 0) {
    const std::uint64_t offset = addr % kPage;
    const std::uint64_t n = std::min(bytes, kPage - offset);
    std::memcpy(page(addr / kPage, true) + offset, in, n);
    addr += n;
    in += n;
    bytes -= n;
  }
}

namespace {
constexpr std::uint32_t kNoPiece = ~0u;

// The DRAM clock edge at or after `seconds` (less a millionth of a cycle of rounding): std::ceil
// without the library call, for the non-negative times it is given.
std::uint64_t dram_cycle_at(double seconds, double hz) {
  const double cycles = seconds * hz - 1e-6;
  if (cycles <= 0) return 0;
  // Through int64: one instruction, where a double to uint64 conversion takes a branch. A run
  // of 2^63 DRAM cycles would last centuries of simulated time.
  const auto whole = static_cast<std::uint64_t>(static_cast<std::int64_t>(cycles));
  return double(whole) < cycles ? whole + 1 : whole;
}
}  // namespace

Memory::Memory(sc_core::sc_module_name name, const SimContext& ctx)
    : sc_core::sc_module(name),
      socket("socket"),
      ctx_(ctx),
      timing_(ctx.spec.memory, ctx.spec.clock),
      address_map_(ctx.spec.memory.hbm),
      shifts_(address_map_.power_of_two() ? address_map_.shifts() : AddressMap::Shifts{}),
      noc_(ctx.spec.noc, ctx.spec.cores,
           ctx.spec.memory.model == MemoryModel::kHbm ? ctx.spec.memory.hbm.total_channels()
                                                      : ctx.spec.memory.channels,
           ctx.spec.clock),
      dram_ck_hz_(ctx.spec.memory.hbm.clock.value()),
      dram_burst_cycles_(resolve_timing(ctx.spec.memory.hbm).BURST),
      track_(ctx.trace.add_track(this->name())) {
  if (ctx.spec.memory.model == MemoryModel::kHbm) {
    const std::uint32_t channels = ctx.spec.memory.hbm.total_channels();
    if (ctx.spec.memory.hbm.engine == DramEngine::kTimeline) {
      timeline_.reserve(channels);
      for (std::uint32_t c = 0; c < channels; ++c) timeline_.emplace_back(ctx.spec.memory.hbm);
      read_links_.source =
          noc_.link_seconds(address_map_.burst_bytes()) <= double(dram_burst_cycles_) / dram_ck_hz_;
    } else {
      dram_.reserve(channels);
      for (std::uint32_t c = 0; c < channels; ++c) dram_.emplace_back(ctx.spec.memory.hbm);
    }
    piece_of_channel_.assign(channels, kNoPiece);
  } else if (ctx.spec.memory.model == MemoryModel::kSimple) {
    // A link exactly as fast as the channel is enough: allow for the rounding of either rate.
    read_links_.source = noc_.link_seconds(1) <= timing_.transfer_seconds(1) * (1 + 1e-9);
  }
  if (ctx.spec.memory.model != MemoryModel::kIdeal) {
    const double peak = ctx.spec.memory.model == MemoryModel::kHbm
                            ? ctx.spec.memory.hbm.peak_bandwidth().value()
                            : ctx.spec.memory.bandwidth.bytes_per_second(ctx.spec.clock).value();
    // Likewise a link exactly as fast as the whole memory.
    read_links_.destination = noc_.link_seconds(1) * peak <= 1.0 + 1e-9;
  }
  if (!ctx.dram_recording.empty()) {
    if (timeline_.empty())
      throw InputError(
          "TPUSIM_DRAM_RECORD needs memory.model hbm with memory.hbm.controller.engine timeline");
    recorder_ =
        std::make_unique<DramRecorder>(ctx.dram_recording, ctx.spec.memory.hbm.total_channels());
  }
  socket.register_b_transport(this, &Memory::b_transport);
}

double Memory::simple_access(std::uint64_t addr, std::uint64_t bytes, bool write, double arrival_s,
                             std::uint32_t core, MemoryStats& s) {
  const double now = sc_core::sc_time_stamp().to_seconds();
  const std::uint32_t here = noc_.core_node(core);
  double done = arrival_s;
  for (std::uint64_t at = addr, end = addr + bytes; at < end;) {
    const std::uint64_t block_end = (at / kChannelInterleaveBytes + 1) * kChannelInterleaveBytes;
    const std::uint64_t piece = std::min(end, block_end) - at;
    const std::uint32_t there = noc_.memory_node(timing_.channel_of(at));
    if (write) {
      const double delivered = noc_.transfer(here, there, piece, arrival_s, arrival_s, now);
      done = std::max(done, timing_.access(at, piece, delivered, now));
    } else {
      const double asked = arrival_s + noc_.latency(here, there);
      const double read = timing_.access(at, piece, asked, now);
      // The first byte leaves the channel a transfer time before the last, not when asked.
      const double first = read - timing_.transfer_seconds(piece);
      done = std::max(done, noc_.transfer(there, here, piece, first, read, now, read_links_));
    }
    s.noc_byte_hops += piece * noc_.hops(here, there);
    at += piece;
  }
  return done;
}

std::uint64_t Memory::decidable_until() const {
  // A request posted now or later reaches a controller at this cycle or later (dram_post
  // rounds arrivals up the same way), so every command before it can be decided.
  const sc_core::sc_time& present = sc_core::sc_time_stamp();
  if (present.value() != until_value_) {
    until_value_ = present.value();
    until_cycle_ = dram_cycle_at(present.to_seconds(), dram_ck_hz_);
  }
  return until_cycle_;
}

double Memory::horizon_seconds() const {
  const std::uint64_t horizon = ctx_.booking_horizon();
  if (horizon != horizon_value_) {
    horizon_value_ = horizon;
    horizon_s_ = sc_core::sc_time::from_value(horizon).to_seconds();
  }
  return horizon_s_;
}

void Memory::dram_post(Transaction& t, std::uint64_t addr, std::uint64_t bytes) {
  // Links keep what a late booking (BookingHorizon) could still overlap.
  const double now = horizon_seconds();
  const std::uint32_t here = noc_.core_node(t.core);
  const std::uint64_t burst = address_map_.burst_bytes();
  const std::uint64_t first = addr / burst * burst;
  const auto n = static_cast<std::uint32_t>((addr + bytes - first + burst - 1) / burst);
  if (n == 0) return;
  // Pieces first (a write's data crosses the interconnect per channel before it arrives), then
  // each piece's bursts, so one piece's bursts have consecutive ids.
  mapped_.resize(n);
  if (address_map_.power_of_two()) {
    const AddressMap::Shifts local = shifts_;  // see AddressMap::Shifts
    local.map_range(first, n, burst, mapped_.data());
  } else {
    for (std::uint32_t i = 0; i < n; ++i)
      mapped_[i] = address_map_.map(first + std::uint64_t{i} * burst);
  }
  // Runs of bursts in one channel; a channel met again after another makes them unsorted.
  bool grouped = true;
  for (std::uint32_t i = 0; i < n;) {
    const std::uint32_t channel = mapped_[i].channel;
    std::uint32_t j = i + 1;
    while (j < n && mapped_[j].channel == channel) ++j;
    if (piece_of_channel_[channel] == kNoPiece) {
      piece_of_channel_[channel] = static_cast<std::uint32_t>(t.pieces.size());
      // Built in place: copying in a temporary Piece stalled on store-to-load forwarding.
      Piece& piece = t.pieces.emplace_back();
      piece.channel = channel;
      piece.bursts = j - i;
    } else {
      grouped = false;
      t.pieces[piece_of_channel_[channel]].bursts += j - i;
    }
    i = j;
  }
  for (Piece& p : t.pieces) p.bytes = std::uint64_t{p.bursts} * burst;
  // Whole bursts but for the ends of the range.
  t.pieces[piece_of_channel_[mapped_.front().channel]].bytes -= addr - first;
  t.pieces[piece_of_channel_[mapped_.back().channel]].bytes -=
      first + std::uint64_t{n} * burst - (addr + bytes);
  // Each piece's bursts in address order: as mapped when grouped, else by a counting sort.
  const DramAddress* bursts_of = mapped_.data();
  if (!grouped) {
    piece_fill_.clear();
    std::uint32_t start = 0;
    for (const Piece& p : t.pieces) {
      piece_fill_.push_back(start);
      start += p.bursts;
    }
    sorted_.resize(n);
    for (const DramAddress& a : mapped_) sorted_[piece_fill_[piece_of_channel_[a.channel]]++] = a;
    bursts_of = sorted_.data();
  }
  const std::uint64_t until = timeline_.empty() ? 0 : decidable_until();
  std::uint32_t start = 0;
  double last_at_memory = -1;
  std::uint64_t cycle = 0;
  for (Piece& p : t.pieces) {
    piece_of_channel_[p.channel] = kNoPiece;
    const std::uint32_t there = noc_.memory_node(p.channel);
    const double at_memory =
        t.write ? noc_.transfer(here, there, p.bytes, t.arrival_s, t.arrival_s, now)
                : t.arrival_s + noc_.latency(here, there);
    // A request arriving mid-cycle is seen at the next DRAM clock edge. On a crossbar every
    // piece of a read arrives at once.
    if (at_memory != last_at_memory) {
      last_at_memory = at_memory;
      cycle = dram_cycle_at(at_memory, dram_ck_hz_);
    }
    t.last_arrival_cycle = std::max(t.last_arrival_cycle, cycle);
    if (timeline_.empty()) {
      DramController& controller = dram_[p.channel];
      p.transfer = controller.open_transfer();
      p.first = controller.enqueue(bursts_of + start, p.bursts, t.write, cycle, p.transfer);
    } else {
      p.transfer = timeline_[p.channel].serve(bursts_of + start, p.bursts, t.write, cycle, until);
      if (recorder_)
        recorder_->serve(p.channel, bursts_of + start, p.bursts, t.write, cycle, until,
                         static_cast<DramTimeline::PieceId>(p.transfer));
    }
    start += p.bursts;
  }
}

bool Memory::dram_decide(Transaction& t) {
  if (!timeline_.empty()) return timeline_decide(t);
  const std::uint64_t until = decidable_until();
  // A burst's column command comes after its arrival: none can be decided yet.
  if (until <= t.last_arrival_cycle) return false;
  bool all = true;
  for (const Piece& p : t.pieces) {
    DramController& controller = dram_[p.channel];
    controller.advance(until);
    const DramController::Transfer& r = controller.transfer(p.transfer);
    all = all && r.done == r.bursts;
  }
  if (!all) return false;
  complete_pieces(
      t, [this](const Piece& p) -> const auto& { return dram_[p.channel].transfer(p.transfer); },
      [this](const Piece& p) { dram_[p.channel].release(p.transfer); });
  return true;
}

bool Memory::timeline_decide(Transaction& t) {
  for (const Piece& p : t.pieces) {
    DramTimeline& channel = timeline_[p.channel];
    if (!channel.piece(static_cast<DramTimeline::PieceId>(p.transfer)).done) {
      const std::uint64_t until = decidable_until();
      channel.settle(until);
      if (recorder_) recorder_->settle(p.channel, until);
      if (!channel.piece(static_cast<DramTimeline::PieceId>(p.transfer)).done) return false;
    }
  }
  complete_pieces(
      t,
      [this](const Piece& p) -> const auto& {
        return timeline_[p.channel].piece(static_cast<DramTimeline::PieceId>(p.transfer));
      },
      [this](const Piece& p) {
        const auto id = static_cast<DramTimeline::PieceId>(p.transfer);
        if (recorder_) recorder_->release(p.channel, id, timeline_[p.channel].piece(id));
        timeline_[p.channel].release(id);
      });
  return true;
}

template <class Result, class Release>
void Memory::complete_pieces(Transaction& t, const Result& result, const Release& release) {
  // The data's return may be booked at a time already past (see BookingHorizon).
  const double now = horizon_seconds();
  const std::uint32_t here = noc_.core_node(t.core);
  MemoryStats& s = stats_[t.op];
  double done = t.arrival_s;
  for (const Piece& p : t.pieces) {
    const auto& r = result(p);
    const std::uint64_t first = r.first_done, last = r.last_done;
    s.row_hits += r.hits;
    s.row_misses += r.misses;
    s.row_conflicts += r.conflicts;
    s.activates += r.activates;
    s.burst_bytes += std::uint64_t{r.bursts} * address_map_.burst_bytes();
    release(p);
    const std::uint32_t there = noc_.memory_node(p.channel);
    const double tail = double(last) / dram_ck_hz_;
    if (t.write) {
      done = std::max(done, tail);
    } else {
      const double head = double(first - dram_burst_cycles_) / dram_ck_hz_;
      done = std::max(done, noc_.transfer(there, here, p.bytes, head, tail, now, read_links_));
    }
    s.noc_byte_hops += p.bytes * noc_.hops(here, there);
  }
  t.done_s = done;
  t.decided = true;
  finish(t);
}

void Memory::end_run(const sc_core::sc_time& end) {
  const std::uint64_t cycle = dram_cycle_at(end.to_seconds(), dram_ck_hz_);
  for (DramController& controller : dram_) controller.end_run(cycle);
  for (DramTimeline& channel : timeline_) channel.end_run(cycle);
  if (recorder_) recorder_->end_run(cycle);
}

void Memory::finish(Transaction& t) {
  const sc_core::sc_time arrival(t.arrival_s, sc_core::SC_SEC), done(t.done_s, sc_core::SC_SEC);
  stats_[t.op].latency_ps += ctx_.ps(done - arrival);
  ctx_.trace.record_merged(track_, t.op, ctx_.ps(arrival), ctx_.ps(done));
}

DeferredMemoryIf::Ticket Memory::post(bool write, std::uint64_t addr, std::uint8_t* data,
                                      std::uint64_t bytes, const sc_core::sc_time& at,
                                      std::uint32_t op, std::uint32_t core) {
  Ticket ticket;
  if (free_tickets_.empty()) {
    ticket = static_cast<Ticket>(transactions_.size());
    transactions_.emplace_back();
  } else {
    ticket = free_tickets_.back();
    free_tickets_.pop_back();
  }
  Transaction& t = transactions_[ticket];
  t.live = true;
  t.write = write;
  t.decided = false;
  t.horizon_open = false;
  t.op = op;
  t.core = core;
  t.arrival = at.value();
  t.arrival_s = at.to_seconds();
  t.done_s = t.arrival_s;
  t.last_arrival_cycle = 0;
  t.pieces.clear();

  MemoryStats& s = stats_[op];
  (write ? s.write_bytes : s.read_bytes) += bytes;
  ++s.requests;
  if (ctx_.functional && data) {
    if (write)
      store_.write(addr, data, bytes);
    else
      store_.read(addr, data, bytes);
  }
  switch (ctx_.spec.memory.model) {
    case MemoryModel::kIdeal:
      t.decided = true;
      break;
    case MemoryModel::kSimple:
      t.done_s = simple_access(addr, bytes, write, t.arrival_s, core, s);
      t.decided = true;
      break;
    case MemoryModel::kHbm:
      dram_post(t, addr, bytes);
      // The timeline engine decides most pieces at once.
      if (!timeline_.empty()) timeline_decide(t);
      // Open until completed: its data may be booked through ports at its time after that.
      if (!t.decided && ctx_.horizon) {
        ctx_.horizon->open(at.value());
        t.horizon_open = true;
      }
      break;
  }
  if (t.decided) finish(t);
  return ticket;
}

bool Memory::ready(Ticket ticket) {
  Transaction& t = transactions_[ticket];
  return t.decided || dram_decide(t);
}

sc_core::sc_time Memory::complete(Ticket ticket) {
  // Two threads of one DMA engine complete chunks (its own and its signal thread's): a ticket
  // completed twice would be freed twice and handed to two later posts.
  if (ticket >= transactions_.size() || !transactions_[ticket].live)
    throw SimError("memory: transaction " + std::to_string(ticket) + " completed twice");
  // Other processes may post while this one waits, growing transactions_: index, never hold.
  while (!ready(ticket)) {
    const Transaction& t = transactions_[ticket];
    const std::uint64_t until = decidable_until();
    std::uint64_t cycle = t.last_arrival_cycle;
    for (const Piece& p : t.pieces) {
      if (!timeline_.empty()) {
        cycle = std::max(
            cycle, timeline_[p.channel].not_before(static_cast<DramTimeline::PieceId>(p.transfer)));
        continue;
      }
      DramController& controller = dram_[p.channel];
      controller.advance(until);  // so not_before() sees the present state
      for (std::uint32_t b = 0; b < p.bursts; ++b)
        if (!controller.done(p.first + b))
          cycle = std::max(cycle, controller.not_before(p.first + b));
    }
    // Half a cycle past it, so that cycle is before decidable_until() when this thread wakes.
    const sc_core::sc_time wake((double(cycle) + 0.5) / dram_ck_hz_, sc_core::SC_SEC);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::wait(wake > now ? wake - now : ctx_.core_period);
  }
  const double done_s = transactions_[ticket].done_s;
  if (transactions_[ticket].horizon_open) ctx_.horizon->close(transactions_[ticket].arrival);
  transactions_[ticket].live = false;
  free_tickets_.push_back(ticket);
  return sc_core::sc_time(done_s, sc_core::SC_SEC);
}

void Memory::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const OpExtension* ext = nullptr;
  trans.get_extension(ext);
  const Ticket ticket =
      post(trans.is_write(), trans.get_address(), trans.get_data_ptr(), trans.get_data_length(),
           sc_core::sc_time_stamp() + delay, ext ? ext->op : 0, ext ? ext->core : 0);
  const sc_core::sc_time done = complete(ticket);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  delay = done > sc_core::sc_time_stamp() ? done - sc_core::sc_time_stamp() : sc_core::SC_ZERO_TIME;
}

}  // namespace tpusim::models
