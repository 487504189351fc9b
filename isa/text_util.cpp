#include "isa/text_util.h"

#include <cstdio>
#include <cstdlib>

namespace tpusim::isa {

bool dense_dma_strides(std::uint32_t elem_bytes, std::uint8_t dims,
                       const std::array<std::uint32_t, kMaxDmaDims>& count,
                       std::array<std::uint32_t, kMaxDmaDims>* stride) {
  stride->fill(0);
  std::uint64_t s = elem_bytes;
  for (int i = int(dims) - 1; i >= 0; --i) {
    if (s > UINT32_MAX) return false;
    (*stride)[i] = static_cast<std::uint32_t>(s);
    s *= count[i];
    if (s > UINT32_MAX) s = std::uint64_t{UINT32_MAX} + 1;  // saturate: only `> max` matters
  }
  return true;
}

std::string float_text(float v) {
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string number_text(std::uint64_t v) {
  char buf[32];
  if (v < 1024) {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  }
  return buf;
}

}  // namespace tpusim::isa
