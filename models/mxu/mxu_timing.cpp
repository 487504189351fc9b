#include "models/mxu/mxu_timing.h"

#include <algorithm>
#include <cmath>

namespace tpusim::models {

MxuTiming::MxuTiming(const MxuSpec& spec, Hertz clock, std::uint64_t vmem_port_bytes_per_cycle)
    : spec_(spec),
      writeback_cycles_(spec.writeback_latency.cycles(clock).value()),
      port_bytes_(vmem_port_bytes_per_cycle) {}

double MxuTiming::cycles_per_row(DType dtype, std::uint32_t k) const {
  const auto it = spec_.precisions.find(dtype);
  const double rate = it == spec_.precisions.end() ? 1.0 : it->second;
  // A rate below 1 (TPUv1's 16-bit operands) repeats each row's pass; above 1 (v5e int8) packs
  // several rows into one pass.
  double cycles = 1.0 / rate;
  if (port_bytes_ > 0) {
    const double row_bytes = double(k) * dtype_bytes(dtype);
    cycles = std::max(cycles, std::ceil(row_bytes / double(port_bytes_)));
  }
  return cycles;
}

std::uint64_t MxuTiming::stream_cycles(DType dtype, std::uint32_t rows, std::uint32_t k) const {
  return static_cast<std::uint64_t>(std::ceil(rows * cycles_per_row(dtype, k) - 1e-9));
}

MxuLoadTiming MxuTiming::load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now) {
  // ws shifts the tile through all R rows of the array. os and is only stage it in the buffer
  // that feeds the array's top edge: one row of N weights per cycle, K rows.
  const std::uint64_t cycles =
      spec_.dataflow == Dataflow::kWeightStationary ? spec_.rows : std::uint64_t{lw.k};
  MxuLoadTiming t;
  if (spec_.weight_double_buffer) {
    t.start = std::max({now, load_path_free_at_, shadow_free_at_});
    t.end = t.start + cycles;
    shadow_ready_at_ = t.end;
    shadow_pending_ = true;
    // Until a matmul switches to this tile, the next load would overwrite it.
    shadow_free_at_ = ~std::uint64_t{0};
  } else {
    // One weight buffer: in ws it is the array itself, which must drain first.
    const std::uint64_t busy_until =
        spec_.dataflow == Dataflow::kWeightStationary ? drained_at_ : input_free_at_;
    t.start = std::max({now, load_path_free_at_, busy_until});
    t.end = t.start + cycles;
    active_ready_at_ = t.end;
  }
  load_path_free_at_ = t.end;
  return t;
}

MxuMatmulTiming MxuTiming::matmul(const isa::MxuMatmul& mm, std::uint64_t now) {
  MxuMatmulTiming t;
  t.macs = std::uint64_t{mm.m} * mm.k * mm.n;
  const std::uint64_t writeback = writeback_cycles_;
  const std::uint64_t R = spec_.rows;

  // The weights this matmul uses: switch to a staged tile, or use the active one.
  std::uint64_t weights_ready = active_ready_at_;
  if (shadow_pending_) {
    weights_ready = shadow_ready_at_;
    shadow_pending_ = false;
  }
  std::uint64_t start = std::max({now, input_free_at_, weights_ready});

  switch (spec_.dataflow) {
    case Dataflow::kWeightStationary: {
      t.stream_cycles = stream_cycles(mm.dtype, mm.m, mm.k);
      t.start = start;
      t.input_end = start + t.stream_cycles;
      t.end = t.input_end + R + mm.n - 1 + writeback;
      break;
    }
    case Dataflow::kInputStationary: {
      // Per fold of up to C inputs: shift the input tile in (R cycles, into the shadow plane when
      // double-buffered, so it overlaps the previous fold), then stream N weight columns.
      const std::uint32_t C = spec_.cols;
      const std::uint32_t folds = (mm.m + C - 1) / C;
      const std::uint64_t per_fold_stream = stream_cycles(mm.dtype, mm.n, mm.k);
      std::uint64_t fold_start = start;
      std::uint64_t end = start;
      for (std::uint32_t f = 0; f < folds; ++f) {
        const std::uint32_t mf = std::min(C, mm.m - f * C);
        const std::uint64_t tile_in = spec_.weight_double_buffer && f > 0 ? 0 : R;
        const std::uint64_t stream_begin = fold_start + tile_in;
        const std::uint64_t stream_end = stream_begin + per_fold_stream;
        end = std::max(end, stream_end + R + mf - 1 + writeback);
        // The next fold's tile shifts in while this one streams (double buffering) or after
        // this one has drained (single buffer).
        fold_start = spec_.weight_double_buffer ? std::max(stream_end, fold_start + R)
                                                : stream_end + R + mf - 1;
        t.stream_cycles += tile_in + per_fold_stream;
      }
      t.start = start;
      t.input_end = fold_start;
      t.end = end;
      break;
    }
    case Dataflow::kOutputStationary: {
      // Per fold of up to R output rows: K + rf + N - 2 cycles of wavefront, then rf cycles to
      // shift the results out; double-buffered result registers let that overlap the next fold.
      const std::uint32_t folds = (mm.m + spec_.rows - 1) / spec_.rows;
      const double per_k = cycles_per_row(mm.dtype, mm.k) > 1 ? cycles_per_row(mm.dtype, mm.k) : 1;
      std::uint64_t fold_start = start;
      std::uint64_t end = start;
      for (std::uint32_t f = 0; f < folds; ++f) {
        const std::uint32_t rf = std::min<std::uint32_t>(spec_.rows, mm.m - f * spec_.rows);
        const std::uint64_t compute =
            static_cast<std::uint64_t>(std::ceil(mm.k * per_k - 1e-9)) + rf + mm.n - 2;
        const std::uint64_t compute_end = fold_start + compute;
        end = compute_end + rf + writeback;
        fold_start = spec_.weight_double_buffer ? compute_end : compute_end + rf;
        t.stream_cycles += compute;
      }
      t.start = start;
      t.input_end = fold_start;
      t.end = end;
      break;
    }
  }
  input_free_at_ = t.input_end;
  drained_at_ = std::max(drained_at_, t.end);
  // The tile this matmul switched to is active now; the shadow may take the next one once the
  // first row is in (the wavefront has latched the new weights).
  shadow_free_at_ = t.start;
  return t;
}

}  // namespace tpusim::models
