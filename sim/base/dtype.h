#pragma once
// Element data types shared by the ISA, the lowering and the models.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace tpusim {

enum class DType : std::uint8_t { kInt8, kInt16, kInt32, kBf16, kFp32, kFp8 };

inline constexpr DType kAllDTypes[] = {DType::kInt8, DType::kInt16, DType::kInt32,
                                       DType::kBf16, DType::kFp32,  DType::kFp8};

inline constexpr std::size_t kNumDTypes = std::size(kAllDTypes);

inline constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kBf16: return "bf16";
    case DType::kFp32: return "fp32";
    case DType::kFp8: return "fp8";
  }
  return "?";
}

inline constexpr std::uint32_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kFp8: return 1;
    case DType::kInt16:
    case DType::kBf16: return 2;
    case DType::kInt32:
    case DType::kFp32: return 4;
  }
  return 0;
}

inline constexpr bool dtype_is_integer(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32;
}

// What a multiply-accumulate of two operands of type `t` accumulates into: integers widen to
// int32 as in TPUv1, floating types to fp32 as in TPUv2 onwards.
inline constexpr DType accumulator_dtype(DType t) {
  return dtype_is_integer(t) ? DType::kInt32 : DType::kFp32;
}

inline std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

}  // namespace tpusim
