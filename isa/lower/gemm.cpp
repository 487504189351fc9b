// The tiled, double-buffered matrix product every MXU operator lowers to (README "GEMM").

#include <algorithm>
#include <cmath>
#include <sstream>

#include "isa/lower/lower_impl.h"

namespace tpusim::isa::lower_detail {

using workloads::OpKind;

namespace {

struct Tiles {
  std::uint64_t m = 0, n = 0, k = 0;
  double compute_cycles = 0, memory_cycles = 0, estimate = 0;
  std::uint64_t hbm_bytes = 0, vmem = 0, accmem = 0;
  std::uint64_t in_buffers = 2, kparts = 1;
  std::uint64_t group =
      1;  // batch items that share one step (their weight slices spread over the MXUs)
};

// The K granule one weight tile covers over the whole operator: a tile-K block in os (K streams
// whole within a step), an array's rows otherwise.
std::uint64_t k_unit(const MxuSpec& mxu, std::uint64_t tk) {
  return mxu.dataflow == Dataflow::kOutputStationary ? tk : mxu.rows;
}

// `in_buffers` A and B tiles, double-buffered output tiles, the resident bias (as stored and
// widened to fp32), a row of sixes for relu6, and the 64-byte alignment of each.
std::uint64_t vmem_need(const GemmProblem& p, std::uint64_t tm, std::uint64_t tn, std::uint64_t tk,
                        std::uint64_t a_bytes, std::uint64_t in_buffers, std::uint64_t group) {
  const std::uint64_t ei = dtype_bytes(p.in_dtype), eo = dtype_bytes(p.out_dtype);
  return group * (in_buffers * (a_bytes + tk * tn * ei) + 2 * tm * tn * eo) + p.resident_bytes +
         4 * tn + (2 * in_buffers + 5) * 64;
}

// The input rows of one image that a run of its output rows reads, and where they sit in the
// step's A buffer.
struct BandSegment {
  std::uint64_t n = 0, oh0 = 0, oh1 = 0;  // output rows [oh0, oh1) of image n
  std::int64_t ih0 = 0;                   // first stored input row loaded
  std::uint64_t rows = 0, offset = 0;     // input rows loaded; bytes into the A buffer
};

// The segments of the tile holding GEMM rows [m0, m0 + mc) (whole output rows).
std::vector<BandSegment> band_segments(const ConvBand& b, std::uint64_t m0, std::uint64_t mc) {
  std::vector<BandSegment> segs;
  std::uint64_t offset = 0;
  const std::uint64_t g_end = (m0 + mc) / b.ow;
  for (std::uint64_t g = m0 / b.ow; g < g_end;) {
    BandSegment s;
    s.n = g / b.oh;
    s.oh0 = g % b.oh;
    s.oh1 = std::min(b.oh, s.oh0 + (g_end - g));
    s.ih0 = std::int64_t(s.oh0 * b.sh) - b.pt;
    s.rows = (s.oh1 - 1 - s.oh0) * b.sh + (b.kh - 1) * b.dh + 1;
    s.offset = offset;
    offset = round_up(offset + s.rows * b.row_bytes, 64);
    segs.push_back(s);
    g += s.oh1 - s.oh0;
  }
  return segs;
}

// A buffer bytes for a tile of tm GEMM rows, whichever images its rows fall in.
std::uint64_t band_bytes(const ConvBand& b, std::uint64_t tm) {
  const std::uint64_t out_rows = ceil_div(tm, b.ow);
  const std::uint64_t segments = std::min<std::uint64_t>(out_rows, ceil_div(out_rows, b.oh) + 1);
  return (out_rows * b.sh + segments * ((b.kh - 1) * b.dh + 1)) * b.row_bytes + segments * 64;
}

// A band convolution's K pieces are runs of at most R elements that are contiguous in a stored
// input row, so that each is a single shifted view of the band: with dilation 1 a whole kernel
// row (kw x channels, the pixels side by side), else one tap's channels.
std::uint64_t band_run(const ConvBand& b) { return b.dw == 1 ? b.kw * b.channels : b.channels; }
std::uint64_t band_pieces(const ConvBand& b, const MxuSpec& mxu) {
  return b.kh * (b.kw * b.channels / band_run(b)) * ceil_div(band_run(b), mxu.rows);
}

// Three input buffers when the semaphores allow, so loads run two steps ahead: a buffer is free
// only once its last matmul has drained, and with two the next load waits for that drain.
// Hand-offs take in_buffers x (MXUs + engines) semaphores for the inputs, 2 x (MXUs + engines + 2)
// for accumulators and outputs, and 1 for the prologue.
std::uint64_t input_buffers(const OpContext& ctx) {
  const std::uint64_t mxus = ctx.chip.core.mxu.count, engines = ctx.engines();
  return 3 * (mxus + engines) + 2 * (mxus + engines + 2) + 1 <= ctx.chip.core.sequencer.semaphores
             ? 3
             : 2;
}

// When a tile has fewer column slices than MXUs, its rows are split so every MXU works (never
// into parts of fewer than 8 rows).
std::uint64_t row_parts(const MxuSpec& mxu, std::uint64_t nsubs, std::uint64_t mc) {
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(mxu.count / nsubs, ceil_div(mc, 8)));
}

// The largest K and N slices one weight tile covers. The stationary operand must fit the
// array; the streamed one need not be cut: K streams in os, the N weight columns in is.
std::uint64_t k_slice(const MxuSpec& mxu, std::uint64_t kc) {
  return mxu.dataflow == Dataflow::kOutputStationary ? kc : mxu.rows;
}
std::uint64_t n_slice(const MxuSpec& mxu, std::uint64_t nc) {
  return mxu.dataflow == Dataflow::kInputStationary ? nc : mxu.cols;
}

// Busy cycles of one MXU for one step (models/mxu/mxu_timing.h has the exact rules). With
// double buffering, a ws (weight tile, row block) pair costs the larger of streaming its rows and
// loading its weights; os folds of R rows cost K plus the wavefront's skew; is folds of C inputs
// cost the N streamed columns. Without it every fold also waits for the array to fill and drain.
// MXUs a tile's weight slices and row parts leave idle take a share of its K slices instead,
// each accumulating its own partial sums, which the epilogue adds (a decode step's M = 1 attention
// has one 64-column slice and one row: without this, one MXU of four works).
std::uint64_t k_parts(const MxuSpec& mxu, std::uint64_t group, std::uint64_t mc, std::uint64_t nc,
                      std::uint64_t k_slices) {
  const std::uint64_t nsubs = ceil_div(nc, n_slice(mxu, nc));
  const std::uint64_t items = group * nsubs * row_parts(mxu, nsubs, mc);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(mxu.count / items, k_slices));
}

