// Functional mode: a hand-written GEMM program's outputs equal a plain C++ reference, bit for
// bit. The reference follows the documented arithmetic: each K tile's products accumulate in
// fp32 (int32 for integers) from k = 0 up, and each further tile's partial sum is added to the
// accumulator (models/mxu/mxu_datapath.h); requantize rounds half to even and saturates.

#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/sim/test_support.h"

using tpusim::test::TempDir;

namespace {

const std::string kChip = R"(name: test-functional
clock: 1 GHz
cores: 1
core:
  mxu: {count: 1, rows: 16, cols: 16, precisions: {int8: 1, bf16: 1}}
  vmem: {capacity: 256 KiB, banks: 4, port_width: 64 B}
  accmem: {capacity: 64 KiB, banks: 2, port_width: 64 B}
  dma: {engines: 2}
memory:
  capacity: 1 GiB
  bandwidth: 64 B/cycle
  hbm: {extends: hbm.yaml}
energy: {table: energy.yaml}
)";

float bf16(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <class T>
void write_file(const std::string& path, const std::vector<T>& v) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

template <class T>
std::vector<T> read_file(const std::string& path, std::size_t n) {
  std::vector<T> v(n);
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(v.data()),
                                             static_cast<std::streamsize>(n * sizeof(T)));
  return v;
}

int run(const TempDir& dir, const std::string& program, const std::string& extra,
        const std::string& chip = kChip, const std::string& energy = tpusim::test::kEnergyTable) {
  dir.write("energy.yaml", energy);
  dir.write("hbm.yaml", tpusim::test::kHbm);
  const std::string command = "timeout 60 '" TPUSIM_EXE "' exec -q --functional -c '" +
                              dir.write("chip.yaml", chip) + "' '" + dir.write("p.tasm", program) +
                              "' " + extra + " > /dev/null 2> '" + dir.path("err") + "'";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// C[M x N] = A[M x K] x W[K x N], K = 32 split into two 16-deep tiles on a 16 x 16 array.
// A at hbm:0 (row-major), W at hbm:65536 (row-major), C at hbm:131072.
std::string gemm_program(const std::string& dtype, std::uint32_t M, std::uint32_t elem) {
  const std::uint32_t K = 32, N = 16, kt = 16;
  std::ostringstream p;
  p << ".op 0 matmul \"gemm\"\n.core 0\n";
  // A's two column blocks go to vmem:0 and vmem:32768; W's two row blocks to 65536, 98304.
  for (std::uint32_t t = 0; t < 2; ++t) {
    p << "load dma0 dst=vmem:" << t * 32768 << " src=hbm:" << t * kt * elem << " elem="
      << kt * elem << " count=[" << M << "] src_stride=[" << K * elem << "]\n";
    p << "load dma0 dst=vmem:" << 65536 + t * 32768 << " src=hbm:" << 65536 + t * kt * N * elem
      << " elem=" << kt * N * elem << "\n";
  }
  p << "sem.signal dma0 s0\nsem.wait mxu0 s0\n";
  for (std::uint32_t t = 0; t < 2; ++t) {
    p << "mxu.lw mxu0 src=vmem:" << 65536 + t * 32768 << " k=16 n=16 dtype=" << dtype << "\n";
    p << "mxu.mm mxu0 src=vmem:" << t * 32768 << " dst=accmem:0 m=" << M << " k=16 n=16 dtype="
      << dtype << (t ? " accumulate" : "") << "\n";
  }
  return p.str();
}

}  // namespace

