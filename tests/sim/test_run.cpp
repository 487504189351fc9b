// `tpusim run` end to end: a workload is lowered, simulated with real data (--functional), and
// its outputs are compared with the plain reference evaluator of workloads/ on the same inputs
// (the ones the run generated from its seed and wrote to --dump).
//
// Tolerances: integer paths are exact. bf16 paths compute in fp32 and round where the reference
// rounds, except that fused epilogues (bias, activation) round once instead of per operator; a
// result may then differ from the reference by a few bf16 steps (2^-8 relative each), and by more
// through long chains (layernorm divides by a standard deviation computed from rounded values).

#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "tests/sim/run_support.h"

#include "workloads/npy.h"
#include "workloads/reference.h"
#include "workloads/yaml_graph.h"

namespace {

using nlohmann::json;
using tpusim::test::compile_text;
using tpusim::test::contains;
using tpusim::test::Outcome;
using tpusim::test::run_and_compare;
using tpusim::test::slurp;
using tpusim::test::TempDir;
using tpusim::test::timing_report;

}  // namespace

TEST_CASE("run: an int8 matmul on teach-4x4 equals the reference exactly", "[run]") {
  const Outcome o =
      run_and_compare("teach-4x4", slurp(TPUSIM_SOURCE_DIR "/workloads/teach/matmul-4x4.yaml"));
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 16);
  CHECK(o.worst == 0.0);
}

TEST_CASE("run: a ragged int8 matmul larger than the array is exact", "[run]") {
  const Outcome o = run_and_compare("teach-4x4", R"(name: ragged
dtype: int8
tensors:
  - {name: a, shape: [3, 7, 5], role: input}
  - {name: b, shape: [5, 6], role: weight}
  - {name: c, shape: [3, 7, 6], dtype: int32, role: output}
ops:
  - {name: c, op: matmul, inputs: [a, b]}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 3 * 7 * 6);
  CHECK(o.worst == 0.0);
}

TEST_CASE("run: output- and input-stationary arrays stream K and N longer than the array, exactly",
          "[run]") {
  // On the 4x4 array K = 9 streams whole through os and the N = 6 weight columns through is;
  // teach-4x4 runs the cycle-level model, so every value really crosses the PEs.
  const std::string graph = R"(name: ragged
dtype: int8
tensors:
  - {name: a, shape: [3, 7, 9], role: input}
  - {name: b, shape: [9, 6], role: weight}
  - {name: c, shape: [3, 7, 6], dtype: int32, role: output}
ops:
  - {name: c, op: matmul, inputs: [a, b]}
)";
  for (const char* dataflow : {"os", "is"}) {
    INFO(dataflow);
    const Outcome o =
        run_and_compare("teach-4x4", graph, std::string("--set core.mxu.dataflow=") + dataflow);
    REQUIRE(o.exit_code == 0);
    CHECK(o.nonzero > 0);
    CHECK(o.compared == 3 * 7 * 6);
    CHECK(o.worst == 0.0);
  }
}

TEST_CASE("run: convolutions on output- and input-stationary tpu-v4i match the reference",
          "[run]") {
  for (const char* dataflow : {"os", "is"}) {
    INFO(dataflow);
    const Outcome o = run_and_compare("tpu-v4i", R"(name: convs
dtype: bf16
tensors:
  - {name: img, shape: [2, 17, 15, 40], role: input}
  - {name: y, shape: [2, 9, 8, 150], role: output}
ops:
  - {name: c1, op: conv2d, inputs: [img], filters: 150, kernel: 3, stride: 2, padding: 1, bias: true}
  - {name: y, op: relu, inputs: [c1]}
)",
                                      std::string("--set core.mxu.dataflow=") + dataflow);
    REQUIRE(o.exit_code == 0);
    CHECK(o.nonzero > 0);
    CHECK(o.compared == 2 * 9 * 8 * 150);
    CHECK(o.worst < 1.0 / 64);
  }
}

