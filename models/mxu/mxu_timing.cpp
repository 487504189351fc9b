#include "models/mxu/mxu_timing.h"

#include <algorithm>
#include <cmath>

namespace tpusim::models {

MxuTiming::MxuTiming(const MxuSpec& spec, Hertz clock, std::uint64_t vmem_port_bytes_per_cycle)
    : spec_(spec),
      writeback_cycles_(spec.writeback_latency.cycles(clock).value()),
      port_bytes_(vmem_port_bytes_per_cycle) {}

double MxuTiming::rate(DType dtype) const { return mxu_rate(spec_, dtype); }

double MxuTiming::cycles_per_row(DType dtype, std::uint32_t elements) const {
  return mxu_cycles_per_row(spec_, dtype, elements, port_bytes_);
}

std::uint64_t MxuTiming::stream_cycles(DType dtype, std::uint32_t rows, std::uint32_t k) const {
  return static_cast<std::uint64_t>(std::ceil(rows * cycles_per_row(dtype, k) - 1e-9));
}

std::uint64_t MxuTiming::shift_cycles(std::uint32_t rows, std::uint32_t row_elements,
                                      DType dtype) const {
  return mxu_shift_cycles(rows, std::uint64_t{row_elements} * dtype_bytes(dtype), port_bytes_);
}

std::uint64_t MxuTiming::skew_rows(std::uint64_t used) const {
  return spec_.skew == MxuSkew::kArray ? spec_.rows : used;
}

std::uint64_t MxuTiming::skew_cols(std::uint64_t used) const {
  return spec_.skew == MxuSkew::kArray ? spec_.cols : used;
}

std::uint64_t MxuTiming::load_ready_at() const {
  if (spec_.weight_double_buffer) return std::max(load_path_free_at_, shadow_free_at_);
  // One weight buffer: in ws it is the array itself, which must drain first.
  const std::uint64_t busy_until =
      spec_.dataflow == Dataflow::kWeightStationary ? drained_at_ : input_free_at_;
  return std::max(load_path_free_at_, busy_until);
}

std::uint64_t MxuTiming::matmul_ready_at(bool keep) const {
  const std::uint64_t weights_ready =
      shadow_pending_ && !keep ? shadow_ready_at_ : active_ready_at_;
  return std::max(input_free_at_, weights_ready);
}

MxuLoadTiming MxuTiming::load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now) {
  // ws shifts the tile through all R rows of the array. os and is only stage it in the buffer
  // that feeds the array's top edge: one row of N weights per cycle, K rows.
  const std::uint32_t rows = spec_.dataflow == Dataflow::kWeightStationary ? spec_.rows : lw.k;
  const std::uint64_t cycles = shift_cycles(rows, lw.n, lw.dtype);
  MxuLoadTiming t;
  t.start = std::max(now, load_ready_at());
  if (spec_.weight_double_buffer) {
    t.end = t.start + cycles;
    shadow_ready_at_ = t.end;
    shadow_pending_ = true;
    // Until a matmul switches to this tile, the next load would overwrite it.
    shadow_free_at_ = ~std::uint64_t{0};
  } else {
    t.end = t.start + cycles;
    active_ready_at_ = t.end;
  }
  load_path_free_at_ = t.end;
  return t;
}