TEST_CASE("functional: a tiled bf16 GEMM equals the fp32 reference bit for bit", "[functional]") {
  const std::uint32_t M = 40, K = 32, N = 16;
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const auto random_bf16 = [&] {
    const float f = dist(rng);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return static_cast<std::uint16_t>(bits >> 16);
  };
  std::vector<std::uint16_t> a(M * K), w(K * N);
  for (auto& x : a) x = random_bf16();
  for (auto& x : w) x = random_bf16();

  TempDir dir;
  write_file(dir.path("a.bin"), a);
  write_file(dir.path("w.bin"), w);
  const std::string program = gemm_program("bf16", M, 2) +
                              "sem.signal mxu0 s1\nsem.wait dma1 s1\n"
                              "store dma1 dst=hbm:131072 src=accmem:0 elem=" +
                              std::to_string(M * N * 4) + "\nhalt\n";
  REQUIRE(run(dir, program,
              "--load hbm:0=" + dir.path("a.bin") + " --load hbm:65536=" + dir.path("w.bin") +
                  " --dump hbm:131072:" + std::to_string(M * N * 4) + "=" + dir.path("c.bin")) == 0);
  const std::vector<float> c = read_file<float>(dir.path("c.bin"), M * N);

  std::size_t mismatches = 0;
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      float total = 0;
      for (std::uint32_t t = 0; t < 2; ++t) {
        float partial = 0;
        for (std::uint32_t k = t * 16; k < t * 16 + 16; ++k)
          partial += bf16(a[m * K + k]) * bf16(w[k * N + n]);
        total = t == 0 ? partial : total + partial;
      }
      std::uint32_t got, want;
      std::memcpy(&got, &c[m * N + n], 4);
      std::memcpy(&want, &total, 4);
      mismatches += got != want;
    }
  CHECK(mismatches == 0);
}

TEST_CASE("functional: fp32 operands the MXU rounds to bf16 equal the rounded reference",
          "[functional]") {
  // XLA's DEFAULT precision: fp32 in memory, each operand rounded to bf16 (to nearest, ties to
  // even) as it enters the array, products accumulated in fp32.
  const std::uint32_t M = 40, K = 32, N = 16;
  std::mt19937 rng(777);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> a(M * K), w(K * N);
  for (auto& x : a) x = dist(rng);
  for (auto& x : w) x = dist(rng);
  a[0] = 1.0f + 0x1p-8f;  // halfway between two bf16 values: rounds to the even one, 1.0
  const auto rounded = [](float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    bits &= 0xFFFF0000u;
    float r;
    std::memcpy(&r, &bits, 4);
    return r;
  };
  REQUIRE(rounded(a[0]) == 1.0f);

  TempDir dir;
  write_file(dir.path("a.bin"), a);
  write_file(dir.path("w.bin"), w);
  const std::string program = gemm_program("fp32", M, 4) +
                              "sem.signal mxu0 s1\nsem.wait dma1 s1\n"
                              "store dma1 dst=hbm:131072 src=accmem:0 elem=" +
                              std::to_string(M * N * 4) + "\nhalt\n";
  const std::string dump =
      "--load hbm:0=" + dir.path("a.bin") + " --load hbm:65536=" + dir.path("w.bin") +
      " --dump hbm:131072:" + std::to_string(M * N * 4) + "=" + dir.path("c.bin");
  // Without core.mxu.rounding the array does not take fp32 at all.
  CHECK(run(dir, program, dump) == 2);
  const std::string chip =
      tpusim::test::replaced(kChip, "precisions: {int8: 1, bf16: 1}}",
                             "precisions: {int8: 1, bf16: 1}, rounding: {fp32: bf16}}");
  REQUIRE(run(dir, program, dump, chip) == 0);
  const std::vector<float> c = read_file<float>(dir.path("c.bin"), M * N);

  std::size_t mismatches = 0, unrounded_differs = 0;
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      float total = 0, exact = 0;
      for (std::uint32_t t = 0; t < 2; ++t) {
        float partial = 0, exact_partial = 0;
        for (std::uint32_t k = t * 16; k < t * 16 + 16; ++k) {
          partial += rounded(a[m * K + k]) * rounded(w[k * N + n]);
          exact_partial += a[m * K + k] * w[k * N + n];
        }
        total = t == 0 ? partial : total + partial;
        exact = t == 0 ? exact_partial : exact + exact_partial;
      }
      mismatches += std::memcmp(&c[m * N + n], &total, 4) != 0;
      unrounded_differs += std::memcmp(&c[m * N + n], &exact, 4) != 0;
    }
  CHECK(mismatches == 0);
  CHECK(unrounded_differs > M * N / 2);  // the rounding is visible: fp32 products would differ

  // Rounded to a type functional mode does not compute (fp8): refused, not multiplied as zeros.
  const std::string fp8_chip =
      tpusim::test::replaced(kChip, "precisions: {int8: 1, bf16: 1}}",
                             "precisions: {int8: 1, bf16: 1, fp8: 1}, rounding: {fp32: fp8}}");
  const std::string fp8_energy =
      tpusim::test::replaced(tpusim::test::kEnergyTable, "mac: {int8: 0.3 pJ, bf16: 1.5 pJ}",
                             "mac: {int8: 0.3 pJ, bf16: 1.5 pJ, fp8: 0.2 pJ}");
  // The error leaves the unit's thread as itself: exit 3 (not implemented), one line.
  CHECK(run(dir, program, dump, fp8_chip, fp8_energy) == 3);
  CHECK(tpusim::test::slurp(dir.path("err")) ==
        "error: --functional: fp8 arithmetic is not modelled yet\n");
}

