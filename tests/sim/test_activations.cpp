// compiler.activations: vmem. Operator outputs that only later operators read stay in vector
// memory: the HBM traffic becomes the graph's inputs, weights and outputs alone, and the results
// do not change by a bit.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "tests/sim/run_support.h"

namespace {

using nlohmann::json;
using tpusim::test::compile_text;
using tpusim::test::contains;
using tpusim::test::Outcome;
using tpusim::test::run_and_compare;
using tpusim::test::slurp;
using tpusim::test::TempDir;

constexpr const char* kKeep = "--set compiler.activations=vmem";

// Four 128-wide bf16 layers over 64 rows: each operand is one tile on tpu-v4i's 128x128 arrays,
// so every tensor crosses the DMA once.
constexpr std::uint64_t kRows = 64, kWidth = 128, kLayers = 4, kElem = 2;
const char* const kMlp = R"(name: mlp4
dtype: bf16
tensors:
  - {name: x, shape: [64, 128], role: input}
  - {name: y, shape: [64, 128], role: output}
ops:
  - repeat:
      count: 3
      input: x
      output: h
      ops:
        - {name: fc, op: linear, inputs: [x], features: 128}
        - {name: h, op: relu, inputs: [fc]}
  - {name: y, op: linear, inputs: [h], features: 128}
)";

json run_report(const TempDir& dir, const std::string& graph, const std::string& extra) {
  const std::string graph_path = dir.write("graph.yaml", graph);
  const std::string out = dir.path("out");
  const std::string command = "cd '" TPUSIM_SOURCE_DIR "' && '" TPUSIM_EXE
                              "' run -q -c tpu-v4i -w '" +
                              graph_path + "' -o '" + out + "' " + extra + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  return json::parse(slurp(out + "/report.json"));
}

// The files a functional run dumps (its generated inputs and its outputs), byte for byte.
std::string functional_outputs(const TempDir& dir, const std::string& graph,
                               const std::string& extra) {
  const std::string graph_path = dir.write("graph.yaml", graph);
  const std::string dump = dir.path("dump");
  std::filesystem::remove_all(dump);
  const std::string command =
      "cd '" TPUSIM_SOURCE_DIR "' && '" TPUSIM_EXE "' run -q -c tpu-v4i -w '" + graph_path +
      "' --functional --seed 3 --dump '" + dump + "' " + extra + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dump))
    files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const std::string& f : files) all += f.substr(dump.size()) + ":" + slurp(f);
  return all;
}

}  // namespace

TEST_CASE("activations: kept in vmem, HBM moves only the inputs, weights and outputs", "[run]") {
  const std::uint64_t act = kRows * kWidth * kElem;  // one layer's input or output
  const std::uint64_t weights = kLayers * kWidth * kWidth * kElem;
  TempDir dir;
  const json hbm = run_report(dir, kMlp, "");
  const json kept = run_report(dir, kMlp, kKeep);
  // Through HBM each of the three intermediates is stored once and loaded once.
  CHECK(hbm["traffic_bytes"]["hbm_read"] == act + weights + (kLayers - 1) * act);
  CHECK(hbm["traffic_bytes"]["hbm_write"] == act + (kLayers - 1) * act);
  CHECK(kept["traffic_bytes"]["hbm_read"] == act + weights);
  CHECK(kept["traffic_bytes"]["hbm_write"] == act);
  CHECK(kept["macs"] == hbm["macs"]);
  CHECK(kept["cycles"].get<std::uint64_t>() < hbm["cycles"].get<std::uint64_t>());

  // First fit over live ranges: layer 1 reads h.0 while writing h.1 (two slots); layer 2 writes
  // h.2 where h.0 was (test_overlap.cpp checks that such a write waits for the reader).
  const std::string plan = compile_text("tpu-v4i", kMlp, true, kKeep);
  CHECK(contains(plan, "activations kept in vmem (compiler.activations): " +
                           std::to_string(2 * act) + " bytes at its top"));
  CHECK_FALSE(contains(compile_text("tpu-v4i", kMlp, true), "activations kept in vmem"));
}

