// The cycle-level MXU against the fast model (every timing field of every instruction) and
// against a plain reference product (every value), for random shapes, ragged edges included,
// in every dataflow, with and without double buffering. Per-row ready cycles are checked
// against formulas written here from models/mxu/README.md, not against either model.

#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "models/mxu/array_latches.h"
#include "models/mxu/mxu_cycle.h"
#include "models/mxu/mxu_timing.h"
#include "tests/models/mxu_reference.h"

using namespace tpusim;
using namespace tpusim::models;
using tpusim::test::make_lw;
using tpusim::test::make_mm;

namespace {

const Hertz kClock(1e9);

MxuSpec array(std::uint32_t rows, std::uint32_t cols, Dataflow dataflow, bool double_buffer,
              std::uint64_t wb) {
  MxuSpec s;
  s.rows = rows;
  s.cols = cols;
  s.dataflow = dataflow;
  s.weight_double_buffer = double_buffer;
  s.precisions = {{DType::kInt8, 1.0}};
  s.writeback_latency = Duration::of_cycles(wb);
  return s;
}

// When each output row of one matmul is in accumulator memory (README sections 1-3): the cycle
// its last element leaves the array, plus wb.
std::vector<std::uint64_t> expected_row_ready(const MxuSpec& s, const isa::MxuMatmul& mm,
                                              std::uint64_t start, std::uint64_t shift_free,
                                              std::uint64_t wb) {
  const std::uint64_t R = s.rows, C = s.cols, M = mm.m, K = mm.k, N = mm.n;
  std::vector<std::uint64_t> ready(M);
  switch (s.dataflow) {
    case Dataflow::kWeightStationary:
      // y[i][c] leaves the bottom at start + i + R + c; the row is complete at c = N - 1.
      for (std::uint64_t i = 0; i < M; ++i) ready[i] = start + i + R + N - 1 + wb;
      break;
    case Dataflow::kInputStationary: {
      // Fold f streams weight column j at begin_f + j; Y[fC + c][j] leaves at begin_f + j + R + c.
      std::uint64_t fold_start = start, begin = 0, prev_begin = 0, prev_end = 0;
      for (std::uint64_t f = 0; f * C < M; ++f) {
        const std::uint64_t mf = std::min(C, M - f * C);
        if (f == 0 || !s.weight_double_buffer)
          begin = fold_start + R;
        else
          begin = std::max(prev_end, prev_begin + R);  // tile shifted in behind fold f - 1
        for (std::uint64_t c = 0; c < mf; ++c) ready[f * C + c] = begin + N - 1 + R + c + wb;
        prev_begin = begin;
        prev_end = begin + N;
        fold_start = prev_end + R + mf - 2;  // single plane: after the drain
      }
      break;
    }
    case Dataflow::kOutputStationary: {
      // Row q of fold f leaves in the q-th cycle of the shift-out: shift_start + q + 1.
      std::uint64_t fold_start = start;
      for (std::uint64_t f = 0; f * R < M; ++f) {
        const std::uint64_t rf = std::min(R, M - f * R);
        const std::uint64_t shift_start = std::max(fold_start + K + rf + N - 2, shift_free);
        for (std::uint64_t q = 0; q < rf; ++q) ready[f * R + q] = shift_start + q + 1 + wb;
        shift_free = shift_start + rf;
        fold_start = s.weight_double_buffer ? shift_start : shift_free;
      }
      break;
    }
  }
  return ready;
}

const Dataflow kDataflows[] = {Dataflow::kWeightStationary, Dataflow::kInputStationary,
                               Dataflow::kOutputStationary};

}  // namespace

TEST_CASE("mxu cycle: one tile matches the fast model, the row formulas and the reference",
          "[timing][mxu][cycle]") {
  std::mt19937 rng(7);
  for (Dataflow df : kDataflows)
    for (bool db : {true, false})
      for (int trial = 0; trial < 40; ++trial) {
        const std::uint32_t R = 1 + rng() % 6, C = 1 + rng() % 6;
        const std::uint32_t K = 1 + rng() % R, N = 1 + rng() % C, M = 1 + rng() % (3 * C + 2);
        const std::uint64_t wb = rng() % 3;
        CAPTURE(dataflow_name(df), db, R, C, M, K, N, wb);
        const MxuSpec spec = array(R, C, df, db, wb);
        MxuTiming fast(spec, kClock, 0);
        CycleMxu cycle(spec, kClock);
        const auto w = test::random_int8(rng, std::size_t{K} * N);
        const auto x = test::random_int8(rng, std::size_t{M} * K);
        const MxuLoadTiming fl = fast.load_weights(make_lw(K, N), 0);
        const MxuLoadTiming cl = cycle.load_weights(make_lw(K, N), 0, w);
        CHECK(cl.start == fl.start);
        CHECK(cl.end == fl.end);
        const MxuMatmulTiming fm = fast.matmul(make_mm(M, K, N), 0);
        const CycleMatmulResult cm = cycle.matmul(make_mm(M, K, N), 0, x);
        CHECK(cm.timing.start == fm.start);
        CHECK(cm.timing.input_end == fm.input_end);
        CHECK(cm.timing.stream_cycles == fm.stream_cycles);
        CHECK(cm.timing.end == fm.end);
        CHECK(cm.y == test::reference_matmul(x, w, M, K, N));
        CHECK(cm.row_ready == expected_row_ready(spec, make_mm(M, K, N), fm.start, 0, wb));
      }
}