TEST_CASE("functional: an int8 GEMM requantized by the VPU equals the integer reference",
          "[functional]") {
  // Both MXU models: the cycle-level array's values come out of its PEs, through the same
  // accumulate-and-write path (K is split in two tiles, the second accumulating).
  const std::string model = GENERATE(as<std::string>{}, "fast", "cycle");
  CAPTURE(model);
  const std::string model_flags =
      model == "cycle" ? " --set core.mxu.model=cycle --set 'core.mxu.precisions={int8: 1}'" : "";
  const std::uint32_t M = 24, K = 32, N = 16;
  const float scale = 0.0625f;
  const std::int32_t zero_point = -3;
  std::mt19937 rng(777);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<std::int8_t> a(M * K), w(K * N);
  for (auto& x : a) x = static_cast<std::int8_t>(dist(rng));
  for (auto& x : w) x = static_cast<std::int8_t>(dist(rng));

  TempDir dir;
  write_file(dir.path("a.bin"), a);
  write_file(dir.path("w.bin"), w);
  const std::string program =
      gemm_program("int8", M, 1) +
      "sem.signal mxu0 s1\nsem.wait vpu s1\n"
      "vpu.requantize dtype=int8 from=int32 shape=[" + std::to_string(M) + "," +
      std::to_string(N) + "] dst=vmem:131072 a=accmem:0 scale=0.0625 zp=-3\n"
      "sem.signal vpu s2\nsem.wait dma1 s2\n"
      "store dma1 dst=hbm:131072 src=vmem:131072 elem=" + std::to_string(M * N) + "\nhalt\n";
  REQUIRE(run(dir, program,
              "--load hbm:0=" + dir.path("a.bin") + " --load hbm:65536=" + dir.path("w.bin") +
                  " --dump hbm:131072:" + std::to_string(M * N) + "=" + dir.path("y.bin") +
                  model_flags) == 0);
  const std::vector<std::int8_t> y = read_file<std::int8_t>(dir.path("y.bin"), M * N);

  std::size_t mismatches = 0;
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      std::int32_t acc = 0;
      for (std::uint32_t k = 0; k < K; ++k) acc += std::int32_t{a[m * K + k]} * w[k * N + n];
      const double scaled = std::nearbyint(double(float(acc) * scale)) + zero_point;
      const auto want = static_cast<std::int8_t>(std::fmin(std::fmax(scaled, -128.0), 127.0));
      mismatches += y[m * N + n] != want;
    }
  CHECK(mismatches == 0);
}

TEST_CASE("functional: timing does not depend on it", "[functional]") {
  TempDir dir;
  const std::string program = gemm_program("bf16", 40, 2) + "halt\n";
  dir.write("energy.yaml", tpusim::test::kEnergyTable);
  dir.write("hbm.yaml", tpusim::test::kHbm);
  const std::string chip = dir.write("chip.yaml", kChip), source = dir.write("p.tasm", program);
  for (const char* mode : {"", "--functional"}) {
    const std::string command = std::string("'" TPUSIM_EXE "' exec -q -c '") + chip + "' '" +
                                source + "' -o '" + dir.path(mode[0] ? "f" : "t") + "' " + mode +
                                " > /dev/null";
    REQUIRE(std::system(command.c_str()) == 0);
  }
  const auto cycles = [&](const std::string& sub) {
    std::ifstream in(dir.path(sub + "/report.json"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.substr(text.find("\"cycles\""), 30);
  };
  CHECK(cycles("t") == cycles("f"));
}
