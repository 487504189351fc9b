#pragma once
// FNV-1a, 64 bits: a fast, stable fingerprint of text (not for security). In base because the
// workloads' data generator and the sweep's resume check both use it.

#include <cstdint>
#include <string_view>

namespace tpusim {

inline std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

}  // namespace tpusim