double step_mxu_cycles(const ChipSpec& chip, std::uint64_t group, std::uint64_t mc,
                       std::uint64_t nc, std::uint64_t kc, std::uint64_t kparts) {
  const auto& mxu = chip.core.mxu;
  const std::uint64_t nsubs = ceil_div(nc, n_slice(mxu, nc)),
                      ksubs = ceil_div(kc, k_slice(mxu, kc));
  const std::uint64_t mparts = row_parts(mxu, nsubs, mc);
  const std::uint64_t items = group * nsubs * mparts;
  const std::uint64_t per_mxu = ceil_div(items, mxu.count);
  const double rows = double(ceil_div(mc, mparts));
  const double R = mxu.rows, C = mxu.cols;
  const double ncols = double(std::min<std::uint64_t>(nc, mxu.cols));
  const bool db = mxu.weight_double_buffer;
  double per_item = 0;
  switch (mxu.dataflow) {
    case Dataflow::kWeightStationary: {
      // The array shifts a tile through all R rows however few it fills, but charging R here
      // makes the search pick many small per-head weight tiles whose DMA and hand-off costs it
      // does not see (GPT-2 decode attention got slower); K rows is the better guide for now.
      const double weight_rows = double(std::min<std::uint64_t>(kc, mxu.rows));
      per_item = db ? std::max(rows, weight_rows) : 2 * R + rows + ncols - 2;
      break;
    }
    case Dataflow::kOutputStationary:
      per_item = std::ceil(rows / R) * (double(kc) + R + ncols - 2 + (db ? 0 : R));
      break;
    case Dataflow::kInputStationary:
      per_item = std::ceil(rows / C) * (db ? std::max(double(nc), R) : 2 * R + double(nc) + C - 2);
      break;
  }
  return double(per_mxu) * std::max(1.0, double(ksubs) / double(kparts)) * per_item;
}

