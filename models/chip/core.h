#pragma once
// One TensorCore: sequencer, DMA engines, MXUs, vector unit and its on-chip memories. sc_object
// names follow the config keys: chip.core0.mxu1, chip.core0.vmem, ...

#include <cstdint>
#include <memory>
#include <vector>

#include "models/common/stats.h"
#include "models/dma/dma_engine.h"
#include "models/mxu/mxu.h"
#include "models/sequencer/sequencer.h"
#include "models/sram/sram.h"
#include "models/vpu/vpu.h"

namespace tpusim::models {

class Core : public sc_core::sc_module {
 public:
  Core(sc_core::sc_module_name name, const SimContext& ctx, std::uint32_t id,
       std::vector<std::uint32_t> program, const std::vector<std::uint32_t>& wait_turns,
       CoreBarrier& barrier);

  std::uint32_t id() const { return id_; }
  std::vector<std::unique_ptr<DmaEngine>>& dma() { return dma_; }
  const Sequencer& sequencer() const { return *sequencer_; }
  Sram& vmem() { return *vmem_; }
  Sram& accmem() { return *accmem_; }
  Sram* cmem() { return cmem_.get(); }
  void add_stats_sources(std::vector<StatsSource>& out) const;
  // After the run: lets cycle-level units finish what they record.
  void finish();

 private:
  const std::uint32_t id_;
  Semaphores semaphores_;  // constructed first: units hold references to it
  std::unique_ptr<Sram> vmem_, accmem_, cmem_;
  std::vector<std::unique_ptr<DmaEngine>> dma_;
  std::vector<std::unique_ptr<Mxu>> mxu_;
  std::unique_ptr<Vpu> vpu_;
  std::unique_ptr<Sequencer> sequencer_;
};

}  // namespace tpusim::models
