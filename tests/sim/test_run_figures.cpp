// `tpusim run`'s figures against derivations: MACs per operator, bytes moved, array energy,
// utilization, and ops.csv against report.json. (test_run.cpp checks the values a run computes.)

#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "tests/sim/run_support.h"

#include "workloads/load.h"

namespace {

using tpusim::test::compile_text;
using tpusim::test::contains;
using tpusim::test::Outcome;
using tpusim::test::run_and_compare;
using tpusim::test::slurp;
using tpusim::test::TempDir;
using tpusim::test::timing_report;
namespace wl = tpusim::workloads;

}  // namespace

// MACs are counted where the MXU does them. Depthwise convolutions run on the vector unit as
// multiplies and adds, which the report does not count as MACs yet (no fused multiply-add op):
// they are left out of both sides here.
TEST_CASE("run: every operator's MACs equal its analytic count, and they sum to the graph's",
          "[run]") {
  // Depthwise convolutions run on the vector unit (vpu.mac) and count there.
  for (const char* name : {"resnet50", "mobilenetv2", "bert-base-layer-s128"}) {
    INFO(name);
    const wl::Graph graph =
        wl::load_workload(std::string(TPUSIM_SOURCE_DIR "/workloads/") + name + ".yaml");
    const nlohmann::json report = timing_report("tpu-v4i", name);
    std::map<std::string, std::int64_t> want;
    for (const wl::Op& op : graph.ops) want[op.name] = wl::op_macs(graph, op);
    std::int64_t total = 0;
    for (const auto& op : report["ops"]) {
      // A fused operator is named "conv1+conv1_bias+conv1_relu": its MACs are the first one's.
      const std::string full = op["name"].get<std::string>();
      const std::string first = full.substr(0, full.find('+'));
      REQUIRE(want.count(first) == 1);
      CHECK(op["macs"].get<std::int64_t>() == want[first]);
      total += op["macs"].get<std::int64_t>();
    }
    CHECK(total == wl::graph_macs(graph));
    CHECK(report["macs"].get<std::int64_t>() == wl::graph_macs(graph));
  }
}

// An fp32 product of 64 x 256 by 256 x 128: the two tests below.
const std::string kFp32Matmul = R"(name: lin32
dtype: fp32
tensors:
  - {name: x, shape: [64, 256], role: input}
  - {name: w, shape: [256, 128], role: weight}
  - {name: y, shape: [64, 128], role: output}
ops:
  - {name: y, op: matmul, inputs: [x, w]}
)";

TEST_CASE("run: an fp32 matmul on tpu-v3 moves fp32 and multiplies its operands as bf16", "[run]") {
  // XLA's DEFAULT precision (core.mxu.rounding in the TPU presets): 4 B per element through HBM,
  // each operand rounded to bf16 in the array, fp32 accumulation. Against the exact fp32
  // reference, each product is off by at most about 2 x 2^-9 of its size.
  const std::string& graph = kFp32Matmul;
  const Outcome o = run_and_compare("tpu-v3", graph);
  REQUIRE(o.exit_code == 0);
  CHECK(o.compared == 64 * 128);
  CHECK(o.worst < 1.0 / 32);
  CHECK(o.worst > 1e-5);  // exact fp32 products would agree to about 1e-7
  TempDir dir;
  const nlohmann::json report = timing_report("tpu-v3", "'" + dir.write("g.yaml", graph) + "'");
  CHECK(report["traffic_bytes"]["hbm_read"].get<std::int64_t>() == 4 * (64 * 256 + 256 * 128));
  CHECK(report["traffic_bytes"]["hbm_write"].get<std::int64_t>() == 4 * 64 * 128);
  // Inside the array the operands are bf16: half the bytes read from vector memory cross its
  // registers, and a MAC costs a bf16 MAC (configs/energy/scaled-16nm.yaml, tpu-v3's table:
  // bf16 MAC 0.562 pJ, register 0.0202 pJ per byte and hop). Weight stationary: inputs cross
  // the 128 columns, weights shift down the 128 rows, and each output's fp32 partial sum runs
  // down the 128 rows once per K slice of at most 128 (K = 256: two).
  // The rows of x are shared out among the MXUs that run; each of them holds all of w. So, as
  // bf16, x crosses the arrays once in all and w once per busy MXU.
  std::int64_t input_bytes = 0, weight_bytes = 0, busy = 0;
  for (const auto& u : report["units"]) {
    if (u["kind"] != "mxu") continue;
    const auto& st = u["stats"];
    CHECK(2 * st["array_input_bytes"].get<std::int64_t>() == st["input_bytes"].get<std::int64_t>());
    CHECK(2 * st["array_weight_bytes"].get<std::int64_t>() ==
          st["weight_bytes"].get<std::int64_t>());
    input_bytes += st["array_input_bytes"].get<std::int64_t>();
    weight_bytes += st["array_weight_bytes"].get<std::int64_t>();
    busy += st["array_input_bytes"].get<std::int64_t>() > 0;
  }
  REQUIRE(busy > 0);
  CHECK(input_bytes == 64 * 256 * 2);
  CHECK(weight_bytes == busy * 256 * 128 * 2);
  // 128 rows = 128 columns.
  const double array_bytes =
      4.0 * 64 * 128 * 2 * 128 + 128.0 * (64 * 256 * 2 + busy * 256 * 128 * 2);
  const double macs = 64.0 * 256 * 128;
  CHECK(report["macs"].get<double>() == macs);
  CHECK(report["energy_pj"]["mxu"].get<double>() == Approx(macs * 0.562 + 0.0202 * array_bytes));
  // One MAC per PE-cycle, as bf16: 2 cores x 2 MXUs of 128 x 128.
  CHECK(report["utilization"]["mxu"].get<double>() ==
        Approx(macs / (report["cycles"].get<double>() * 2 * 2 * 128 * 128)));
}