Tiles evaluate(const OpContext& ctx, const GemmProblem& p, std::uint64_t tm, std::uint64_t tn,
               std::uint64_t tk, std::uint64_t in_buffers, std::uint64_t group) {
  Tiles t{tm, tn, tk};
  t.in_buffers = in_buffers;
  t.group = group;
  const auto& mxu = ctx.chip.core.mxu;
  t.kparts =
      k_parts(mxu, group, std::min(tm, p.m), std::min(tn, p.n), ceil_div(p.k, k_unit(mxu, tk)));
  const std::uint64_t mb = ceil_div(p.m, tm), nb = ceil_div(p.n, tn), kb = ceil_div(p.k, tk);
  const std::uint64_t tiles = ceil_div(p.batch, group) * mb * nb;
  const std::uint64_t tiles_per_core = ceil_div(tiles, ctx.cores());
  t.compute_cycles =
      double(tiles_per_core * kb) * step_mxu_cycles(ctx.chip, group, std::min(tm, p.m),
                                                    std::min(tn, p.n), std::min(tk, p.k), t.kparts);
  const std::uint64_t ei = dtype_bytes(p.in_dtype), eo = dtype_bytes(p.out_dtype);
  t.hbm_bytes = p.batch * (nb * p.m * p.k * ei + mb * p.k * p.n * ei + p.m * p.n * eo);
  std::uint64_t a_bytes = tm * tk * ei;
  if (p.band) {
    // One band per (row tile, column tile); each piece's weights are loaded once per MXU part,
    // then every output row of the part streams OW rows through them.
    const ConvBand& b = *p.band;
    a_bytes = band_bytes(b, tm);
    t.kparts = 1;
    t.hbm_bytes = nb * mb * a_bytes + mb * p.k * p.n * ei + p.m * p.n * eo;
    const std::uint64_t nc = std::min(tn, p.n), out_rows = std::min(tm, p.m) / b.ow;
    const std::uint64_t nsubs = ceil_div(nc, mxu.cols);
    const std::uint64_t mparts =
        std::max<std::uint64_t>(1, std::min<std::uint64_t>(mxu.count / nsubs, out_rows));
    const double streamed = double(ceil_div(out_rows, mparts) * b.ow);
    const double per_item =
        mxu.weight_double_buffer
            ? std::max(streamed, double(std::min<std::uint64_t>(band_run(b), mxu.rows)))
            : 2.0 * mxu.rows + streamed + double(std::min<std::uint64_t>(nc, mxu.cols)) - 2;
    t.compute_cycles =
        double(tiles_per_core * band_pieces(b, mxu) * ceil_div(nsubs * mparts, mxu.count)) *
        per_item;
  }
  t.memory_cycles = double(t.hbm_bytes) / ctx.hbm_bytes_per_cycle();
  // Each step also pays a small fixed cost (its hand-off instructions through the sequencer).
  // Nothing overlaps the first step's loads (pipeline fill) or the last tile's read-out and store
  // (drain), so smaller k-blocks shorten the fill at no cost in traffic.
  const double per_step = 32;
  const double fill = double(group * (a_bytes + tk * tn * ei)) / ctx.hbm_bytes_per_cycle();
  const double drain =
      double(group * tm * tn * eo) / ctx.hbm_bytes_per_cycle() +
      double(group * tm * tn) / (double(ctx.chip.core.vpu.lanes) * ctx.chip.core.vpu.sublanes);
  t.estimate = std::max(t.compute_cycles, t.memory_cycles) +
               double(tiles_per_core * kb) * per_step + fill + drain;
  t.vmem = vmem_need(p, tm, tn, tk, a_bytes, in_buffers, group);
  t.accmem = 2 * t.kparts * group * tm * tn * 4;
  return t;
}

std::vector<std::uint64_t> candidates(std::uint64_t full, std::uint64_t unit) {
  std::vector<std::uint64_t> c;
  for (std::uint64_t v = unit; v < full; v *= 2) c.push_back(v);
  c.push_back(full);
  return c;
}

