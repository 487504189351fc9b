#include <cmath>

#include <catch2/catch.hpp>

#include "workloads/numerics.h"
#include "workloads/reference.h"
#include "workloads/yaml_graph.h"
#include "workloads_test_support.h"

using namespace tpusim;
using namespace tpusim::workloads;
using Catch::Matchers::Contains;
using test::GraphMaker;

namespace {

using Data = std::map<std::string, TensorData>;

TensorData data(const Graph& g, const std::string& name, std::vector<double> values) {
  const Tensor& t = g.tensor(*g.find_tensor(name));
  return TensorData{t.shape, t.dtype, std::move(values)};
}

std::vector<double> run(const Graph& g, const Data& in, const std::string& out) {
  return evaluate(g, in).at(out).values;
}

}  // namespace

TEST_CASE("reference: 2x2 matmul and int8 -> int32", "[workloads][reference]") {
  GraphMaker m;
  m.tensor("a", {2, 2}, DType::kFp32);
  m.tensor("b", {2, 2}, DType::kFp32, TensorRole::kWeight);
  m.op("c", OpKind::kMatmul, {0, 1});
  // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50]
  REQUIRE(run(m.g, {{"a", data(m.g, "a", {1, 2, 3, 4})}, {"b", data(m.g, "b", {5, 6, 7, 8})}},
              "c") == std::vector<double>{19, 22, 43, 50});

  const Graph teach = parse_graph_yaml(
      "dtype: int8\ntensors:\n  - {name: a, shape: [1, 4], role: input}\n"
      "  - {name: b, shape: [4, 2], role: weight}\n  - {name: d, role: output}\nops:\n  - {name: "
      "c, op: matmul, inputs: [a, b]}\n"
      "  - {name: d, op: relu, inputs: [c]}\n",
      "t.yaml");
  // -128 * -128 * 4 = 65536 does not fit int8 or int16: the int32 result is exact.
  const Data in{{"a", data(teach, "a", {-128, -128, -128, -128})},
                {"b", data(teach, "b", {-128, 1, -128, 1, -128, 1, -128, 1})}};
  REQUIRE(run(teach, in, "c") == std::vector<double>{65536, -512});
  REQUIRE(run(teach, in, "d") == std::vector<double>{65536, 0});
}

TEST_CASE("reference: batched matmul with broadcast and transposed operands",
          "[workloads][reference]") {
  GraphMaker m;
  m.tensor("a", {2, 1, 2}, DType::kFp32);  // two batches of a 1x2 row
  m.tensor("b", {2, 2}, DType::kFp32);     // one 2x2 matrix, stored transposed
  OpAttrs tb;
  tb.transpose_b = true;
  m.op("c", OpKind::kMatmul, {0, 1}, tb);
  // b^T = [1 3; 2 4]; [1 1] b^T = [3 7]; [2 0] b^T = [2 6]
  REQUIRE(run(m.g, {{"a", data(m.g, "a", {1, 1, 2, 0})}, {"b", data(m.g, "b", {1, 2, 3, 4})}},
              "c") == std::vector<double>{3, 7, 2, 6});
}

