#include "workloads/reference.h"

#include <cmath>
#include <limits>

#include "workloads/numerics.h"

namespace tpusim::workloads {
namespace {

using Values = std::vector<double>;

// Row-major strides of a shape.
std::vector<std::int64_t> strides(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// The multi-index of flat position `flat` in shape `s`.
std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& s) {
  std::vector<std::int64_t> idx(s.size());
  for (std::size_t i = s.size(); i-- > 0;) {
    idx[i] = flat % s[i];
    flat /= s[i];
  }
  return idx;
}

struct Args {
  const Graph& g;
  const Op& op;
  const std::vector<const Values*>& in;
  const Shape& out_shape;
  const Shape& shape(std::size_t i) const { return g.tensor(op.inputs[i]).shape; }
  const Values& x(std::size_t i) const { return *in[i]; }
};

Values conv2d(const Args& a) {
  const Shape& xs = a.shape(0);
  const Shape& ws = a.shape(1);
  const OpAttrs& at = a.op.attrs;
  const std::int64_t N = a.out_shape[0], OH = a.out_shape[1], OW = a.out_shape[2];
  const std::int64_t H = xs[1], W = xs[2], C = xs[3], KH = ws[0], KW = ws[1], CG = ws[2];
  const std::int64_t COUT = ws[3], cout_per_group = COUT / at.groups;
  Values out(static_cast<std::size_t>(N * OH * OW * COUT));
  std::size_t o = 0;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow)
        for (std::int64_t co = 0; co < COUT; ++co) {
          const std::int64_t group = co / cout_per_group;
          double acc = a.in.size() == 3 ? a.x(2)[co] : 0.0;
          for (std::int64_t kh = 0; kh < KH; ++kh) {
            const std::int64_t ih = oh * at.stride_h - at.pad_top + kh * at.dilation_h;
            if (ih < 0 || ih >= H) continue;  // zero padding
            for (std::int64_t kw = 0; kw < KW; ++kw) {
              const std::int64_t iw = ow * at.stride_w - at.pad_left + kw * at.dilation_w;
              if (iw < 0 || iw >= W) continue;
              for (std::int64_t ci = 0; ci < CG; ++ci)
                acc += a.x(0)[((n * H + ih) * W + iw) * C + group * CG + ci] *
                       a.x(1)[((kh * KW + kw) * CG + ci) * COUT + co];
            }
          }
          out[o++] = acc;
        }
  return out;
}

Values matmul(const Args& a) {
  const Shape& as = a.shape(0);
  const Shape& bs = a.shape(1);
  const std::vector<std::int64_t> ast = strides(as), bst = strides(bs);
  const std::size_t ra = as.size(), rb = bs.size(), ro = a.out_shape.size();
  const std::int64_t M = a.out_shape[ro - 2], N = a.out_shape[ro - 1];
  const std::int64_t K = a.op.attrs.transpose_a ? as[ra - 2] : as[ra - 1];
  const Shape batch(a.out_shape.begin(), a.out_shape.end() - 2);
  const std::int64_t batches = shape_elements(batch);
  Values out(static_cast<std::size_t>(batches * M * N));
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    // Broadcast: an operand's batch dimension of size 1 (or a missing one) always reads index 0.
    const std::vector<std::int64_t> idx = unravel(bi, batch);
    std::int64_t a_off = 0, b_off = 0;
    for (std::size_t d = 0; d < batch.size(); ++d) {
      const std::int64_t from_end = static_cast<std::int64_t>(batch.size() - d);
      const std::int64_t da = static_cast<std::int64_t>(ra) - 2 - from_end;
      const std::int64_t db = static_cast<std::int64_t>(rb) - 2 - from_end;
      if (da >= 0 && as[da] != 1) a_off += idx[d] * ast[da];
      if (db >= 0 && bs[db] != 1) b_off += idx[d] * bst[db];
    }
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t n = 0; n < N; ++n) {
        double acc = a.in.size() == 3 ? a.x(2)[n] : 0.0;
        for (std::int64_t k = 0; k < K; ++k) {
          const std::int64_t ai =
              a.op.attrs.transpose_a ? k * ast[ra - 2] + m : m * ast[ra - 2] + k;
          const std::int64_t bj =
              a.op.attrs.transpose_b ? n * bst[rb - 2] + k : k * bst[rb - 2] + n;
          acc += a.x(0)[a_off + ai] * a.x(1)[b_off + bj];
        }
        out[(bi * M + m) * N + n] = acc;
      }
  }
  return out;
}