std::optional<Tiles> choose_tiles(const OpContext& ctx, const GemmProblem& p) {
  const auto& core = ctx.chip.core;
  const std::uint64_t in_buffers = input_buffers(ctx);
  Tiles best;
  bool found = false;
  // A band convolution keeps K whole (the band serves every tap) and tiles whole output rows.
  const std::vector<std::uint64_t> tks =
      p.band ? std::vector<std::uint64_t>{p.k} : candidates(p.k, core.mxu.rows);
  std::vector<std::uint64_t> tms = candidates(p.m, 8);
  if (p.band) {
    tms.clear();
    for (std::uint64_t rows = 1; rows * p.band->ow < p.m; rows *= 2)
      tms.push_back(rows * p.band->ow);
    tms.push_back(p.m);
  }
  for (std::uint64_t tk : tks)
    for (std::uint64_t tn : candidates(round_up(p.n, core.mxu.cols), core.mxu.cols))
      for (std::uint64_t tm : tms)
        // Several batch items per step only when one tile covers all rows (attention in a decode
        // step).
        for (std::uint64_t group :
             tm >= p.m && !p.band ? candidates(p.batch, 1) : std::vector<std::uint64_t>{1}) {
          const std::uint64_t tn_eff = std::min(tn, p.n);
          const Tiles t = evaluate(ctx, p, tm, tn_eff, tk, in_buffers, group);
          if (t.vmem > core.vmem.capacity.value() || t.accmem > core.accmem.capacity.value())
            continue;
          // Within 1% of the best estimate, prefer fewer steps (fewer instructions, less risk).
          const auto steps = [&](const Tiles& x) {
            return ceil_div(p.batch, x.group) * ceil_div(p.m, x.m) * ceil_div(p.n, x.n) *
                   ceil_div(p.k, x.k);
          };
          if (!found || t.estimate < best.estimate * 0.99 ||
              (t.estimate <= best.estimate * 1.01 && steps(t) < steps(best))) {
            best = t;
            found = true;
          }
        }
  if (!found) return std::nullopt;
  return best;
}

struct TileRef {
  std::uint64_t b0, bn, m0, mc, n0, nc;  // batch items [b0, b0 + bn) share the step
};

