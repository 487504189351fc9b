#include "isa/lower/row_pipeline.h"

#include <algorithm>
#include <cmath>

namespace tpusim::isa::lower_detail {

std::uint64_t choose_tile_rows(const OpContext& ctx, const RowPipeline& p, std::uint64_t rows,
                               std::uint64_t vmem_used, std::uint64_t granule) {
  std::uint64_t per_row = 2 * p.out_bytes_per_row + p.scratch_bytes_per_row;
  for (const RowInput& in : p.inputs) per_row += 2 * in.bytes_per_row;
  const std::uint64_t capacity = ctx.chip.core.vmem.capacity.value();
  // Slots are 64-byte aligned: leave room for the padding of each.
  const std::uint64_t slack = 64 * (2 * p.inputs.size() + 4);
  // What the operator already holds (its resident parameters, constants, vmem kept for other
  // operators) is named: "196616 B does not fit 256000 B" alone reads as a contradiction.
  if (vmem_used + slack + per_row > capacity)
    ctx.fail("one row (" + std::to_string(per_row) +
             " B with double buffering) does not fit vmem (" + std::to_string(capacity) +
             " B) beside the " + std::to_string(vmem_used) +
             " B already held there (resident operands, constants, kept activations) and " +
             std::to_string(slack) + " B of slot alignment");
  const std::uint64_t fit = (capacity - vmem_used - slack) / per_row;
  // Near 256 KiB per input slot: long DMA bursts, yet enough tiles to overlap load and compute.
  const std::uint64_t in_row = std::max<std::uint64_t>(1, per_row);
  const std::uint64_t target = std::max<std::uint64_t>(granule, (1u << 20) / in_row);
  std::uint64_t r = std::min({rows, fit, target});
  // Several tiles per core when the operator is large enough, so loads overlap compute.
  const std::uint64_t spread = ceil_div(rows, 4 * std::uint64_t(ctx.cores()));
  if (r > spread && spread >= granule) r = spread;
  if (r < rows && r > granule) r -= r % granule;
  return std::max<std::uint64_t>(1, r);
}

std::vector<RowTile> uniform_tiles(std::uint64_t rows, std::uint64_t tile_rows) {
  std::vector<RowTile> tiles;
  for (std::uint64_t r = 0; r < rows; r += tile_rows)
    tiles.push_back(RowTile{r, std::min(tile_rows, rows - r), 0});
  return tiles;
}

void emit_row_pipeline(OpContext& ctx, const RowPipeline& p, const std::vector<RowTile>& tiles,
                       OnChip& vmem) {
  Emitter& e = ctx.e;
  const double vpu_before = e.vpu_cycles();
  std::uint64_t max_rows = 0;
  for (const RowTile& t : tiles) max_rows = std::max(max_rows, t.rows);
  std::vector<Address> in_slot[2];
  Address out_slot[2];
  for (int b = 0; b < 2; ++b) {
    for (const RowInput& in : p.inputs)
      in_slot[b].push_back(vmem.take(max_rows * in.bytes_per_row, "an input tile"));
    out_slot[b] = vmem.take(max_rows * p.out_bytes_per_row, "an output tile");
  }
  const Address scratch =
      vmem.take(std::max<std::uint64_t>(1, max_rows * p.scratch_bytes_per_row), "vector scratch");

  const std::uint32_t engines = ctx.engines();
  std::vector<Unit> dmas = dma_units(ctx.chip);
  dmas.resize(engines);
  const std::vector<Unit> vpu = {vpu_unit()};
  std::uint64_t hbm_bytes = 0;
  for (std::uint16_t core = 0; core < ctx.cores(); ++core) {
    std::vector<RowTile> mine;
    for (std::size_t i = core; i < tiles.size(); i += ctx.cores()) mine.push_back(tiles[i]);
    if (mine.empty()) continue;
    e.set_core(core);
    SemaphorePool pool = ctx.semaphore_pool();
    Handoff in_full[2], in_empty[2], out_full[2], out_empty[2];
    for (int b = 0; b < 2; ++b) {
      in_full[b] = pool.handoff(dmas, vpu);
      in_empty[b] = pool.handoff(vpu, dmas);
      out_full[b] = pool.handoff(vpu, dmas);
      out_empty[b] = pool.handoff(dmas, vpu);
    }
    if (ctx.row_pipelines > 0) {
      // An earlier pipeline of this operator used the same buffers, and its last stores may
      // still read them on another engine: every engine waits until all have finished. (Its
      // semaphores come after the buffers' hand-offs, which an earlier pipeline may still use.)
      const Handoff drained = pool.handoff(dmas, dmas);
      drained.post(e);
      drained.take(e);
    }
    if (!p.preloads.empty()) {
      const Handoff ready = pool.handoff({dmas.front()}, vpu);
      for (const Preload& pre : p.preloads) {
        // A one-element operand (a scalar []) fills the whole row: one element repeated by a
        // zero source stride.
        const std::uint64_t elem = dtype_bytes(pre.tensor->dtype);
        const bool broadcast =
            product(pre.tensor->shape, 0, pre.tensor->shape.size()) == 1 && pre.bytes > elem;
        const Address src{pre.tensor->space, pre.tensor->base};
        e.dma(0, broadcast ? Transfer{false, src, pre.at, elem, {pre.bytes / elem}, {0}, {elem}}
                           : Transfer{false, src, pre.at, pre.bytes, {1}, {0}, {0}});
        hbm_bytes += broadcast ? elem : pre.bytes;
      }
      ready.post(e);
      ready.take(e);
      if (p.after_preload) p.after_preload(e);
    }
    const std::size_t steps = mine.size();
    auto loads = [&](std::size_t s) {
      const int b = static_cast<int>(s % 2);
      if (s >= 2) in_empty[b].take(e);
      std::vector<Transfer> xfers;
      for (std::size_t i = 0; i < p.inputs.size(); ++i)
        for (Transfer& t : p.inputs[i].load(mine[s], in_slot[b][i])) {
          hbm_bytes += t.hbm_bytes();
          xfers.push_back(std::move(t));
        }
      distribute(e, std::move(xfers), 16 * 1024, engines);
      in_full[b].post(e);
    };
    auto compute = [&](std::size_t s) {
      const int b = static_cast<int>(s % 2);
      in_full[b].take(e);
      if (s >= 2) out_empty[b].take(e);
      p.compute(e, mine[s], in_slot[b], out_slot[b], scratch);
      if (s + 2 < steps) in_empty[b].post(e);
      out_full[b].post(e);
    };
    auto store = [&](std::size_t s) {
      const int b = static_cast<int>(s % 2);
      out_full[b].take(e);
      std::vector<Transfer> xfers = p.store(mine[s], out_slot[b]);
      for (const Transfer& t : xfers) hbm_bytes += t.hbm_bytes();
      distribute(e, std::move(xfers), 16 * 1024, engines);
      if (s + 2 < steps) out_empty[b].post(e);
    };
    loads(0);
    if (steps > 1) loads(1);
    for (std::size_t s = 0; s < steps; ++s) {
      compute(s);
      if (s + 2 < steps) loads(s + 2);
      store(s);
    }
  }
  ++ctx.row_pipelines;
  OpPlan& plan = ctx.plan;
  // An operator of several pipelines (a concat's inputs, column or channel blocks) sums them.
  const bool first = ctx.row_pipelines == 1;
  plan.tile = std::to_string(max_rows) + " rows per tile, " + std::to_string(tiles.size()) +
              " tiles" +
              (first ? "" : " (the last of " + std::to_string(ctx.row_pipelines) + " pipelines)");
  plan.loop_order = "row tiles; loads of tile i+1 overlap vector work on tile i";
  plan.placement = "tiles round-robin over " + std::to_string(ctx.cores()) +
                   " core(s), vector unit; " + p.description;
  plan.vmem_bytes = first ? vmem.used() : std::max(plan.vmem_bytes, vmem.used());
  plan.hbm_bytes = (first ? 0 : plan.hbm_bytes) + hbm_bytes;
  plan.compute_cycles =
      (first ? 0 : plan.compute_cycles) + (e.vpu_cycles() - vpu_before) / ctx.cores();
  plan.memory_cycles = double(plan.hbm_bytes) / ctx.hbm_bytes_per_cycle();
}

}  // namespace tpusim::isa::lower_detail
