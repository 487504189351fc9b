// The tiled, pipelined matrix product every MXU operator lowers to (README "GEMM").

#include <algorithm>
#include <cmath>
#include <deque>
#include <sstream>

#include "isa/lower/gemm_plan.h"

namespace tpusim::isa::lower_detail {

using workloads::OpKind;

namespace {

struct TileRef {
  std::uint64_t b0, bn, m0, mc, n0, nc;  // batch items [b0, b0 + bn) share the step
};

// With one row of A per batch item (a decode step's attention), C = A x B is also
// C^T = B^T x A^T: B^T streams through the array against one stationary column A^T, instead of
// B's tiles each shifting through all R rows of the array for a single streamed row. B must be
// stored transposed ([N, K], as attention keys are), so that B^T's rows are B's stored rows.
GemmProblem swap_operands(const GemmProblem& p) {
  GemmProblem s = p;
  s.m = p.n;
  s.n = 1;
  s.b_transposed = false;
  const auto load_a = p.load_a, load_b = p.load_b, store_c = p.store_c;
  const std::uint64_t eo = dtype_bytes(p.out_dtype);
  s.load_a = [load_b](std::uint64_t b, std::uint64_t m0, std::uint64_t mc, std::uint64_t k0,
                      std::uint64_t kc, Address tile,
                      std::uint64_t pitch) { return load_b(b, k0, kc, m0, mc, tile, pitch); };
  // A^T's K x 1 tile is A's row: kc contiguous elements.
  s.load_b = [load_a](std::uint64_t b, std::uint64_t k0, std::uint64_t kc, std::uint64_t,
                      std::uint64_t, Address tile,
                      std::uint64_t pitch) { return load_a(b, 0, 1, k0, kc, tile, pitch); };
  s.store_c = [store_c, eo](std::uint64_t b, std::uint64_t m0, std::uint64_t mc, std::uint64_t,
                            std::uint64_t, Address tile,
                            std::uint64_t) { return store_c(b, 0, 1, m0, mc, tile, mc * eo); };
  s.a_description = "rows of B (operands swapped: C^T = B^T x A^T for one row of A)";
  return s;
}

}  // namespace

// How much slower than an im2col gather a band convolution may be estimated and still be chosen.
constexpr double kBandMargin = 1.25;

void emit_gemm(OpContext& ctx, const GemmProblem& problem) {
  GemmProblem p = problem;
  if (ctx.epilogue_bias) {
    const std::uint64_t len = static_cast<std::uint64_t>(ctx.epilogue_bias->shape.back());
    p.resident_bytes = len * (dtype_bytes(ctx.epilogue_bias->dtype) + 4);
  }
  Emitter& e = ctx.e;
  const auto& mxu = ctx.chip.core.mxu;
  // A convolution offered as a band competes with the im2col gather on their estimates. The
  // band reads each input once, but keeps K whole in one step, so a large K leaves room for few
  // output rows and every matmul pays a whole weight load for them (Cin 2048: 18x its bound);
  // the gather reads each input kh x kw times, in runs its estimate charges a DMA chunk each,
  // and cuts K freely. The gather's estimate still leaves out its descriptors' setup and the
  // DMA's per-row work, which tell on small convolutions (a 6x6x3 image on teach-4x4: 567 cycles
  // gathered against 529 banded), so the band is kept unless it is estimated kBandMargin times
  // slower. The band's weights-then-rows schedule is weight-stationary.
  GemmProblem gathered = p;
  gathered.band.reset();
  std::optional<Tiles> chosen = choose_tiles(ctx, gathered);
  if (p.band && mxu.dataflow == Dataflow::kWeightStationary) {
    const std::optional<Tiles> banded = choose_tiles(ctx, p);
    // With off-chip traffic free (memory model ideal, SCALE-Sim's assumption) the estimates are
    // the compute alone, and decide.
    const double margin = ctx.chip.memory.model == MemoryModel::kIdeal ? 1.0 : kBandMargin;
    if (banded && (!chosen || banded->estimate < margin * chosen->estimate)) {
      chosen = banded;
      p.a_description = p.band->description;
    } else
      p.band.reset();
  } else {
    p.band.reset();
  }
  bool swapped = false;
  if (chosen && p.m == 1 && p.b_transposed && !p.band) {
    const GemmProblem s = swap_operands(p);
    const std::optional<Tiles> t = choose_tiles(ctx, s);
    // Clearly better only: the estimates share their memory terms.
    if (t && t->estimate < 0.95 * chosen->estimate) {
      p = s;
      chosen = t;
      swapped = true;
    }
  }
  if (!chosen)
    ctx.fail("no tile of " + std::to_string(p.m) + " x " + std::to_string(p.n) + " x " +
             std::to_string(p.k) + " fits vmem (" +
             std::to_string(ctx.chip.core.vmem.capacity.value()) + " B) and accmem (" +
             std::to_string(ctx.chip.core.accmem.capacity.value()) + " B)");
  const Tiles tiles = *chosen;
  const std::uint64_t ei = dtype_bytes(p.in_dtype), eo = dtype_bytes(p.out_dtype);
  const std::uint64_t tm = tiles.m, tn = tiles.n, tk = tiles.k;
  const std::uint64_t nin = tiles.in_buffers, kparts = tiles.kparts, kunit = k_unit(mxu, tk);
  const std::uint64_t group = tiles.group;
  const std::uint64_t pitch_a = tk * ei;
  const std::uint64_t pitch_b = p.b_transposed ? tk * ei : tn * ei;
  const std::uint64_t pitch_acc = tn * 4, pitch_out = tn * eo;

  OnChip vmem = ctx.vmem();
  OnChip accmem = ctx.accmem();
  Address a_buf[kMaxInputBuffers], b_buf[kMaxInputBuffers], out_buf[2], acc_buf[2];
  // Batch item jb of a step sits at jb x (one item's tile) in each buffer.
  const std::uint64_t a_item = p.band ? band_bytes(*p.band, tm) : tm * pitch_a,
                      b_item = tk * tn * ei, acc_item = tm * pitch_acc, out_item = tm * pitch_out;
  for (std::uint64_t i = 0; i < nin; ++i) {
    a_buf[i] = vmem.take(group * a_item, "the A tile");
    b_buf[i] = vmem.take(group * b_item, "the B tile");
  }
  // Each accumulator buffer holds one partial-sum tile per K part.
  const std::uint64_t acc_part_bytes = group * acc_item;
  for (int i = 0; i < 2; ++i) {
    out_buf[i] = vmem.take(group * out_item, "the output tile");
    acc_buf[i] = accmem.take(kparts * acc_part_bytes, "the accumulator tile");
  }
  // The bias, widened once to the accumulator type, and a row of sixes for relu6.
  const TensorPlacement* bias = ctx.epilogue_bias;
  const bool relu6 = std::count(ctx.epilogue.begin(), ctx.epilogue.end(), OpKind::kRelu6) > 0;
  const DType epi_type = epilogue_dtype(ctx, p.in_dtype);
  std::uint64_t bias_len = 0;
  Address bias_raw, bias_wide, six_row;
  if (bias) {
    bias_len = static_cast<std::uint64_t>(bias->shape.back());
    bias_raw = vmem.take(bias_len * dtype_bytes(bias->dtype), "the bias");
    bias_wide = vmem.take(bias_len * 4, "the widened bias");
  }
  const TensorPlacement* six = nullptr;
  if (relu6) {
    six = ctx.constant(ctx.op.name + ".six", {1, static_cast<std::int64_t>(tn)},
                       TensorInit::kConstant, 6.0);
    six_row = vmem.take(tn * 4, "the relu6 bound");
  }

  // Output tiles, round-robin over cores; m outer so consecutive tiles share A rows.
  std::vector<TileRef> all;
  for (std::uint64_t b0 = 0; b0 < p.batch; b0 += group)
    for (std::uint64_t m0 = 0; m0 < p.m; m0 += tm)
      for (std::uint64_t n0 = 0; n0 < p.n; n0 += tn)
        all.push_back({b0, std::min(group, p.batch - b0), m0, std::min(tm, p.m - m0), n0,
                       std::min(tn, p.n - n0)});
  const std::uint64_t kblocks = ceil_div(p.k, tk);
  const std::uint32_t engines = ctx.engines();
  std::vector<Unit> dmas = dma_units(ctx.chip);
  dmas.resize(engines);
  const std::vector<Unit> mxus = mxu_units(ctx.chip);
  const std::vector<Unit> vpu = {vpu_unit()};
  // Output tiles are stored by the first engines only, one per 16 KiB: the others never wait for
  // a read-out, so they run ahead into the next loads.
  const auto store_engines = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(ceil_div(group * out_item, 16 * 1024), 1, engines));
  const std::vector<Unit> store_dmas(dmas.begin(), dmas.begin() + store_engines);
  // The first steps' small inputs take engine 0 alone and their weights the others: the weights
  // do not wait for the inputs (which may wait for the operator before), nor the first step's
  // inputs behind later steps' weights.
  const bool a_alone = engines >= 2 && group * a_item <= 16 * 1024;
  // A store waits in its engines' in-order queues until the tile's read-out is done, and holds
  // up every load queued behind it. A read-out shorter than a step delays those loads by less
  // than the slack the other input buffers give; one that outlasts several steps (gelu over a
  // wide tile) starves the MXUs. So when a tile's read-out outlasts a step (at the pace the
  // estimate gives a step), its store is queued ceil(read-out / step) steps later, and never
  // after the read-out of the next tile but one, which reuses its output buffer (the vector unit
  // would wait on a store the sequencer has not yet queued).
  const double step_cycles = tiles.estimate / double(ceil_div(all.size(), ctx.cores()) * kblocks);
  const double read_out = double(group * tm * tn) * read_out_cycles_per_element(ctx, p, kparts);
  const double steps_of_read_out = read_out / step_cycles;
  const std::uint64_t store_lag = std::min<std::uint64_t>(
      2 * kblocks - 1, steps_of_read_out > 1 ? std::uint64_t(std::ceil(steps_of_read_out)) : 0);

