#pragma once
// The workload graph IR: named tensors and the operators between them, in topological order.
// Plain C++ (no SystemC, no YAML here): loaders build a Graph, the lowering in isa/ reads it.
//
// Layout conventions (all row-major, outermost dimension first):
//   images        NHWC   [N, H, W, C]   (channels last: C is the MXU's reduction dimension)
//   conv weights  HWIO   [KH, KW, Cin / groups, Cout]
//   matmul        A [..., M, K] x B [..., K, N] -> [..., M, N]; leading (batch) dimensions
//                 broadcast as in NumPy; `transpose_a` / `transpose_b` mean the stored tensor
//                 is the transpose of the operand in its last two dimensions.
//   softmax, layernorm: over the last dimension.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/dtype.h"
#include "sim/base/errors.h"

namespace tpusim::workloads {

using Shape = std::vector<std::int64_t>;
using TensorId = std::uint32_t;

enum class TensorRole : std::uint8_t {
  kInput,       // supplied by the user (or generated from the seed)
  kWeight,      // a parameter (or generated from the seed)
  kActivation,  // produced and consumed inside the graph
  kOutput,      // produced by the graph and written out
};

std::string_view role_name(TensorRole role);
std::optional<TensorRole> role_from_name(std::string_view name);

struct Tensor {
  std::string name;
  Shape shape;
  DType dtype = DType::kBf16;
  TensorRole role = TensorRole::kActivation;
  SourceLocation where;  // where it was declared (or first produced), for error messages

  std::int64_t elements() const;
  std::int64_t bytes() const { return elements() * dtype_bytes(dtype); }
};

enum class OpKind : std::uint8_t {
  kConv2d,     // inputs: x [N,H,W,Cin], w [KH,KW,Cin/g,Cout], optional bias [Cout]
  kMatmul,     // inputs: a, b, optional bias [N]; `linear` in YAML is matmul with a weight b
  kAdd,        // inputs: a, b (same shape, or b broadcast along leading dimensions)
  kMul,        // as add
  kBias,       // inputs: x [..., C], bias [C]
  kRelu,       // unary
  kRelu6,      // unary: min(max(x, 0), 6)
  kGelu,       // unary
  kSoftmax,    // unary over the last dimension; attribute `causal` masks j > i (last two dims)
  kLayerNorm,  // inputs: x [..., D], gamma [D], beta [D]; attribute `epsilon`
  kMaxPool,    // x NHWC; kernel, stride, padding
  kAvgPool,  // as max_pool (padding excluded from the average count is NOT modelled: count = KH*KW)
  kGlobalAvgPool,  // x [N,H,W,C] -> [N,1,1,C]
  kReshape,        // attribute `shape` (same element count)
  kTranspose,      // attribute `perm`
  kConcat,         // several inputs, attribute `axis`
  kEmbedding,      // inputs: table [V, D], indices (int32) [...] -> [..., D]
  kRequantize,     // unary, int32/fp32 -> int8/int16: saturate(round_half_even(x * scale)) in fp32
};

inline constexpr OpKind kAllOpKinds[] = {
    OpKind::kConv2d,        OpKind::kMatmul,    OpKind::kAdd,       OpKind::kMul,
    OpKind::kBias,          OpKind::kRelu,      OpKind::kRelu6,     OpKind::kGelu,
    OpKind::kSoftmax,       OpKind::kLayerNorm, OpKind::kMaxPool,   OpKind::kAvgPool,
    OpKind::kGlobalAvgPool, OpKind::kReshape,   OpKind::kTranspose, OpKind::kConcat,
    OpKind::kEmbedding,     OpKind::kRequantize};

// The YAML spelling: conv2d matmul add mul bias relu relu6 gelu softmax layernorm max_pool
// avg_pool global_avg_pool reshape transpose concat embedding requantize.
std::string_view op_kind_name(OpKind kind);
std::optional<OpKind> op_kind_from_name(std::string_view name);

// Attributes of every operator kind in one struct; each kind reads only its own.
struct OpAttrs {
  // conv2d, max_pool, avg_pool
  std::int64_t kernel_h = 1, kernel_w = 1;  // pools only; conv takes its kernel from the weight
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;  // conv2d only
  std::int64_t groups = 1;                       // conv2d only; groups == Cin is depthwise
  // matmul
  bool transpose_a = false, transpose_b = false;
  // softmax
  bool causal = false;
  // layernorm
  double epsilon = 1e-5;
  // requantize: the scale, and the integer type the result is saturated to
  double scale = 1.0;
  DType to = DType::kInt8;
  // reshape, transpose, concat
  Shape shape;
  std::vector<std::int64_t> perm;
  std::int64_t axis = 0;
};

struct Op {
  std::string name;
  OpKind kind = OpKind::kAdd;
  std::vector<TensorId> inputs;
  TensorId output = 0;
  OpAttrs attrs;
  SourceLocation where;  // where it was written, for error messages
};

struct Graph {
  std::string name;
  SourceLocation where;  // the file it came from, for errors that belong to no single line
  std::vector<Tensor> tensors;
  std::vector<Op> ops;  // topological order: every input is a graph input/weight or an earlier output

  const Tensor& tensor(TensorId id) const { return tensors.at(id); }
  std::optional<TensorId> find_tensor(std::string_view name) const;
};

// Limits that keep every size computation inside int64 (and garbage input from allocating the
// machine): each dimension and attribute below 2^31, each tensor below 2^48 elements.
inline constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 48;

// Product of the dimensions (1 for a scalar); saturates at INT64_MAX instead of wrapping.
std::int64_t shape_elements(const Shape& shape);

// "[12,128,64]"; "[]" for a scalar.
std::string shape_str(const Shape& shape);

// The element type of an operator's output when its tensor is not declared: the data input's
// dtype, int32 for integer matmul/conv (exact int8 x int8 accumulation), the table's for
// embedding. A declared output may instead be fp32 for a floating matmul/conv (the accumulator).
// Throws WorkloadError at op.where when the inputs' dtypes do not fit the operator.
DType infer_output_dtype(const Graph& graph, const Op& op);

// Multiply-accumulates of one operator, from its shapes alone (0 for non-MXU operators):
// conv2d  N*OH*OW*Cout*KH*KW*(Cin/groups);  matmul  batch*M*N*K.
std::int64_t op_macs(const Graph& graph, const Op& op);
std::int64_t graph_macs(const Graph& graph);

// The output shape an operator produces from its inputs' shapes, or a WorkloadError (at op.where,
// naming the operator and the offending dimension) when they do not fit together.
Shape infer_output_shape(const Graph& graph, const Op& op);

// Checks the whole graph: names unique, every op's inputs defined before use, declared output
// shapes equal the inferred ones, dtypes consistent, roles sensible (inputs/weights never written,
// every output produced). Throws WorkloadError at the first problem.
void validate(const Graph& graph);

}  // namespace tpusim::workloads
