// PE-cycles per wall second of the cycle-level MXU (models/mxu/) and of the verilated RTL
// (models/rtl/) on 8x8 and 32x32 weight-stationary arrays. Both run the same workload: one
// weight load, then back-to-back matmuls of 4 * R rows, so the array is full most cycles.
//   cycle model   CycleMxu end to end: controller, run-ahead and committed array (what
//                 `mxu.model: cycle` costs inside tpusim), and SystolicArray::step() alone.
//   RTL           the verilated array driven by the recorded stimulus through the test harness.
// Usage: bench_mxu [SECONDS_PER_POINT]   (default 1). Figures go in docs/performance.md.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vstationary_32x32.h"
#include "Vstationary_8x8.h"
#include "models/mxu/mxu_cycle.h"
#include "tests/models/mxu_reference.h"
#include "tests/rtl/rtl_harness.h"

using namespace tpusim;
using namespace tpusim::models;
using Clock = std::chrono::steady_clock;

namespace {

struct Recorder : ArrayObserver {
  std::vector<ArrayInputs> inputs;
  void begin(Dataflow, std::uint32_t, std::uint32_t) override {}
  void cycle(std::uint64_t, const ArrayInputs& in, const std::vector<PeView>&) override {
    inputs.push_back(in);
  }
};

MxuSpec spec(std::uint32_t n) {
  MxuSpec s;
  s.rows = n;
  s.cols = n;
  s.precisions = {{DType::kInt8, 1.0}};
  return s;
}

// Runs `matmuls` matmuls on a fresh CycleMxu; returns the cycles it simulated.
std::uint64_t run_cycle_model(std::uint32_t n, int matmuls, Recorder* rec) {
  std::mt19937 rng(1);
  CycleMxu mxu(spec(n), Hertz(1e9));
  if (rec) mxu.set_observer(rec);
  mxu.load_weights(test::make_lw(n, n), 0, test::random_int8(rng, std::size_t{n} * n));
  const auto x = test::random_int8(rng, std::size_t{4} * n * n);
  for (int i = 0; i < matmuls; ++i) mxu.matmul(test::make_mm(4 * n, n, n), 0, x);
  mxu.finish();
  return mxu.drained_at();
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void report(const char* what, std::uint32_t n, std::uint64_t cycles, double seconds) {
  const double pe_cycles = double(cycles) * n * n;
  std::printf("%-28s %2ux%-2u  %9.0f cycles  %6.3f s  %8.2f M PE-cycles/s\n", what, n, n,
              double(cycles), seconds, pe_cycles / seconds / 1e6);
}

void bench_cycle(std::uint32_t n, double budget) {
  // Enough matmuls for about `budget` seconds, from a short calibration run.
  const auto t0 = Clock::now();
  run_cycle_model(n, 4, nullptr);
  const int matmuls = std::max(4, int(4 * budget / std::max(1e-6, seconds_since(t0))));
  const auto t1 = Clock::now();
  const std::uint64_t cycles = run_cycle_model(n, matmuls, nullptr);
  report("cycle-level MXU (CycleMxu)", n, cycles, seconds_since(t1));

  Recorder rec;
  run_cycle_model(n, 4, &rec);
  SystolicArray array(ArrayKind::kStationary, n, n);
  std::uint64_t steps = 0;
  const auto t2 = Clock::now();
  while (seconds_since(t2) < budget)
    for (const ArrayInputs& in : rec.inputs) {
      array.step(in);
      ++steps;
    }
  report("SystolicArray::step alone", n, steps, seconds_since(t2));
}

template <class V>
void bench_rtl(std::uint32_t n, double budget) {
  Recorder rec;
  run_cycle_model(n, 4, &rec);
  test::RtlArray<V, true> rtl(n, n);
  std::uint64_t cycles = 0;
  const auto t0 = Clock::now();
  while (seconds_since(t0) < budget)
    for (const ArrayInputs& in : rec.inputs) {
      rtl.cycle(in, nullptr, nullptr, nullptr);
      ++cycles;
    }
  report("verilated RTL", n, cycles, seconds_since(t0));
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 1.0;
  for (std::uint32_t n : {8u, 32u}) bench_cycle(n, budget);
  bench_rtl<Vstationary_8x8>(8, budget);
  bench_rtl<Vstationary_32x32>(32, budget);
  return 0;
}
