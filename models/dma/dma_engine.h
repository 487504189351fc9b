#pragma once
// One DMA engine of a core: executes load/store descriptors in queue order. Each contiguous run
// is cut into chunks of core.dma.chunk bytes; up to max_outstanding chunks are in flight; off-chip
// chunks go through the TLM-2.0 initiator socket, on-chip ones through the SRAM ports.

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

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
  std::uint64_t busy_cycles = 0;   // first issue to last completion, per instruction

  template <class V>
  void visit(V& v) {
    v("instructions", instructions, "", "descriptors executed");
    v("chunks", chunks, "", "memory transactions issued");
    v("hbm_read_bytes", hbm_read_bytes, "B", "bytes loaded from off-chip memory");
    v("hbm_write_bytes", hbm_write_bytes, "B", "bytes stored to off-chip memory");
    v("onchip_bytes", onchip_bytes, "B", "bytes moved between on-chip memories");
    v("busy_cycles", busy_cycles, "cycles", "cycles with a descriptor in progress");
  }
};

// The SRAMs of the engine's core, by ISA space.
struct CoreMemories {
  Sram* vmem = nullptr;
  Sram* accmem = nullptr;
  Sram* cmem = nullptr;
  Sram* of(isa::Space space) const {
    switch (space) {
      case isa::Space::kVmem: return vmem;
      case isa::Space::kAccmem: return accmem;
      case isa::Space::kCmem: return cmem;
      case isa::Space::kHbm: return nullptr;
    }
    return nullptr;
  }
};

class DmaEngine : public Unit {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> socket;

  DmaEngine(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
            std::uint32_t core, CoreMemories memories);

  const PerOpStats<DmaStats>& stats() const { return stats_; }

 private:
  void execute(const isa::Instruction& inst, std::uint32_t index) override;
  sc_core::sc_time memory_access(bool write, std::uint64_t addr, std::uint8_t* data,
                                 std::uint64_t bytes, const sc_core::sc_time& at, std::uint32_t op);

  const std::uint32_t core_;
  const CoreMemories memories_;
  const DmaSpec spec_;
  tlm::tlm_generic_payload trans_;  // reused: b_transport is blocking, one request at a time
  OpExtension* op_ext_;             // owned by trans_, which frees its extensions
  std::vector<sc_core::sc_time> slot_free_;  // completion of the chunk that holds each slot
  std::vector<std::uint8_t> buffer_;         // functional mode: one chunk in transit
  PerOpStats<DmaStats> stats_;
};

}  // namespace tpusim::models
