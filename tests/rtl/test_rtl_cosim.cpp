// Co-simulation: the Verilog RTL (models/rtl/, verilated), the cycle-level model and the fast
// model run the same random instructions. For every cycle, every PE of the RTL multiplies the
// same operands and latches the same sum as the cycle-level array; the RTL's own outputs give
// every result value (checked against a plain reference) and the cycle each output row is
// ready (checked against the cycle-level model and the fast model's `end`).
//
// Cycle convention (see rtl_harness.h and models/mxu/README.md): a value latched by the clock
// edge that ends cycle t is "ready at t + 1"; a row is in accumulator memory wb cycles after its
// last element leaves the array.

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>

#include "Vos_4x4.h"
#include "Vos_5x3.h"
#include "Vstationary_3x5.h"
#include "Vstationary_4x4.h"
#include "models/mxu/array_vcd.h"
#include "models/mxu/mxu_cycle.h"
#include "models/mxu/mxu_timing.h"
#include "tests/models/mxu_reference.h"
#include "tests/rtl/rtl_harness.h"

using namespace tpusim;
using namespace tpusim::models;

namespace {

const Hertz kClock(1e9);

struct Recorder : ArrayObserver {
  std::vector<ArrayInputs> inputs;
  std::vector<std::vector<PeView>> views;
  void begin(Dataflow, std::uint32_t, std::uint32_t) override {}
  void cycle(std::uint64_t t, const ArrayInputs& in, const std::vector<PeView>& pes) override {
    REQUIRE(t == inputs.size());  // every cycle from 0, none skipped
    inputs.push_back(in);
    views.push_back(pes);
  }
};

bool same(const PeView& a, const PeView& b) {
  return a.a_valid == b.a_valid && (!a.a_valid || (a.a == b.a && a.w == b.w)) &&
         a.ps_valid == b.ps_valid && (!a.ps_valid || a.ps == b.ps);
}

// What the RTL's outputs alone say about one matmul that ran on a fresh array (`mm`; null when
// several instructions ran and only the cycle-by-cycle comparison applies).
struct RtlResult {
  std::vector<std::int32_t> y;
  std::vector<std::uint64_t> row_ready;
};

template <class V, bool kStationary>
RtlResult replay(const Recorder& rec, Dataflow df, std::uint32_t R, std::uint32_t C,
                 const isa::MxuMatmul* one, std::uint64_t wb, std::ostream* vcd) {
  test::RtlArray<V, kStationary> rtl(R, C);
  const isa::MxuMatmul mm = one ? *one : test::make_mm(1, 1, 1);
  RtlResult r{std::vector<std::int32_t>(std::size_t{mm.m} * mm.n, 0),
              std::vector<std::uint64_t>(mm.m, 0)};
  std::unique_ptr<ArrayVcd> dump;
  if (vcd) {
    dump = std::make_unique<ArrayVcd>(*vcd, 1000);
    dump->begin(df, R, C);
  }
  std::vector<PeView> view;
  std::vector<std::int32_t> out;
  std::vector<bool> valid;
  std::vector<std::uint32_t> seen(C, 0);  // results that have left each column (or rows, os)
  for (std::uint64_t t = 0; t < rec.inputs.size(); ++t) {
    rtl.cycle(rec.inputs[t], &view, &out, &valid);
    if (dump) dump->cycle(t, rec.inputs[t], view);
    for (std::size_t i = 0; i < view.size(); ++i) {
      CAPTURE(t, i / C, i % C);
      REQUIRE(same(view[i], rec.views[t][i]));
    }
    if (!one) continue;
    const std::uint64_t ready = t + 1 + wb;
    // The k-th result to leave column c (the k-th row, os) is known from the stimulus order.
    for (std::uint32_t c = 0; c < C; ++c) {
      if (!valid[c]) continue;
      const std::uint32_t k = seen[c]++;
      std::uint32_t row = 0, col = 0;
      if (df == Dataflow::kWeightStationary) {
        row = k, col = c;  // input row k, output column c
        if (col >= mm.n) continue;
      } else if (df == Dataflow::kInputStationary) {
        row = (k / mm.n) * C + c, col = k % mm.n;  // fold k / N, weight column k % N
        if (row >= mm.m) continue;
      } else {
        if (c > 0) continue;  // a whole row leaves at once
        row = k;
        for (std::uint32_t j = 0; j < mm.n; ++j) r.y[std::size_t{row} * mm.n + j] = out[j];
        r.row_ready[row] = ready;
        continue;
      }
      r.y[std::size_t{row} * mm.n + col] = out[c];
      r.row_ready[row] = std::max(r.row_ready[row], ready);
    }
  }
  return r;
}

template <class V, bool kStationary>
void cosim_single(Dataflow df, std::uint32_t R, std::uint32_t C, std::uint32_t seed) {
  std::mt19937 rng(seed);
  for (bool db : {true, false})
    for (int trial = 0; trial < 12; ++trial) {
      // Ragged shapes: K, N anywhere from 1 to the array's size; M up to about three folds.
      const std::uint32_t K = 1 + rng() % R, N = 1 + rng() % C,
                          M = 1 + rng() % (3 * std::max(R, C));
      const std::uint64_t wb = rng() % 3;
      CAPTURE(dataflow_name(df), db, R, C, M, K, N, wb);
      MxuSpec spec;
      spec.rows = R;
      spec.cols = C;
      spec.dataflow = df;
      spec.weight_double_buffer = db;
      spec.precisions = {{DType::kInt8, 1.0}};
      spec.writeback_latency = Duration::of_cycles(wb);
      const auto w = test::random_int8(rng, std::size_t{K} * N);
      const auto x = test::random_int8(rng, std::size_t{M} * K);
      const auto mm = test::make_mm(M, K, N);

      Recorder rec;
      CycleMxu cycle(spec, kClock);
      cycle.set_observer(&rec);
      cycle.load_weights(test::make_lw(K, N), 0, w);
      const CycleMatmulResult cm = cycle.matmul(mm, 0, x);
      cycle.finish();

      MxuTiming fast(spec, kClock, 0);
      fast.load_weights(test::make_lw(K, N), 0);
      const MxuMatmulTiming fm = fast.matmul(mm, 0);

      const RtlResult rtl = replay<V, kStationary>(rec, df, R, C, &mm, wb, nullptr);
      CHECK(rtl.y == test::reference_matmul(x, w, M, K, N));
      CHECK(rtl.y == cm.y);
      CHECK(rtl.row_ready == cm.row_ready);
      CHECK(*std::max_element(rtl.row_ready.begin(), rtl.row_ready.end()) == fm.end);
    }
}

// Several loads and matmuls at random arrival times: the RTL follows the cycle-level array
// through double buffering, back-to-back streams and shared shift-outs, cycle for cycle.
template <class V, bool kStationary>
void cosim_sequence(Dataflow df, std::uint32_t R, std::uint32_t C, std::uint32_t seed) {
  std::mt19937 rng(seed);
  for (bool db : {true, false})
    for (int trial = 0; trial < 6; ++trial) {
      MxuSpec spec;
      spec.rows = R;
      spec.cols = C;
      spec.dataflow = df;
      spec.weight_double_buffer = db;
      spec.precisions = {{DType::kInt8, 1.0}};
      Recorder rec;
      CycleMxu cycle(spec, kClock);
      MxuTiming fast(spec, kClock, 0);
      cycle.set_observer(&rec);
      std::uint64_t now = 0;
      std::uint32_t K = 1, N = 1;
      std::vector<std::int32_t> w;
      for (int step = 0; step < 5; ++step) {
        now += rng() % 3;
        if (step == 0 || rng() % 2 == 0) {
          K = 1 + rng() % R;
          N = 1 + rng() % C;
          w = test::random_int8(rng, std::size_t{K} * N);
          cycle.load_weights(test::make_lw(K, N), now, w);
          fast.load_weights(test::make_lw(K, N), now);
        }
        const std::uint32_t M = 1 + rng() % (2 * std::max(R, C));
        const auto x = test::random_int8(rng, std::size_t{M} * K);
        const CycleMatmulResult cm = cycle.matmul(test::make_mm(M, K, N), now, x);
        const MxuMatmulTiming fm = fast.matmul(test::make_mm(M, K, N), now);
        CAPTURE(dataflow_name(df), db, trial, step, M, K, N);
        CHECK(cm.y == test::reference_matmul(x, w, M, K, N));
        CHECK(cm.timing.end == fm.end);
      }
      cycle.finish();
      replay<V, kStationary>(rec, df, R, C, nullptr, 0, nullptr);
    }
}

}  // namespace

