#include <catch2/catch.hpp>

#include "workloads/yaml_graph.h"

using namespace tpusim;
using namespace tpusim::workloads;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_graph_yaml(text, "g.yaml");
  } catch (const WorkloadError& e) {
    const std::string what = e.what();
    REQUIRE(what.find('\n') == std::string::npos);  // one line
    return what;
  }
  return "no error";
}

const char* kHead =
    "tensors:\n"
    "  - {name: x, shape: [2, 8], role: input}\n"
    "ops:\n";

}  // namespace

TEST_CASE("yaml: a small graph with implicit weights, bias and declared output",
          "[workloads][yaml]") {
  const Graph g = parse_graph_yaml(
      "name: tiny\n"
      "dtype: bf16\n"
      "tensors:\n"
      "  - {name: x, shape: [2, 8], role: input}\n"
      "  - {name: y, role: output}\n"
      "ops:\n"
      "  - {name: fc, op: linear, inputs: [x], features: 4, bias: true}\n"
      "  - {name: act, op: gelu, inputs: [fc]}\n"
      "  - {name: norm, op: layernorm, inputs: [act], epsilon: 1e-6, output: y}\n",
      "tiny.yaml");
  REQUIRE(g.name == "tiny");
  REQUIRE(g.ops.size() == 3);
  const Tensor& w = g.tensor(*g.find_tensor("fc.weight"));
  REQUIRE(w.shape == Shape{8, 4});
  REQUIRE(w.role == TensorRole::kWeight);
  REQUIRE(g.tensor(*g.find_tensor("fc.bias")).shape == Shape{4});
  REQUIRE(g.tensor(*g.find_tensor("norm.gamma")).shape == Shape{4});
  REQUIRE(g.tensor(*g.find_tensor("y")).shape == Shape{2, 4});
  REQUIRE(g.ops[2].attrs.epsilon == 1e-6);
  REQUIRE(g.ops[0].where.str() == "tiny.yaml:7:5");
  REQUIRE(graph_macs(g) == 2 * 8 * 4);
}

TEST_CASE("yaml: conv2d attributes, implicit HWIO weight and int8 -> int32", "[workloads][yaml]") {
  const Graph g = parse_graph_yaml(
      "dtype: int8\n"
      "tensors:\n"
      "  - {name: img, shape: [1, 9, 9, 4], role: input}\n"
      "  - {name: p, role: output}\n"
      "ops:\n"
      "  - {name: c, op: conv2d, inputs: [img], filters: 8, kernel: [3, 1], stride: [2, 1],\n"
      "     padding: [1, 0], dilation: 1, groups: 2, bias: true}\n"
      "  - {name: out, op: relu, inputs: [c]}\n"
      "  - {name: p, op: max_pool, inputs: [out], kernel: 2, stride: 2, padding: [0, 1, 0, 1]}\n",
      "conv.yaml");
  REQUIRE(g.tensor(*g.find_tensor("c.weight")).shape == Shape{3, 1, 2, 8});
  REQUIRE(g.tensor(*g.find_tensor("c.bias")).dtype == DType::kInt32);
  const Tensor& c = g.tensor(*g.find_tensor("c"));
  REQUIRE(c.shape == Shape{1, 5, 9, 8});  // (9 + 2 - 3) / 2 + 1 = 5
  REQUIRE(c.dtype == DType::kInt32);
  REQUIRE(g.tensor(*g.find_tensor("p")).shape == Shape{1, 3, 5, 8});
  REQUIRE(g.name == "conv");  // from the file name
}

TEST_CASE("yaml: repeat blocks suffix names and chain iterations", "[workloads][yaml]") {
  const Graph g = parse_graph_yaml(
      "tensors:\n"
      "  - {name: x, shape: [2, 8], role: input}\n"
      "  - {name: y, role: output}\n"
      "ops:\n"
      "  - repeat:\n"
      "      count: 3\n"
      "      input: x\n"
      "      output: h_out\n"
      "      tensors:\n"
      "        - {name: cache, shape: [8], role: input}\n"
      "      ops:\n"
      "        - {name: fc, op: linear, inputs: [x], features: 8}\n"
      "        - {name: h_out, op: add, inputs: [fc, cache]}\n"
      "  - {name: y, op: relu, inputs: [h_out]}\n",
      "rep.yaml");
  REQUIRE(g.ops.size() == 7);
  REQUIRE(g.ops[0].name == "fc.0");
  REQUIRE(g.tensor(g.ops[0].inputs[0]).name == "x");
  REQUIRE(g.tensor(g.ops[1].output).name == "h_out.0");
  REQUIRE(g.tensor(g.ops[2].inputs[0]).name == "h_out.0");  // iteration 1 reads iteration 0
  REQUIRE(g.tensor(g.ops[2].inputs[1]).name == "fc.1.weight");
  REQUIRE(g.tensor(g.ops[3].inputs[1]).name == "cache.1");
  REQUIRE(g.tensor(g.ops[5].output).name == "h_out");  // the last iteration's result
  REQUIRE(g.tensor(g.ops[6].inputs[0]).name == "h_out");
}

