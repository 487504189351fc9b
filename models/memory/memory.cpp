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
      track_(ctx.trace.add_track(this->name())) {
  if (ctx.spec.memory.model == MemoryModel::kHbm)
    dram_.assign(ctx.spec.memory.hbm.total_channels(), DramChannel(ctx.spec.memory.hbm));
  socket.register_b_transport(this, &Memory::b_transport);
}

double Memory::dram_access(std::uint64_t addr, std::uint64_t bytes, bool write, double arrival_s) {
  const DramSpec& spec = ctx_.spec.memory.hbm;
  const double ck = spec.clock.value();
  // A request arriving mid-cycle is seen at the next DRAM clock edge.
  const auto arrival = static_cast<std::uint64_t>(std::ceil(arrival_s * ck - 1e-6));
  const bool close_page = spec.page_policy == PagePolicy::kClose;
  const std::uint64_t burst = address_map_.burst_bytes();
  std::uint64_t done = arrival;
  for (std::uint64_t at = addr / burst * burst; at < addr + bytes; at += burst) {
    const DramAddress a = address_map_.map(at);
    done = std::max(done, dram_[a.channel].access(a, write, arrival, close_page));
  }
  return double(done) / ck;
}

void Memory::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
  const std::uint64_t bytes = trans.get_data_length();
  const double done_s = dram_.empty()
                            ? timing_.access(trans.get_address(), bytes, arrival.to_seconds())
                            : dram_access(trans.get_address(), bytes, trans.is_write(),
                                          arrival.to_seconds());
  const sc_core::sc_time done = sc_core::sc_time(done_s, sc_core::SC_SEC);

  const OpExtension* ext = nullptr;
  trans.get_extension(ext);
  const std::uint32_t op = ext ? ext->op : 0;
  MemoryStats& s = stats_[op];
  (trans.is_read() ? s.read_bytes : s.write_bytes) += bytes;
  ++s.requests;
  s.latency_ps += ctx_.ps(done - arrival);
  ctx_.trace.record_merged(track_, op, ctx_.ps(arrival), ctx_.ps(done));

  if (ctx_.functional && trans.get_data_ptr()) {
    if (trans.is_read())
      store_.read(trans.get_address(), trans.get_data_ptr(), bytes);
    else
      store_.write(trans.get_address(), trans.get_data_ptr(), bytes);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  delay = done - sc_core::sc_time_stamp();
}

}  // namespace tpusim::models
