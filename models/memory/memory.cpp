#include "models/memory/memory.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

Memory::Memory(sc_core::sc_module_name name, const SimContext& ctx)
    : sc_core::sc_module(name),
      socket("socket"),
      ctx_(ctx),
      timing_(ctx.spec.memory, ctx.spec.clock),
      address_map_(ctx.spec.memory.hbm),
      noc_(ctx.spec.noc, ctx.spec.cores,
           ctx.spec.memory.model == MemoryModel::kHbm ? ctx.spec.memory.hbm.total_channels()
                                                      : ctx.spec.memory.channels,
           ctx.spec.clock),
      dram_ck_hz_(ctx.spec.memory.hbm.clock.value()),
      track_(ctx.trace.add_track(this->name())) {
  if (ctx.spec.memory.model == MemoryModel::kHbm) {
    const std::uint32_t channels = ctx.spec.memory.hbm.total_channels();
    dram_.reserve(channels);
    for (std::uint32_t c = 0; c < channels; ++c) dram_.emplace_back(ctx.spec.memory.hbm);
    pending_.resize(channels);
    piece_bytes_.resize(channels);
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
      done = std::max(done, timing_.access(at, piece, delivered));
    } else {
      const double asked = arrival_s + noc_.latency(here, there);
      const double read = timing_.access(at, piece, asked);
      done = std::max(done, noc_.transfer(there, here, piece, asked, read, now));
    }
    s.noc_byte_hops += piece * noc_.hops(here, there);
    at += piece;
  }
  return done;
}

double Memory::dram_access(std::uint64_t addr, std::uint64_t bytes, bool write, double arrival_s,
                           std::uint32_t core, MemoryStats& s) {
  const double now = sc_core::sc_time_stamp().to_seconds();
  const std::uint32_t here = noc_.core_node(core);
  const std::uint64_t burst = address_map_.burst_bytes();
  const std::uint64_t end = addr + bytes;
  touched_.clear();
  for (std::uint64_t at = addr / burst * burst; at < end; at += burst) {
    DramRequest r;
    r.address = address_map_.map(at);
    r.write = write;
    const std::uint32_t ch = r.address.channel;
    if (pending_[ch].empty()) {
      touched_.push_back(ch);
      piece_bytes_[ch] = 0;
    }
    pending_[ch].push_back(r);
    piece_bytes_[ch] += std::min(end, at + burst) - std::max(addr, at);
  }
  double done = arrival_s;
  for (const std::uint32_t ch : touched_) {
    std::vector<DramRequest>& batch = pending_[ch];
    const std::uint32_t there = noc_.memory_node(ch);
    const std::uint64_t piece = piece_bytes_[ch];
    const double at_memory = write ? noc_.transfer(here, there, piece, arrival_s, arrival_s, now)
                                   : arrival_s + noc_.latency(here, there);
    // A request arriving mid-cycle is seen at the next DRAM clock edge.
    const auto cycle = static_cast<std::uint64_t>(std::ceil(at_memory * dram_ck_hz_ - 1e-6));
    for (DramRequest& r : batch) r.arrival = cycle;
    DramController& controller = dram_[ch];
    const std::uint64_t last = controller.schedule(batch);
    std::uint64_t first = last;
    for (const DramRequest& r : batch) {
      first = std::min(first, r.done);
      ++(r.outcome == RowOutcome::kHit    ? s.row_hits
         : r.outcome == RowOutcome::kMiss ? s.row_misses
                                          : s.row_conflicts);
    }
    const double tail = double(last) / dram_ck_hz_;
    if (write) {
      done = std::max(done, tail);
    } else {
      const double head = double(first - controller.channel().timing().BURST) / dram_ck_hz_;
      done = std::max(done, noc_.transfer(there, here, piece, head, tail, now));
    }
    s.noc_byte_hops += piece * noc_.hops(here, there);
    batch.clear();
  }
  return done;
}

void Memory::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
  const std::uint64_t bytes = trans.get_data_length();
  const OpExtension* ext = nullptr;
  trans.get_extension(ext);
  const std::uint32_t op = ext ? ext->op : 0;
  const std::uint32_t core = ext ? ext->core : 0;
  MemoryStats& s = stats_[op];
  const std::uint64_t addr = trans.get_address();
  const bool write = trans.is_write();
  double done_s = arrival.to_seconds();
  switch (ctx_.spec.memory.model) {
    case MemoryModel::kIdeal:
      break;
    case MemoryModel::kSimple:
      done_s = simple_access(addr, bytes, write, done_s, core, s);
      break;
    case MemoryModel::kHbm:
      done_s = dram_access(addr, bytes, write, done_s, core, s);
      break;
  }
  const sc_core::sc_time done = sc_core::sc_time(done_s, sc_core::SC_SEC);

  (write ? s.write_bytes : s.read_bytes) += bytes;
  ++s.requests;
  s.latency_ps += ctx_.ps(done - arrival);
  ctx_.trace.record_merged(track_, op, ctx_.ps(arrival), ctx_.ps(done));

  if (ctx_.functional && trans.get_data_ptr()) {
    if (write)
      store_.write(addr, trans.get_data_ptr(), bytes);
    else
      store_.read(addr, trans.get_data_ptr(), bytes);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  delay = done - sc_core::sc_time_stamp();
}

}  // namespace tpusim::models
