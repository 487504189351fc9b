// The lowering's plans, run end to end: shapes that only differ by a remainder (one that needs
// no more MXU passes than a larger one and moves fewer bytes cannot take more cycles; each case
// was a cliff a shape sweep found, docs/performance.md, isa/lower/README.md), the planner's
// compute bound against the MXUs' measured work, and schedules that must not let one unit's
// wait hold up another (read-outs, stores).

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/sim/run_support.h"

namespace {

using tpusim::test::compile_text;
using tpusim::test::Outcome;
using tpusim::test::run_and_compare;
using tpusim::test::TempDir;
using tpusim::test::timing_report;

// Runs `smaller` and `larger` (YAML graphs) on `chip` in timing mode. The first needs no more
// MXU passes and moves fewer bytes, so it must not take more cycles.
void check_no_slower(const std::string& chip, const std::string& smaller,
                     const std::string& larger) {
  TempDir dir;
  const auto cycles = [&](const std::string& name, const std::string& graph) {
    return timing_report(chip, "'" + dir.write(name + ".yaml", graph) + "'")["cycles"]
        .get<std::uint64_t>();
  };
  const std::uint64_t few = cycles("smaller", smaller), many = cycles("larger", larger);
  INFO("smaller: " << few << " cycles, larger: " << many);
  CHECK(few <= many);
}

}  // namespace

TEST_CASE("lower: a ragged last K block spreads its short runs over the DMA engines",
          "[run][lower]") {
  // 1024 x K times K x 1024 in bf16 on tpu-v5e, K blocks of 128: K = 385 takes four blocks, as
  // K = 512 does, and moves fewer bytes, so it cannot need more cycles. Its last block reads
  // one element of each of A's 1024 rows: 1024 two-byte runs, one DMA chunk issue each. Spread
  // by bytes alone they all went to one engine (17,163 cycles against 14,167 for K = 512).
  const auto gemm = [](int k) {
    return "name: mm\ndtype: bf16\ntensors:\n  - {name: a, shape: [1024, " + std::to_string(k) +
           "], role: input}\n  - {name: w, shape: [" + std::to_string(k) +
           ", 1024], role: weight}\n  - {name: y, role: output}\nops:\n  - {name: y, op: "
           "matmul, inputs: [a, w]}\n";
  };
  check_no_slower("tpu-v5e", gemm(385), gemm(512));
}

TEST_CASE("lower: a convolution's last, one-column tile is priced at its own size",
          "[run][lower]") {
  // 8x28x28x128 int8 images, 3x3 kernel, on tpu-v5e (four 128 x 128 MXUs). 257 filters take
  // three 128-column weight slices, as 384 do, and move fewer bytes, so they cannot need more
  // cycles. The planner priced the 1-column remainder tile as a whole 128-column one, and chose
  // 128-column tiles: three passes over the input band (34,777 cycles against 29,712 for 384).
  const auto conv = [](int filters) {
    return "name: c\ndtype: int8\ntensors:\n  - {name: x, shape: [8, 28, 28, 128], role: "
           "input}\n  - {name: w, shape: [3, 3, 128, " +
           std::to_string(filters) +
           "], role: weight}\n  - {name: y, role: output, dtype: int32}\nops:\n  - {name: y, op: "
           "conv2d, inputs: [x, w], stride: 1, padding: 1, output: y}\n";
  };
  check_no_slower("tpu-v5e", conv(257), conv(384));
}