TEST_CASE("reference: 3x3 conv with zero padding, stride and depthwise", "[workloads][reference]") {
  GraphMaker m;
  m.tensor("x", {1, 3, 3, 1}, DType::kFp32);
  m.tensor("w", {3, 3, 1, 1}, DType::kFp32, TensorRole::kWeight);
  OpAttrs pad;
  pad.pad_top = pad.pad_bottom = pad.pad_left = pad.pad_right = 1;
  m.op("y", OpKind::kConv2d, {0, 1}, pad);
  // x = 1..9, w all ones: each output sums the 3x3 neighbourhood (zeros outside).
  //   1 2 3      12 21 16
  //   4 5 6  ->  27 45 33
  //   7 8 9      24 39 28
  const Data in{{"x", data(m.g, "x", {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                {"w", data(m.g, "w", std::vector<double>(9, 1.0))}};
  REQUIRE(run(m.g, in, "y") == std::vector<double>{12, 21, 16, 27, 45, 33, 24, 39, 28});

  GraphMaker s;
  s.tensor("x", {1, 3, 3, 1}, DType::kFp32);
  s.tensor("w", {3, 3, 1, 1}, DType::kFp32, TensorRole::kWeight);
  pad.stride_h = pad.stride_w = 2;
  s.op("y", OpKind::kConv2d, {0, 1}, pad);  // the corners of the padded result above
  REQUIRE(run(s.g, in, "y") == std::vector<double>{12, 16, 24, 28});

  GraphMaker d;
  d.tensor("x", {1, 1, 2, 2}, DType::kFp32);  // two pixels, two channels
  d.tensor("w", {1, 1, 1, 2}, DType::kFp32, TensorRole::kWeight);
  d.tensor("b", {2}, DType::kFp32, TensorRole::kWeight);
  OpAttrs dw;
  dw.groups = 2;
  d.op("y", OpKind::kConv2d, {0, 1, 2}, dw);
  // Channel c is scaled by w[c] alone, then biased.
  REQUIRE(run(d.g,
              {{"x", data(d.g, "x", {1, 2, 3, 4})},
               {"w", data(d.g, "w", {10, 100})},
               {"b", data(d.g, "b", {0.5, -1})}},
              "y") == std::vector<double>{10.5, 199, 30.5, 399});
}

TEST_CASE("reference: softmax, causal mask, layernorm, gelu", "[workloads][reference]") {
  GraphMaker m;
  m.tensor("x", {2, 3}, DType::kFp32);
  m.tensor("g", {3}, DType::kFp32, TensorRole::kWeight);
  m.tensor("b", {3}, DType::kFp32, TensorRole::kWeight);
  m.op("p", OpKind::kSoftmax, {0});
  OpAttrs causal;
  causal.causal = true;
  m.op("pc", OpKind::kSoftmax, {0}, causal);
  m.op("ln", OpKind::kLayerNorm, {0, 1, 2});
  m.op("ge", OpKind::kGelu, {0});
  const Data in{{"x", data(m.g, "x", {1, 2, 3, 0, 0, 0})},
                {"g", data(m.g, "g", {1, 1, 2})},
                {"b", data(m.g, "b", {0, 0, 1})}};
  const auto out = evaluate(m.g, in);
  // softmax(1,2,3) = e^i / (e + e^2 + e^3) = 0.09003057, 0.24472847, 0.66524096
  const auto& p = out.at("p").values;
  REQUIRE(p[0] == Approx(0.09003057).epsilon(1e-6));
  REQUIRE(p[1] == Approx(0.24472847).epsilon(1e-6));
  REQUIRE(p[2] == Approx(0.66524096).epsilon(1e-6));
  REQUIRE(p[3] == Approx(1.0 / 3));
  // Causal: row 0 sees only column 0; row 1 sees columns 0 and 1.
  REQUIRE(out.at("pc").values == std::vector<double>{1, 0, 0, 0.5, 0.5, 0});
  // layernorm(1,2,3): mean 2, variance 2/3, so (x - 2) / sqrt(2/3 + 1e-5), times gamma plus beta.
  const double inv = 1 / std::sqrt(2.0 / 3 + 1e-5);
  const auto& ln = out.at("ln").values;
  REQUIRE(ln[0] == Approx(-inv).epsilon(1e-6));
  REQUIRE(ln[1] == 0);
  REQUIRE(ln[2] == Approx(2 * inv + 1).epsilon(1e-6));
  // tanh GELU(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715)) = 0.8411920
  REQUIRE(out.at("ge").values[0] == Approx(0.8411920).epsilon(1e-6));
}

TEST_CASE("reference: pools, data movement, embedding, bf16 outputs", "[workloads][reference]") {
  GraphMaker m;
  m.tensor("x", {1, 2, 2, 1}, DType::kFp32);
  OpAttrs p;
  p.kernel_h = p.kernel_w = 2;
  p.pad_top = p.pad_left = 1;
  m.op("mx", OpKind::kMaxPool, {0}, p);  // windows over the top-left padded 3x3 grid
  m.op("av", OpKind::kAvgPool, {0}, p);
  m.op("gap", OpKind::kGlobalAvgPool, {0});
  OpAttrs perm;
  perm.perm = {0, 2, 1, 3};
  m.op("tr", OpKind::kTranspose, {0}, perm);
  OpAttrs axis;
  axis.axis = 2;
  m.op("cat", OpKind::kConcat, {0, 0}, axis);
  const auto out = evaluate(m.g, {{"x", data(m.g, "x", {1, -2, 3, 4})}});
  REQUIRE(out.at("mx").values == std::vector<double>{1, 1, 3, 4});
  REQUIRE(out.at("av").values == std::vector<double>{0.25, -0.25, 1, 1.5});  // padding counts
  REQUIRE(out.at("gap").values == std::vector<double>{1.5});
  REQUIRE(out.at("tr").values == std::vector<double>{1, 3, -2, 4});
  REQUIRE(out.at("cat").values == std::vector<double>{1, -2, 1, -2, 3, 4, 3, 4});

  GraphMaker e;
  e.tensor("table", {3, 2}, DType::kBf16, TensorRole::kWeight);
  e.tensor("ids", {2}, DType::kInt32);
  e.op("emb", OpKind::kEmbedding, {0, 1});
  e.tensor("third", {2}, DType::kBf16);
  e.op("sum", OpKind::kAdd, {2, 3});
  const Data in{{"table", data(e.g, "table", {1, 2, 3, 4, 5, 6})},
                {"ids", data(e.g, "ids", {2, 0})},
                {"third", data(e.g, "third", {0x1p-8, 0x1p-8})}};
  REQUIRE(run(e.g, in, "emb") == std::vector<double>{5, 6, 1, 2});
  // 5 + 2^-8 and 1 + 2^-8 round to bf16: 5 has a coarser step (2^-5) and 1 + 2^-8 is a tie -> 1.
  REQUIRE(run(e.g, in, "sum") == std::vector<double>{5, 6, 1, 2});
  Data bad = in;
  bad.at("ids").values = {3, 0};
  REQUIRE_THROWS_WITH(evaluate(e.g, bad),
                      "t.yaml:2:3: op 'emb' (embedding): index 3 at position 0 is outside the "
                      "table's 3 rows");
  Data missing = in;
  missing.erase("third");
  REQUIRE_THROWS_WITH(evaluate(e.g, missing), Contains("no data given for input 'third'"));
}

TEST_CASE("reference: random inputs run through a sample-sized graph", "[workloads][reference]") {
  const Graph g = parse_graph_yaml(
      "tensors:\n  - {name: ids, shape: [4], dtype: int32, role: input}\n"
      "  - {name: table, shape: [10, 8], role: weight}\n  - {name: y, role: output}\nops:\n"
      "  - {name: emb, op: embedding, inputs: [table, ids]}\n"
      "  - {name: fc, op: linear, inputs: [emb], features: 8, bias: true}\n"
      "  - {name: y, op: layernorm, inputs: [fc]}\n",
      "r.yaml");
  const auto in = random_inputs(g, 7);
  REQUIRE(in.size() == 6);  // ids, table, fc.weight, fc.bias, y.gamma, y.beta
  for (double v : in.at("ids").values) REQUIRE((v >= 0 && v <= 9));
  const auto out = evaluate(g, in);
  for (double v : out.at("y").values) REQUIRE(v == round_to_bf16(static_cast<float>(v)));
}
