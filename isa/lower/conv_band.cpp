// The MXU schedule of a band convolution's step (README "GEMM", input band).

#include <algorithm>

#include "isa/lower/gemm_plan.h"

namespace tpusim::isa::lower_detail {

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
  const std::uint64_t mparts = row_parts(mxu, nsubs, rows.size(), 1);
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

}  // namespace tpusim::isa::lower_detail
