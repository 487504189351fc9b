// Tile choice for the GEMM schedule: candidate tiles, what each costs, and the band geometry
// (README "GEMM").

#include "isa/lower/gemm_plan.h"

#include <algorithm>
#include <cmath>

namespace tpusim::isa::lower_detail {

// The K granule one weight tile covers over the whole operator: a tile-K block in os (K streams
// whole within a step), an array's rows otherwise.
std::uint64_t k_unit(const MxuSpec& mxu, std::uint64_t tk) {
  return mxu.dataflow == Dataflow::kOutputStationary ? tk : mxu.rows;
}

namespace {

// `in_buffers` A and B tiles, double-buffered output tiles, the resident bias (as stored and
// widened to fp32), a row of sixes for relu6, and the 64-byte alignment of each.
std::uint64_t vmem_need(const GemmProblem& p, std::uint64_t tm, std::uint64_t tn, std::uint64_t tk,
                        std::uint64_t a_bytes, std::uint64_t in_buffers, std::uint64_t group) {
  const std::uint64_t ei = dtype_bytes(p.in_dtype), eo = dtype_bytes(p.out_dtype);
  return group * (in_buffers * (a_bytes + tk * tn * ei) + 2 * tm * tn * eo) + p.resident_bytes +
         4 * tn + (2 * in_buffers + 5) * 64;
}

}  // namespace

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
namespace {

std::uint64_t band_pieces(const ConvBand& b, const MxuSpec& mxu) {
  return b.kh * (b.kw * b.channels / band_run(b)) * ceil_div(band_run(b), mxu.rows);
}

}  // namespace

// Three input buffers when the semaphores allow, so loads run two steps ahead: a buffer is free
// only once its last matmul has drained, and with two the next load waits for that drain.
// Hand-offs take in_buffers x (MXUs + engines) semaphores for the inputs, 2 x (MXUs + engines + 2)
// for accumulators and outputs, and 1 for the prologue.
std::uint64_t input_buffers(const OpContext& ctx) {
  const std::uint64_t mxus = ctx.chip.core.mxu.count, engines = ctx.engines();
  return kMaxInputBuffers * (mxus + engines) + 2 * (mxus + engines + 2) + 1 <= ctx.semaphores
             ? kMaxInputBuffers
             : 2;
}

std::uint64_t row_parts(const MxuSpec& mxu, std::uint64_t nsubs, std::uint64_t rows,
                        std::uint64_t min_part) {
  return std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(mxu.count / nsubs, ceil_div(rows, min_part)));
}

// The largest K and N slices one weight tile covers. The stationary operand must fit the
// array; the streamed one need not be cut: K streams in os, the N weight columns in is.
std::uint64_t k_slice(const MxuSpec& mxu, std::uint64_t kc) {
  return mxu.dataflow == Dataflow::kOutputStationary ? kc : mxu.rows;
}
std::uint64_t n_slice(const MxuSpec& mxu, std::uint64_t nc) {
  return mxu.dataflow == Dataflow::kInputStationary ? nc : mxu.cols;
}

// Busy cycles of the busiest MXU for one tile over its `kblocks` K blocks
// (models/mxu/mxu_timing.h has the exact rules). With double buffering, a ws (weight tile, row
// block) pair costs the larger of streaming its rows and loading its weights; os folds of R rows
// cost K plus the wavefront's skew; is folds of C inputs cost the N streamed columns. Without it
// every fold also waits for the array to fill and drain.
namespace {

// MXUs a tile's weight slices and row parts leave idle take a share of its K slices instead,
// each accumulating its own partial sums, which the epilogue adds (a decode step's M = 1 attention
// has one 64-column slice and one row: without this, one MXU of four works).
std::uint64_t k_parts(const MxuSpec& mxu, std::uint64_t group, std::uint64_t mc, std::uint64_t nc,
                      std::uint64_t k_slices) {
  const std::uint64_t nsubs = ceil_div(nc, n_slice(mxu, nc));
  const std::uint64_t items = group * nsubs * row_parts(mxu, nsubs, mc);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(mxu.count / items, k_slices));
}