TEST_CASE("mxu cycle: instruction sequences keep matching the fast model", "[timing][mxu][cycle]") {
  // Loads and matmuls arriving at random times exercise double buffering, the shadow plane,
  // back-to-back streams and the shared os shift path across instructions.
  std::mt19937 rng(11);
  for (Dataflow df : kDataflows)
    for (bool db : {true, false})
      for (int trial = 0; trial < 25; ++trial) {
        const std::uint32_t R = 1 + rng() % 5, C = 1 + rng() % 5;
        const std::uint64_t wb = rng() % 2;
        const MxuSpec spec = array(R, C, df, db, wb);
        MxuTiming fast(spec, kClock, 0);
        CycleMxu cycle(spec, kClock);
        std::uint64_t now = 0;
        std::vector<std::int32_t> w;
        std::uint32_t K = 1, N = 1;
        bool loaded = false;
        for (int step = 0; step < 8; ++step) {
          now += rng() % 4;
          CAPTURE(dataflow_name(df), db, R, C, wb, trial, step, now);
          if (!loaded || rng() % 3 == 0) {
            K = 1 + rng() % R;
            N = 1 + rng() % C;
            w = test::random_int8(rng, std::size_t{K} * N);
            const MxuLoadTiming fl = fast.load_weights(make_lw(K, N), now);
            const MxuLoadTiming cl = cycle.load_weights(make_lw(K, N), now, w);
            REQUIRE(cl.start == fl.start);
            REQUIRE(cl.end == fl.end);
            loaded = true;
          }
          const std::uint32_t M = 1 + rng() % (2 * std::max(R, C) + 1);
          const auto x = test::random_int8(rng, std::size_t{M} * K);
          const MxuMatmulTiming fm = fast.matmul(make_mm(M, K, N), now);
          const CycleMatmulResult cm = cycle.matmul(make_mm(M, K, N), now, x);
          CAPTURE(M, K, N);
          REQUIRE(cm.timing.start == fm.start);
          REQUIRE(cm.timing.input_end == fm.input_end);
          REQUIRE(cm.timing.stream_cycles == fm.stream_cycles);
          REQUIRE(cm.timing.end == fm.end);
          REQUIRE(cm.y == test::reference_matmul(x, w, M, K, N));
        }
      }
}

TEST_CASE("mxu cycle: the array latches each operand as often as array_latches counts",
          "[timing][mxu][cycle][energy]") {
  // With every operand nonzero, a nonzero latch in the cycle-level array is a latch of data:
  // empty lanes, unused columns and drained registers carry zeros. The energy model charges
  // array_latches' counts, so the two must agree in every dataflow, on tiles with K < R and
  // N < C and on partial folds. The formula takes unused lanes to be gated; the os capture does
  // not gate them (it copies every PE, even those the fold's wavefront has not reached), so an
  // os run keeps one N, and a partial fold comes only as a first matmul of fewer than R rows,
  // on a clean array, with nothing after it.
  std::mt19937 rng(23);
  for (Dataflow df : kDataflows)
    for (bool db : {true, false})
      for (int trial = 0; trial < 30; ++trial) {
        const std::uint32_t R = 1 + rng() % 6, C = 1 + rng() % 6;
        const MxuSpec spec = array(R, C, df, db, rng() % 2);
        const bool os = df == Dataflow::kOutputStationary;
        CycleMxu cycle(spec, kClock);
        ArrayLatches expected;
        const auto add = [&](const ArrayLatches& h) {
          expected.inputs += h.inputs;
          expected.weights += h.weights;
          expected.sums += h.sums;
        };
        std::uint64_t now = 0;
        const std::uint32_t os_n = 1 + rng() % C;
        bool partial_os_fold = false;
        for (int tile = 0; tile < 2 && !partial_os_fold; ++tile) {
          const std::uint32_t K = 1 + rng() % R;
          const std::uint32_t N = os ? os_n : 1 + rng() % C;
          const isa::MxuLoadWeights lw = make_lw(K, N);
          cycle.load_weights(lw, now, std::vector<std::int32_t>(std::size_t{K} * N, 1));
          add(load_latches(spec, lw));
          for (int item = 0; item < 2 && !partial_os_fold; ++item) {
            const bool first = tile == 0 && item == 0;
            const std::uint32_t M = !os     ? 1 + rng() % (3 * C + 2)
                                    : first ? 1 + rng() % R
                                            : R * (1 + rng() % 3);
            const isa::MxuMatmul mm = make_mm(M, K, N);
            CAPTURE(dataflow_name(df), db, R, C, tile, item, M, K, N);
            REQUIRE(cycle.matmul(mm, now, std::vector<std::int32_t>(std::size_t{M} * K, 1)).y ==
                    std::vector<std::int32_t>(std::size_t{M} * N, static_cast<std::int32_t>(K)));
            add(matmul_latches(spec, mm));
            now += rng() % 6;
            partial_os_fold = os && M < R;
          }
        }
        // finish() stops once the last result has left, which can be before the last inputs
        // have crossed the columns beyond N. A tile of zeros and a matmul of zeros, long enough
        // for them to cross, keep the array going without latching anything nonzero.
        const std::uint32_t flush_n = os ? os_n : C;
        const std::uint32_t flush_m = (os ? R : C) * (R + C + 2);
        cycle.load_weights(make_lw(R, flush_n), now, std::vector<std::int32_t>(R * flush_n, 0));
        cycle.matmul(make_mm(flush_m, R, flush_n), now,
                     std::vector<std::int32_t>(std::size_t{flush_m} * R, 0));
        cycle.finish();
        CAPTURE(dataflow_name(df), db, R, C);
        const SystolicArray::Latches& seen = cycle.latches();
        // The stationary kind moves is's streamed weights where ws moves inputs, and is's input
        // tile down the chain that loads ws's weights.
        const bool is = df == Dataflow::kInputStationary;
        CHECK(seen.a == (is ? expected.weights : expected.inputs));
        CHECK(seen.w == (is ? expected.inputs : expected.weights));
        CHECK(seen.sums == expected.sums);
      }
}
