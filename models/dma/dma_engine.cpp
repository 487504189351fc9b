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
      core_(core),
      memories_(memories),
      spec_(ctx.spec.core.dma),
      op_ext_(new OpExtension),
      slot_free_(spec_.max_outstanding, sc_core::SC_ZERO_TIME) {
  trans_.set_extension(op_ext_);
  if (ctx.functional) buffer_.resize(spec_.chunk.value());
}

sc_core::sc_time DmaEngine::memory_access(bool write, std::uint64_t addr, std::uint8_t* data,
                                          std::uint64_t bytes, const sc_core::sc_time& at,
                                          std::uint32_t op) {
  trans_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  trans_.set_address(addr);
  trans_.set_data_ptr(data);
  trans_.set_data_length(static_cast<unsigned int>(bytes));
  trans_.set_streaming_width(static_cast<unsigned int>(bytes));
  trans_.set_byte_enable_ptr(nullptr);
  trans_.set_dmi_allowed(false);
  trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  op_ext_->op = op;
  op_ext_->core = core_;
  sc_core::sc_time delay = at - sc_core::sc_time_stamp();
  socket->b_transport(trans_, delay);
  if (trans_.is_response_error()) throw SimError(std::string(name()) + ": memory access failed");
  return sc_core::sc_time_stamp() + delay;
}

void DmaEngine::execute(const isa::Instruction& inst, std::uint32_t index) {
  const auto& d = std::get<isa::DmaInstr>(inst.body);
  const std::uint32_t op = inst.op;
  DmaStats& s = stats_[op];
  ++s.instructions;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  sc_core::sc_time issue_at = start + ctx_.cycles(spec_.setup_latency.cycles(ctx_.spec.clock).value());
  sc_core::sc_time last_done = issue_at;
  const std::uint64_t chunk_bytes = spec_.chunk.value();
  Sram* src_sram = memories_.of(d.src.space);
  Sram* dst_sram = memories_.of(d.dst.space);
  std::uint64_t chunk_index = 0;

  for_each_run(d, [&](const DmaRun& run) {
    for (std::uint64_t offset = 0; offset < run.bytes; offset += chunk_bytes) {
      const std::uint64_t bytes = std::min(chunk_bytes, run.bytes - offset);
      const std::uint64_t src = run.src + offset, dst = run.dst + offset;
      sc_core::sc_time& slot = slot_free_[chunk_index++ % slot_free_.size()];
      const sc_core::sc_time at = std::max(issue_at, slot);
      // Requests reach shared resources in simulated-time order: one wait per chunk.
      if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());

      std::uint8_t* data = ctx_.functional ? buffer_.data() : nullptr;
      sc_core::sc_time arrived;
      if (src_sram) {
        if (data) std::memcpy(data, src_sram->data() + src, bytes);
        arrived = src_sram->transfer(at, bytes, false, op);
      } else {
        arrived = memory_access(false, src, data, bytes, at, op);
        s.hbm_read_bytes += bytes;
      }
      sc_core::sc_time done;
      if (dst_sram) {
        if (data) std::memcpy(dst_sram->data() + dst, data, bytes);
        done = dst_sram->transfer(arrived, bytes, true, op);
        if (src_sram) s.onchip_bytes += bytes;
      } else {
        done = memory_access(true, dst, data, bytes, arrived, op);
        s.hbm_write_bytes += bytes;
      }
      ++s.chunks;
      slot = done;
      last_done = std::max(last_done, done);
      issue_at = at + ctx_.core_period;  // one chunk issued per cycle
    }
  });
  s.busy_cycles += ctx_.cycles_covering(last_done - start);
  trace(index, op, start, last_done);
  complete_at(last_done);
}

}  // namespace tpusim::models
