// Each operator's output shape and dtype from its inputs and attributes, with the checks that
// make them well defined (rank, matching dimensions, attributes the kind reads), and its MACs.

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "workloads/graph.h"
#include "workloads/graph_checks.h"

namespace tpusim::workloads {
namespace {

using detail::fail;
using detail::is_float;
using detail::not_yet;
using detail::sat_mul;

std::string dim_str(std::int64_t v) { return std::to_string(v); }

const Shape& in_shape(const Graph& g, const Op& op, std::size_t i) {
  return g.tensor(op.inputs.at(i)).shape;
}

std::string in_desc(const Graph& g, const Op& op, std::size_t i) {
  const Tensor& t = g.tensor(op.inputs.at(i));
  return "'" + t.name + "' " + shape_str(t.shape);
}

void need_inputs(const Op& op, std::size_t lo, std::size_t hi, const char* what) {
  const std::size_t n = op.inputs.size();
  if (n < lo || n > hi)
    fail(op, "expects " + std::string(what) + ", got " + std::to_string(n) + " input" +
                 (n == 1 ? "" : "s"));
}

void need_rank(const Graph& g, const Op& op, std::size_t i, std::size_t rank, const char* role) {
  const Shape& s = in_shape(g, op, i);
  if (s.size() != rank)
    fail(op, std::string(role) + " " + in_desc(g, op, i) + " must have rank " +
                 std::to_string(rank) + ", has rank " + std::to_string(s.size()));
}

void need_positive(const Op& op, std::int64_t v, const char* attr) {
  if (v < 1 || v >= kMaxDim)
    fail(op, std::string(attr) + " must be in [1, 2^31), got " + dim_str(v));
}

void need_non_negative(const Op& op, std::int64_t v, const char* attr) {
  if (v < 0 || v >= kMaxDim)
    fail(op, std::string(attr) + " must be in [0, 2^31), got " + dim_str(v));
}

// One spatial dimension of a windowed operator: (in + pads - effective kernel) / stride + 1.
std::int64_t window_out(const Op& op, const char* axis, std::int64_t in, std::int64_t kernel,
                        std::int64_t stride, std::int64_t dilation, std::int64_t pad_lo,
                        std::int64_t pad_hi) {
  const std::int64_t eff = (kernel - 1) * dilation + 1;
  const std::int64_t padded = in + pad_lo + pad_hi;
  if (padded < eff)
    fail(op, std::string(axis) + ": window " + dim_str(eff) + " (kernel " + dim_str(kernel) +
                 ", dilation " + dim_str(dilation) + ") is larger than the padded input " +
                 dim_str(padded) + " (" + dim_str(in) + " + padding " + dim_str(pad_lo) + "+" +
                 dim_str(pad_hi) + ")");
  return (padded - eff) / stride + 1;
}

void check_window_attrs(const Op& op, bool conv) {
  const OpAttrs& a = op.attrs;
  need_positive(op, a.stride_h, "stride_h");
  need_positive(op, a.stride_w, "stride_w");
  need_non_negative(op, a.pad_top, "pad_top");
  need_non_negative(op, a.pad_bottom, "pad_bottom");
  need_non_negative(op, a.pad_left, "pad_left");
  need_non_negative(op, a.pad_right, "pad_right");
  if (conv) {
    need_positive(op, a.dilation_h, "dilation_h");
    need_positive(op, a.dilation_w, "dilation_w");
    need_positive(op, a.groups, "groups");
  } else {
    need_positive(op, a.kernel_h, "kernel_h");
    need_positive(op, a.kernel_w, "kernel_w");
    // A window made only of padding has no value (max of nothing); frameworks reject it too.
    if (a.pad_top >= a.kernel_h || a.pad_bottom >= a.kernel_h || a.pad_left >= a.kernel_w ||
        a.pad_right >= a.kernel_w)
      fail(op, "padding must be smaller than the kernel (" + dim_str(a.kernel_h) + "x" +
                   dim_str(a.kernel_w) + ")");
  }
}

Shape conv2d_shape(const Graph& g, const Op& op) {
  need_inputs(op, 2, 3, "inputs [x, w] or [x, w, bias]");
  need_rank(g, op, 0, 4, "input x");
  need_rank(g, op, 1, 4, "weight");
  check_window_attrs(op, true);
  const Shape& x = in_shape(g, op, 0);
  const Shape& w = in_shape(g, op, 1);
  const OpAttrs& a = op.attrs;
  const std::int64_t cin = x[3], cout = w[3];
  if (cin % a.groups != 0)
    fail(op, "input channels " + dim_str(cin) + " of " + in_desc(g, op, 0) +
                 " are not divisible by groups " + dim_str(a.groups));
  if (cout % a.groups != 0)
    fail(op, "output channels " + dim_str(cout) + " of weight " + in_desc(g, op, 1) +
                 " are not divisible by groups " + dim_str(a.groups));
  if (w[2] != cin / a.groups)
    fail(op, "weight " + in_desc(g, op, 1) + " has " + dim_str(w[2]) +
                 " input channels per group (dim 2), expected Cin/groups = " + dim_str(cin) + "/" +
                 dim_str(a.groups) + " = " + dim_str(cin / a.groups));
  if (op.inputs.size() == 3) {
    const Shape& b = in_shape(g, op, 2);
    if (b != Shape{cout})
      fail(op, "bias " + in_desc(g, op, 2) + " must be [" + dim_str(cout) + "] (Cout)");
  }
  const std::int64_t oh =
      window_out(op, "height", x[1], w[0], a.stride_h, a.dilation_h, a.pad_top, a.pad_bottom);
  const std::int64_t ow =
      window_out(op, "width", x[2], w[1], a.stride_w, a.dilation_w, a.pad_left, a.pad_right);
  return {x[0], oh, ow, cout};
}

struct MatmulDims {
  Shape batch;
  std::int64_t m = 0, n = 0, k = 0;
};

MatmulDims matmul_dims(const Graph& g, const Op& op) {
  need_inputs(op, 2, 3, "inputs [a, b] or [a, b, bias]");
  const Shape& a = in_shape(g, op, 0);
  const Shape& b = in_shape(g, op, 1);
  if (a.size() < 2) fail(op, "a " + in_desc(g, op, 0) + " must have rank >= 2");
  if (b.size() < 2) fail(op, "b " + in_desc(g, op, 1) + " must have rank >= 2");
  const std::size_t ra = a.size(), rb = b.size();
  MatmulDims d;
  d.m = op.attrs.transpose_a ? a[ra - 1] : a[ra - 2];
  const std::int64_t ka = op.attrs.transpose_a ? a[ra - 2] : a[ra - 1];
  const std::int64_t kb = op.attrs.transpose_b ? b[rb - 1] : b[rb - 2];
  d.n = op.attrs.transpose_b ? b[rb - 2] : b[rb - 1];
  if (ka != kb)
    fail(op, "inner dimensions differ: a is " + shape_str(a) + " (K=" + dim_str(ka) +
                 (op.attrs.transpose_a ? ", transposed" : "") + "), b is " + shape_str(b) +
                 " (K=" + dim_str(kb) + (op.attrs.transpose_b ? ", transposed" : "") + ")");
  d.k = ka;
  // NumPy broadcasting of the leading dimensions, aligned from the right.
  const std::size_t ba = ra - 2, bb = rb - 2, rank = std::max(ba, bb);
  d.batch.assign(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - ba ? 1 : a[i - (rank - ba)];
    const std::int64_t db = i < rank - bb ? 1 : b[i - (rank - bb)];
    if (da != db && da != 1 && db != 1)
      fail(op, "batch dimensions do not broadcast: a is " + shape_str(a) + ", b is " +
                   shape_str(b) + " (batch dim " + std::to_string(i) + ": " + dim_str(da) + " vs " +
                   dim_str(db) + ")");
    d.batch[i] = std::max(da, db);
  }
  if (op.inputs.size() == 3 && in_shape(g, op, 2) != Shape{d.n})
    fail(op, "bias " + in_desc(g, op, 2) + " must be [" + dim_str(d.n) + "] (N)");
  return d;
}

Shape elementwise_shape(const Graph& g, const Op& op) {
  need_inputs(op, 2, 2, "inputs [a, b]");
  const Shape& a = in_shape(g, op, 0);
  const Shape& b = in_shape(g, op, 1);
  // b may be a trailing part of a (a bias row, a per-position table): it repeats over a's
  // leading dimensions. General NumPy broadcasting is not needed by the sample models.
  if (b.size() > a.size() || !std::equal(b.begin(), b.end(), a.end() - b.size()))
    fail(op, "b " + in_desc(g, op, 1) + " must equal a " + in_desc(g, op, 0) +
                 " or its trailing dimensions");
  return a;
}

Shape pool_shape(const Graph& g, const Op& op) {
  need_inputs(op, 1, 1, "one input");
  need_rank(g, op, 0, 4, "input x");
  check_window_attrs(op, false);
  const Shape& x = in_shape(g, op, 0);
  const OpAttrs& a = op.attrs;
  return {x[0], window_out(op, "height", x[1], a.kernel_h, a.stride_h, 1, a.pad_top, a.pad_bottom),
          window_out(op, "width", x[2], a.kernel_w, a.stride_w, 1, a.pad_left, a.pad_right), x[3]};
}

Shape reshape_shape(const Graph& g, const Op& op) {
  need_inputs(op, 1, 1, "one input");
  const Shape& x = in_shape(g, op, 0);
  Shape out = op.attrs.shape;
  std::int64_t known = 1;
  int wildcard = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (wildcard >= 0) fail(op, "shape " + shape_str(out) + " has more than one -1");
      wildcard = static_cast<int>(i);
    } else if (out[i] < 1 || out[i] >= kMaxDim) {
      fail(op, "shape " + shape_str(out) + ": dimension " + std::to_string(i) +
                   " must be in [1, 2^31) or -1, got " + dim_str(out[i]));
    } else {
      known = sat_mul(known, out[i]);
    }
  }
  const std::int64_t total = shape_elements(x);
  if (wildcard >= 0) {
    if (known > total || total % known != 0)
      fail(op, "cannot reshape " + in_desc(g, op, 0) + " (" + dim_str(total) + " elements) to " +
                   shape_str(out) + ": " + dim_str(total) + " is not a multiple of " +
                   dim_str(known));
    out[wildcard] = total / known;
  } else if (known != total) {
    fail(op, "cannot reshape " + in_desc(g, op, 0) + " (" + dim_str(total) + " elements) to " +
                 shape_str(out) + " (" + dim_str(known) + " elements)");
  }
  return out;
}