Values pool(const Args& a, bool max) {
  const Shape& xs = a.shape(0);
  const OpAttrs& at = a.op.attrs;
  const std::int64_t N = a.out_shape[0], OH = a.out_shape[1], OW = a.out_shape[2];
  const std::int64_t H = xs[1], W = xs[2], C = xs[3];
  Values out(static_cast<std::size_t>(N * OH * OW * C));
  std::size_t o = 0;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow)
        for (std::int64_t c = 0; c < C; ++c) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (std::int64_t kh = 0; kh < at.kernel_h; ++kh)
            for (std::int64_t kw = 0; kw < at.kernel_w; ++kw) {
              const std::int64_t ih = oh * at.stride_h - at.pad_top + kh;
              const std::int64_t iw = ow * at.stride_w - at.pad_left + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;  // max: ignored; avg: zero
              const double v = a.x(0)[((n * H + ih) * W + iw) * C + c];
              acc = max ? std::fmax(acc, v) : acc + v;
            }
          out[o++] = max ? acc : acc / static_cast<double>(at.kernel_h * at.kernel_w);
        }
  return out;
}

Values softmax(const Args& a) {
  const Shape& s = a.shape(0);
  const std::int64_t cols = s.back();
  const std::int64_t rows_per_matrix = s.size() >= 2 ? s[s.size() - 2] : 1;
  Values out(a.x(0).size());
  for (std::int64_t r = 0; r * cols < static_cast<std::int64_t>(out.size()); ++r) {
    const double* x = a.x(0).data() + r * cols;
    // Causal: query i of each matrix sees keys 0..i only.
    const std::int64_t visible = a.op.attrs.causal ? std::min(cols, r % rows_per_matrix + 1) : cols;
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < visible; ++j) mx = std::fmax(mx, x[j]);
    double sum = 0;
    for (std::int64_t j = 0; j < visible; ++j) sum += std::exp(x[j] - mx);
    for (std::int64_t j = 0; j < cols; ++j)
      out[r * cols + j] = j < visible ? std::exp(x[j] - mx) / sum : 0.0;
  }
  return out;
}

Values layernorm(const Args& a) {
  const std::int64_t d = a.shape(0).back();
  Values out(a.x(0).size());
  for (std::int64_t r = 0; r * d < static_cast<std::int64_t>(out.size()); ++r) {
    const double* x = a.x(0).data() + r * d;
    double mean = 0, var = 0;
    for (std::int64_t j = 0; j < d; ++j) mean += x[j];
    mean /= static_cast<double>(d);
    for (std::int64_t j = 0; j < d; ++j) var += (x[j] - mean) * (x[j] - mean);
    var /= static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(var + a.op.attrs.epsilon);
    for (std::int64_t j = 0; j < d; ++j)
      out[r * d + j] = (x[j] - mean) * inv * a.x(1)[j] + a.x(2)[j];
  }
  return out;
}

Values transpose(const Args& a) {
  const Shape& s = a.shape(0);
  const std::vector<std::int64_t> st = strides(s);
  Values out(a.x(0).size());
  for (std::int64_t o = 0; o < static_cast<std::int64_t>(out.size()); ++o) {
    const std::vector<std::int64_t> idx = unravel(o, a.out_shape);
    std::int64_t src = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) src += idx[d] * st[a.op.attrs.perm[d]];
    out[o] = a.x(0)[src];
  }
  return out;
}

Values concat(const Args& a) {
  const auto rank = static_cast<std::int64_t>(a.out_shape.size());
  const std::int64_t axis = a.op.attrs.axis < 0 ? a.op.attrs.axis + rank : a.op.attrs.axis;
  // Outer = product of dims before axis; each input contributes a contiguous chunk per outer index.
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= a.out_shape[d];
  Values out;
  out.reserve(static_cast<std::size_t>(shape_elements(a.out_shape)));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::size_t i = 0; i < a.in.size(); ++i) {
      const std::int64_t chunk = static_cast<std::int64_t>(a.x(i).size()) / outer;
      out.insert(out.end(), a.x(i).begin() + o * chunk, a.x(i).begin() + (o + 1) * chunk);
    }
  return out;
}

Values embedding(const Args& a) {
  const std::int64_t rows = a.shape(0)[0], d = a.shape(0)[1];
  Values out;
  out.reserve(a.x(1).size() * static_cast<std::size_t>(d));
  for (std::size_t i = 0; i < a.x(1).size(); ++i) {
    const double idx = a.x(1)[i];
    if (!(idx >= 0 && idx < static_cast<double>(rows)))
      throw WorkloadError(a.op.where, "op '" + a.op.name + "' (embedding): index " +
                                          std::to_string(static_cast<long long>(idx)) +
                                          " at position " + std::to_string(i) +
                                          " is outside the table's " + std::to_string(rows) +
                                          " rows");
    const auto row = static_cast<std::int64_t>(idx);
    out.insert(out.end(), a.x(0).begin() + row * d, a.x(0).begin() + (row + 1) * d);
  }
  return out;
}

