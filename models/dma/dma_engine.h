#pragma once
// One DMA engine of a core: executes load/store descriptors in queue order. Each contiguous run
// is cut into chunks of core.dma.chunk bytes; up to max_outstanding chunks are in flight. An
// off-chip chunk is posted to the memory when it issues and completed when its slot is needed
// again, or by the engine's signal thread when a `sem.signal` waits for it (DeferredMemoryIf,
// Unit), so the DRAM controllers see every chunk in flight; on-chip chunks go through the SRAM
// ports.

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/common/unit.h"
#include "models/memory/memory.h"
#include "models/sram/sram.h"

namespace tpusim::models {

struct DmaStats {
  std::uint64_t instructions = 0;
  std::uint64_t chunks = 0;
  std::uint64_t hbm_read_bytes = 0;
  std::uint64_t hbm_write_bytes = 0;
  std::uint64_t onchip_bytes = 0;  // cmem <-> vmem/accmem
  std::uint64_t busy_cycles = 0;   // with a descriptor in flight, each to the oldest's op

  template <class V>
  void visit(V& v) {
    v("instructions", instructions, "", "descriptors executed");
    v("chunks", chunks, "", "memory transactions issued");
    v("hbm_read_bytes", hbm_read_bytes, "B", "bytes loaded from off-chip memory");
    v("hbm_write_bytes", hbm_write_bytes, "B", "bytes stored to off-chip memory");
    v("onchip_bytes", onchip_bytes, "B", "bytes moved between on-chip memories");
    v("busy_cycles", busy_cycles, "cycles",
      "cycles with a descriptor in flight (setup included), each counted for the oldest's op");
  }
};

// The SRAMs of the engine's core, by ISA space.
struct CoreMemories {
  Sram* vmem = nullptr;
  Sram* accmem = nullptr;
  Sram* cmem = nullptr;
  Sram* of(isa::Space space) const {
    switch (space) {
      case isa::Space::kVmem:
        return vmem;
      case isa::Space::kAccmem:
        return accmem;
      case isa::Space::kCmem:
        return cmem;
      case isa::Space::kHbm:
        return nullptr;
    }
    return nullptr;
  }
};

class DmaEngine : public Unit {
 public:
  // Bound to the memory's LT target socket, which other initiators use; the engine itself talks
  // to the memory through `memory`, which lets an answer come later.
  tlm_utils::simple_initiator_socket<DmaEngine> socket;
  sc_core::sc_port<DeferredMemoryIf> memory;

  DmaEngine(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
            std::uint32_t core, CoreMemories memories);

  const PerOpStats<DmaStats>& stats() const { return stats_; }

 private:
  // One of max_outstanding chunks in flight: when it frees, or the memory transaction whose
  // completion it still waits for and what follows it (the write into on-chip memory).
  struct Slot {
    sc_core::sc_time free_at = sc_core::SC_ZERO_TIME;
    bool pending = false;
    bool resolving = false;  // a thread waits in the memory for its completion (resolve())
    DeferredMemoryIf::Ticket ticket = 0;
    Sram* dst = nullptr;
    std::uint64_t bytes = 0;
    std::uint32_t op = 0;
    std::uint64_t descriptor = 0;             // which Open it belongs to
    isa::Space dst_space = isa::Space::kHbm;  // what it writes, for later descriptors' reads
    std::uint64_t dst_addr = 0;
    // Whether it belongs to a descriptor before `seq` and writes into [lo, hi) of `space`.
    bool writes_into(isa::Space space, std::uint64_t lo, std::uint64_t hi,
                     std::uint64_t seq) const {
      return dst_space == space && lo < dst_addr + bytes && dst_addr < hi && descriptor < seq;
    }
  };
  // A descriptor whose chunks are not all complete: its trace interval and busy cycles are
  // settled once they are, so the next descriptor issues meanwhile (completions of chunks
  // still in the DRAM controllers are known only later).
  struct Open {
    std::uint64_t seq = 0;
    std::uint32_t index = 0, op = 0;
    sc_core::sc_time start, last_done;
    std::uint32_t pending = 0;
    bool issued = false;  // every chunk is posted
  };
  void execute(const isa::Instruction& inst, std::uint32_t index) override;
  bool unsettled() const override { return !open_.empty(); }
  void settle() override;
  std::uint64_t settle_mark() const override { return next_seq_; }
  // Completes the chunks of the descriptors before `mark`.
  void settle_through(std::uint64_t mark) override;
  // Completes the slot's transaction (waiting if its completion is not yet decided). The
  // engine's thread and the one of its deferred signals both resolve slots: one that the other
  // is resolving is waited for, not completed twice.
  void resolve(Slot& slot);
  Open& open_of(std::uint64_t seq) { return open_[seq - open_.front().seq]; }
  // Whether an earlier descriptor's chunk that writes into the source of `d` may not have landed
  // by `start` (the source's span against each slot's destination).
  bool reads_in_flight(const isa::DmaInstr& d, std::uint64_t seq, sc_core::sc_time start) const;
  // `at`, or later: once every chunk of an earlier descriptor that writes into `bytes` at
  // `addr` in `space` has landed.
  sc_core::sc_time after_writes_to(isa::Space space, std::uint64_t addr, std::uint64_t bytes,
                                   std::uint64_t seq, sc_core::sc_time at);
  // Closes the oldest descriptors once all their chunks are complete.
  void close_finished();

  const std::uint32_t core_;
  const CoreMemories memories_;
  const DmaSpec spec_;
  std::vector<Slot> slots_;
  std::size_t next_slot_ = 0;         // the slot the next chunk takes (oldest in flight)
  std::deque<Open> open_;
  sc_core::sc_event resolved_;    // a slot that was resolving is resolved
  std::uint64_t busy_until_ = 0;  // the cycle up to which busy_cycles covers the engine's time
  std::uint64_t next_seq_ = 0;
  // Spaces this engine has written (after_writes_to() need not look otherwise), by isa::Space.
  std::array<bool, isa::kNumSpaces> wrote_{};
  std::vector<std::uint8_t> buffer_;  // functional mode: one chunk in transit
  PerOpStats<DmaStats> stats_;
};

}  // namespace tpusim::models