Shape transpose_shape(const Graph& g, const Op& op) {
  need_inputs(op, 1, 1, "one input");
  const Shape& x = in_shape(g, op, 0);
  const auto& perm = op.attrs.perm;
  if (perm.size() != x.size())
    fail(op, "perm " + shape_str(perm) + " has " + std::to_string(perm.size()) +
                 " entries, input " + in_desc(g, op, 0) + " has rank " + std::to_string(x.size()));
  std::vector<bool> seen(x.size(), false);
  Shape out(x.size());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    const std::int64_t p = perm[i];
    if (p < 0 || p >= static_cast<std::int64_t>(x.size()) || seen[p])
      fail(op, "perm " + shape_str(perm) + " is not a permutation of 0.." +
                   std::to_string(x.size() - 1) + " (entry " + std::to_string(i) + ")");
    seen[p] = true;
    out[i] = x[p];
  }
  return out;
}

Shape concat_shape(const Graph& g, const Op& op) {
  need_inputs(op, 1, 1u << 16, "at least one input");
  const Shape& first = in_shape(g, op, 0);
  const auto rank = static_cast<std::int64_t>(first.size());
  std::int64_t axis = op.attrs.axis;
  if (axis < -rank || axis >= rank)
    fail(op, "axis " + dim_str(axis) + " out of range for rank " + dim_str(rank));
  if (axis < 0) axis += rank;
  Shape out = first;
  for (std::size_t i = 1; i < op.inputs.size(); ++i) {
    const Shape& s = in_shape(g, op, i);
    bool fits = s.size() == first.size();
    for (std::size_t d = 0; fits && d < s.size(); ++d)
      fits = d == static_cast<std::size_t>(axis) || s[d] == first[d];
    if (!fits)
      fail(op, "input " + in_desc(g, op, i) + " does not match " + in_desc(g, op, 0) +
                   " outside axis " + dim_str(axis));
    out[axis] += s[axis];
  }
  if (out[axis] >= kMaxDim) fail(op, "concatenated dimension is too large");
  return out;
}

