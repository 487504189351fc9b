#include <catch2/catch.hpp>

#include "models/mxu/mxu_timing.h"

using namespace tpusim;
using namespace tpusim::models;

namespace {

const Hertz kClock(1e9);

MxuSpec array(std::uint32_t rows, std::uint32_t cols, Dataflow dataflow, bool double_buffer) {
  MxuSpec s;
  s.rows = rows;
  s.cols = cols;
  s.dataflow = dataflow;
  s.weight_double_buffer = double_buffer;
  s.precisions = {{DType::kBf16, 1.0}, {DType::kInt8, 1.0}, {DType::kInt16, 0.25}};
  s.writeback_latency = Duration::of_cycles(1);
  return s;
}

isa::MxuLoadWeights lw(std::uint32_t k, std::uint32_t n, DType dtype = DType::kBf16) {
  isa::MxuLoadWeights w;
  w.k = k;
  w.n = n;
  w.dtype = dtype;
  return w;
}

isa::MxuMatmul mm(std::uint32_t m, std::uint32_t k, std::uint32_t n, DType dtype = DType::kBf16) {
  isa::MxuMatmul x;
  x.m = m;
  x.k = k;
  x.n = n;
  x.dtype = dtype;
  return x;
}

}  // namespace

TEST_CASE("mxu timing: one weight-stationary tile is fill + stream + skew + drain",
          "[timing][mxu]") {
  for (bool db : {true, false}) {
    const std::uint64_t R = 128, C = 128, M = 200, K = 100, N = 90, wb = 1;
    MxuTiming t(array(R, C, Dataflow::kWeightStationary, db), kClock, 0);
    const MxuLoadTiming load = t.load_weights(lw(K, N), 0);
    CHECK(load.end == R);  // the tile shifts through all R rows
    const MxuMatmulTiming run = t.matmul(mm(M, K, N), 0);
    CHECK(run.start == R);
    CHECK(run.stream_cycles == M);
    CHECK(run.input_end == R + M);
    // The last input row enters at R + M - 1 and meets PE(R-1, N-1) R + N - 2 cycles later;
    // that PE's work is complete at the end of its cycle, then the result is written back.
    CHECK(run.end == R + M + R + N - 2 + wb);
    CHECK(run.macs == M * K * N);
  }
}

TEST_CASE("mxu timing: double buffering hides weight loads behind back-to-back matmuls",
          "[timing][mxu]") {
  const std::uint64_t R = 128, N = 128, wb = 1, tiles = 8;
  SECTION("with a shadow buffer only the first load shows (M >= R)") {
    const std::uint64_t M = 256;
    MxuTiming t(array(R, 128, Dataflow::kWeightStationary, true), kClock, 0);
    MxuMatmulTiming last;
    for (std::uint64_t i = 0; i < tiles; ++i) {
      t.load_weights(lw(128, N), 0);
      last = t.matmul(mm(M, 128, N), 0);
    }
    CHECK(last.end == R + tiles * M + R + N - 2 + wb);
  }
  SECTION("with a shadow buffer, short matmuls wait for the R-cycle load") {
    const std::uint64_t M = 64;  // shorter than a load: the load path is the bottleneck
    MxuTiming t(array(R, 128, Dataflow::kWeightStationary, true), kClock, 0);
    MxuMatmulTiming last;
    for (std::uint64_t i = 0; i < tiles; ++i) {
      t.load_weights(lw(128, N), 0);
      last = t.matmul(mm(M, 128, N), 0);
    }
    // Load i may start when matmul i-1 starts, so matmul i starts at (i + 1) * R.
    CHECK(last.start == tiles * R);
    CHECK(last.end == tiles * R + M + R + N - 2 + wb);
  }
  SECTION("without one, every load waits for the array to drain") {
    const std::uint64_t M = 256;
    MxuTiming t(array(R, 128, Dataflow::kWeightStationary, false), kClock, 0);
    MxuMatmulTiming last;
    for (std::uint64_t i = 0; i < tiles; ++i) {
      t.load_weights(lw(128, N), 0);
      last = t.matmul(mm(M, 128, N), 0);
    }
    CHECK(last.end == tiles * (R + M + R + N - 2 + wb));
  }
  SECTION("matmuls reusing the active weights stream back to back") {
    const std::uint64_t M = 100;
    MxuTiming t(array(R, 128, Dataflow::kWeightStationary, false), kClock, 0);
    t.load_weights(lw(128, N), 0);
    MxuMatmulTiming last;
    for (std::uint64_t i = 0; i < tiles; ++i) last = t.matmul(mm(M, 128, N), 0);
    CHECK(last.start == R + (tiles - 1) * M);
    CHECK(last.end == R + tiles * M + R + N - 2 + wb);
  }
}