TEST_CASE("run: heads that share a step share one read-out per vector operation", "[run]") {
  // Twelve heads of a decode step's scores: each head's one output row sits right after the
  // previous head's in the accumulators and the output buffer, so a step's cast from fp32 is one
  // instruction over all its heads, not one per head (twelve casts behind a wait outgrew the
  // vector unit's queue of 16 and stalled the sequencer).
  const std::string graph = R"(name: scores
dtype: bf16
tensors:
  - {name: q, shape: [12, 1, 64], role: input}
  - {name: k, shape: [12, 64, 300], role: input}
  - {name: s, shape: [12, 1, 300], role: output}
ops:
  - {name: s, op: matmul, inputs: [q, k]}
)";
  const std::string plan = compile_text("tpu-v4i", graph, true);
  std::uint64_t tn = 0, group = 0;
  {
    const auto at = plan.find("x N ");
    REQUIRE(at != std::string::npos);
    std::istringstream(plan.substr(at + 4)) >> tn;
    const auto per = plan.find(" per step)");
    REQUIRE(per != std::string::npos);
    const auto open = plan.rfind('(', per);
    std::istringstream(plan.substr(open + 1)) >> group;
  }
  REQUIRE(group > 1);
  REQUIRE(tn > 0);
  const std::uint64_t tiles = (12 + group - 1) / group * ((300 + tn - 1) / tn);
  const std::string program = compile_text("tpu-v4i", graph, false);
  std::uint64_t casts = 0;
  for (std::size_t at = program.find("vpu.cast"); at != std::string::npos;
       at = program.find("vpu.cast", at + 1))
    ++casts;
  CHECK(casts == tiles);
  const Outcome o = run_and_compare("tpu-v4i", graph);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 12 * 300);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("lower: the planner's compute bound is the busiest MXU's share of the K slices",
          "[run][lower]") {
  // A decode step's context product, p[12,1,L] x v[12,L,64], on tpu-v4i (four 128 x 128 MXUs,
  // weight-stationary). Each matmul streams one row, so an MXU's time is its weight shifts, one
  // 128-cycle shift per 128-row K slice. When a step's heads leave MXUs idle, an item's K slices
  // are dealt to K parts by slice index, and the busiest part takes a whole number of them: L =
  // 1025 is 9 slices, 5 and 4 on two MXUs, not 4.5. The planner priced 4.5, chose that split and
  // ran 4,782 cycles against 4,299 for L = 1100.
  for (const int len : {1025, 1152, 1536}) {
    const std::string l = std::to_string(len);
    const std::string graph = "name: pv\ndtype: bf16\ntensors:\n  - {name: p, shape: [12, 1, " + l +
                              "], role: input}\n  - {name: v, shape: [12, " + l +
                              ", 64], role: weight}\n  - {name: y, role: output}\nops:\n  - "
                              "{name: y, op: matmul, inputs: [p, v]}\n";
    const std::string plan = compile_text("tpu-v4i", graph, true);
    const auto at = plan.find("compute >= ");
    REQUIRE(at != std::string::npos);
    std::uint64_t bound = 0;
    std::istringstream(plan.substr(at + 11)) >> bound;
    TempDir dir;
    const auto report = timing_report("tpu-v4i", "'" + dir.write("pv.yaml", graph) + "'");
    std::uint64_t busiest = 0;
    for (const auto& u : report["units"])
      if (u["kind"] == "mxu")
        busiest = std::max(busiest, u["stats"]["weight_load_cycles"].get<std::uint64_t>());
    INFO("L = " << len << "\n" << plan);
    CHECK(bound == busiest);
  }
}

TEST_CASE("lower: a slow fused read-out does not hold up the loads queued behind its store",
          "[run][lower]") {
  // BERT-base s512's FFN up-projection, 512 x 768 x 3072 bf16 with bias, on tpu-v4i, with and
  // without a fused gelu. The read-outs of all but the last tile overlap the MXUs' work on later
  // tiles, so gelu can add at most the last tile's gelu: Tm x Tn / (128 lanes x 8 sublanes x
  // 0.25 a cycle). A store queued right after its tile's read-out waited in the DMA engines'
  // in-order queues for that read-out, and the next steps' loads behind it: 30,941 cycles
  // against 24,898 without gelu, for 2,048 of gelu in the last tile.
  const auto graph = [](bool gelu) {
    std::string g =
        "name: ffn\ndtype: bf16\ntensors:\n  - {name: x, shape: [512, 768], role: input}\n  - "
        "{name: y, role: output}\nops:\n  - {name: up, op: linear, inputs: [x], features: 3072, "
        "bias: true}\n";
    if (gelu)
      g += "  - {name: y, op: gelu, inputs: [up]}\n";
    else
      g.replace(g.find("name: up"), 8, "name: y");
    return g;
  };
  const auto tile_of = [](const std::string& plan) {
    const auto at = plan.find("tile       M ");
    REQUIRE(at != std::string::npos);
    return plan.substr(at, plan.find('\n', at) - at);
  };
  const std::string plain_plan = compile_text("tpu-v4i", graph(false), true);
  const std::string gelu_plan = compile_text("tpu-v4i", graph(true), true);
  REQUIRE(tile_of(plain_plan) == tile_of(gelu_plan));
  std::uint64_t tm = 0, tn = 0;
  {
    std::istringstream in(tile_of(gelu_plan).substr(13));
    std::string x;
    in >> tm >> x >> x >> tn;
  }
  REQUIRE(tm > 0);
  REQUIRE(tn > 0);
  TempDir dir;
  const auto cycles = [&](const std::string& name, bool gelu) {
    return timing_report("tpu-v4i", "'" + dir.write(name, graph(gelu)) + "'")["cycles"]
        .get<std::uint64_t>();
  };
  const std::uint64_t plain = cycles("plain.yaml", false), with_gelu = cycles("gelu.yaml", true);
  const double last_gelu = double(tm * tn) / (128 * 8 * 0.25);
  INFO(tile_of(gelu_plan) << ": " << plain << " cycles without gelu, " << with_gelu << " with");
  CHECK(double(with_gelu) <= double(plain) + last_gelu);
}