MxuMatmulTiming MxuTiming::matmul(const isa::MxuMatmul& mm, std::uint64_t now) {
  MxuMatmulTiming t;
  t.macs = std::uint64_t{mm.m} * mm.k * mm.n;
  const std::uint64_t wb = writeback_cycles_;
  const std::uint64_t R = spec_.rows;

  t.start = std::max(now, matmul_ready_at(mm.keep));
  // The weights this matmul uses: switch to a staged tile, or use the active one.
  if (shadow_pending_ && !mm.keep) shadow_pending_ = false;

  switch (spec_.dataflow) {
    case Dataflow::kWeightStationary: {
      // The last row enters at start + S - 1 and meets PE(R-1, N-1) R + N - 2 cycles later.
      t.stream_cycles = stream_cycles(mm.dtype, mm.m, mm.k);
      t.input_end = t.start + t.stream_cycles;
      t.end = t.input_end + R + skew_cols(mm.n) - 2 + wb;
      break;
    }
    case Dataflow::kInputStationary: {
      // Per fold of up to C inputs: shift the K x mf input tile in (R rows; into the shadow
      // plane when double-buffered, overlapping the previous fold), then stream the N staged
      // weight columns past it; the last column meets PE(R-1, mf-1) R + mf - 2 cycles later.
      const std::uint32_t C = spec_.cols;
      const std::uint32_t folds = (mm.m + C - 1) / C;
      const double rate = this->rate(mm.dtype);
      const auto stream = static_cast<std::uint64_t>(std::ceil(mm.n / rate - 1e-9));
      std::uint64_t tile_ready = t.start;  // double buffering: when the next fold's tile is in
      std::uint64_t fold_start = t.start;
      for (std::uint32_t f = 0; f < folds; ++f) {
        const std::uint32_t mf = std::min(C, mm.m - f * C);
        const std::uint64_t tile_in = shift_cycles(spec_.rows, mf, mm.dtype);
        std::uint64_t stream_begin;
        if (spec_.weight_double_buffer && f > 0) {
          stream_begin = std::max(fold_start, tile_ready);
        } else {
          stream_begin = fold_start + tile_in;
        }
        const std::uint64_t stream_end = stream_begin + stream;
        const std::uint64_t drain = R + skew_cols(mf) - 2;
        t.end = std::max(t.end, stream_end + drain + wb);
        t.stream_cycles += stream_end - fold_start;
        if (spec_.weight_double_buffer) {
          // The next tile shifts into the shadow plane once this one is active.
          if (f + 1 < folds) {
            const std::uint32_t next_mf = std::min(C, mm.m - (f + 1) * C);
            tile_ready = stream_begin + shift_cycles(spec_.rows, next_mf, mm.dtype);
          }
          fold_start = stream_end;
        } else {
          fold_start = stream_end + drain;  // the single plane is free once drained
        }
      }
      t.input_end = fold_start;
      break;
    }
    case Dataflow::kOutputStationary: {
      // Per fold of up to R output rows: the wavefront needs K steps plus the rf + N - 2 skew;
      // each step reads a column of rf inputs. The rf result rows then shift out (rf cycles)
      // through one shift path; double-buffered result registers let the next fold compute
      // meanwhile.
      const std::uint32_t folds = (mm.m + spec_.rows - 1) / spec_.rows;
      // The shift path is shared with the previous matmul's last fold, which may still be
      // shifting out when this matmul starts (double-buffered result registers).
      std::uint64_t fold_start = t.start;
      std::uint64_t shift_free = std::max(t.start, shift_free_at_);
      for (std::uint32_t f = 0; f < folds; ++f) {
        const std::uint32_t rf = std::min<std::uint32_t>(spec_.rows, mm.m - f * spec_.rows);
        const auto steps =
            static_cast<std::uint64_t>(std::ceil(mm.k * cycles_per_row(mm.dtype, rf) - 1e-9));
        const std::uint64_t skew = skew_rows(rf) + skew_cols(mm.n) - 2;
        const std::uint64_t compute_end = fold_start + steps + skew;
        const std::uint64_t shift_start = std::max(compute_end, shift_free);
        const std::uint64_t shift_end = shift_start + skew_rows(rf);
        shift_free = shift_end;
        t.end = std::max(t.end, shift_end + wb);
        t.stream_cycles += steps + skew;
        fold_start = spec_.weight_double_buffer ? std::max(compute_end, shift_start) : shift_end;
      }
      t.input_end = fold_start;
      shift_free_at_ = shift_free;
      break;
    }
  }
  t.array_end = t.end - wb;
  input_free_at_ = t.input_end;
  drained_at_ = std::max(drained_at_, t.end);
  // The tile this matmul switched to is active now; the shadow may take the next one once the
  // first row is in (the wavefront has latched the new weights). A `keep` matmul leaves a staged
  // tile where it is.
  if (!shadow_pending_) shadow_free_at_ = t.start;
  return t;
}

}  // namespace tpusim::models