TEST_CASE("rtl: weight stationary matches the cycle-level and fast models", "[rtl]") {
  cosim_single<Vstationary_4x4, true>(Dataflow::kWeightStationary, 4, 4, 1);
  cosim_single<Vstationary_3x5, true>(Dataflow::kWeightStationary, 3, 5, 2);
}

TEST_CASE("rtl: input stationary matches the cycle-level and fast models", "[rtl]") {
  cosim_single<Vstationary_4x4, true>(Dataflow::kInputStationary, 4, 4, 3);
  cosim_single<Vstationary_3x5, true>(Dataflow::kInputStationary, 3, 5, 4);
}

TEST_CASE("rtl: output stationary matches the cycle-level and fast models", "[rtl]") {
  cosim_single<Vos_4x4, false>(Dataflow::kOutputStationary, 4, 4, 5);
  cosim_single<Vos_5x3, false>(Dataflow::kOutputStationary, 5, 3, 6);
}

TEST_CASE("rtl: instruction sequences agree cycle for cycle", "[rtl]") {
  cosim_sequence<Vstationary_4x4, true>(Dataflow::kWeightStationary, 4, 4, 7);
  cosim_sequence<Vstationary_3x5, true>(Dataflow::kInputStationary, 3, 5, 8);
  cosim_sequence<Vos_5x3, false>(Dataflow::kOutputStationary, 5, 3, 9);
}