double tile_mxu_cycles(const ChipSpec& chip, DType dtype, std::uint64_t group, std::uint64_t mc,
                       std::uint64_t nc, std::uint64_t kc, std::uint64_t kblocks,
                       std::uint64_t kparts) {
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
  // Rows stream at the operand type's rate, and no faster than the vector-memory port feeds
  // them; a tile shifts in one row a cycle unless a row is wider than the port.
  const std::uint64_t port = chip.core.vmem.port_width.value();
  const double kslice = double(std::min<std::uint64_t>(kc, k_slice(mxu, kc)));
  const auto stream = [&](double n, double row_elements) {
    return std::ceil(n * mxu_cycles_per_row(mxu, dtype, std::uint64_t(row_elements), port) - 1e-9);
  };
  const auto shift = [&](double n, double row_elements) {
    return double(
        mxu_shift_cycles(std::uint64_t(n), std::uint64_t(row_elements) * dtype_bytes(dtype), port));
  };
  double per_item = 0;
  switch (mxu.dataflow) {
    case Dataflow::kWeightStationary: {
      // The array shifts a tile through all R rows however few it fills.
      const double load = shift(R, ncols), rows_in = stream(rows, kslice);
      per_item = db ? std::max(rows_in, load) : load + rows_in + R + ncols - 2;
      break;
    }
    case Dataflow::kOutputStationary: {
      const double rf = std::min(rows, R);
      per_item = std::ceil(rows / R) * (stream(double(kc), rf) + R + ncols - 2 + (db ? 0 : R));
      break;
    }
    case Dataflow::kInputStationary: {
      const double columns = std::ceil(double(nc) / mxu_rate(mxu, dtype) - 1e-9);
      const double tile_in = shift(R, std::min(rows, C));
      per_item =
          std::ceil(rows / C) * (db ? std::max(columns, tile_in) : tile_in + columns + R + C - 2);
      break;
    }
  }
  // K slice g of an item goes to part g mod kparts, counted over the whole K (gemm.cpp), so the
  // busiest part takes a whole number of slices, and parts alternate across K blocks: a block of
  // one slice keeps one MXU busy while the next block's slice runs on another.
  return double(per_mxu) * double(ceil_div(kblocks * ksubs, kparts)) * per_item;
}

// A dimension of `total` cut into tiles of `tile`: the full tiles and the shorter last one.
struct Cut {
  std::uint64_t size, count;
};
std::vector<Cut> cuts(std::uint64_t total, std::uint64_t tile) {
  tile = std::min(tile, total);
  std::vector<Cut> c{{tile, total / tile}};
  if (total % tile) c.push_back({total % tile, 1});
  return c;
}

// DMA chunks the plan's loads and stores issue over the whole operator: every contiguous run
// is one at least, so a tile cut from a wide matrix issues a chunk per row however short. Each
// tile shape is asked of the problem's own transfers, on batch item 0.
std::uint64_t dma_chunks_of(const OpContext& ctx, const GemmProblem& p, std::uint64_t tm,
                            std::uint64_t tn, std::uint64_t tk) {
  const std::uint64_t chunk = std::max<std::uint64_t>(1, ctx.chip.core.dma.chunk.value());
  const std::uint64_t ei = dtype_bytes(p.in_dtype), eo = dtype_bytes(p.out_dtype);
  const std::uint64_t mb = ceil_div(p.m, tm), nb = ceil_div(p.n, tn);
  const Address tile{Space::kVmem, 0};
  const auto chunks = [&](const std::vector<Transfer>& transfers) {
    std::uint64_t n = 0;
    for (const Transfer& t : transfers)
      if (t.hbm_bytes() > 0) n += dma_chunks(t, chunk);
    return n;
  };
  std::uint64_t total = 0;
  if (p.band) {
    // Band rows are whole stored rows: about their bytes in chunks.
    total += nb * mb * ceil_div(band_bytes(*p.band, tm), chunk);
  } else if (p.a_run_elements > 0) {
    // An im2col gather's runs, counted without building it (a stem's gather has tens of
    // thousands of transfers a tile).
    const std::uint64_t run = std::min(p.a_run_elements, p.k);
    total += p.batch * nb * p.m * ceil_div(p.k, run) * ceil_div(run * ei, chunk);
  } else {
    for (const Cut& m : cuts(p.m, tm))
      for (const Cut& k : cuts(p.k, tk))
        total += p.batch * nb * m.count * k.count *
                 chunks(p.load_a(0, 0, m.size, 0, k.size, tile, tk * ei));
  }
  const std::uint64_t pitch_b = p.b_transposed ? tk * ei : tn * ei;
  for (const Cut& k : cuts(p.k, tk))
    for (const Cut& n : cuts(p.n, tn))
      total += p.batch * mb * k.count * n.count *
               chunks(p.load_b(0, 0, k.size, 0, n.size, tile, pitch_b));
  for (const Cut& m : cuts(p.m, tm))
    for (const Cut& n : cuts(p.n, tn))
      total +=
          p.batch * m.count * n.count * chunks(p.store_c(0, 0, m.size, 0, n.size, tile, tn * eo));
  return total;
}

}  // namespace