TEST_CASE("mxu timing: operand rate and vector-memory port width slow the stream",
          "[timing][mxu]") {
  const std::uint64_t R = 256, M = 100, N = 256, wb = 1;
  SECTION("16-bit operands at quarter rate take four cycles a row (TPUv1)") {
    MxuTiming t(array(R, 256, Dataflow::kWeightStationary, true), kClock, 0);
    t.load_weights(lw(256, N, DType::kInt16), 0);
    const MxuMatmulTiming run = t.matmul(mm(M, 256, N, DType::kInt16), 0);
    CHECK(run.stream_cycles == 4 * M);
    CHECK(run.end == R + 4 * M + R + N - 2 + wb);
  }
  SECTION("a 128 B/cycle port feeds a 256-element int8 row in two cycles") {
    MxuTiming t(array(R, 256, Dataflow::kWeightStationary, true), kClock, 128);
    t.load_weights(lw(256, N, DType::kInt8), 0);
    CHECK(t.matmul(mm(M, 256, N, DType::kInt8), 0).stream_cycles == 2 * M);
  }
  SECTION("a rate above one survives a port wide enough for the packed rows") {
    // Two 128-element int8 rows (256 B) per pass through a 4 KiB port: still two rows a cycle.
    MxuSpec s = array(128, 128, Dataflow::kWeightStationary, true);
    s.precisions[DType::kInt8] = 2.0;
    MxuTiming t(s, kClock, 4096);
    t.load_weights(lw(128, 128, DType::kInt8), 0);
    CHECK(t.matmul(mm(M, 128, 128, DType::kInt8), 0).stream_cycles == M / 2);
  }
  SECTION("output stationary reads a column of rf inputs per step") {
    // bf16, rf = 128 rows: 256 B per step through a 64 B port = 4 cycles a step.
    const std::uint64_t K = 16, N = 8;
    MxuSpec s = array(128, 128, Dataflow::kOutputStationary, false);
    MxuTiming t(s, kClock, 64);
    t.load_weights(lw(K, N), 0);
    CHECK(t.matmul(mm(128, K, N), 0).stream_cycles == 4 * K + 128 + N - 2);
  }
  SECTION("a rate above one packs rows (v5e int8 at twice bf16)") {
    MxuSpec s = array(128, 128, Dataflow::kWeightStationary, true);
    s.precisions[DType::kInt8] = 2.0;
    MxuTiming t(s, kClock, 0);
    t.load_weights(lw(128, 128, DType::kInt8), 0);
    CHECK(t.matmul(mm(M, 128, 128, DType::kInt8), 0).stream_cycles == M / 2);
  }
}

TEST_CASE("mxu timing: an operand type the array rounds runs at its precision's rate",
          "[timing][mxu]") {
  // fp32 rounded to bf16 (XLA's DEFAULT precision): one bf16 pass, but 4 B an element to read.
  const std::uint64_t M = 100;
  MxuSpec s = array(128, 128, Dataflow::kWeightStationary, true);
  s.precisions = {{DType::kBf16, 1.0}};
  s.rounding = {{DType::kFp32, DType::kBf16}};
  SECTION("with a port wide enough, a row a cycle like bf16") {
    MxuTiming rounded(s, kClock, 0), native(s, kClock, 0);
    rounded.load_weights(lw(128, 128, DType::kFp32), 0);
    native.load_weights(lw(128, 128, DType::kBf16), 0);
    const MxuMatmulTiming a = rounded.matmul(mm(M, 128, 128, DType::kFp32), 0);
    const MxuMatmulTiming b = native.matmul(mm(M, 128, 128, DType::kBf16), 0);
    CHECK(a.stream_cycles == M);
    CHECK(a.end == b.end);
  }
  SECTION("through a port of one bf16 row a cycle, two cycles a row") {
    // 128 fp32 elements = 512 B through a 256 B port.
    MxuTiming t(s, kClock, 256);
    t.load_weights(lw(128, 128, DType::kFp32), 0);
    CHECK(t.matmul(mm(M, 128, 128, DType::kFp32), 0).stream_cycles == 2 * M);
  }
  SECTION("at a precision's lower rate too") {
    s.precisions = {{DType::kBf16, 0.5}};
    MxuTiming t(s, kClock, 0);
    t.load_weights(lw(128, 128, DType::kFp32), 0);
    CHECK(t.matmul(mm(M, 128, 128, DType::kFp32), 0).stream_cycles == 2 * M);
  }
}

