#pragma once
// What the graph's validation and its shape inference share (workloads/ only, not installed API).

#include <cstdint>
#include <limits>
#include <string>

#include "workloads/graph.h"

namespace tpusim::workloads::detail {

// Saturating product: sizes of validated graphs fit in int64; this keeps garbage from wrapping.
inline std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<std::int64_t>::max();
  return r;
}

// Every error about one operator starts the same way, so the user can find it in the file.
[[noreturn]] inline void fail(const Op& op, const std::string& message) {
  throw WorkloadError(
      op.where, "op '" + op.name + "' (" + std::string(op_kind_name(op.kind)) + "): " + message);
}

inline bool is_float(DType t) { return t == DType::kBf16 || t == DType::kFp32; }

}  // namespace tpusim::workloads::detail
