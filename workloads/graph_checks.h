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
inline std::string op_label(const Op& op) {
  return "op '" + op.name + "' (" + std::string(op_kind_name(op.kind)) + ")";
}
[[noreturn]] inline void fail(const Op& op, const std::string& message) {
  throw WorkloadError(op.where, op_label(op) + ": " + message);
}
// A valid operator the tool cannot run yet (exit 3, not a bad input).
[[noreturn]] inline void not_yet(const Op& op, const std::string& message) {
  throw NotImplemented(op.where.str() + ": " + op_label(op) + ": " + message);
}

inline bool is_float(DType t) { return t == DType::kBf16 || t == DType::kFp32; }

}  // namespace tpusim::workloads::detail