TEST_CASE("mxu timing: output stationary folds over M in steps of R", "[timing][mxu]") {
  const std::uint64_t R = 16, C = 16, K = 40, N = 12, wb = 1;
  SECTION("one fold: wavefront K + M + N - 2, then M cycles to shift results out") {
    const std::uint64_t M = 10;
    MxuTiming t(array(R, C, Dataflow::kOutputStationary, false), kClock, 0);
    const MxuLoadTiming load = t.load_weights(lw(K, N), 0);
    CHECK(load.end == K);  // staged one row of N weights per cycle
    const MxuMatmulTiming run = t.matmul(mm(M, K, N), 0);
    CHECK(run.start == K);
    CHECK(run.end == K + (K + M + N - 2) + M + wb);
  }
  SECTION("three folds, serial without double buffering, overlapped with it") {
    const std::uint64_t M = 40;  // folds of 16, 16, 8
    const std::uint64_t fold16 = K + 16 + N - 2, fold8 = K + 8 + N - 2;
    MxuTiming serial(array(R, C, Dataflow::kOutputStationary, false), kClock, 0);
    serial.load_weights(lw(K, N), 0);
    CHECK(serial.matmul(mm(M, K, N), 0).end == K + (fold16 + 16) * 2 + fold8 + 8 + wb);
    MxuTiming overlapped(array(R, C, Dataflow::kOutputStationary, true), kClock, 0);
    overlapped.load_weights(lw(K, N), 0);
    CHECK(overlapped.matmul(mm(M, K, N), 0).end == K + fold16 * 2 + fold8 + 8 + wb);
  }
}

TEST_CASE("mxu timing: a short last output-stationary fold never finishes first", "[timing][mxu]") {
  // With double-buffered result registers the folds' shift-outs share one path: fold 2 (one
  // row) cannot shift out before fold 1 has.
  const std::uint64_t R = 16, K = 4, N = 3, wb = 1;
  const auto end_for = [&](std::uint64_t M) {
    MxuTiming t(array(R, 16, Dataflow::kOutputStationary, true), kClock, 0);
    t.load_weights(lw(K, N), 0);
    return t.matmul(mm(M, K, N), 0).end;
  };
  const std::uint64_t fold16 = K + 16 + N - 2;
  CHECK(end_for(16) == K + fold16 + 16 + wb);
  // Fold 1 computes while fold 0 shifts out; fold 1 (1 row) shifts after fold 0's 16 rows.
  CHECK(end_for(17) == K + fold16 + 16 + 1 + wb);
  CHECK(end_for(17) > end_for(16));
}

TEST_CASE("mxu timing: the os shift path is shared across matmuls", "[timing][mxu]") {
  // Matmul 1 (4 rows) starts shifting out at cycle s; with double-buffered result registers
  // matmul 2 starts computing then. A one-row, K = N = 1 fold is done computing one cycle
  // later, but the path is busy until s + 4: its row shifts out in [s + 4, s + 5), not earlier.
  const std::uint64_t R = 4, K = 1, N = 1, wb = 1;
  MxuTiming t(array(R, 4, Dataflow::kOutputStationary, true), kClock, 0);
  t.load_weights(lw(K, N), 0);
  const MxuMatmulTiming first = t.matmul(mm(4, K, N), 0);
  const std::uint64_t s = K + (K + 4 + N - 2);  // staging, then fold 0's compute
  CHECK(first.end == s + 4 + wb);
  const MxuMatmulTiming second = t.matmul(mm(1, K, N), 0);
  CHECK(second.start == s);
  CHECK(second.end == s + 4 + 1 + wb);  // was s + (K + 1 + N - 2) + 1 + wb before the fix
  CHECK(second.end > first.end);
}