TEST_CASE("yaml: nested repeat blocks compose their suffixes", "[workloads][yaml]") {
  const Graph g = parse_graph_yaml(
      "tensors:\n"
      "  - {name: x, shape: [4], role: input}\n"
      "  - {name: z, role: output}\n"
      "ops:\n"
      "  - repeat:\n"
      "      count: 2\n"
      "      input: x\n"
      "      output: z\n"
      "      ops:\n"
      "        - repeat: {count: 2, input: x, output: z, ops: [{name: z, op: relu, inputs: "
      "[x]}]}\n",
      "nest.yaml");
  REQUIRE(g.ops.size() == 4);
  REQUIRE(g.tensor(g.ops[0].output).name == "z.0.0");
  REQUIRE(g.tensor(g.ops[1].output).name == "z.0");
  REQUIRE(g.tensor(g.ops[2].output).name == "z.1.0");
  REQUIRE(g.tensor(g.ops[3].output).name == "z");
}

TEST_CASE("yaml: bad input gives one line at file:line:col", "[workloads][yaml][errors]") {
  const std::string head = kHead;
  // Unknown keys, with the nearest valid key suggested.
  CHECK(error_of(head + "  - {name: a, op: relu, inptus: [x]}\n") ==
        "g.yaml:4:25: op 'a' (relu): unknown key 'inptus' (did you mean 'inputs'?)");
  CHECK(error_of("nmae: g\nops: []\n") == "g.yaml:1:1: unknown key 'nmae' (did you mean 'name'?)");
  CHECK_THAT(error_of(head + "  - {name: a, op: relu, inputs: [x], stride: 2}\n"),
             StartsWith("g.yaml:4:38: op 'a' (relu): unknown key 'stride' (expected one of:"));
  // Unknown names of things.
  CHECK(error_of(head + "  - {name: a, op: reluu, inputs: [x]}\n") ==
        "g.yaml:4:19: op 'a': op: unknown operator 'reluu' (did you mean 'relu'?)");
  CHECK(error_of(head + "  - {name: a, op: relu, inputs: [xx]}\n") ==
        "g.yaml:4:33: op 'a' (relu): inputs: unknown tensor 'xx' (did you mean 'x'?)");
  CHECK_THAT(error_of("dtype: bf61\nops: []\n"),
             StartsWith("g.yaml:1:8: dtype: unknown dtype 'bf61' (did you mean 'bf16'?)"));
  CHECK_THAT(
      error_of("tensors:\n  - {name: x, shape: [1], role: inptu}\n"),
      StartsWith("g.yaml:2:33: tensor 'x': role: unknown role 'inptu' (did you mean 'input'?)"));
  // Wrong types and missing keys.
  CHECK(error_of(head +
                 "  - {name: c, op: conv2d, inputs: [x], filters: 4, kernel: 3, stride: two}\n") ==
        "g.yaml:4:71: op 'c' (conv2d): stride: expected an integer in [1, 2147483647], got 'two'");
  CHECK(error_of(head + "  - {name: s, op: softmax, inputs: [x], causal: 1}\n") ==
        "g.yaml:4:49: op 's' (softmax): causal: expected true or false, got '1'");
  CHECK(error_of(head + "  - {name: a, op: relu}\n") ==
        "g.yaml:4:5: op 'a' (relu): inputs: missing required key");
  CHECK(error_of(head + "  - {name: a, op: relu, inputs: x}\n") ==
        "g.yaml:4:33: op 'a' (relu): inputs: expected a list of names, got 'x'");
  CHECK(error_of("tensors:\n  - {name: x, role: input}\nops: []\n") ==
        "g.yaml:2:5: tensor 'x': shape: missing required key");
  CHECK(error_of("tensors:\n  - {name: x, shape: [0, 2], role: input}\n") ==
        "g.yaml:2:23: tensor 'x': shape: expected an integer in [1, 2147483647], got '0'");
  CHECK_THAT(error_of(head + "  - {name: 1a, op: relu, inputs: [x]}\n"),
             StartsWith("g.yaml:4:12: op: name: '1a' is not a valid name"));
  CHECK(error_of("[1, 2]\n") ==
        "g.yaml:1:1: expected a map with keys name, dtype, tensors, ops; got a list");
  CHECK(error_of(head) == "g.yaml:3:1: ops: has no value");
  // Duplicates.
  CHECK(error_of("tensors:\n  - {name: x, shape: [1], role: input}\n  - {name: x, shape: [2], "
                 "role: input}\n") ==
        "g.yaml:3:5: duplicate tensor name 'x' (first defined at g.yaml:2:5)");
  CHECK(error_of(head + "  - {name: a, op: relu, inputs: [x]}\n  - {name: a, op: relu, inputs: "
                        "[x], output: b}\n") ==
        "g.yaml:5:12: op 'a': name: duplicate op name (first defined at g.yaml:4:5)");
  CHECK(error_of(head + "  - {name: a, op: relu, inputs: [x], output: x}\n") ==
        "g.yaml:4:46: op 'a' (relu): output: tensor 'x' is already defined (at g.yaml:2:5)");
  CHECK(error_of("tensors:\n  - {name: x, shape: [1], role: input, name: y}\n") ==
        "g.yaml:2:40: duplicate key 'name'");
  // Shapes that do not fit.
  CHECK(error_of(head + "  - {name: m, op: matmul, inputs: [x, x]}\n") ==
        "g.yaml:4:5: op 'm' (matmul): inner dimensions differ: a is [2,8] (K=8), b is [2,8] (K=2)");
  CHECK(error_of("tensors:\n  - {name: x, shape: [2], role: input}\n  - {name: y, shape: [3], "
                 "role: output}\n"
                 "ops:\n  - {name: y, op: relu, inputs: [x]}\n") ==
        "g.yaml:5:12: op 'y' (relu): output: 'y' is declared [3] (at g.yaml:3:5) but the op "
        "produces [2]");
  CHECK(error_of("tensors:\n  - {name: x, shape: [2], role: input}\n  - {name: w, shape: [2], "
                 "role: weight}\n"
                 "ops:\n  - {name: y, op: relu, inputs: [x]}\n") ==
        "g.yaml:3:5: weight 'w' is never read by any op");
  CHECK_THAT(error_of(head + "  - {name: c, op: conv2d, inputs: [x], filters: 4, kernel: 3}\n"),
             StartsWith("g.yaml:4:35: op 'c' (conv2d): inputs: x [2,8] must be NHWC"));
  CHECK(error_of(head + "  - {name: l, op: linear, inputs: [x]}\n") ==
        "g.yaml:4:5: op 'l' (linear): features: missing: with one input, linear declares its "
        "weight [K, features]");
  // requantize: a scale is required and positive; the result is int8 or int16; the input an
  // accumulator type.
  const std::string acc = "tensors:\n  - {name: a, shape: [4], dtype: int32, role: input}\nops:\n";
  CHECK(error_of(acc + "  - {name: q, op: requantize, inputs: [a]}\n") ==
        "g.yaml:4:5: op 'q' (requantize): scale: missing: requantize multiplies by it before "
        "rounding");
  CHECK(error_of(acc + "  - {name: q, op: requantize, inputs: [a], scale: 0}\n") ==
        "g.yaml:4:5: op 'q' (requantize): scale must be a finite fp32 above 0, got 0");
  // Checked as the fp32 the vector unit uses: 1e39 overflows it, 1e-46 rounds to 0.
  CHECK(error_of(acc + "  - {name: q, op: requantize, inputs: [a], scale: 1e39}\n") ==
        "g.yaml:4:5: op 'q' (requantize): scale must be a finite fp32 above 0, got 1e+39");
  CHECK(error_of(acc + "  - {name: q, op: requantize, inputs: [a], scale: 1e-46}\n") ==
        "g.yaml:4:5: op 'q' (requantize): scale must be a finite fp32 above 0, got 1e-46");
  CHECK(error_of(head + "  - {name: n, op: layernorm, inputs: [x], epsilon: 1e-50}\n") ==
        "g.yaml:4:5: op 'n' (layernorm): epsilon must be in (0, 1) and above 0 as an fp32, got "
        "1e-50");
  CHECK(error_of(acc + "  - {name: q, op: requantize, inputs: [a], scale: 1, to: int32}\n") ==
        "g.yaml:4:58: op 'q' (requantize): to: expected int8 or int16, got 'int32'");
  CHECK(error_of(head + "  - {name: q, op: requantize, inputs: [x], scale: 1}\n") ==
        "g.yaml:4:5: op 'q' (requantize): needs an int32 or fp32 input (an accumulator), got bf16");
  // A scalar has no last dimension to normalise (not "expects 3 inputs").
  const std::string scalar = "tensors:\n  - {name: s, shape: [], role: input}\nops:\n";
  CHECK(error_of(scalar + "  - {name: n, op: layernorm, inputs: [s]}\n") ==
        "g.yaml:4:38: op 'n' (layernorm): inputs: x must have rank >= 1 (it normalises its last "
        "dimension)");
}

