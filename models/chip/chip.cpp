#include "models/chip/chip.h"

#include <algorithm>


namespace tpusim::models {

Chip::Chip(sc_core::sc_module_name name, const SimContext& ctx)
    : sc_core::sc_module(name), ctx_(ctx) {
  const std::uint32_t n = ctx.spec.cores;
  std::vector<std::vector<std::uint32_t>> per_core(n);
  const auto& instructions = ctx.program.instructions;
  for (std::uint32_t i = 0; i < instructions.size(); ++i) per_core.at(instructions[i].core).push_back(i);
  // A barrier waits for every core that has any instruction (isa/README.md).
  const auto participants = static_cast<std::uint32_t>(std::count_if(
      per_core.begin(), per_core.end(), [](const auto& p) { return !p.empty(); }));
  barrier_ = std::make_unique<CoreBarrier>(std::max(1u, participants));
  memory_ = std::make_unique<Memory>("memory", ctx);
  wait_turns_ = isa::wait_turns(ctx.program);
  for (std::uint32_t c = 0; c < n; ++c) {
    cores_.push_back(std::make_unique<Core>(("core" + std::to_string(c)).c_str(), ctx, c,
                                            std::move(per_core[c]), wait_turns_, *barrier_));
    for (auto& dma : cores_.back()->dma()) {
      dma->socket.bind(memory_->socket);
      dma->memory.bind(*memory_);
    }
  }
}

RunResult Chip::run() {
  sc_core::sc_start();
  for (auto& core : cores_) core->finish();
  RunResult r;
  for (const auto& core : cores_) {
    if (!core->sequencer().done()) {
      r.deadlock = deadlock_report();
      r.end = sc_core::sc_time_stamp();
      break;
    }
    r.end = std::max(r.end, core->sequencer().done_at());
  }
  r.cycles = ctx_.cycles_covering(r.end);
  memory_->end_run(ctx_.cycles(r.cycles));
  return r;
}

std::string Chip::deadlock_report() const {
  std::string report = "deadlock at cycle " +
                       std::to_string(ctx_.cycle_of(sc_core::sc_time_stamp())) +
                       ": no unit can make progress;";
  for (const auto& core : cores_) {
    if (core->sequencer().done()) continue;
    const std::uint32_t next = core->sequencer().next_instruction();
    if (next == kNoInstruction) {
      report += " core " + std::to_string(core->id()) +
                " dispatched every instruction, and a unit still waits on a semaphore;";
      continue;
    }
    report += " core " + std::to_string(core->id()) + " stopped at instruction #" +
              std::to_string(next);
    {
      const isa::Instruction& inst = ctx_.program.instructions[next];
      report += " (" + inst.mnemonic();
      if (inst.line > 0) report += ", line " + std::to_string(inst.line);
      report += ")";
    }
    report += ";";
  }
  return report;
}

std::vector<StatsSource> Chip::stats_sources() const {
  std::vector<StatsSource> out;
  for (const auto& core : cores_) core->add_stats_sources(out);
  out.push_back(StatsSource::of(memory_->name(), "memory", memory_->stats()));
  const Memory* memory = memory_.get();
  for (std::size_t c = 0; c < memory->dram_channels(); ++c) {
    StatsSource s =
        StatsSource::of_total(std::string(memory->name()) + ".ch" + std::to_string(c),
                              "dram_channel", [memory, c] { return memory->dram_stats(c); });
    s.histogram = [memory, c] { return memory->dram_stats(c).latency.counts(); };
    out.push_back(std::move(s));
  }
  if (ctx_.spec.memory.model != MemoryModel::kIdeal) {
    const NocTiming* noc = &memory->noc();
    for (std::size_t l = 0; l < noc->links(); ++l)
      out.push_back(StatsSource::of_total("chip.noc." + noc->link_name(l), "noc_link",
                                          [noc, l] { return noc->link_stats(l); }));
  }
  return out;
}

}  // namespace tpusim::models