double gelu_tanh(double x) {
  constexpr double kPi = 3.14159265358979323846;
  const double k = std::sqrt(2.0 / kPi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

Values run(const Args& a) {
  const Values& x = a.x(0);
  auto map = [&](auto f) {
    Values out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = f(x[i], i);
    return out;
  };
  switch (a.op.kind) {
    case OpKind::kConv2d:
      return conv2d(a);
    case OpKind::kMatmul:
      return matmul(a);
    case OpKind::kAdd:
      return map([&](double v, std::size_t i) { return v + a.x(1)[i % a.x(1).size()]; });
    case OpKind::kMul:
      return map([&](double v, std::size_t i) { return v * a.x(1)[i % a.x(1).size()]; });
    case OpKind::kBias:
      return map([&](double v, std::size_t i) { return v + a.x(1)[i % a.x(1).size()]; });
    case OpKind::kRelu:
      return map([](double v, std::size_t) { return v > 0 ? v : 0.0; });
    case OpKind::kRelu6:
      return map([](double v, std::size_t) { return std::fmin(std::fmax(v, 0.0), 6.0); });
    case OpKind::kGelu:
      return map([](double v, std::size_t) { return gelu_tanh(v); });
    case OpKind::kRequantize: {
      // In fp32, as a vector unit multiplies; rounding half to even, then saturation.
      const auto scale = static_cast<float>(a.op.attrs.scale);
      const double hi = a.op.attrs.to == DType::kInt8 ? 127 : 32767;
      return map([=](double v, std::size_t) {
        const double r = std::nearbyint(static_cast<double>(static_cast<float>(v) * scale));
        return std::fmin(std::fmax(r, -hi - 1), hi);
      });
    }
    case OpKind::kSoftmax:
      return softmax(a);
    case OpKind::kLayerNorm:
      return layernorm(a);
    case OpKind::kMaxPool:
      return pool(a, true);
    case OpKind::kAvgPool:
      return pool(a, false);
    case OpKind::kGlobalAvgPool: {
      const Shape& s = a.shape(0);
      const std::int64_t hw = s[1] * s[2], c = s[3];
      Values out(static_cast<std::size_t>(s[0] * c), 0.0);
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(x.size()); ++i)
        out[(i / (hw * c)) * c + i % c] += x[i] / static_cast<double>(hw);
      return out;
    }
    case OpKind::kReshape:
      return x;
    case OpKind::kTranspose:
      return transpose(a);
    case OpKind::kConcat:
      return concat(a);
    case OpKind::kEmbedding:
      return embedding(a);
  }
  throw WorkloadError(a.op.where, "op '" + a.op.name + "': unsupported operator kind");
}

}  // namespace

std::map<std::string, TensorData> evaluate(
    const Graph& graph, const std::map<std::string, TensorData>& inputs_and_weights) {
  std::vector<TensorData> data(graph.tensors.size());
  std::vector<bool> have(graph.tensors.size(), false);
  for (const auto& [name, d] : inputs_and_weights) {
    const auto id = graph.find_tensor(name);
    const Tensor* t = id ? &graph.tensor(*id) : nullptr;
    if (!t || (t->role != TensorRole::kInput && t->role != TensorRole::kWeight))
      throw WorkloadError(graph.where, "data given for '" + name +
                                           "', which is not an input or weight of the graph");
    if (d.shape != t->shape || d.dtype != t->dtype ||
        static_cast<std::int64_t>(d.values.size()) != t->elements())
      throw WorkloadError(t->where, "data for '" + name + "' is " + shape_str(d.shape) + " " +
                                        std::string(dtype_name(d.dtype)) + " with " +
                                        std::to_string(d.values.size()) +
                                        " values; the tensor is " + shape_str(t->shape) + " " +
                                        std::string(dtype_name(t->dtype)));
    data[*id] = d;
    have[*id] = true;
  }
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor& t = graph.tensors[i];
    if ((t.role == TensorRole::kInput || t.role == TensorRole::kWeight) && !have[i])
      throw WorkloadError(
          t.where, "no data given for " + std::string(role_name(t.role)) + " '" + t.name + "'");
  }
  for (const Op& op : graph.ops) {
    std::vector<const Values*> in;
    for (TensorId id : op.inputs) {
      if (!have[id]) throw WorkloadError(op.where, "op '" + op.name + "' reads an unset tensor");
      in.push_back(&data[id].values);
    }
    const Tensor& out = graph.tensor(op.output);
    Values v = run(Args{graph, op, in, out.shape});
    for (double& e : v) e = round_to_dtype(e, out.dtype);
    data[op.output] = TensorData{out.shape, out.dtype, std::move(v)};
    have[op.output] = true;
  }
  std::map<std::string, TensorData> result;
  for (std::size_t i = 0; i < graph.tensors.size(); ++i)
    if (have[i]) result.emplace(graph.tensors[i].name, std::move(data[i]));
  return result;
}

}  // namespace tpusim::workloads