TEST_CASE("run: an fp32 graph lowers as fp32 where the MXU rounds it, else as the MXU's type",
          "[run]") {
  const std::string& graph = kFp32Matmul;
  const std::uint64_t elements = 64 * 256 + 256 * 128 + 64 * 128;
  const std::string tpu = compile_text("tpu-v3", graph, true);
  CHECK(contains(tpu, "MXU operands fp32 (rounded to bf16 by the array), "));
  CHECK(contains(tpu, " " + std::to_string(4 * elements) + " bytes of HBM"));
  // An int8 array without rounding: every fp32 tensor of the graph becomes int8 (timing only).
  const std::string teach = compile_text("teach-4x4", graph, true);
  CHECK(contains(teach, "MXU operands int8, "));
  CHECK(contains(teach, " " + std::to_string(elements) + " bytes of HBM"));
  CHECK(contains(teach, "note: the graph's fp32 is not an MXU precision of teach-4x4"));
}

TEST_CASE("run: ops.csv holds report.json's operators, figure for figure", "[run][report]") {
  // tpu-v1 decoding GPT-2 leaves its MXU at a few 1e-4 per operator: small figures must keep
  // their precision in the CSV too.
  TempDir dir;
  const std::string command = "cd '" TPUSIM_SOURCE_DIR "' && '" TPUSIM_EXE
                              "' run -q -c tpu-v1 -w gpt2-small-decode -o '" +
                              dir.path("out") + "' > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  const auto report = nlohmann::json::parse(slurp(dir.path("out") + "/report.json"));
  std::istringstream csv(slurp(dir.path("out") + "/ops.csv"));
  std::string line;
  REQUIRE(std::getline(csv, line));
  CHECK(line ==
        "id,name,kind,start_cycle,end_cycle,cycles,mxu_cycles,mxu_stream_cycles,macs,"
        "hbm_read_bytes,hbm_write_bytes,energy_pj,mxu_utilization");
  std::size_t n = 0;
  for (; std::getline(csv, line); ++n) {
    REQUIRE(n < report["ops"].size());
    const auto& op = report["ops"][n];
    // The name is quoted; no sample name holds a quote or a comma.
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() == 13);
    CAPTURE(line);
    CHECK(cells[0] == std::to_string(op["id"].get<std::uint64_t>()));
    CHECK(cells[1] == "\"" + op["name"].get<std::string>() + "\"");
    CHECK(cells[2] == op["kind"].get<std::string>());
    const char* integers[] = {"start_cycle",    "end_cycle",         "cycles",
                              "mxu_cycles",     "mxu_stream_cycles", "macs",
                              "hbm_read_bytes", "hbm_write_bytes"};
    for (std::size_t k = 0; k < 8; ++k)
      CHECK(cells[3 + k] == std::to_string(op[integers[k]].get<std::uint64_t>()));
    CHECK(std::stod(cells[11]) == Approx(op["energy_pj"].get<double>()).margin(5e-4));
    CHECK(std::stod(cells[12]) == Approx(op["mxu_utilization"].get<double>()).epsilon(1e-8));
  }
  CHECK(n == report["ops"].size());
}