TEST_CASE("run: decode-step attention (one query row per head) matches the reference", "[run]") {
  // M = 1 per head: the lowering puts several heads in one step and splits K over idle MXUs,
  // adding the partial sums on the VPU.
  const std::string graph = R"(name: decode_attention
dtype: bf16
tensors:
  - {name: q, shape: [6, 1, 64], role: input}
  - {name: keys, shape: [6, 300, 64], role: input}
  - {name: values, shape: [6, 300, 40], role: input}
  - {name: context, shape: [6, 1, 40], role: output}
ops:
  - {name: scores, op: matmul, inputs: [q, keys], transpose_b: true}
  - {name: probs, op: softmax, inputs: [scores]}
  - {name: context, op: matmul, inputs: [probs, values]}
)";
  // The schedule this test is about was used: heads share steps, K is split over idle MXUs.
  const std::string plan = compile_text("tpu-v4i", graph, true);
  CHECK(contains(plan, "per step)"));
  CHECK(contains(plan, "K split 2 ways"));
  const Outcome o = run_and_compare("tpu-v4i", graph);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 6 * 40);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("run: a transpose that only moves size-1 axes is an alias, and results still match",
          "[run]") {
  const std::string graph = R"(name: heads
dtype: bf16
tensors:
  - {name: x, shape: [1, 12, 64], role: input}
  - {name: w, shape: [12, 64, 8], role: weight}
  - {name: y, shape: [12, 1, 8], role: output}
ops:
  - {name: xt, op: transpose, inputs: [x], perm: [1, 0, 2]}
  - {name: y, op: matmul, inputs: [xt, w]}
)";
  CHECK(contains(compile_text("tpu-v4i", graph, true), "alias of 'x': no data moves"));
  const Outcome o = run_and_compare("tpu-v4i", graph);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 12 * 8);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("run: bf16 linear layers with fused bias and activations match the reference", "[run]") {
  const Outcome o = run_and_compare("tpu-v4i", R"(name: mlp
dtype: bf16
tensors:
  - {name: x, shape: [100, 300], role: input}
  - {name: b2_bias, shape: [130], role: weight}
  - {name: y, shape: [100, 130], role: output}
ops:
  - {name: fc1, op: linear, inputs: [x], features: 200, bias: true}
  - {name: act1, op: relu, inputs: [fc1]}
  - {name: fc2, op: linear, inputs: [act1], features: 130}
  - {name: b2, op: bias, inputs: [fc2, b2_bias]}
  - {name: y, op: gelu, inputs: [b2]}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 100 * 130);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("run: strided, padded and grouped convolutions match the reference", "[run]") {
  const Outcome o = run_and_compare("tpu-v4i", R"(name: convs
dtype: bf16
tensors:
  - {name: img, shape: [2, 17, 15, 12], role: input}
  - {name: y, shape: [2, 5, 4, 20], role: output}
ops:
  - {name: c1, op: conv2d, inputs: [img], filters: 24, kernel: 3, stride: 2, padding: 1, bias: true}
  - {name: r1, op: relu, inputs: [c1]}
  - {name: c2, op: conv2d, inputs: [r1], filters: 20, kernel: 3, padding: 1, groups: 4}
  - {name: y, op: max_pool, inputs: [c2], kernel: 3, stride: 2, padding: 1}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 2 * 5 * 4 * 20);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE(
    "run: convolutions read from an input band (dilated, strided, several images) match the "
    "reference",
    "[run]") {
  // 3x3 windows on a weight-stationary chip run as shifted views of a vmem band; tiles of whole
  // output rows may span two images.
  const std::string graph = R"(name: band_convs
dtype: bf16
tensors:
  - {name: img, shape: [3, 13, 11, 24], role: input}
  - {name: y, shape: [3, 6, 5, 40], role: output}
ops:
  - {name: c1, op: conv2d, inputs: [img], filters: 32, kernel: 3, dilation: 2, padding: 2}
  - {name: c2, op: conv2d, inputs: [c1], filters: 40, kernel: 3, stride: 2, padding: 0}
  - {name: y, op: relu, inputs: [c2]}
)";
  const std::string plan = compile_text("tpu-v4i", graph, true);
  CHECK(contains(
      plan,
      "A: input band in vmem (stored rows read once), 3x3 taps as shifted views, stride 1x1"));
  CHECK(contains(
      plan,
      "A: input band in vmem (stored rows read once), 3x3 taps as shifted views, stride 2x2"));
  const Outcome o = run_and_compare("tpu-v4i", graph);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 3 * 6 * 5 * 40);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("run: an int8 band convolution on the cycle-level 4x4 array is exact", "[run]") {
  // Weights for the next K piece load behind `keep` matmuls; every value crosses the PEs.
  const std::string graph = R"(name: tconv
dtype: int8
tensors:
  - {name: img, shape: [1, 6, 6, 3], role: input}
  - {name: w, shape: [3, 3, 3, 5], role: weight}
  - {name: y, shape: [1, 4, 4, 5], dtype: int32, role: output}
ops:
  - {name: y, op: conv2d, inputs: [img, w]}
)";
  CHECK(contains(compile_text("teach-4x4", graph, false), " keep"));
  const Outcome o = run_and_compare("teach-4x4", graph);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 4 * 4 * 5);
  CHECK(o.worst == 0.0);
}

