#include "workloads/graph.h"

#include <limits>
#include <set>
#include <unordered_map>

#include "workloads/graph_checks.h"

namespace tpusim::workloads {
namespace {

using detail::fail;
using detail::is_float;
using detail::sat_mul;

struct OpKindInfo {
  OpKind kind;
  std::string_view name;
};

constexpr OpKindInfo kOpKindNames[] = {
    {OpKind::kConv2d, "conv2d"},
    {OpKind::kMatmul, "matmul"},
    {OpKind::kAdd, "add"},
    {OpKind::kMul, "mul"},
    {OpKind::kBias, "bias"},
    {OpKind::kRelu, "relu"},
    {OpKind::kRelu6, "relu6"},
    {OpKind::kGelu, "gelu"},
    {OpKind::kSoftmax, "softmax"},
    {OpKind::kLayerNorm, "layernorm"},
    {OpKind::kMaxPool, "max_pool"},
    {OpKind::kAvgPool, "avg_pool"},
    {OpKind::kGlobalAvgPool, "global_avg_pool"},
    {OpKind::kReshape, "reshape"},
    {OpKind::kTranspose, "transpose"},
    {OpKind::kConcat, "concat"},
    {OpKind::kEmbedding, "embedding"},
    {OpKind::kRequantize, "requantize"},
};

}  // namespace

std::string_view role_name(TensorRole role) {
  switch (role) {
    case TensorRole::kInput:
      return "input";
    case TensorRole::kWeight:
      return "weight";
    case TensorRole::kActivation:
      return "activation";
    case TensorRole::kOutput:
      return "output";
  }
  return "?";
}

std::optional<TensorRole> role_from_name(std::string_view name) {
  for (TensorRole r :
       {TensorRole::kInput, TensorRole::kWeight, TensorRole::kActivation, TensorRole::kOutput})
    if (role_name(r) == name) return r;
  return std::nullopt;
}

std::string_view op_kind_name(OpKind kind) {
  for (const OpKindInfo& i : kOpKindNames)
    if (i.kind == kind) return i.name;
  return "?";
}

std::optional<OpKind> op_kind_from_name(std::string_view name) {
  for (const OpKindInfo& i : kOpKindNames)
    if (i.name == name) return i.kind;
  return std::nullopt;
}

std::int64_t shape_elements(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n = sat_mul(n, d);
  return n;
}

std::int64_t Tensor::elements() const { return shape_elements(shape); }

std::optional<TensorId> Graph::find_tensor(std::string_view name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return static_cast<TensorId>(i);
  return std::nullopt;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// Names, roles, producers and readers; each operator's output shape and dtype come from
// infer_output_shape() and infer_output_dtype() (shape_inference.cpp).
void validate(const Graph& graph) {
  std::unordered_map<std::string_view, std::size_t> names;
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor& t = graph.tensors[i];
    const SourceLocation& where = t.where.file.empty() ? graph.where : t.where;
    if (t.name.empty()) throw WorkloadError(where, "tensor #" + std::to_string(i) + " has no name");
    if (!names.emplace(t.name, i).second)
      throw WorkloadError(where, "duplicate tensor name '" + t.name + "'");
    std::int64_t n = 1;
    for (std::int64_t d : t.shape) {
      if (d < 1 || d >= kMaxDim)
        throw WorkloadError(where, "tensor '" + t.name + "' " + shape_str(t.shape) +
                                       ": dimensions must be in [1, 2^31)");
      n = sat_mul(n, d);
    }
    if (n > kMaxElements)
      throw WorkloadError(
          where, "tensor '" + t.name + "' " + shape_str(t.shape) + " has more than 2^48 elements");
  }
  // Every tensor is written at most once, by an op that comes before every op reading it.
  std::vector<int> writer(graph.tensors.size(), -1);
  std::vector<bool> read(graph.tensors.size(), false);
  std::set<std::string_view> op_names;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.name.empty()) throw WorkloadError(op.where, "op #" + std::to_string(i) + " has no name");
    if (!op_names.insert(op.name).second) fail(op, "duplicate op name");
    for (TensorId id : op.inputs) {
      if (id >= graph.tensors.size())
        fail(op, "input tensor id " + std::to_string(id) + " undefined");
      const Tensor& t = graph.tensors[id];
      const bool external = t.role == TensorRole::kInput || t.role == TensorRole::kWeight;
      if (!external && writer[id] < 0) fail(op, "reads '" + t.name + "' before any op produces it");
      read[id] = true;
    }
    if (op.output >= graph.tensors.size())
      fail(op, "output tensor id " + std::to_string(op.output) + " undefined");
    const Tensor& out = graph.tensors[op.output];
    if (out.role == TensorRole::kInput || out.role == TensorRole::kWeight)
      fail(op, "writes '" + out.name + "', which is a graph " + std::string(role_name(out.role)));
    if (writer[op.output] >= 0)
      fail(op, "writes '" + out.name + "', already produced by op '" +
                   graph.ops[writer[op.output]].name + "'");
    for (TensorId id : op.inputs)
      if (id == op.output) fail(op, "reads its own output '" + out.name + "'");
    writer[op.output] = static_cast<int>(i);
    const Shape shape = infer_output_shape(graph, op);
    if (shape != out.shape)
      fail(op, "output '" + out.name + "' is declared " + shape_str(out.shape) +
                   " but the op produces " + shape_str(shape));
    const DType dtype = infer_output_dtype(graph, op);
    const bool fp32_accumulator = (op.kind == OpKind::kConv2d || op.kind == OpKind::kMatmul) &&
                                  is_float(dtype) && out.dtype == DType::kFp32;
    if (out.dtype != dtype && !fp32_accumulator)
      fail(op, "output '" + out.name + "' is declared " + std::string(dtype_name(out.dtype)) +
                   " but the op produces " + std::string(dtype_name(dtype)));
    if ((op.kind == OpKind::kConv2d || op.kind == OpKind::kMatmul) && op.inputs.size() == 3 &&
        graph.tensors[op.inputs[2]].dtype != out.dtype)
      fail(op, "bias '" + graph.tensors[op.inputs[2]].name + "' must have the output's dtype " +
                   std::string(dtype_name(out.dtype)));
    if (op_macs(graph, op) >= std::numeric_limits<std::int64_t>::max() / 4)
      fail(op, "too many multiply-accumulates to count");
  }
  bool any_output = false;
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor& t = graph.tensors[i];
    const SourceLocation& where = t.where.file.empty() ? graph.where : t.where;
    switch (t.role) {
      case TensorRole::kInput:
      case TensorRole::kWeight:
        if (!read[i])
          throw WorkloadError(
              where, std::string(role_name(t.role)) + " '" + t.name + "' is never read by any op");
        break;
      case TensorRole::kOutput:
        any_output = true;
        [[fallthrough]];
      case TensorRole::kActivation:
        if (writer[i] < 0)
          throw WorkloadError(where, std::string(role_name(t.role)) + " '" + t.name +
                                         "' is never produced by any op");
        break;
    }
  }
  // Pointed at the last operator, which usually produces what was meant as the output.
  if (!any_output)
    throw WorkloadError(graph.ops.empty() ? graph.where : graph.ops.back().where,
                        "graph '" + graph.name +
                            "' has no output tensor: declare the result under tensors with "
                            "role: output");
}

}  // namespace tpusim::workloads