  for (std::uint16_t core = 0; core < ctx.cores(); ++core) {
    std::vector<TileRef> mine;
    for (std::size_t i = core; i < all.size(); i += ctx.cores()) mine.push_back(all[i]);
    if (mine.empty()) continue;
    e.set_core(core);
    SemaphorePool pool = ctx.semaphore_pool();
    Handoff in_full[kMaxInputBuffers], in_empty[kMaxInputBuffers];
    Handoff acc_full[2], acc_empty[2], out_full[2], out_empty[2];
    for (std::uint64_t i = 0; i < nin; ++i) {
      in_full[i] = pool.handoff(dmas, mxus);
      in_empty[i] = pool.handoff(mxus, dmas);
      in_empty[i].reads = true;
    }
    for (int i = 0; i < 2; ++i) {
      acc_full[i] = pool.handoff(mxus, vpu);
      acc_empty[i] = pool.handoff(vpu, mxus);
      out_full[i] = pool.handoff(vpu, store_dmas);
      out_empty[i] = pool.handoff(store_dmas, vpu);
    }
    if (bias || six) {
      const Handoff prologue = pool.handoff({Unit{UnitKind::kDma, 0}}, vpu);
      if (bias)
        e.dma(0, Transfer{false,
                          {bias->space, bias->base},
                          bias_raw,
                          bias_len * dtype_bytes(bias->dtype),
                          {1},
                          {0},
                          {0}});
      if (six) e.dma(0, Transfer{false, {six->space, six->base}, six_row, tn * 4, {1}, {0}, {0}});
      prologue.post(e);
      prologue.take(e);
      if (six && epi_type != DType::kFp32)
        e.vector(VectorOp::kCast, epi_type, DType::kFp32, 1, static_cast<std::uint32_t>(tn),
                 {six_row, 0}, {six_row, 0});
      if (bias)
        e.vector(bias->dtype == epi_type ? VectorOp::kMove : VectorOp::kCast, epi_type, bias->dtype,
                 1, static_cast<std::uint32_t>(bias_len), {bias_wide, 0}, {bias_raw, 0});
    }

    const std::uint64_t steps = mine.size() * kblocks;
    // The loads of step s, and their part of the step's hand-off: both operands over all engines,
    // or (first steps, small A) only the weights or only the inputs.
    enum class Part { kB, kA, kBoth };
    auto emit_loads = [&](std::uint64_t s, Part part) {
      const TileRef& t = mine[s / kblocks];
      const std::uint64_t k0 = (s % kblocks) * tk, kc = std::min(tk, p.k - k0);
      const std::uint64_t buf = s % nin;
      if (s >= nin && part != Part::kA) in_empty[buf].take(e);
      std::vector<Transfer> xfers;
      const bool a = part != Part::kB, b = part != Part::kA;
      if (p.band && a) {
        // Whole stored rows are contiguous in HBM: one run per image the tile touches.
        for (const BandSegment& seg : band_segments(*p.band, t.m0, t.mc)) {
          const std::uint64_t bytes = seg.rows * p.band->row_bytes;
          xfers.push_back(Transfer{false,
                                   {p.band->space, p.band->row_start(seg.n, seg.ih0)},
                                   offset(a_buf[buf], seg.offset),
                                   bytes,
                                   {1},
                                   {bytes},
                                   {bytes}});
        }
      }
      for (std::uint64_t jb = 0; jb < t.bn; ++jb) {
        if (!p.band && a)
          for (Transfer& x :
               p.load_a(t.b0 + jb, t.m0, t.mc, k0, kc, offset(a_buf[buf], jb * a_item), pitch_a))
            xfers.push_back(std::move(x));
        if (b)
          for (Transfer& x :
               p.load_b(t.b0 + jb, k0, kc, t.n0, t.nc, offset(b_buf[buf], jb * b_item), pitch_b))
            xfers.push_back(std::move(x));
      }
      // Each engine posts its part of the hand-off right after its part of the loads.
      if (part == Part::kBoth) {
        distribute(e, std::move(xfers), 16 * 1024, engines);
        in_full[buf].post(e);
      } else if (part == Part::kB) {
        distribute(e, std::move(xfers), 16 * 1024, engines - 1, 1);
        in_full[buf].post(e, 1, engines);
      } else {
        distribute(e, std::move(xfers), 16 * 1024, 1, 0);
        in_full[buf].post(e, 0, 1);
      }
    };
    auto emit_compute = [&](std::uint64_t s) {
      const std::uint64_t ti = s / kblocks, kb = s % kblocks;
      const TileRef& t = mine[ti];
      const std::uint64_t k0 = kb * tk, kc = std::min(tk, p.k - k0);
      const std::uint64_t buf = s % nin;
      const int acc = static_cast<int>(ti % 2);
      in_full[buf].take(e);
      if (kb == 0 && ti >= 2) acc_empty[acc].take(e);
      if (p.band) {
        emit_band_compute(e, p, *p.band, t.m0, t.mc, t.nc, a_buf[buf], b_buf[buf], pitch_b,
                          acc_buf[acc], pitch_acc);
        if (s + nin < steps) in_empty[buf].post(e);
        acc_full[acc].post(e);
        return;
      }
      const std::uint64_t kslice = k_slice(mxu, kc), nslice = n_slice(mxu, t.nc);
      const std::uint64_t nsubs = ceil_div(t.nc, nslice);
      const std::uint64_t mparts = row_parts(mxu, nsubs, t.mc);
      const std::uint64_t part_rows = ceil_div(t.mc, mparts);
      const std::uint64_t items = t.bn * nsubs * mparts;
      ctx.next_mxu = static_cast<std::uint32_t>((ctx.first_mxu + items * kparts) % mxu.count);
      for (std::uint64_t kk = 0; kk < kc; kk += kslice) {
        const std::uint64_t ksub = std::min<std::uint64_t>(kslice, kc - kk);
        std::uint64_t item = 0;
        for (std::uint64_t jb = 0; jb < t.bn; ++jb)
          for (std::uint64_t j = 0; j < nsubs; ++j) {
            const std::uint64_t n_off = j * nslice,
                                nsub = std::min<std::uint64_t>(nslice, t.nc - n_off);
            for (std::uint64_t part = 0; part < mparts; ++part, ++item) {
              const std::uint64_t r0 = part * part_rows;
              if (r0 >= t.mc) continue;
              const std::uint64_t rows = std::min(part_rows, t.mc - r0);
              // K slice g goes to part g mod kparts; parts of one item sit on different MXUs.
              const std::uint64_t slice = (k0 + kk) / kunit, part_k = slice % kparts;
              const auto unit =
                  static_cast<std::uint8_t>((ctx.first_mxu + item + part_k * items) % mxu.count);
              MxuLoadWeights lw;
              lw.mxu = unit;
              lw.dtype = p.in_dtype;
              lw.k = static_cast<std::uint32_t>(ksub);
              lw.n = static_cast<std::uint32_t>(nsub);
              lw.transpose = p.b_transposed;
              lw.src_stride = static_cast<std::uint32_t>(pitch_b);
              lw.src = offset(b_buf[buf], jb * b_item);
              lw.src.addr += p.b_transposed ? n_off * pitch_b + kk * ei : kk * pitch_b + n_off * ei;
              e.emit(lw);
              MxuMatmul mm;
              mm.mxu = unit;
              mm.dtype = p.in_dtype;
              mm.m = static_cast<std::uint32_t>(rows);
              mm.k = lw.k;
              mm.n = lw.n;
              mm.src = offset(a_buf[buf], jb * a_item + r0 * pitch_a + kk * ei);
              mm.src_stride = static_cast<std::uint32_t>(pitch_a);
              mm.dst = offset(acc_buf[acc],
                              part_k * acc_part_bytes + jb * acc_item + r0 * pitch_acc + n_off * 4);
              mm.dst_stride = static_cast<std::uint32_t>(pitch_acc);
              mm.accumulate = slice >= kparts;
              e.emit(mm);
            }
          }
      }
      if (s + nin < steps) in_empty[buf].post(e);
      if (kb + 1 == kblocks) acc_full[acc].post(e);
    };
    const std::vector<ReadOutOp> read_out = read_out_ops(ctx, p, kparts);
    auto emit_epilogue = [&](std::uint64_t ti) {
      const TileRef& t = mine[ti];
      const int a = static_cast<int>(ti % 2);
      acc_full[a].take(e);
      if (ti >= 2) out_empty[a].take(e);
      // Items whose rows fill their tile sit back to back in the accumulators and the output
      // buffer, so one read-out covers them all: an instruction per operation in the vector
      // unit's queue, not one per item (twelve heads' casts behind a wait filled it, and the
      // sequencer held the next step's matmuls). A bias that differs by item or by row (the
      // swapped operands' columns) keeps them apart.
      bool together = t.bn > 1 && t.mc == tm && !(bias && swapped);
      for (std::uint64_t jb = 1; together && bias && jb < t.bn; ++jb)
        together = p.bias_column(t.b0 + jb) == p.bias_column(t.b0);
      const std::uint64_t readouts = together ? 1 : t.bn;
      const auto rows = static_cast<std::uint32_t>(together ? t.bn * t.mc : t.mc),
                 cols = static_cast<std::uint32_t>(t.nc);
      for (std::uint64_t jb = 0; jb < readouts; ++jb) {
        const VectorOperand acc{offset(acc_buf[a], jb * acc_item),
                                static_cast<std::uint32_t>(pitch_acc)};
        const VectorOperand out{offset(out_buf[a], jb * out_item),
                                static_cast<std::uint32_t>(pitch_out)};
        std::uint64_t part = 0;
        for (const ReadOutOp& r : read_out) {
          switch (r.role) {
            case ReadOutOp::Role::kPartialSum: {
              const VectorOperand partial{offset(acc.addr, ++part * acc_part_bytes),
                                          static_cast<std::uint32_t>(pitch_acc)};
              e.vector(r.op, r.dst, r.src, rows, cols, acc, acc, partial);
              break;
            }
            case ReadOutOp::Role::kWiden:
            case ReadOutOp::Role::kActivation:
              e.vector(r.op, r.dst, r.src, rows, cols, acc, acc);
              break;
            case ReadOutOp::Role::kBias: {
              // Swapped operands put C's columns on rows: one bias element per row.
              const std::uint64_t first = p.bias_column(t.b0 + jb) + (swapped ? t.m0 : t.n0);
              const Address slice{Space::kVmem, bias_wide.addr + first * 4};
              e.vector(r.op, r.dst, r.src, rows, cols, acc, acc, {slice, swapped ? 4u : 0u});
              break;
            }
            case ReadOutOp::Role::kCapAtSix:
              e.vector(r.op, r.dst, r.src, rows, cols, acc, acc, {six_row, 0});
              break;
            case ReadOutOp::Role::kResult:
              if (r.op == VectorOp::kRequantize)
                e.vector(r.op, r.dst, r.src, rows, cols, out, acc, {}, ctx.epilogue_scale);
              else
                e.vector(r.op, r.dst, r.src, rows, cols, out, acc);
              break;
          }
        }
      }
      if (ti + 2 < mine.size()) acc_empty[a].post(e);
      out_full[a].post(e);
    };
    auto emit_store = [&](std::uint64_t ti) {
      const TileRef& t = mine[ti];
      const int a = static_cast<int>(ti % 2);
      out_full[a].take(e);
      std::vector<Transfer> xfers;
      for (std::uint64_t jb = 0; jb < t.bn; ++jb)
        for (Transfer& x : p.store_c(t.b0 + jb, t.m0, t.mc, t.n0, t.nc,
                                     offset(out_buf[a], jb * out_item), pitch_out))
          xfers.push_back(std::move(x));
      distribute(e, std::move(xfers), 16 * 1024, store_engines);
      if (ti + 2 < mine.size()) out_empty[a].post(e);
    };

    // Software pipeline in program order: the loads of step s+nin are dispatched right after the
    // compute of step s, so the sequencer never holds a load behind compute it does not need.
    // A small A operand loads apart from B in the first steps (see emit_loads), so an operator
    // started beside its predecessor streams its first weights before it waits for its inputs.
    for (std::uint64_t s = 0; !a_alone && s < std::min(nin, steps); ++s) emit_loads(s, Part::kBoth);
    for (std::uint64_t s = 0; a_alone && s < std::min(nin, steps); ++s) emit_loads(s, Part::kB);
    for (std::uint64_t s = 0; a_alone && s < std::min(nin, steps); ++s) emit_loads(s, Part::kA);
    // Stores wait `store_lag` steps (above) after their tile's read-out.
    std::deque<std::pair<std::uint64_t, std::uint64_t>> stores;  // (tile, step to queue it at)
    for (std::uint64_t s = 0; s < steps; ++s) {
      emit_compute(s);
      const bool tile_done = s % kblocks + 1 == kblocks;
      if (tile_done) {
        emit_epilogue(s / kblocks);
        stores.emplace_back(s / kblocks, s + store_lag);
      }
      if (s + nin < steps) emit_loads(s + nin, Part::kBoth);
      for (; !stores.empty() && stores.front().second <= s; stores.pop_front())
        emit_store(stores.front().first);
    }
    for (; !stores.empty(); stores.pop_front()) emit_store(stores.front().first);
  }