TEST_CASE("run: a 2048^3 bf16 GEMM keeps tpu-v4i's MXUs at least 95% busy", "[run]") {
  // 2048^3 MACs over 4 MXUs of 128x128 is 131072 cycles of pure compute; the schedule adds only the
  // first tile's loads and the last tile's read-out and store, which the tile choice keeps small.
  const nlohmann::json report = timing_report("tpu-v4i", "gemm-2048");
  const double ideal = 2048.0 * 2048 * 2048 / (4 * 128 * 128);
  CHECK(report["cycles"].get<double>() >= ideal);
  CHECK(report["utilization"]["mxu"].get<double>() >= 0.95);
}

TEST_CASE("run: a GPT-2 decode step on tpu-v4i is memory-bound at 80% of HBM bandwidth or more",
          "[run]") {
  // Every weight and cached key and value is read once for one token; each layer's
  // concatenated keys and values (the cache and the new token's) are written once and read back
  // by its attention; the logits are written. That traffic at peak bandwidth bounds the step's
  // time from below, far above what its MACs need of the MXUs. The other activations (a few
  // KiB each) pass through HBM too, each written at most once and read at most once per reader.
  const wl::Graph graph =
      wl::load_workload(std::string(TPUSIM_SOURCE_DIR "/workloads/gpt2-small-decode.yaml"));
  double read_once = 0, concatenated = 0, outputs = 0, produced = 0, consumed = 0;
  for (const wl::Tensor& t : graph.tensors) {
    const auto bytes = static_cast<double>(t.bytes());
    if (t.role == wl::TensorRole::kInput || t.role == wl::TensorRole::kWeight) read_once += bytes;
    if (t.role == wl::TensorRole::kOutput) outputs += bytes;
    if (t.role == wl::TensorRole::kActivation || t.role == wl::TensorRole::kOutput)
      produced += bytes;
  }
  for (const wl::Op& op : graph.ops) {
    if (op.kind == wl::OpKind::kConcat)
      concatenated += static_cast<double>(graph.tensor(op.output).bytes());
    for (const wl::TensorId in : op.inputs)
      if (graph.tensor(in).role == wl::TensorRole::kActivation)
        consumed += static_cast<double>(graph.tensor(in).bytes());
  }
  const nlohmann::json report = timing_report("tpu-v4i", "gpt2-small-decode");
  const double read = report["traffic_bytes"]["hbm_read"].get<double>();
  const double written = report["traffic_bytes"]["hbm_write"].get<double>();
  CHECK(read >= read_once + concatenated);
  // The embedding's row of the tied wte is read a second time; 0.1% leaves room for that.
  CHECK(read <= 1.001 * (read_once + consumed));
  CHECK(written >= concatenated + outputs);
  CHECK(written <= produced);
  const double bytes = read_once + 2 * concatenated + outputs;
  const double bytes_per_cycle = report["peak"]["memory_bandwidth_bytes_per_s"].get<double>() /
                                 report["clock_hz"].get<double>();
  const double traffic_bound = bytes / bytes_per_cycle;
  const double compute_bound = report["macs"].get<double>() / (4 * 128 * 128);
  const double cycles = report["cycles"].get<double>();
  CHECK(traffic_bound > 100 * compute_bound);
  CHECK(cycles >= traffic_bound);
  CHECK(traffic_bound / cycles >= 0.80);
  // The report divides the bytes it moved by simulated seconds.
  CHECK(report["utilization"]["memory_bandwidth"].get<double>() ==
        Approx((read + written) / bytes_per_cycle / cycles).epsilon(1e-5));
}