// Which attributes an operator kind reads; any other attribute set away from its default is an
// error, so a builder (YAML, ONNX) cannot attach something the simulator would silently ignore.
void check_unused_attrs(const Op& op) {
  const OpAttrs& a = op.attrs;
  const OpAttrs d;
  const OpKind k = op.kind;
  const bool window = k == OpKind::kConv2d || k == OpKind::kMaxPool || k == OpKind::kAvgPool;
  auto reject = [&](bool is_set, bool applies, const char* name) {
    if (is_set && !applies) fail(op, std::string("attribute ") + name + " does not apply");
  };
  reject(a.kernel_h != d.kernel_h || a.kernel_w != d.kernel_w, window && k != OpKind::kConv2d,
         "kernel");
  reject(a.stride_h != d.stride_h || a.stride_w != d.stride_w, window, "stride");
  reject(a.pad_top || a.pad_bottom || a.pad_left || a.pad_right, window, "padding");
  reject(a.dilation_h != 1 || a.dilation_w != 1, k == OpKind::kConv2d, "dilation");
  reject(a.groups != 1, k == OpKind::kConv2d, "groups");
  reject(a.transpose_a || a.transpose_b, k == OpKind::kMatmul, "transpose_a/transpose_b");
  reject(a.causal, k == OpKind::kSoftmax, "causal");
  reject(a.epsilon != d.epsilon, k == OpKind::kLayerNorm, "epsilon");
  reject(a.scale != d.scale || a.to != d.to, k == OpKind::kRequantize, "scale/to");
  // Both are fp32 on the vector unit: checked as the fp32 they become (1e39 is inf, 1e-46 is 0).
  const auto g = [](double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  };
  const auto f32 = [](double v) { return static_cast<float>(v); };
  if (k == OpKind::kRequantize && !(std::isfinite(f32(a.scale)) && f32(a.scale) > 0))
    fail(op, "scale must be a finite fp32 above 0, got " + g(a.scale));
  if (k == OpKind::kRequantize && a.to != DType::kInt8 && a.to != DType::kInt16)
    fail(op, "to must be int8 or int16, got " + std::string(dtype_name(a.to)));
  reject(!a.shape.empty(), k == OpKind::kReshape, "shape");
  reject(!a.perm.empty(), k == OpKind::kTranspose, "perm");
  reject(a.axis != 0, k == OpKind::kConcat, "axis");
  if (k == OpKind::kLayerNorm && !(f32(a.epsilon) > 0 && a.epsilon < 1))
    fail(op, "epsilon must be in (0, 1) and above 0 as an fp32, got " + g(a.epsilon));
}

}  // namespace

