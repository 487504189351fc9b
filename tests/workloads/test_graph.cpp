#include <catch2/catch.hpp>

#include "workloads/graph.h"
#include "workloads_test_support.h"

using namespace tpusim;
using namespace tpusim::workloads;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::GraphMaker;

namespace {

OpAttrs conv_attrs(std::int64_t stride, std::int64_t pad, std::int64_t dilation = 1,
                   std::int64_t groups = 1) {
  OpAttrs a;
  a.stride_h = a.stride_w = stride;
  a.pad_top = a.pad_bottom = a.pad_left = a.pad_right = pad;
  a.dilation_h = a.dilation_w = dilation;
  a.groups = groups;
  return a;
}

}  // namespace

TEST_CASE("graph: names round-trip for every op kind and role", "[workloads][graph]") {
  for (OpKind k : kAllOpKinds) REQUIRE(op_kind_from_name(op_kind_name(k)) == k);
  REQUIRE_FALSE(op_kind_from_name("linear"));  // YAML sugar, not an IR kind
  for (TensorRole r :
       {TensorRole::kInput, TensorRole::kWeight, TensorRole::kActivation, TensorRole::kOutput})
    REQUIRE(role_from_name(role_name(r)) == r);
  REQUIRE(shape_str({12, 128, 64}) == "[12,128,64]");
  REQUIRE(shape_str({}) == "[]");
}

TEST_CASE("graph: conv2d shapes with stride, padding, dilation and MACs", "[workloads][graph]") {
  GraphMaker m;
  const TensorId x = m.tensor("x", {1, 224, 224, 3});
  const TensorId w = m.tensor("w", {7, 7, 3, 64}, DType::kBf16, TensorRole::kWeight);
  // (224 + 3 + 3 - 7) / 2 + 1 = 112
  REQUIRE(m.op("c", OpKind::kConv2d, {x, w}, conv_attrs(2, 3)).shape == Shape{1, 112, 112, 64});
  REQUIRE(op_macs(m.g, m.g.ops.back()) == 112LL * 112 * 64 * 7 * 7 * 3);

  const TensorId y = m.tensor("y", {2, 10, 12, 8});
  const TensorId k = m.tensor("k", {3, 3, 8, 4}, DType::kBf16, TensorRole::kWeight);
  // Dilation 2 makes the 3x3 window span 5: (10 - 5) / 1 + 1 = 6, (12 - 5) + 1 = 8.
  REQUIRE(m.op("d", OpKind::kConv2d, {y, k}, conv_attrs(1, 0, 2)).shape == Shape{2, 6, 8, 4});
  // Stride 3, pad 1: (10 + 2 - 3) / 3 + 1 = 4, (12 + 2 - 3) / 3 + 1 = 4.
  REQUIRE(m.op("s", OpKind::kConv2d, {y, k}, conv_attrs(3, 1)).shape == Shape{2, 4, 4, 4});
}

TEST_CASE("graph: depthwise and grouped conv2d", "[workloads][graph]") {
  GraphMaker m;
  const TensorId x = m.tensor("x", {1, 8, 8, 32});
  const TensorId dw = m.tensor("dw", {3, 3, 1, 32}, DType::kBf16, TensorRole::kWeight);
  REQUIRE(m.op("d", OpKind::kConv2d, {x, dw}, conv_attrs(2, 1, 1, 32)).shape == Shape{1, 4, 4, 32});
  // Each output channel sees one input channel: N*OH*OW*Cout*KH*KW*(Cin/groups).
  REQUIRE(op_macs(m.g, m.g.ops.back()) == 4 * 4 * 32 * 9 * 1);
  const TensorId gw = m.tensor("gw", {1, 1, 8, 16}, DType::kBf16, TensorRole::kWeight);
  REQUIRE(m.op("g", OpKind::kConv2d, {x, gw}, conv_attrs(1, 0, 1, 4)).shape == Shape{1, 8, 8, 16});
  REQUIRE(op_macs(m.g, m.g.ops.back()) == 8 * 8 * 16 * 8);
  REQUIRE_THAT(m.shape_error(OpKind::kConv2d, {x, gw}, conv_attrs(1, 0, 1, 3)),
               Contains("t.yaml:9:5: op 'bad' (conv2d): input channels 32") &&
                   Contains("not divisible by groups 3"));
  REQUIRE_THAT(m.shape_error(OpKind::kConv2d, {x, gw}, conv_attrs(1, 0, 1, 2)),
               Contains("expected Cin/groups = 32/2 = 16"));
  const TensorId big = m.tensor("big", {9, 9, 32, 4}, DType::kBf16, TensorRole::kWeight);
  REQUIRE_THAT(m.shape_error(OpKind::kConv2d, {x, big}),
               Contains("height: window 9") && Contains("larger than the padded input 8"));
}