TEST_CASE("run: depthwise convolution, relu6 and pools on the vector unit match the reference",
          "[run]") {
  const Outcome o = run_and_compare("tpu-v4i", R"(name: depthwise
dtype: bf16
tensors:
  - {name: img, shape: [1, 12, 10, 16], role: input}
  - {name: y, shape: [1, 1, 1, 16], role: output}
ops:
  - {name: dw, op: conv2d, inputs: [img], filters: 16, kernel: 3, stride: 2, padding: 1, groups: 16, bias: true}
  - {name: act, op: relu6, inputs: [dw]}
  - {name: pool, op: avg_pool, inputs: [act], kernel: 2, stride: 2}
  - {name: y, op: global_avg_pool, inputs: [pool]}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 16);
  CHECK(o.worst < 1.0 / 32);
}

TEST_CASE("run: a BERT-base encoder layer matches the reference", "[run]") {
  const Outcome o =
      run_and_compare("tpu-v4i", slurp(TPUSIM_SOURCE_DIR "/workloads/bert-base-layer-s128.yaml"));
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 128 * 768);
  CHECK(o.worst < 1.0 / 32);
}

TEST_CASE("run: with memory.model hbm the int8 matmul equals the reference exactly, as with simple",
          "[run]") {
  const std::string graph = slurp(TPUSIM_SOURCE_DIR "/workloads/teach/matmul-4x4.yaml");
  const Outcome hbm = run_and_compare("teach-4x4", graph, "--set memory.model=hbm");
  REQUIRE(hbm.exit_code == 0);
  CHECK(hbm.nonzero > 0);
  CHECK(hbm.worst == 0.0);
}

TEST_CASE("run: a convolution with a large K cuts it through an im2col gather, not a band",
          "[run]") {
  // 8x28x28 images, 3x3 kernel, 128 filters, bf16, on tpu-v4i (4 MXUs of 128x128 at 1.05 GHz,
  // 614 GB/s). With 2048 input channels a band, which keeps K = 9 x 2048 whole in one step, leaves
  // vmem room for one output row per step: each 28-row matmul then pays a 128-row weight load
  // and the weights are read 224 times (4.14 M cycles, 18x the bound below). The gather reads
  // every input nine times but cuts K.
  const auto conv = [](int cin) {
    return "name: c\ndtype: bf16\ntensors:\n  - {name: x, shape: [8, 28, 28, " +
           std::to_string(cin) +
           "], role: input}\n  - {name: y, role: output}\nops:\n  - {name: y, op: conv2d, inputs: "
           "[x], filters: 128, kernel: 3, padding: 1}\n";
  };
  CHECK(contains(compile_text("tpu-v4i", conv(256), true), "A: input band in vmem"));
  CHECK(contains(compile_text("tpu-v4i", conv(2048), true), "A: im2col gather"));
  TempDir dir;
  const json report = timing_report("tpu-v4i", "'" + dir.write("c.yaml", conv(2048)) + "'");
  const double macs = 8.0 * 28 * 28 * 128 * 9 * 2048;
  const double compute = macs / (4 * 128 * 128);
  const double gathered = 9.0 * 8 * 28 * 28 * 2048 * 2 + 9 * 2048 * 128 * 2 + 8 * 28 * 28 * 128 * 2;
  const double memory = gathered / (614e9 / 1.05e9);
  const double cycles = report["cycles"].get<double>();
  CHECK(cycles >= std::max(compute, memory));
  CHECK(cycles < 1.5 * std::max(compute, memory));
}