TEST_CASE("activations: kept in vmem, outputs equal those through HBM bit for bit", "[run]") {
  TempDir dir;
  const std::string through_hbm = functional_outputs(dir, kMlp, "");
  const std::string kept = functional_outputs(dir, kMlp, kKeep);
  REQUIRE(through_hbm.size() > kRows * kWidth * kElem);
  CHECK(kept == through_hbm);
  const Outcome o = run_and_compare("tpu-v4i", kMlp, kKeep);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("activations: every operator kind reads and writes them in vmem correctly", "[run]") {
  // Vector-unit rows (add, softmax, layernorm, gelu), copies (concat), an unpadded convolution
  // and pools: the padded tensor, the reshape alias and the transposed tensor stay in HBM.
  const std::string kinds = R"(name: kinds
dtype: bf16
tensors:
  - {name: img, shape: [2, 9, 9, 16], role: input}
  - {name: y, shape: [2, 2, 2, 64], role: output}
ops:
  - {name: c1, op: conv2d, inputs: [img], filters: 32, kernel: 2, bias: true}
  - {name: g1, op: gelu, inputs: [c1]}
  - {name: s1, op: softmax, inputs: [g1]}
  - {name: n1, op: layernorm, inputs: [s1]}
  - {name: a1, op: add, inputs: [n1, c1]}
  - {name: t1, op: transpose, inputs: [a1], perm: [0, 2, 1, 3]}
  - {name: k1, op: concat, inputs: [t1, a1], axis: 3}
  - {name: p1, op: max_pool, inputs: [k1], kernel: 3, stride: 2, padding: 1}
  - {name: r1, op: reshape, inputs: [p1], shape: [2, 16, 64]}
  - {name: r2, op: reshape, inputs: [r1], shape: [2, 4, 4, 64]}
  - {name: y, op: avg_pool, inputs: [r2], kernel: 2, stride: 2}
)";
  CHECK(contains(compile_text("tpu-v4i", kinds, true, kKeep), "activations kept in vmem"));
  const Outcome o = run_and_compare("tpu-v4i", kinds, kKeep);
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 2 * 2 * 2 * 64);
  CHECK(o.worst < 1.0 / 32);
}

TEST_CASE("activations: an operator that needs the vmem they hold gets it back", "[run]") {
  // a and b (256 KiB each) fill the kept half of a 1 MiB vmem while y1 runs, and y2 runs beside
  // y1. A layernorm over 8192 values fits the other half; over 16384 (64 KiB rows, double
  // buffered, with fp32 scratch) it does not, and a and b go back to HBM.
  const auto graph = [](int width) {
    return std::string(R"(name: evict
dtype: fp32
tensors:
  - {name: x, shape: [32, 2048], role: input}
  - {name: z, shape: [2, )") +
           std::to_string(width) + R"(], role: input}
  - {name: y1, role: output}
  - {name: y2, role: output}
ops:
  - {name: a, op: relu, inputs: [x]}
  - {name: b, op: relu, inputs: [a]}
  - {name: y1, op: add, inputs: [a, b]}
  - {name: y2, op: layernorm, inputs: [z]}
)";
  };
  const std::string small = " --set core.vmem.capacity=1MiB";
  CHECK(contains(compile_text("tpu-v4i", graph(8192), true, kKeep + small),
                 "activations kept in vmem (compiler.activations): 524288 bytes"));
  CHECK_FALSE(
      contains(compile_text("tpu-v4i", graph(16384), true, kKeep + small), "activations kept"));
  // At 16384 nothing is kept, so the program is the one without the option; at 8192 the kept
  // activations share vmem with the layernorm, and the values must be those through HBM.
  TempDir dir;
  const std::string through_hbm = functional_outputs(dir, graph(8192), small);
  CHECK(functional_outputs(dir, graph(8192), kKeep + small) == through_hbm);
}

TEST_CASE("activations: vmem refuses a chip of several cores, naming the key", "[run][errors]") {
  TempDir dir;
  const std::string graph_path = dir.write("graph.yaml", kMlp);
  const std::string command =
      "cd '" TPUSIM_SOURCE_DIR "' && '" TPUSIM_EXE "' run -q -c tpu-v3 -w '" + graph_path + "' " +
      kKeep + " > /dev/null 2> '" + dir.path("err") + "'";
  const int status = std::system(command.c_str());
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(contains(slurp(dir.path("err")), "compiler.activations: vmem needs cores: 1"));
}
