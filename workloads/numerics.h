#pragma once
// How a value becomes an element of a tensor's dtype. The same rules as the functional models
// (models/common/elements.h), copied rather than included because workloads may not depend on
// models: bf16 is the top half of an fp32, reached by rounding to nearest, ties to even.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "sim/base/dtype.h"

namespace tpusim::workloads {

// Rounds an fp32 to the nearest bf16 (ties to even) and returns it widened back to fp32.
inline float round_to_bf16(float f) {
  if (std::isnan(f)) return f;
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The value an element of type `t` holds after storing `v`: fp32 rounds to nearest float, bf16
// then to nearest bf16 (as an fp32 accumulator drained to bf16 does), integers truncate toward
// zero and wrap to their width like two's-complement hardware.
inline double round_to_dtype(double v, DType t) {
  switch (t) {
    case DType::kFp32:
      return static_cast<float>(v);
    case DType::kBf16:
      return round_to_bf16(static_cast<float>(v));
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32: {
      if (!std::isfinite(v)) return 0;
      const double clamped = std::fmax(std::fmin(v, 9.0e18), -9.0e18);  // keep the cast defined
      const auto wide = static_cast<std::int64_t>(clamped);
      if (t == DType::kInt8) return static_cast<std::int8_t>(static_cast<std::uint8_t>(wide));
      if (t == DType::kInt16) return static_cast<std::int16_t>(static_cast<std::uint16_t>(wide));
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(wide));
    }
    case DType::kFp8:
      return v;  // no operator accepts fp8 (infer_output_dtype rejects it)
  }
  return v;
}

}  // namespace tpusim::workloads