TEST_CASE("graph: matmul broadcasts batch dimensions and honours transposes",
          "[workloads][graph]") {
  GraphMaker m;
  const TensorId a = m.tensor("a", {2, 1, 4, 8});
  const TensorId b = m.tensor("b", {3, 8, 5});
  REQUIRE(m.op("ab", OpKind::kMatmul, {a, b}).shape == Shape{2, 3, 4, 5});
  REQUIRE(op_macs(m.g, m.g.ops.back()) == 2 * 3 * 4 * 5 * 8);
  const TensorId q = m.tensor("q", {12, 128, 64});
  const TensorId k = m.tensor("k", {12, 32, 128});
  OpAttrs tb;
  tb.transpose_b = true;
  REQUIRE(m.op("qk", OpKind::kMatmul, {q, q}, tb).shape == Shape{12, 128, 128});
  REQUIRE(m.shape_error(OpKind::kMatmul, {q, k}) ==
          "t.yaml:9:5: op 'bad' (matmul): inner dimensions differ: a is [12,128,64] (K=64), "
          "b is [12,32,128] (K=32)");
  OpAttrs ta;
  ta.transpose_a = true;  // a stored [K, M]
  const TensorId at = m.tensor("at", {8, 4});
  const TensorId bb = m.tensor("bb", {8, 6});
  REQUIRE(m.op("atb", OpKind::kMatmul, {at, bb}, ta).shape == Shape{4, 6});
  const TensorId c = m.tensor("c", {5, 64, 7});
  REQUIRE_THAT(m.shape_error(OpKind::kMatmul, {q, c}),
               Contains("batch dimensions do not broadcast") && Contains("12 vs 5"));
  const TensorId bias = m.tensor("bias", {5});
  REQUIRE_THAT(m.shape_error(OpKind::kMatmul, {a, b, m.tensor("wrong", {4})}),
               Contains("bias 'wrong' [4] must be [5] (N)"));
  REQUIRE(m.op("abb", OpKind::kMatmul, {a, b, bias}).shape == Shape{2, 3, 4, 5});
}

TEST_CASE("graph: elementwise, bias, unary and normalisation shapes", "[workloads][graph]") {
  GraphMaker m;
  const TensorId x = m.tensor("x", {4, 5});
  const TensorId row = m.tensor("row", {5});
  REQUIRE(m.op("add", OpKind::kAdd, {x, row}).shape == Shape{4, 5});
  REQUIRE(m.op("mul", OpKind::kMul, {x, x}).shape == Shape{4, 5});
  REQUIRE(m.op("bias", OpKind::kBias, {x, row}).shape == Shape{4, 5});
  REQUIRE(m.op("r6", OpKind::kRelu6, {x}).shape == Shape{4, 5});
  REQUIRE(m.op("ln", OpKind::kLayerNorm, {x, row, row}).shape == Shape{4, 5});
  REQUIRE_THAT(m.shape_error(OpKind::kAdd, {x, m.tensor("col", {4})}),
               Contains("b 'col' [4] must equal a 'x' [4,5] or its trailing dimensions"));
  REQUIRE_THAT(m.shape_error(OpKind::kLayerNorm, {x, m.tensor("g4", {4}), row}),
               Contains("gamma 'g4' [4] must be [5]"));
  OpAttrs causal;
  causal.causal = true;
  REQUIRE_THAT(m.shape_error(OpKind::kSoftmax, {row}, causal), Contains("causal mask"));
  REQUIRE_THAT(m.shape_error(OpKind::kRelu, {x, x}), Contains("expects one input, got 2 inputs"));
  const TensorId ints = m.tensor("ints", {4, 5}, DType::kInt32);
  REQUIRE_THAT(m.shape_error(OpKind::kGelu, {ints}), Contains("needs a floating-point input"));
  REQUIRE_THAT(m.shape_error(OpKind::kAdd, {x, ints}), Contains("dtypes differ"));
}