TEST_CASE("mxu timing: input stationary streams weights past a stationary input tile",
          "[timing][mxu]") {
  const std::uint64_t R = 16, C = 16, K = 16, N = 50, wb = 1;
  SECTION("one fold: tile in R, stream N columns, drain R + M - 2") {
    const std::uint64_t M = 12;
    MxuTiming t(array(R, C, Dataflow::kInputStationary, false), kClock, 0);
    t.load_weights(lw(K, N), 0);  // staged: K cycles
    const MxuMatmulTiming run = t.matmul(mm(M, K, N), 0);
    CHECK(run.start == K);
    CHECK(run.end == K + R + N + R + M - 2 + wb);
  }
  SECTION("two folds with double buffering hide the second tile load") {
    const std::uint64_t M = 32;  // two folds of 16 (N > R, so the shift fits under the stream)
    MxuTiming t(array(R, C, Dataflow::kInputStationary, true), kClock, 0);
    t.load_weights(lw(K, N), 0);
    CHECK(t.matmul(mm(M, K, N), 0).end == K + R + 2 * N + R + 16 - 2 + wb);
  }
  SECTION("with double buffering, a short stream waits for the next tile to shift in") {
    // N = 4 < R: fold 1's tile starts shifting when fold 0's becomes active (K + R) and is in
    // R cycles later, after fold 0's stream has ended.
    const std::uint64_t M = 32, n = 4;
    MxuTiming t(array(R, C, Dataflow::kInputStationary, true), kClock, 0);
    t.load_weights(lw(K, n), 0);
    CHECK(t.matmul(mm(M, K, n), 0).end == K + R + R + n + R + 16 - 2 + wb);
  }
}

TEST_CASE("mxu timing: with skew: array and no double buffering, every fold takes 2R + C + T - 2",
          "[timing][mxu]") {
  // SCALE-Sim's count (docs/scalesim.md): ragged tiles still cross the whole array, folds
  // serialise.
  const std::uint64_t R = 16, C = 8, M = 37, K = 11, N = 5;
  {
    MxuSpec s = array(R, C, Dataflow::kWeightStationary, false);
    s.skew = MxuSkew::kArray;
    s.writeback_latency = Duration::of_cycles(0);
    MxuTiming t(s, kClock, 0);
    const MxuLoadTiming load = t.load_weights(lw(K, N), 0);
    const MxuMatmulTiming run = t.matmul(mm(M, K, N), 0);
    CHECK(run.array_end - load.start == 2 * R + C + M - 2);  // T = M
    // The next tile waits for the drain: folds do not overlap.
    CHECK(t.load_weights(lw(K, N), 0).start == run.end);
  }
  {
    MxuSpec s = array(R, C, Dataflow::kOutputStationary, false);
    s.skew = MxuSkew::kArray;
    s.writeback_latency = Duration::of_cycles(0);
    MxuTiming t(s, kClock, 0);
    t.load_weights(lw(K, N), 0);
    const MxuMatmulTiming run = t.matmul(mm(M, K, N), 0);
    const std::uint64_t folds = (M + R - 1) / R;  // 3: 16, 16 and a ragged 5 rows
    CHECK(run.array_end - run.start == folds * (2 * R + C + K - 2));  // T = K
  }
  {
    MxuSpec s = array(R, C, Dataflow::kInputStationary, false);
    s.skew = MxuSkew::kArray;
    s.writeback_latency = Duration::of_cycles(0);
    MxuTiming t(s, kClock, 0);
    t.load_weights(lw(K, N), 0);
    const MxuMatmulTiming run = t.matmul(mm(M, K, N), 0);
    const std::uint64_t folds = (M + C - 1) / C;                      // 5 folds of up to 8 inputs
    CHECK(run.array_end - run.start == folds * (2 * R + C + N - 2));  // T = N
  }
}

TEST_CASE("mxu timing: a tile staged behind `keep` matmuls loads while they stream",
          "[timing][mxu]") {
  // ws, double-buffered: lw A; mm (switches to A); lw B right away; two more mms keep A; an mm
  // that switches to B. B loads from the first mm's start (the shadow is free once A is in use),
  // so it is in place when the keep matmuls end and the switch costs nothing.
  const std::uint64_t R = 128, M = 100;
  MxuTiming t(array(R, 128, Dataflow::kWeightStationary, true), kClock, 0);
  t.load_weights(lw(128, 128), 0);
  const MxuMatmulTiming first = t.matmul(mm(M, 128, 128), 0);
  const MxuLoadTiming b = t.load_weights(lw(128, 128), 0);
  CHECK(b.start == first.start);
  isa::MxuMatmul keep = mm(M, 128, 128);
  keep.keep = true;
  const MxuMatmulTiming k1 = t.matmul(keep, 0);
  const MxuMatmulTiming k2 = t.matmul(keep, 0);
  CHECK(k1.start == first.input_end);  // rows stream back to back on tile A
  CHECK(k2.start == k1.input_end);
  const MxuMatmulTiming switched = t.matmul(mm(M, 128, 128), 0);
  CHECK(b.end == first.start + R);
  CHECK(switched.start == first.start + 3 * M);  // 3M >= R: the load is hidden
}
