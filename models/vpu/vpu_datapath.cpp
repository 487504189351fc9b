#include "models/vpu/vpu_datapath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "models/common/elements.h"
#include "sim/base/errors.h"

namespace tpusim::models {
namespace {

double unary(VectorOp op, double x) {
  const auto f = static_cast<float>(x);
  switch (op) {
    case VectorOp::kRelu:
      return std::max(x, 0.0);
    case VectorOp::kGelu:
      // The tanh form, as the graph format defines gelu (workloads/README.md).
      return 0.5f * f * (1.0f + std::tanh(0.7978845608f * (f + 0.044715f * f * f * f)));
    case VectorOp::kExp:
      return std::exp(f);
    case VectorOp::kRsqrt:
      return 1.0f / std::sqrt(f);
    case VectorOp::kReciprocal:
      return 1.0f / f;
    default:
      return x;
  }
}

}  // namespace

void vpu_compute(const isa::VectorInstr& v, const VpuMemories& memories) {
  if (!functional_dtype(v.dtype) || !functional_dtype(v.src_dtype))
    throw NotImplemented("--functional: fp8 arithmetic is not modelled yet");
  const std::uint64_t src_size = dtype_bytes(v.src_dtype), dst_size = dtype_bytes(v.dtype);
  const bool dst_int = dtype_is_integer(v.dtype);
  const std::uint8_t* a_base = memories.of(v.a.addr.space) + v.a.addr.addr;
  const std::uint8_t* b_base = memories.of(v.b.addr.space) + v.b.addr.addr;
  std::uint8_t* d_base = memories.of(v.dst.addr.space) + v.dst.addr.addr;
  const std::uint64_t d_stride = v.dst.stride;  // strides are explicit (assembler defaults)
  const bool reduce = v.op == VectorOp::kReduceSum || v.op == VectorOp::kReduceMax;

  for (std::uint32_t r = 0; r < v.rows; ++r) {
    const std::uint8_t* a_row = a_base + std::uint64_t{r} * v.a.stride;
    const std::uint8_t* b_row = b_base + std::uint64_t{r} * v.b.stride;
    std::uint8_t* d_row = d_base + r * d_stride;
    if (reduce) {
      // Integer sums wrap in the destination width; float sums accumulate in fp32.
      std::int64_t isum = 0;
      float fsum = 0.0f;
      double best = load_element(a_row, v.src_dtype);
      for (std::uint32_t c = 0; c < v.cols; ++c) {
        const double x = load_element(a_row + c * src_size, v.src_dtype);
        isum += static_cast<std::int64_t>(x);
        fsum += static_cast<float>(x);
        best = std::max(best, x);
      }
      if (v.op == VectorOp::kReduceMax)
        store_converted(d_row, v.dtype, best);
      else if (dst_int && dtype_is_integer(v.src_dtype))
        store_integer(d_row, v.dtype, isum);
      else
        store_converted(d_row, v.dtype, fsum);
      continue;
    }
    for (std::uint32_t c = 0; c < v.cols; ++c) {
      const std::uint8_t* a = a_row + (v.op == VectorOp::kBroadcast ? 0 : c * src_size);
      std::uint8_t* d = d_row + c * dst_size;
      if (v.op == VectorOp::kMove || v.op == VectorOp::kBroadcast) {
        std::memmove(d, a, dst_size);
        continue;
      }
      const double x = load_element(a, v.src_dtype);
      if (v.op == VectorOp::kRequantize) {
        const double scaled = std::nearbyint(static_cast<double>(static_cast<float>(x) * v.scale));
        store_converted(d, v.dtype, scaled + v.zero_point);
        continue;
      }
      if (v.op == VectorOp::kCast) {
        store_converted(d, v.dtype, x);
        continue;
      }
      if (isa::vector_arity(v.op) == isa::VectorArity::kBinary) {
        const double y = load_element(b_row + c * src_size, v.src_dtype);
        if (dst_int) {
          const auto xi = static_cast<std::int64_t>(x), yi = static_cast<std::int64_t>(y);
          std::int64_t out = 0;
          switch (v.op) {
            case VectorOp::kAdd:
              out = xi + yi;
              break;
            case VectorOp::kSub:
              out = xi - yi;
              break;
            case VectorOp::kMul:
              out = xi * yi;
              break;
            case VectorOp::kMax:
              out = std::max(xi, yi);
              break;
            case VectorOp::kMac:
              out = load_integer(d, v.dtype) + xi * yi;
              break;
            default:
              out = std::min(xi, yi);
              break;
          }
          store_integer(d, v.dtype, out);
        } else {
          const auto xf = static_cast<float>(x), yf = static_cast<float>(y);
          float out = 0;
          switch (v.op) {
            case VectorOp::kAdd:
              out = xf + yf;
              break;
            case VectorOp::kSub:
              out = xf - yf;
              break;
            case VectorOp::kMul:
              out = xf * yf;
              break;
            case VectorOp::kMax:
              out = std::max(xf, yf);
              break;
            // Fused: one rounding, as an FMA unit does.
            case VectorOp::kMac:
              out = std::fma(xf, yf, static_cast<float>(load_element(d, v.dtype)));
              break;
            default:
              out = std::min(xf, yf);
              break;
          }
          store_float(d, v.dtype, out);
        }
        continue;
      }
      if (dst_int && v.op == VectorOp::kRelu) {
        store_integer(d, v.dtype, std::max<std::int64_t>(static_cast<std::int64_t>(x), 0));
        continue;
      }
      store_converted(d, v.dtype, unary(v.op, x));
    }
  }
}

}  // namespace tpusim::models
