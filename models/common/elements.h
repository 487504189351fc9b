#pragma once
// Reading and writing typed elements in byte memories, for functional mode. Little-endian, as the
// .tbin format and every host tpusim runs on. bf16 is the top half of an IEEE fp32; conversion to
// it rounds to nearest, ties to even, and keeps NaN a NaN.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "sim/base/dtype.h"

namespace tpusim::models {

inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040);  // quiet NaN
  const std::uint32_t lsb = (bits >> 16) & 1;
  bits += 0x7fff + lsb;
  return static_cast<std::uint16_t>(bits >> 16);
}

// Values travel as double (exact for every supported integer and float type) or, for integer
// arithmetic that must wrap like hardware, as int64.
inline bool functional_dtype(DType t) { return t != DType::kFp8; }

inline double load_element(const std::uint8_t* p, DType t) {
  switch (t) {
    case DType::kInt8: return static_cast<std::int8_t>(p[0]);
    case DType::kInt16: {
      std::int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kInt32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kBf16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16_to_float(v);
    }
    case DType::kFp32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kFp8: return 0;
  }
  return 0;
}

inline std::int64_t load_integer(const std::uint8_t* p, DType t) {
  return static_cast<std::int64_t>(load_element(p, t));
}

// Integers wrap to their width (two's complement), as an adder of that width would.
inline void store_integer(std::uint8_t* p, DType t, std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  switch (t) {
    case DType::kInt8: p[0] = static_cast<std::uint8_t>(u); return;
    case DType::kInt16: {
      const auto w = static_cast<std::uint16_t>(u);
      std::memcpy(p, &w, 2);
      return;
    }
    default: {
      const auto w = static_cast<std::uint32_t>(u);
      std::memcpy(p, &w, 4);
      return;
    }
  }
}

// Floats round to the destination type (fp32: to nearest float; bf16: then to nearest bf16).
inline void store_float(std::uint8_t* p, DType t, float v) {
  if (t == DType::kBf16) {
    const std::uint16_t b = float_to_bf16(v);
    std::memcpy(p, &b, 2);
  } else {
    std::memcpy(p, &v, 4);
  }
}

// Converts any value to `t`: floats to integers round half to even and saturate.
inline void store_converted(std::uint8_t* p, DType t, double v) {
  if (dtype_is_integer(t)) {
    const double lo = t == DType::kInt8 ? -128.0 : t == DType::kInt16 ? -32768.0 : -2147483648.0;
    const double hi = t == DType::kInt8 ? 127.0 : t == DType::kInt16 ? 32767.0 : 2147483647.0;
    const double r = std::isnan(v) ? 0.0 : std::nearbyint(v);  // default rounding: half to even
    store_integer(p, t, static_cast<std::int64_t>(std::fmin(std::fmax(r, lo), hi)));
  } else {
    store_float(p, t, static_cast<float>(v));
  }
}

}  // namespace tpusim::models