DType epilogue_dtype(const OpContext& ctx, DType in_dtype) {
  const bool gelu =
      std::count(ctx.epilogue.begin(), ctx.epilogue.end(), workloads::OpKind::kGelu) > 0;
  return gelu ? DType::kFp32 : accumulator_dtype(in_dtype);
}

std::vector<ReadOutOp> read_out_ops(const OpContext& ctx, const GemmProblem& p,
                                    std::uint64_t kparts) {
  using Role = ReadOutOp::Role;
  using workloads::OpKind;
  const DType acc = accumulator_dtype(p.in_dtype), epi = epilogue_dtype(ctx, p.in_dtype);
  std::vector<ReadOutOp> ops;
  for (std::uint64_t part = 1; part < kparts; ++part)
    ops.push_back({Role::kPartialSum, VectorOp::kAdd, acc, acc});
  if (epi != acc) ops.push_back({Role::kWiden, VectorOp::kCast, epi, acc});
  if (ctx.epilogue_bias) ops.push_back({Role::kBias, VectorOp::kAdd, epi, epi});
  for (OpKind k : ctx.epilogue) {
    if (k == OpKind::kRelu || k == OpKind::kRelu6)
      ops.push_back({Role::kActivation, VectorOp::kRelu, epi, epi});
    if (k == OpKind::kRelu6) ops.push_back({Role::kCapAtSix, VectorOp::kMin, epi, epi});
    if (k == OpKind::kGelu) ops.push_back({Role::kActivation, VectorOp::kGelu, epi, epi});
  }
  // requantize narrows to int8/int16; an int32 result that went through fp32 (gelu) comes back
  // by a cast, which rounds and saturates the same way.
  VectorOp result = VectorOp::kRequantize;
  if (p.out_dtype == epi)
    result = VectorOp::kMove;
  else if (!dtype_is_integer(p.out_dtype) || p.out_dtype == DType::kInt32)
    result = VectorOp::kCast;
  ops.push_back({Role::kResult, result, p.out_dtype, epi});
  return ops;
}

double read_out_cycles_per_element(const OpContext& ctx, const GemmProblem& p,
                                   std::uint64_t kparts) {
  const auto& vpu = ctx.chip.core.vpu;
  double cycles = 0;
  for (const ReadOutOp& r : read_out_ops(ctx, p, kparts))
    cycles += 1.0 / (double(vpu.lanes) * vpu.sublanes * vpu.ops[std::size_t(r.op)].throughput);
  return cycles;
}