std::int64_t op_macs(const Graph& graph, const Op& op) {
  if (op.kind == OpKind::kConv2d) {
    const Shape& w = in_shape(graph, op, 1);
    const Shape out = infer_output_shape(graph, op);
    std::int64_t m = 1;
    for (std::int64_t v : {out[0], out[1], out[2], out[3], w[0], w[1], w[2]}) m = sat_mul(m, v);
    return m;
  }
  if (op.kind == OpKind::kMatmul) {
    const MatmulDims d = matmul_dims(graph, op);
    std::int64_t m = sat_mul(sat_mul(d.m, d.n), d.k);
    for (std::int64_t b : d.batch) m = sat_mul(m, b);
    return m;
  }
  return 0;
}

std::int64_t graph_macs(const Graph& graph) {
  std::int64_t total = 0;
  for (const Op& op : graph.ops) {
    if (__builtin_add_overflow(total, op_macs(graph, op), &total))
      return std::numeric_limits<std::int64_t>::max();
  }
  return total;
}

Shape infer_output_shape(const Graph& graph, const Op& op) {
  for (TensorId id : op.inputs)
    if (id >= graph.tensors.size())
      fail(op, "input tensor id " + std::to_string(id) + " undefined");
  check_unused_attrs(op);
  switch (op.kind) {
    case OpKind::kConv2d:
      return conv2d_shape(graph, op);
    case OpKind::kMatmul: {
      MatmulDims d = matmul_dims(graph, op);
      d.batch.push_back(d.m);
      d.batch.push_back(d.n);
      return d.batch;
    }
    case OpKind::kAdd:
    case OpKind::kMul:
      return elementwise_shape(graph, op);
    case OpKind::kBias: {
      need_inputs(op, 2, 2, "inputs [x, bias]");
      const Shape& x = in_shape(graph, op, 0);
      if (x.empty() || in_shape(graph, op, 1) != Shape{x.back()})
        fail(op, "bias " + in_desc(graph, op, 1) + " must be [C] where x " + in_desc(graph, op, 0) +
                     " is [..., C]");
      return x;
    }
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kGelu:
    case OpKind::kRequantize:
      need_inputs(op, 1, 1, "one input");
      return in_shape(graph, op, 0);
    case OpKind::kSoftmax: {
      need_inputs(op, 1, 1, "one input");
      const Shape& x = in_shape(graph, op, 0);
      if (x.size() < (op.attrs.causal ? 2u : 1u))
        fail(op, "input " + in_desc(graph, op, 0) + " has too few dimensions" +
                     (op.attrs.causal ? " for a causal mask (needs rank >= 2)" : ""));
      return x;
    }
    case OpKind::kLayerNorm: {
      need_inputs(op, 3, 3, "inputs [x, gamma, beta]");
      const Shape& x = in_shape(graph, op, 0);
      if (x.empty()) fail(op, "input " + in_desc(graph, op, 0) + " must have rank >= 1");
      for (std::size_t i : {1u, 2u})
        if (in_shape(graph, op, i) != Shape{x.back()})
          fail(op, std::string(i == 1 ? "gamma " : "beta ") + in_desc(graph, op, i) + " must be [" +
                       dim_str(x.back()) + "] (the last dimension of x)");
      return x;
    }
    case OpKind::kMaxPool:
    case OpKind::kAvgPool:
      return pool_shape(graph, op);
    case OpKind::kGlobalAvgPool: {
      need_inputs(op, 1, 1, "one input");
      need_rank(graph, op, 0, 4, "input x");
      const Shape& x = in_shape(graph, op, 0);
      return {x[0], 1, 1, x[3]};
    }
    case OpKind::kReshape:
      return reshape_shape(graph, op);
    case OpKind::kTranspose:
      return transpose_shape(graph, op);
    case OpKind::kConcat:
      return concat_shape(graph, op);
    case OpKind::kEmbedding: {
      need_inputs(op, 2, 2, "inputs [table, indices]");
      need_rank(graph, op, 0, 2, "table");
      Shape out = in_shape(graph, op, 1);
      out.push_back(in_shape(graph, op, 0)[1]);
      return out;
    }
  }
  fail(op, "unsupported operator kind");
}

