#include "models/dma/dma_engine.h"

#include <algorithm>
#include <cstring>
#include <variant>

#include "models/dma/descriptor_walk.h"

namespace tpusim::models {

DmaEngine::DmaEngine(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
                     std::uint32_t core, CoreMemories memories)
    : Unit(name, ctx, semaphores, ctx.spec.core.sequencer.queue_depth),
      socket("socket"),
      memory("memory"),
      core_(core),
      memories_(memories),
      spec_(ctx.spec.core.dma),
      slots_(spec_.max_outstanding) {
  if (ctx.functional) buffer_.resize(spec_.chunk.value());
}

void DmaEngine::resolve(Slot& slot) {
  if (!slot.pending) return;
  if (slot.resolving) {
    while (slot.resolving) sc_core::wait(resolved_);
    return;
  }
  slot.resolving = true;
  const sc_core::sc_time arrived = memory->complete(slot.ticket);
  slot.free_at = slot.dst ? slot.dst->transfer(arrived, slot.bytes, true, slot.op) : arrived;
  Open& o = open_of(slot.descriptor);
  o.last_done = std::max(o.last_done, slot.free_at);
  --o.pending;
  slot.pending = false;
  slot.resolving = false;
  resolved_.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::close_finished() {
  while (!open_.empty() && open_.front().issued && open_.front().pending == 0) {
    const Open& o = open_.front();
    // Descriptors close in issue order, so their starts only grow: the cycles past both the
    // start and what earlier descriptors covered are new to the engine's busy time.
    const auto first = static_cast<std::uint64_t>(o.start / ctx_.core_period + 1e-6);
    const std::uint64_t end = std::max(first, ctx_.cycles_covering(o.last_done));
    const std::uint64_t from = std::max(first, busy_until_);
    if (end > from) stats_[o.op].busy_cycles += end - from;
    busy_until_ = std::max(busy_until_, end);
    trace(o.index, o.op, o.start, o.last_done);
    complete_at(o.last_done);
    reads_done_at(o.last_done);  // a DMA has read its source once its chunks are complete
    const std::uint64_t next = o.seq + 1;
    open_.pop_front();
    closed_through(next);
  }
}

void DmaEngine::settle() {
  for (std::size_t k = 0; k < slots_.size(); ++k) resolve(slots_[(next_slot_ + k) % slots_.size()]);
  close_finished();
}

void DmaEngine::settle_through(std::uint64_t mark) {
  // Oldest first. Slots the engine takes meanwhile hold later descriptors and are left alone.
  const std::size_t oldest = next_slot_;
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    Slot& slot = slots_[(oldest + k) % slots_.size()];
    if (slot.pending && slot.descriptor < mark) resolve(slot);
  }
  close_finished();
}

bool DmaEngine::reads_in_flight(const isa::DmaInstr& d, std::uint64_t seq,
                                sc_core::sc_time start) const {
  if (!wrote_[static_cast<std::size_t>(d.src.space)]) return false;
  const std::uint64_t lo = d.src.addr, hi = lo + source_span(d);
  for (const Slot& earlier : slots_)
    if (earlier.writes_into(d.src.space, lo, hi, seq) &&
        (earlier.pending || earlier.free_at > start))
      return true;
  return false;
}

sc_core::sc_time DmaEngine::after_writes_to(isa::Space space, std::uint64_t addr,
                                            std::uint64_t bytes, std::uint64_t seq,
                                            sc_core::sc_time at) {
  for (Slot& earlier : slots_) {
    if (!earlier.writes_into(space, addr, addr + bytes, seq)) continue;
    if (earlier.pending) resolve(earlier);
    if (earlier.free_at > at) at = earlier.free_at;
  }
  return at;
}

void DmaEngine::execute(const isa::Instruction& inst, std::uint32_t index) {
  const auto& d = std::get<isa::DmaInstr>(inst.body);
  const std::uint32_t op = inst.op;
  DmaStats& s = stats_[op];
  ++s.instructions;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  sc_core::sc_time issue_at =
      start + ctx_.cycles(spec_.setup_latency.cycles(ctx_.spec.clock).value());
  const std::uint64_t seq = next_seq_++;
  open_.push_back(Open{seq, index, op, start, issue_at, 0, false});
  // Checked per chunk only when an earlier descriptor's write into the source may be in flight.
  const bool hazards = reads_in_flight(d, seq, start);
  const std::uint64_t chunk_bytes = spec_.chunk.value();
  Sram* src_sram = memories_.of(d.src.space);
  Sram* dst_sram = memories_.of(d.dst.space);

  for_each_run(d, [&](const DmaRun& run) {
    for (std::uint64_t offset = 0; offset < run.bytes; offset += chunk_bytes) {
      const std::uint64_t bytes = std::min(chunk_bytes, run.bytes - offset);
      const std::uint64_t src = run.src + offset, dst = run.dst + offset;
      // Slots rotate across instructions: a descriptor's first chunk takes the slot after the
      // previous descriptor's last, not slot 0 again (which would wait for that one's first chunk).
      Slot& slot = slots_[next_slot_];
      next_slot_ = (next_slot_ + 1) % slots_.size();
      resolve(slot);
      // A chunk reads what an earlier descriptor of this engine writes only once that landed:
      // the queue's order holds through memory, as functional mode, which copies at issue, has it.
      sc_core::sc_time at = std::max(issue_at, slot.free_at);
      if (hazards) at = after_writes_to(d.src.space, src, bytes, seq, at);
      // Requests reach shared resources in simulated-time order: one wait per chunk (with model
      // hbm, rarely, more in resolve() while a completion is not yet decided or the signal
      // thread is completing it).
      if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());

      std::uint8_t* data = ctx_.functional ? buffer_.data() : nullptr;
      // The data's arrival at the destination side, or the pending memory read that gives it.
      sc_core::sc_time arrived;
      bool read_pending = false;
      DeferredMemoryIf::Ticket ticket = 0;
      if (src_sram) {
        if (data) std::memcpy(data, src_sram->data() + src, bytes);
        arrived = src_sram->transfer(at, bytes, false, op);
      } else {
        ticket = memory->post(false, src, data, bytes, at, op, core_);
        s.hbm_read_bytes += bytes;
        read_pending = true;
      }
      if (dst_sram) {
        if (data) std::memcpy(dst_sram->data() + dst, data, bytes);
        if (src_sram) s.onchip_bytes += bytes;
      } else {
        // An off-chip destination needs the data first.
        if (read_pending) arrived = memory->complete(ticket);
        ticket = memory->post(true, dst, data, bytes, arrived, op, core_);
        s.hbm_write_bytes += bytes;
      }
      ++s.chunks;
      issue_at = at + ctx_.core_period;  // one chunk issued per cycle
      slot.descriptor = seq;
      wrote_[static_cast<std::size_t>(d.dst.space)] = true;
      slot.dst_space = d.dst.space;
      slot.dst_addr = dst;
      slot.bytes = bytes;
      if (dst_sram && !read_pending) {
        slot.pending = false;
        slot.free_at = dst_sram->transfer(arrived, bytes, true, op);
        Open& o = open_of(seq);
        o.last_done = std::max(o.last_done, slot.free_at);
        continue;
      }
      slot.pending = true;
      slot.ticket = ticket;
      slot.dst = dst_sram;
      slot.op = op;
      ++open_of(seq).pending;
      // Memories that answer at once (simple, ideal) complete here, as a blocking call would.
      if (memory->ready(ticket)) resolve(slot);
    }
  });
  // Chunks still in the memory complete later: as their slots are needed, on the signal thread
  // (settle_through()), or at settle().
  open_of(seq).issued = true;
  close_finished();
}

}  // namespace tpusim::models