TEST_CASE("graph: pools, reshape, transpose, concat, embedding", "[workloads][graph]") {
  GraphMaker m;
  const TensorId x = m.tensor("x", {1, 112, 112, 64});
  OpAttrs p;
  p.kernel_h = p.kernel_w = 3;
  p.stride_h = p.stride_w = 2;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  REQUIRE(m.op("mp", OpKind::kMaxPool, {x}, p).shape == Shape{1, 56, 56, 64});
  REQUIRE(m.op("ap", OpKind::kAvgPool, {x}, p).shape == Shape{1, 56, 56, 64});
  REQUIRE(m.op("gap", OpKind::kGlobalAvgPool, {x}).shape == Shape{1, 1, 1, 64});
  p.pad_top = 3;
  REQUIRE_THAT(m.shape_error(OpKind::kMaxPool, {x}, p), Contains("padding must be smaller"));

  const TensorId s = m.tensor("s", {128, 768});
  OpAttrs r;
  r.shape = {128, 12, -1};
  REQUIRE(m.op("rs", OpKind::kReshape, {s}, r).shape == Shape{128, 12, 64});
  r.shape = {-1, 12, -1};
  REQUIRE_THAT(m.shape_error(OpKind::kReshape, {s}, r), Contains("more than one -1"));
  r.shape = {128, 700};
  REQUIRE_THAT(m.shape_error(OpKind::kReshape, {s}, r),
               Contains("(98304 elements) to [128,700] (89600 elements)"));

  const TensorId h = m.tensor("h", {128, 12, 64});
  OpAttrs t;
  t.perm = {1, 0, 2};
  REQUIRE(m.op("tr", OpKind::kTranspose, {h}, t).shape == Shape{12, 128, 64});
  t.perm = {1, 1, 2};
  REQUIRE_THAT(m.shape_error(OpKind::kTranspose, {h}, t), Contains("not a permutation"));

  const TensorId cache = m.tensor("cache", {12, 1024, 64});
  const TensorId one = m.tensor("one", {12, 1, 64});
  OpAttrs c;
  c.axis = 1;
  REQUIRE(m.op("cat", OpKind::kConcat, {cache, one}, c).shape == Shape{12, 1025, 64});
  c.axis = -2;
  REQUIRE(m.op("cat2", OpKind::kConcat, {cache, one}, c).shape == Shape{12, 1025, 64});
  c.axis = 2;
  REQUIRE_THAT(m.shape_error(OpKind::kConcat, {cache, one}, c), Contains("outside axis 2"));

  const TensorId table = m.tensor("table", {50257, 768}, DType::kBf16, TensorRole::kWeight);
  const TensorId ids = m.tensor("ids", {2, 3}, DType::kInt32);
  REQUIRE(m.op("emb", OpKind::kEmbedding, {table, ids}).shape == Shape{2, 3, 768});
  REQUIRE_THAT(m.shape_error(OpKind::kEmbedding, {table, s}), Contains("must be int32"));
}

TEST_CASE("graph: dtypes of integer matmul and attributes that do not apply",
          "[workloads][graph]") {
  GraphMaker m;
  const TensorId a = m.tensor("a", {4, 4}, DType::kInt8);
  const TensorId b = m.tensor("b", {4, 4}, DType::kInt8, TensorRole::kWeight);
  REQUIRE(m.op("c", OpKind::kMatmul, {a, b}).dtype == DType::kInt32);
  REQUIRE_NOTHROW(validate(m.g));
  OpAttrs stride;
  stride.stride_h = 2;
  REQUIRE_THAT(m.shape_error(OpKind::kMatmul, {a, b}, stride),
               Contains("op 'bad' (matmul): attribute stride does not apply"));
  const TensorId i16 = m.tensor("i16", {4, 4}, DType::kInt16);
  REQUIRE_THAT(m.shape_error(OpKind::kMatmul, {i16, i16}), Contains("must be int8"));
}

TEST_CASE("graph: validate catches roles, order and declared shapes", "[workloads][graph]") {
  GraphMaker m;
  const TensorId x = m.tensor("x", {2, 3});
  m.op("r", OpKind::kRelu, {x});
  REQUIRE_NOTHROW(validate(m.g));

  GraphMaker unused = m;
  unused.tensor("w", {3}, DType::kBf16, TensorRole::kWeight);
  REQUIRE_THROWS_WITH(validate(unused.g), "t.yaml:1:1: weight 'w' is never read by any op");

  GraphMaker wrong = m;
  wrong.g.tensors.back().shape = {3, 2};
  REQUIRE_THROWS_WITH(
      validate(wrong.g),
      Contains("op 'r' (relu): output 'r' is declared [3,2] but the op produces [2,3]"));

  GraphMaker writes_input = m;
  writes_input.g.ops.back().output = x;
  REQUIRE_THROWS_WITH(validate(writes_input.g), Contains("writes 'x', which is a graph input"));

  GraphMaker no_output = m;
  no_output.g.tensors.back().role = TensorRole::kActivation;
  no_output.g.ops.back().where = SourceLocation{"t.yaml", 7, 5};  // at the last op
  REQUIRE_THROWS_WITH(validate(no_output.g),
                      StartsWith("t.yaml:7:5: graph") &&
                          Contains("has no output tensor: declare the result under tensors with "
                                   "role: output"));

  GraphMaker order = m;
  order.op("r2", OpKind::kRelu, {x});
  order.g.ops[0].inputs = {static_cast<TensorId>(order.g.tensors.size() - 1)};
  REQUIRE_THROWS_WITH(validate(order.g), Contains("reads 'r2' before any op produces it"));
}