namespace {

// The instructions of each operator in a `.tasm` program, by operator id (the `.op N` blocks).
std::map<int, std::vector<std::string>> op_sections(const std::string& tasm) {
  std::map<int, std::vector<std::string>> sections;
  std::istringstream in(tasm);
  std::string line;
  int current = -1;
  while (std::getline(in, line)) {
    if (line.rfind(".op ", 0) == 0 && line.find('"') == std::string::npos) {
      current = std::stoi(line.substr(4));
      continue;
    }
    if (current >= 0 && !line.empty() && line[0] != ';' && line[0] != '.')
      sections[current].push_back(line);
  }
  return sections;
}

// Index of the first line starting with `prefix`, or the section's size.
std::size_t first_of(const std::vector<std::string>& lines, const std::string& prefix) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(prefix, 0) == 0) return i;
  return lines.size();
}

// The lowest and highest vmem address an operator's instructions name.
std::pair<std::uint64_t, std::uint64_t> vmem_span(const std::vector<std::string>& lines) {
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (const std::string& l : lines)
    for (std::size_t at = l.find("vmem:"); at != std::string::npos; at = l.find("vmem:", at + 1)) {
      const std::uint64_t addr = std::stoull(l.substr(at + 5), nullptr, 0);
      lo = std::min(lo, addr);
      hi = std::max(hi, addr);
    }
  return {lo, hi};
}

json run_report(const std::string& graph_text, const std::string& extra,
                const std::string& chip = "tpu-v4i") {
  TempDir dir;
  const std::string graph_path = dir.write("graph.yaml", graph_text);
  const std::string out = dir.path("out");
  const std::string command =
      "cd '" TPUSIM_SOURCE_DIR "' && timeout 120 '" TPUSIM_EXE "' run -q -c " + chip + " -w '" +
      graph_path + "' -o '" + out + "' " + extra + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  return json::parse(slurp(out + "/report.json"));
}

const json& op_named(const json& report, const std::string& name) {
  for (const json& o : report["ops"])
    if (o["name"] == name) return o;
  FAIL("no operator " << name);
  return report;
}

// Two independent weight-streaming products of one input, then their sum.
const char* const kTwoBranches = R"(name: branches
dtype: bf16
tensors:
  - {name: x, shape: [1, 768], role: input}
  - {name: y, shape: [1, 768], role: output}
ops:
  - {name: a, op: linear, inputs: [x], features: 768, bias: true}
  - {name: b, op: linear, inputs: [x], features: 768}
  - {name: y, op: add, inputs: [a, b]}
)";

}  // namespace

