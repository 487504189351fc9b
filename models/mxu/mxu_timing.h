#pragma once
// Pure cost model of one systolic array (no SystemC): given when an instruction reaches the MXU,
// when does it start, how long does it occupy the array, and when are its results in memory.
// Times are core-clock cycles. models/mxu/README.md derives every formula with a diagram; in
// short, for an R x C array streaming S cycles of input (S = M rows at one row per cycle, slower
// when the operand rate or the vector-memory port limits it):
//
//   Times are end-of-cycle: work done during cycle index t is complete at time t + 1. Every
//   shift from vector memory (weight tiles, input tiles) moves one row per cycle unless the
//   port is narrower than a row.
//   ws  PE(r,c) holds W[r][c]. Input row i meets PE(r,c) at cycle i + r + c, so the last row's
//       partial sum for column N-1 is complete at S + R + N - 2. Weight load: R rows (the tile
//       shifts through every row). Matmul: array input port busy S cycles.
//   is  PE(r,c) holds A^T (K on rows, up to C inputs on columns per fold); the N staged weight
//       columns stream in as ws streams input rows, ceil(N / rate) cycles. Input-tile load: R
//       rows; a fold of mf inputs is complete at stream end + R + mf - 2. Folds over M in
//       steps of C.
//   os  PE(r,c) accumulates C[r][c]; A rows enter from the left, W columns from the top, skewed.
//       PE(r,c) does its last MAC in cycle K + r + c - 1 (complete at K + r + c); a fold of
//       rf <= R rows and N columns computes for K + rf + N - 2 cycles, then shifts its rf
//       result rows out (rf cycles, one shared shift path). Folds over M in steps of R.
//   With `skew: array` every fold pays the whole array's skew: R and C in place of the rows and
//   columns the fold uses (and os shifts out all R rows), as SCALE-Sim counts.
//
// Double buffering: in ws and is a tile loads into a shadow buffer while the array computes on
// the active one, and a matmul switches buffers as its first row enters, so the load costs
// nothing when it finished in time; in os the result registers are doubled, so a fold computes
// while the previous one shifts out, and weights stage into a shadow buffer. Without it, a ws
// weight load waits for the array to drain completely (results written); is/os staging waits
// for the previous matmul's input to end.

#include <cstdint>

#include "isa/program.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

struct MxuLoadTiming {
  std::uint64_t start = 0;  // the weight path starts shifting
  std::uint64_t end = 0;    // the tile is in place (shadow or active)
};

struct MxuMatmulTiming {
  std::uint64_t start = 0;          // first input row enters
  std::uint64_t input_end = 0;      // the array accepts the next instruction's rows from here
  std::uint64_t end = 0;            // last result written to accumulator memory
  std::uint64_t array_end = 0;      // last result out of the array (end minus the write-back)
  std::uint64_t stream_cycles = 0;  // cycles the array's input port was busy
  std::uint64_t macs = 0;           // useful multiply-accumulates (M x K x N)
};

class MxuTiming {
 public:
  // `vmem_port_bytes_per_cycle` bounds how fast input rows can be read; 0 means unbounded.
  // `clock` resolves latencies the config wrote in time units.
  MxuTiming(const MxuSpec& spec, Hertz clock, std::uint64_t vmem_port_bytes_per_cycle);

  MxuLoadTiming load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now);
  MxuMatmulTiming matmul(const isa::MxuMatmul& mm, std::uint64_t now);

  // When every result of every instruction so far is in accumulator memory.
  std::uint64_t drained_at() const { return drained_at_; }
  // When the array can take the next instruction's input rows.
  std::uint64_t input_free_at() const { return input_free_at_; }
  // The earliest start of the next weight load, and of the next matmul (`keep`: on the active
  // tile), as far as the array's own state allows.
  std::uint64_t load_ready_at() const;
  std::uint64_t matmul_ready_at(bool keep) const;
  // Cycles per streamed input row for operands of `dtype` with `elements` per row.
  double cycles_per_row(DType dtype, std::uint32_t elements) const;
  // MACs per PE per cycle for operands of `dtype`.
  double rate(DType dtype) const;

 private:
  std::uint64_t stream_cycles(DType dtype, std::uint32_t rows, std::uint32_t k) const;
  // Cycles to shift `rows` rows of `row_elements` from vector memory into the array or a buffer.
  std::uint64_t shift_cycles(std::uint32_t rows, std::uint32_t row_elements, DType dtype) const;
  // The rows / columns a fold's wavefront crosses: those it uses, or the whole array.
  std::uint64_t skew_rows(std::uint64_t used) const;
  std::uint64_t skew_cols(std::uint64_t used) const;

  MxuSpec spec_;
  std::uint64_t writeback_cycles_;
  std::uint64_t port_bytes_;
  std::uint64_t input_free_at_ = 0;      // the array can take new input rows
  std::uint64_t drained_at_ = 0;         // all results written
  std::uint64_t load_path_free_at_ = 0;  // the weight shift (ws) / weight staging (is, os) path
  std::uint64_t shadow_ready_at_ = 0;    // the staged tile is in place
  bool shadow_pending_ = false;          // a staged tile awaits the next matmul
  std::uint64_t shadow_free_at_ = 0;     // the shadow buffer may be overwritten
  std::uint64_t active_ready_at_ = 0;    // the active tile is in place (no double buffering)
  std::uint64_t shift_free_at_ = 0;      // os: the result shift path is free
};

}  // namespace tpusim::models
