#include "models/chip/core.h"

#include <string>

namespace tpusim::models {

Core::Core(sc_core::sc_module_name name, const SimContext& ctx, std::uint32_t id,
           std::vector<std::uint32_t> program, const std::vector<std::uint32_t>& wait_turns,
           CoreBarrier& barrier)
    : sc_core::sc_module(name),
      id_(id),
      semaphores_("semaphores", ctx.spec.core.sequencer.semaphores, wait_turns) {
  const CoreSpec& spec = ctx.spec.core;
  vmem_ = std::make_unique<Sram>("vmem", ctx, spec.vmem);
  accmem_ = std::make_unique<Sram>("accmem", ctx, spec.accmem);
  if (spec.cmem.present()) cmem_ = std::make_unique<Sram>("cmem", ctx, spec.cmem);
  const CoreMemories memories{vmem_.get(), accmem_.get(), cmem_.get()};

  std::vector<Unit*> dma_units, mxu_units;
  for (std::uint32_t i = 0; i < spec.dma.engines; ++i) {
    dma_.push_back(std::make_unique<DmaEngine>(("dma" + std::to_string(i)).c_str(), ctx,
                                               semaphores_, id, memories));
    dma_units.push_back(dma_.back().get());
  }
  for (std::uint32_t i = 0; i < spec.mxu.count; ++i) {
    // One array is observed (--vcd, --show).
    ArrayObserver* observer =
        id == ctx.observed_core && i == ctx.observed_mxu ? ctx.mxu_observer : nullptr;
    mxu_.push_back(std::make_unique<Mxu>(("mxu" + std::to_string(i)).c_str(), ctx, semaphores_,
                                         memories, observer));
    mxu_units.push_back(mxu_.back().get());
  }
  vpu_ = std::make_unique<Vpu>("vpu", ctx, semaphores_, memories);
  sequencer_ = std::make_unique<Sequencer>("seq", ctx, std::move(program), dma_units, mxu_units,
                                           vpu_.get(), semaphores_, barrier);
}

void Core::finish() {
  for (auto& m : mxu_) m->finish();
}

void Core::add_stats_sources(std::vector<StatsSource>& out) const {
  out.push_back(StatsSource::of(sequencer_->name(), "sequencer", sequencer_->stats()));
  for (const auto& d : dma_) out.push_back(StatsSource::of(d->name(), "dma", d->stats()));
  for (const auto& m : mxu_) out.push_back(StatsSource::of(m->name(), "mxu", m->stats()));
  out.push_back(StatsSource::of(vpu_->name(), "vpu", vpu_->stats()));
  out.push_back(StatsSource::of(vmem_->name(), "vmem", vmem_->stats()));
  out.push_back(StatsSource::of(accmem_->name(), "accmem", accmem_->stats()));
  if (cmem_) out.push_back(StatsSource::of(cmem_->name(), "cmem", cmem_->stats()));
}

}  // namespace tpusim::models