TEST_CASE("yaml: YAML-level problems are refused", "[workloads][yaml][errors]") {
  CHECK(error_of("ops: []\n---\nops: []\n") ==
        "g.yaml:2:1: only one YAML document per file is allowed");
  CHECK(error_of("tensors:\n  - &t {name: x, shape: [1], role: input}\n") ==
        "g.yaml:2:5: YAML anchors (&name) are not supported");
  CHECK_THAT(error_of("a: [1, 2\n"), StartsWith("g.yaml:") && Contains("YAML syntax:"));
  CHECK(error_of("? [a]\n: 1\n") == "g.yaml:1:3: map keys must be plain names");
  CHECK_THAT(error_of(std::string(70, '[') + std::string(70, ']')),
             Contains("nesting deeper than 64"));
  CHECK(error_of("") == "g.yaml: expected a map with keys name, dtype, tensors, ops; got nothing");
  CHECK_THAT(error_of(std::string((16 << 20) + 1, ' ')),
             StartsWith("g.yaml: file is larger than 16 MiB"));
  REQUIRE_THROWS_WITH(load_graph_yaml("/nonexistent/x.yaml"),
                      "/nonexistent/x.yaml: cannot read: not a regular file (or does not exist)");
}

TEST_CASE("yaml: repeat block errors", "[workloads][yaml][errors]") {
  const std::string head = kHead;
  auto block = [&](const std::string& fields) {
    return error_of(head + "  - repeat: {" + fields + "}\n");
  };
  CHECK(block("count: 0, input: x, output: y, ops: [{name: y, op: relu, inputs: [x]}]") ==
        "g.yaml:4:21: repeat: count: expected an integer in [1, 10000], got '0'");
  CHECK(block("count: 2, input: x, output: y, ops: [{name: z, op: relu, inputs: [x]}]") ==
        "g.yaml:4:42: repeat: output: no op in the block produces 'y'");
  CHECK(block("count: 2, input: x, output: x, ops: [{name: x, op: relu, inputs: [x]}]") ==
        "g.yaml:4:42: repeat: output: must differ from input 'x': after the block it names the "
        "last iteration's result");
  CHECK(block("count: 2, input: q, output: y, ops: [{name: y, op: relu, inputs: [q]}]") ==
        "g.yaml:4:31: repeat: input: unknown tensor 'q' (did you mean 'x'?)");
  CHECK(block("count: 2, inptu: x, output: y, ops: []") ==
        "g.yaml:4:24: repeat: unknown key 'inptu' (did you mean 'input'?)");
  CHECK_THAT(error_of(head + "  - repeat: {count: 10000, input: x, output: y, ops: [\n"
                             "      {repeat: {count: 10000, input: x, output: y, ops: [{name: y, "
                             "op: relu, inputs: [x]}]}}]}\n"),
             Contains("the graph expands to more than 100000 operators"));
  // 10,000 iterations of one op are within the op bound; 40 tensors each are 400,000 tensors.
  std::string tensors;
  for (int i = 0; i < 40; ++i)
    tensors +=
        std::string(i ? ", " : "") + "{name: t" + std::to_string(i) + ", shape: [1], role: weight}";
  CHECK_THAT(block("count: 10000, input: x, output: y, tensors: [" + tensors +
                   "], ops: [{name: y, op: relu, inputs: [x]}]"),
             Contains("the graph expands to more than 300000 tensors"));
}

TEST_CASE("yaml: bias: true takes the dtype the output is declared with", "[workloads][yaml]") {
  // A bf16 linear into a declared fp32 output (the accumulator's type): its bias is fp32 too,
  // as for an explicit bias, which must have the output's dtype.
  const Graph g = parse_graph_yaml(R"(name: b
tensors:
  - {name: x, shape: [4, 8], dtype: bf16, role: input}
  - {name: y, shape: [4, 5], dtype: fp32, role: output}
ops:
  - {name: l, op: linear, inputs: [x], features: 5, bias: true, output: y}
  - {name: m, op: linear, inputs: [x], features: 5, bias: true}
)",
                                   "g.yaml");
  CHECK(g.tensor(g.ops[0].inputs.at(2)).dtype == DType::kFp32);
  CHECK(g.tensor(g.ops[0].inputs.at(1)).dtype == DType::kBf16);
  // Without a declared output, the inferred one: bf16.
  CHECK(g.tensor(g.ops[1].inputs.at(2)).dtype == DType::kBf16);
}