DType infer_output_dtype(const Graph& graph, const Op& op) {
  if (op.inputs.empty()) fail(op, "has no inputs");
  auto dt = [&](std::size_t i) { return graph.tensor(op.inputs.at(i)).dtype; };
  auto same = [&](std::size_t i, std::size_t j) {
    if (dt(i) != dt(j))
      fail(op, "dtypes differ: '" + graph.tensor(op.inputs[i]).name + "' is " +
                   std::string(dtype_name(dt(i))) + ", '" + graph.tensor(op.inputs[j]).name +
                   "' is " + std::string(dtype_name(dt(j))));
  };
  if (dt(0) == DType::kFp8) {
    // fp8 beside another type where types must agree is a bad graph (exit 2); fp8 throughout is
    // a valid one the tool cannot run yet (exit 3).
    if (op.kind != OpKind::kEmbedding)
      for (std::size_t j = 1; j < op.inputs.size(); ++j) same(0, j);
    not_yet(op, "fp8 tensors are not supported by any operator yet");
  }
  switch (op.kind) {
    case OpKind::kConv2d:
    case OpKind::kMatmul: {
      same(0, 1);
      if (dtype_is_integer(dt(0)) && dt(0) != DType::kInt8)
        fail(op, "integer operands must be int8 (int8 x int8 -> int32), got " +
                     std::string(dtype_name(dt(0))));
      return dt(0) == DType::kInt8 ? DType::kInt32 : dt(0);
    }
    case OpKind::kRequantize:
      if (dt(0) != DType::kInt32 && dt(0) != DType::kFp32)
        fail(op, "needs an int32 or fp32 input (an accumulator), got " +
                     std::string(dtype_name(dt(0))));
      return op.attrs.to;
    case OpKind::kEmbedding:
      if (dt(1) != DType::kInt32)
        fail(op, "indices '" + graph.tensor(op.inputs[1]).name + "' must be int32, got " +
                     std::string(dtype_name(dt(1))));
      return dt(0);
    case OpKind::kGelu:
    case OpKind::kSoftmax:
    case OpKind::kLayerNorm:
    case OpKind::kAvgPool:
    case OpKind::kGlobalAvgPool:
      if (!is_float(dt(0)))
        fail(op,
             "needs a floating-point input (bf16 or fp32), got " + std::string(dtype_name(dt(0))));
      break;
    default:
      break;
  }
  for (std::size_t i = 1; i < op.inputs.size(); ++i) same(0, i);
  return dt(0);
}

}  // namespace tpusim::workloads