namespace {

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
  // Each tile priced at its own shape by `tile_cycles(mc, nc)`: the last tile of a dimension
  // that the tile does not divide is smaller (one column of 257 streams the same rows as 128
  // columns, but leaves MXUs free to split them). Tiles go round-robin over the cores: the
  // busiest core is taken to get the costliest tiles_per_core of them.
  const auto busiest_core = [&](const auto& tile_cycles) {
    std::vector<std::pair<double, std::uint64_t>> kinds;  // (MXU cycles of a tile, how many)
    for (const Cut& m : cuts(p.m, tm))
      for (const Cut& n : cuts(p.n, tn))
        kinds.emplace_back(tile_cycles(m.size, n.size),
                           m.count * n.count * ceil_div(p.batch, group));
    std::sort(kinds.begin(), kinds.end(), [](const auto& x, const auto& y) { return x > y; });
    double cycles = 0;
    std::uint64_t left = tiles_per_core;
    for (const auto& [cost, count] : kinds) {
      const std::uint64_t n = std::min(left, count);
      cycles += double(n) * cost;
      left -= n;
    }
    return cycles;
  };
  // K blocks are all priced whole: a ragged last one still costs a step's fixed part, and
  // pricing it by its size drew the choice to uneven blocks that ran slower.
  if (!p.band)
    t.compute_cycles = busiest_core([&](std::uint64_t mc, std::uint64_t nc) {
      return tile_mxu_cycles(ctx.chip, p.in_dtype, group, mc, nc, std::min(tk, p.k), kb, t.kparts);
    });
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
    const std::uint64_t piece_k = std::min<std::uint64_t>(band_run(b), mxu.rows);
    const auto tile_cycles = [&](std::uint64_t mc, std::uint64_t nc) {
      const std::uint64_t out_rows = mc / b.ow, nsubs = ceil_div(nc, mxu.cols);
      const std::uint64_t mparts = row_parts(mxu, nsubs, out_rows, 1);
      const double streamed = std::ceil(
          double(ceil_div(out_rows, mparts) * b.ow) *
              mxu_cycles_per_row(mxu, p.in_dtype, piece_k, ctx.chip.core.vmem.port_width.value()) -
          1e-9);
      const double per_item =
          mxu.weight_double_buffer
              ? std::max(streamed, double(piece_k))
              : 2.0 * mxu.rows + streamed + double(std::min<std::uint64_t>(nc, mxu.cols)) - 2;
      return double(band_pieces(b, mxu) * ceil_div(nsubs * mparts, mxu.count)) * per_item;
    };
    t.compute_cycles = busiest_core(tile_cycles);
  }
  t.memory_cycles =
      std::max(double(t.hbm_bytes) / ctx.hbm_bytes_per_cycle(),
               dma_chunk_cycles(ctx.chip, ctx.engines(), dma_chunks_of(ctx, p, tm, tn, tk)));
  // Each step pays a fixed cost for its hand-off instructions through the sequencer (about 32
  // cycles). When loads set the pace, each step also exposes the memory's access latency: a
  // buffer's next load is issued only once the step that used it has drained, and the latency is
  // shared by the steps whose loads are in flight meanwhile (in_buffers - 1). Nothing overlaps the
  // first step's loads (pipeline fill) or the last tile's read-out and store (drain), so smaller
  // k-blocks shorten the fill at no cost in traffic.
  const double steps = double(tiles_per_core * kb);
  const double latency = ctx.chip.memory.model == MemoryModel::kIdeal
                             ? 0.0
                             : double(ctx.chip.memory.latency.cycles(ctx.chip.clock).value());
  const double loads_paced = t.memory_cycles + steps * latency / double(in_buffers - 1);
  const double fill = double(group * (a_bytes + tk * tn * ei)) / ctx.hbm_bytes_per_cycle();
  const double drain =
      double(group * tm * tn * eo) / ctx.hbm_bytes_per_cycle() +
      double(group * tm * tn) / (double(ctx.chip.core.vpu.lanes) * ctx.chip.core.vpu.sublanes);
  t.estimate = std::max(t.compute_cycles, loads_paced) + steps * 32 + fill + drain;
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

// The best tiles with `in_buffers` input buffers, if any fit.
std::optional<Tiles> search_tiles(const OpContext& ctx, const GemmProblem& p,
                                  std::uint64_t in_buffers) {
  const auto& core = ctx.chip.core;
  std::vector<Tiles> fitting;
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
          if (t.vmem <= core.vmem.capacity.value() && t.accmem <= core.accmem.capacity.value())
            fitting.push_back(t);
        }
  if (fitting.empty()) return std::nullopt;
  // Within 1% of the least estimate, fewer steps (fewer instructions, less risk), then the
  // lower estimate; measured from the least, so no chain of 1% steps drifts away from it.
  double least = fitting.front().estimate;
  for (const Tiles& t : fitting) least = std::min(least, t.estimate);
  const auto steps = [&](const Tiles& x) {
    return ceil_div(p.batch, x.group) * ceil_div(p.m, x.m) * ceil_div(p.n, x.n) *
           ceil_div(p.k, x.k);
  };
  const Tiles* best = nullptr;
  for (const Tiles& t : fitting)
    if (t.estimate <= least * 1.01 && (!best || steps(t) < steps(*best) ||
                                       (steps(t) == steps(*best) && t.estimate < best->estimate)))
      best = &t;
  return *best;
}

}  // namespace

std::optional<Tiles> choose_tiles(const OpContext& ctx, const GemmProblem& p) {
  // A third input buffer when the semaphores allow and some tile fits with it; else two.
  for (std::uint64_t in_buffers = input_buffers(ctx); in_buffers >= 2; --in_buffers)
    if (std::optional<Tiles> t = search_tiles(ctx, p, in_buffers)) return t;
  return std::nullopt;
}

}  // namespace tpusim::isa::lower_detail