  OpPlan& plan = ctx.plan;
  std::ostringstream tile;
  tile << "M " << tm << " x N " << tn << " x K " << tk;
  if (p.batch > 1) tile << ", batch " << p.batch;
  if (group > 1) tile << " (" << group << " per step)";
  plan.tile = tile.str();
  plan.loop_order = "batch, m, n, k (k innermost); A and B tiles " +
                    std::string(nin == 3 ? "triple" : "double") +
                    "-buffered, accumulators double-buffered";
  std::ostringstream place;
  place << all.size() << " output tiles round-robin over " << ctx.cores()
        << " core(s); each tile's ";
  if (mxu.dataflow == Dataflow::kInputStationary)
    place << "row blocks";
  else
    place << mxu.cols << "-column slices";
  place << " over " << mxu.count << " MXU(s) (" << dataflow_name(mxu.dataflow) << ")";
  if (kparts > 1)
    place << ", K split " << kparts << " ways over idle MXUs (partial sums added on the VPU)";
  place << "; A: " << p.a_description;
  plan.placement = place.str();
  plan.vmem_bytes = vmem.used();
  plan.accmem_bytes = accmem.used();
  plan.hbm_bytes = tiles.hbm_bytes;
  plan.compute_cycles = tiles.compute_cycles;
  plan.memory_cycles = tiles.memory_cycles;
}

}  // namespace tpusim::isa::lower_detail