TEST_CASE("rtl: the RTL's waveform equals the cycle-level model's, signal for signal", "[rtl]") {
  MxuSpec spec;
  spec.rows = 4;
  spec.cols = 4;
  spec.precisions = {{DType::kInt8, 1.0}};
  std::mt19937 rng(10);
  const auto w = test::random_int8(rng, 16), x = test::random_int8(rng, 24);
  std::ostringstream model_vcd, rtl_vcd;
  Recorder rec;
  {
    ArrayVcd dump(model_vcd, 1000);
    struct Both : ArrayObserver {
      ArrayObserver* a;
      ArrayObserver* b;
      void begin(Dataflow d, std::uint32_t r, std::uint32_t c) override {
        a->begin(d, r, c);
        b->begin(d, r, c);
      }
      void cycle(std::uint64_t t, const ArrayInputs& in, const std::vector<PeView>& p) override {
        a->cycle(t, in, p);
        b->cycle(t, in, p);
      }
    } both;
    both.a = &dump;
    both.b = &rec;
    CycleMxu cycle(spec, kClock);
    cycle.set_observer(&both);
    cycle.load_weights(test::make_lw(4, 4), 0, w);
    cycle.matmul(test::make_mm(6, 4, 4), 0, x);
    cycle.finish();
  }
  const isa::MxuMatmul mm = test::make_mm(6, 4, 4);
  replay<Vstationary_4x4, true>(rec, Dataflow::kWeightStationary, 4, 4, &mm, 1, &rtl_vcd);
  // TPUSIM_RTL_VCD=FILE keeps the RTL's waveform, for opening beside `tpusim exec --vcd`'s.
  if (const char* keep = std::getenv("TPUSIM_RTL_VCD")) std::ofstream(keep) << rtl_vcd.str();
  CHECK(model_vcd.str().find("$scope module pe_3_3 $end") != std::string::npos);
  CHECK(rtl_vcd.str() == model_vcd.str());
}