// One step of a band convolution (K whole): for each K piece (a kernel tap and up to R
// channels) and column slice, each MXU loads the weights once and streams the output rows of its
// part of the tile, one matmul of OW rows per output row, each reading a shifted, strided view
// of the band.
void emit_band_compute(Emitter& e, const GemmProblem& p, const ConvBand& b, std::uint64_t m0,
                       std::uint64_t mc, std::uint64_t nc, Address band, Address weights,
                       std::uint64_t pitch_b, Address acc, std::uint64_t pitch_acc) {
  const MxuSpec& mxu = e.chip().core.mxu;
  const std::uint64_t ei = dtype_bytes(p.in_dtype);
  struct OutRow {
    const BandSegment* seg;
    std::uint64_t oh, index;  // output row in its image; row of the tile
  };
  const std::vector<BandSegment> segs = band_segments(b, m0, mc);
  std::vector<OutRow> rows;
  for (const BandSegment& s : segs)
    for (std::uint64_t oh = s.oh0; oh < s.oh1; ++oh) rows.push_back({&s, oh, rows.size()});
  const std::uint64_t nsubs = ceil_div(nc, mxu.cols);
  const std::uint64_t mparts =
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(mxu.count / nsubs, rows.size()));
  const std::uint64_t part_rows = ceil_div(rows.size(), mparts);
  const std::uint64_t run = band_run(b), runs_per_row = b.kw * b.channels / run;

  // Items are (K piece, column slice, row part); unit = item mod MXUs within a piece. A round is
  // at most one item per MXU: its weights, then its matmuls interleaved row by row (dispatch is in
  // order, so one MXU's run of matmuls would fill its queue and hold back the others').
  struct Item {
    MxuLoadWeights lw;
    std::vector<MxuMatmul> mms;
  };
  std::vector<std::vector<Item>> rounds;
  std::uint64_t piece = 0;
  for (std::uint64_t r = 0; r < b.kh; ++r)
    for (std::uint64_t q = 0; q < runs_per_row; ++q)  // q: the tap a run starts at
      for (std::uint64_t c0 = 0; c0 < run; c0 += mxu.rows, ++piece) {
        const std::uint64_t len = std::min<std::uint64_t>(mxu.rows, run - c0);
        const std::uint64_t tap = q * (run / b.channels);
        const std::uint64_t k_row = (r * b.kw + tap) * b.channels + c0;  // weight row of the piece
        const std::uint64_t col = b.col_offset(std::int64_t(tap * b.dw) - b.pl) + c0 * b.elem;
        std::vector<Item> items;
        for (std::uint64_t j = 0; j < nsubs; ++j)
          for (std::uint64_t part = 0; part < mparts; ++part) {
            const std::uint64_t first = part * part_rows;
            if (first >= rows.size()) continue;
            const std::uint64_t n_off = j * mxu.cols,
                                nsub = std::min<std::uint64_t>(mxu.cols, nc - n_off);
            Item it;
            it.lw.mxu = static_cast<std::uint8_t>(items.size() % mxu.count);
            it.lw.dtype = p.in_dtype;
            it.lw.k = static_cast<std::uint32_t>(len);
            it.lw.n = static_cast<std::uint32_t>(nsub);
            it.lw.src_stride = static_cast<std::uint32_t>(pitch_b);
            it.lw.src = offset(weights, k_row * pitch_b + n_off * ei);
            for (std::uint64_t i = first;
                 i < std::min<std::uint64_t>(first + part_rows, rows.size()); ++i) {
              const OutRow& o = rows[i];
              const std::int64_t ih = std::int64_t(o.oh * b.sh + r * b.dh) - b.pt;
              MxuMatmul mm;
              mm.mxu = it.lw.mxu;
              mm.dtype = p.in_dtype;
              mm.m = static_cast<std::uint32_t>(b.ow);
              mm.k = it.lw.k;
              mm.n = it.lw.n;
              mm.src =
                  offset(band, o.seg->offset + std::uint64_t(ih - o.seg->ih0) * b.row_bytes + col);
              mm.src_stride = static_cast<std::uint32_t>(b.sw * b.pixel_bytes);
              mm.dst = offset(acc, o.index * b.ow * pitch_acc + n_off * 4);
              mm.dst_stride = static_cast<std::uint32_t>(pitch_acc);
              mm.accumulate = piece > 0;
              it.mms.push_back(mm);
            }
            items.push_back(std::move(it));
          }
        for (std::size_t r0 = 0; r0 < items.size(); r0 += mxu.count)
          rounds.emplace_back(
              std::make_move_iterator(items.begin() + static_cast<std::ptrdiff_t>(r0)),
              std::make_move_iterator(items.begin() +
                                      static_cast<std::ptrdiff_t>(
                                          std::min<std::size_t>(items.size(), r0 + mxu.count))));
      }

  // With a shadow weight buffer, an MXU's next tile is loaded right after its first matmul of the
  // round, and the round's later matmuls `keep` the tile in use: the load overlaps their rows.
  const bool ahead = mxu.weight_double_buffer;
  std::vector<bool> loaded(mxu.count, false);  // the next round's tile is already staged
  for (std::size_t rd = 0; rd < rounds.size(); ++rd) {
    for (const Item& it : rounds[rd])
      if (!loaded[it.lw.mxu]) e.emit(it.lw);
    std::fill(loaded.begin(), loaded.end(), false);
    std::vector<const Item*> next(mxu.count, nullptr);
    if (ahead && rd + 1 < rounds.size())
      for (const Item& it : rounds[rd + 1]) next[it.lw.mxu] = &it;
    std::size_t longest = 0;
    for (const Item& it : rounds[rd]) longest = std::max(longest, it.mms.size());
    for (std::size_t step = 0; step < longest; ++step)
      for (const Item& it : rounds[rd]) {
        if (step >= it.mms.size()) continue;
        MxuMatmul mm = it.mms[step];
        mm.keep = loaded[mm.mxu];
        e.emit(mm);
        if (step == 0 && next[mm.mxu]) {
          e.emit(next[mm.mxu]->lw);
          loaded[mm.mxu] = true;
        }
      }
  }
}

}  // namespace