TEST_CASE("run: an operator starts beside the one before it and waits only to read its result",
          "[run][overlap]") {
  const auto ops = op_sections(compile_text("tpu-v4i", kTwoBranches, false));
  REQUIRE(ops.size() == 3);
  const auto &a = ops.at(0), &b = ops.at(1), &y = ops.at(2);
  // b reads only x: it never waits for a. y reads a and b: the sequencer waits before its loads.
  CHECK(first_of(a, "sem.wait seq") == a.size());
  CHECK(first_of(b, "sem.wait seq") == b.size());
  CHECK(first_of(y, "sem.wait seq") < first_of(y, "load "));
  // b's buffers sit beside a's, so neither overwrites the other's.
  const auto span_a = vmem_span(a), span_b = vmem_span(b);
  CHECK((span_a.second < span_b.first || span_b.second < span_a.first));
  // With a barrier between operators none of this happens.
  TempDir dir;
  const std::string graph_path = dir.write("graph.yaml", kTwoBranches);
  const std::string tasm = dir.path("p.tasm");
  REQUIRE(std::system(("cd '" TPUSIM_SOURCE_DIR "' && '" TPUSIM_EXE "' compile -c tpu-v4i -w '" +
                       graph_path + "' --no-overlap -o '" + tasm + "' 2> /dev/null")
                          .c_str()) == 0);
  const auto barriers = op_sections(slurp(tasm));
  CHECK(first_of(barriers.at(0), "barrier") < barriers.at(0).size());
  CHECK(first_of(barriers.at(1), "sem.wait seq") == barriers.at(1).size());

  // In the run, b's weights stream while a still works; with barriers b starts after a ends.
  const json overlapped = run_report(kTwoBranches, "");
  CHECK(op_named(overlapped, "b")["start_cycle"] < op_named(overlapped, "a")["end_cycle"]);
  const json separated = run_report(kTwoBranches, "--no-overlap");
  CHECK(op_named(separated, "b")["start_cycle"] >= op_named(separated, "a")["end_cycle"]);
  CHECK(overlapped["cycles"] < separated["cycles"]);

  // Values do not depend on it.
  for (const std::string extra : {"", "--no-overlap"}) {
    const Outcome o = run_and_compare("tpu-v4i", kTwoBranches, extra);
    REQUIRE(o.exit_code == 0);
    CHECK(o.nonzero > 0);
    CHECK(o.compared == 768);
    CHECK(o.worst < 1.0 / 64);
  }
}

TEST_CASE("run: one-row products against transposed weights swap operands, bias per row", "[run]") {
  // C = x W^T with one row of x per head streams W's rows against x as the stationary column:
  // 1025 keys in 128-column tiles leave a last tile of one column that still shifts 128 rows.
  const std::string graph = R"(name: one_row
dtype: bf16
tensors:
  - {name: x, shape: [6, 1, 64], role: input}
  - {name: w, shape: [6, 1025, 64], role: weight}
  - {name: bias, shape: [1025], role: weight}
  - {name: y, shape: [6, 1, 1025], role: output}
ops:
  - {name: xw, op: matmul, inputs: [x, w], transpose_b: true}
  - {name: y, op: bias, inputs: [xw, bias]}
)";
  const std::string plan = compile_text("tpu-v4i", graph, true);
  CHECK(contains(plan, "operands swapped"));
  CHECK(contains(plan, "fused: xw+y"));
  const Outcome o = run_and_compare("tpu-v4i", graph);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 6 * 1025);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("run: the GEMM planner counts the MXU's rate for the operand type", "[run][lower]") {
  // tpu-v5e runs int8 at twice its bf16 rate (394 against 197 TOPS, facts.md 1.1): the compute
  // bound --explain prints for a GEMM that fills the four 128 x 128 arrays is M N K / (4 R C 2).
  const std::uint64_t n = 2048, mxus = 4, R = 128, C = 128, int8_rate = 2;
  TempDir dir;
  const std::string graph = dir.write("gemm.yaml", R"(name: gemm
dtype: int8
tensors:
  - {name: a, shape: [2048, 2048], role: input}
  - {name: b, shape: [2048, 2048], role: weight}
  - {name: c, shape: [2048, 2048], role: output}
ops:
  - {name: gemm, op: matmul, inputs: [a, b], output: c}
)");
  const std::string explain = dir.path("explain.txt");
  REQUIRE(
      std::system(("cd '" TPUSIM_SOURCE_DIR "' && '" TPUSIM_EXE "' compile -c tpu-v5e -w '" +
                   graph + "' -o '" + dir.path("p.tbin") + "' --explain > '" + explain + "' 2>&1")
                      .c_str()) == 0);
  const std::string text = slurp(explain);
  const std::size_t at = text.find("compute >= ");
  REQUIRE(at != std::string::npos);
  const std::uint64_t bound = std::stoull(text.substr(at + 11));
  CHECK(bound == n * n * n / (mxus * R * C * int8_rate));
  // The run cannot beat it.
  const json r = run_report(slurp(graph), "", "tpu-v5e");
  CHECK(r["cycles"].get<std::uint64_t>() >= bound);
}