void emit_gemm(OpContext& ctx, const GemmProblem& problem) {
  GemmProblem p = problem;
  if (ctx.epilogue_bias) {
    const std::uint64_t len = static_cast<std::uint64_t>(ctx.epilogue_bias->shape.back());
    p.resident_bytes = len * (dtype_bytes(ctx.epilogue_bias->dtype) + 4);
  }
  Emitter& e = ctx.e;
  const auto& mxu = ctx.chip.core.mxu;
  // A convolution offered as a band runs as one when it fits: an im2col gather reads each input
  // kh x kw times through HBM in short runs. Only when off-chip traffic is free (memory model
  // ideal) can the gather win, by packing K across kernel rows; then the estimates decide. The
  // band's weights-then-rows schedule is weight-stationary.
  GemmProblem gathered = p;
  gathered.band.reset();
  std::optional<Tiles> chosen = choose_tiles(ctx, gathered);
  if (p.band && mxu.dataflow == Dataflow::kWeightStationary) {
    const std::optional<Tiles> banded = choose_tiles(ctx, p);
    const bool ideal = ctx.chip.memory.model == MemoryModel::kIdeal;
    if (banded && (!chosen || !ideal || banded->estimate < chosen->estimate)) {
      chosen = banded;
      p.a_description = p.band->description;
    } else
      p.band.reset();
  } else {
    p.band.reset();
  }
  if (!chosen)
    ctx.fail("no tile of " + std::to_string(p.m) + " x " + std::to_string(p.n) + " x " +
             std::to_string(p.k) + " fits vmem (" +
             std::to_string(ctx.chip.core.vmem.capacity.value()) + " B) and accmem (" +
             std::to_string(ctx.chip.core.accmem.capacity.value()) + " B)");
  const Tiles tiles = *chosen;
  const std::uint64_t ei = dtype_bytes(p.in_dtype), eo = dtype_bytes(p.out_dtype);
  const DType acc_type = accumulator_dtype(p.in_dtype);
  const std::uint64_t tm = tiles.m, tn = tiles.n, tk = tiles.k;
  const std::uint64_t nin = tiles.in_buffers, kparts = tiles.kparts, kunit = k_unit(mxu, tk);
  const std::uint64_t group = tiles.group;
  const std::uint64_t pitch_a = tk * ei;
  const std::uint64_t pitch_b = p.b_transposed ? tk * ei : tn * ei;
  const std::uint64_t pitch_acc = tn * 4, pitch_out = tn * eo;

  OnChip vmem(Space::kVmem, ctx.chip.core.vmem.capacity.value());
  OnChip accmem(Space::kAccmem, ctx.chip.core.accmem.capacity.value());
  constexpr std::uint64_t kMaxInBuffers = 3;
  Address a_buf[kMaxInBuffers], b_buf[kMaxInBuffers], out_buf[2], acc_buf[2];
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
  const bool needs_float =
      relu6 || std::count(ctx.epilogue.begin(), ctx.epilogue.end(), OpKind::kGelu) > 0;
  const DType epi_type = needs_float ? DType::kFp32 : acc_type;
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

  for (std::uint16_t core = 0; core < ctx.cores(); ++core) {
    std::vector<TileRef> mine;
    for (std::size_t i = core; i < all.size(); i += ctx.cores()) mine.push_back(all[i]);
    if (mine.empty()) continue;
    e.set_core(core);
    SemaphorePool pool(ctx.chip.core.sequencer.semaphores);
    Handoff in_full[kMaxInBuffers], in_empty[kMaxInBuffers];
    Handoff acc_full[2], acc_empty[2], out_full[2], out_empty[2];
    for (std::uint64_t i = 0; i < nin; ++i) {
      in_full[i] = pool.handoff(dmas, mxus);
      in_empty[i] = pool.handoff(mxus, dmas);
    }
    for (int i = 0; i < 2; ++i) {
      acc_full[i] = pool.handoff(mxus, vpu);
      acc_empty[i] = pool.handoff(vpu, mxus);
      out_full[i] = pool.handoff(vpu, dmas);
      out_empty[i] = pool.handoff(dmas, vpu);
    }
    if (bias || six) {
      const Handoff prologue = pool.handoff({Unit{UnitKind::kDma, 0}}, vpu);
      if (bias)
        e.dma(0, Transfer{false,
                          {Space::kHbm, bias->base},
                          bias_raw,
                          bias_len * dtype_bytes(bias->dtype),
                          {1},
                          {0},
                          {0}});
      if (six) e.dma(0, Transfer{false, {Space::kHbm, six->base}, six_row, tn * 4, {1}, {0}, {0}});
      prologue.post(e);
      prologue.take(e);
      if (bias)
        e.vector(bias->dtype == epi_type ? VectorOp::kMove : VectorOp::kCast, epi_type, bias->dtype,
                 1, static_cast<std::uint32_t>(bias_len), {bias_wide, 0}, {bias_raw, 0});
    }

    const std::uint64_t steps = mine.size() * kblocks;
    auto emit_loads = [&](std::uint64_t s) {
      const TileRef& t = mine[s / kblocks];
      const std::uint64_t k0 = (s % kblocks) * tk, kc = std::min(tk, p.k - k0);
      const std::uint64_t buf = s % nin;
      if (s >= nin) in_empty[buf].take(e);
      std::vector<Transfer> xfers;
      if (p.band) {
        // Whole stored rows are contiguous in HBM: one run per image the tile touches.
        for (const BandSegment& seg : band_segments(*p.band, t.m0, t.mc)) {
          const std::uint64_t bytes = seg.rows * p.band->row_bytes;
          xfers.push_back(Transfer{false,
                                   {Space::kHbm, p.band->row_start(seg.n, seg.ih0)},
                                   offset(a_buf[buf], seg.offset),
                                   bytes,
                                   {1},
                                   {bytes},
                                   {bytes}});
        }
      }
      for (std::uint64_t jb = 0; jb < t.bn; ++jb) {
        if (!p.band)
          for (Transfer& x :
               p.load_a(t.b0 + jb, t.m0, t.mc, k0, kc, offset(a_buf[buf], jb * a_item), pitch_a))
            xfers.push_back(std::move(x));
        for (Transfer& x :
             p.load_b(t.b0 + jb, k0, kc, t.n0, t.nc, offset(b_buf[buf], jb * b_item), pitch_b))
          xfers.push_back(std::move(x));
      }
      distribute(e, std::move(xfers), 16 * 1024, engines);
      in_full[buf].post(e);
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
              const auto unit = static_cast<std::uint8_t>((item + part_k * items) % mxu.count);
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
    auto emit_epilogue = [&](std::uint64_t ti) {
      const TileRef& t = mine[ti];
      const int a = static_cast<int>(ti % 2);
      acc_full[a].take(e);
      if (ti >= 2) out_empty[a].take(e);
      const auto rows = static_cast<std::uint32_t>(t.mc), cols = static_cast<std::uint32_t>(t.nc);
      for (std::uint64_t jb = 0; jb < t.bn; ++jb) {
        const VectorOperand acc{offset(acc_buf[a], jb * acc_item),
                                static_cast<std::uint32_t>(pitch_acc)};
        const VectorOperand out{offset(out_buf[a], jb * out_item),
                                static_cast<std::uint32_t>(pitch_out)};
        for (std::uint64_t part = 1; part < kparts; ++part) {
          const VectorOperand partial{offset(acc.addr, part * acc_part_bytes),
                                      static_cast<std::uint32_t>(pitch_acc)};
          e.vector(VectorOp::kAdd, acc_type, acc_type, rows, cols, acc, acc, partial);
        }
        DType cur = acc_type;
        if (cur != epi_type) {
          e.vector(VectorOp::kCast, epi_type, cur, rows, cols, acc, acc);
          cur = epi_type;
        }
        if (bias) {
          const Address slice{Space::kVmem, bias_wide.addr + (p.bias_column(t.b0 + jb) + t.n0) * 4};
          e.vector(VectorOp::kAdd, cur, cur, rows, cols, acc, acc, {slice, 0});
        }
        for (OpKind k : ctx.epilogue) {
          if (k == OpKind::kRelu || k == OpKind::kRelu6)
            e.vector(VectorOp::kRelu, cur, cur, rows, cols, acc, acc);
          if (k == OpKind::kRelu6)
            e.vector(VectorOp::kMin, cur, cur, rows, cols, acc, acc, {six_row, 0});
          if (k == OpKind::kGelu) e.vector(VectorOp::kGelu, cur, cur, rows, cols, acc, acc);
        }
        if (p.out_dtype == cur)
          e.vector(VectorOp::kMove, cur, cur, rows, cols, out, acc);
        else if (!dtype_is_integer(p.out_dtype))
          e.vector(VectorOp::kCast, p.out_dtype, cur, rows, cols, out, acc);
        else
          e.vector(VectorOp::kRequantize, p.out_dtype, cur, rows, cols, out, acc, {}, 1.0f);
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
      distribute(e, std::move(xfers), 16 * 1024, engines);
      if (ti + 2 < mine.size()) out_empty[a].post(e);
    };

    // Software pipeline in program order: the loads of step s+nin are dispatched right after the
    // compute of step s, so the sequencer never holds a load behind compute it does not need.
    for (std::uint64_t s = 0; s < std::min(nin, steps); ++s) emit_loads(s);
    for (std::uint64_t s = 0; s < steps; ++s) {
      emit_compute(s);
      const bool tile_done = s % kblocks + 1 == kblocks;
      if (tile_done) emit_epilogue(s / kblocks);
      if (s + nin < steps) emit_loads(s + nin);
      if (tile_done) emit_store(s / kblocks);
    }
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
