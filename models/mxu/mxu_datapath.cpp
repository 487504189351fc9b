#include "models/mxu/mxu_datapath.h"

#include <cstring>

#include "models/common/elements.h"
#include "sim/base/errors.h"

namespace tpusim::models {

double MxuDatapath::operand(const std::uint8_t* p, DType t) const {
  const double v = load_element(p, t);
  const auto it = rounding_.find(t);
  if (it == rounding_.end()) return v;
  std::uint8_t rounded[8];
  store_converted(rounded, it->second, v);
  return load_element(rounded, it->second);
}

void MxuDatapath::load_weights(const isa::MxuLoadWeights& lw, const std::uint8_t* vmem) {
  const auto rounded = rounding_.find(lw.dtype);
  const DType runs = rounded == rounding_.end() ? lw.dtype : rounded->second;
  for (DType t : {lw.dtype, runs})
    if (!functional_dtype(t))
      throw NotImplemented("--functional: " + std::string(dtype_name(t)) +
                           " arithmetic is not modelled yet");
  Tile& t = staged_;
  t.dtype = lw.dtype;
  t.k = lw.k;
  t.n = lw.n;
  pending_ = true;
  const std::uint64_t size = dtype_bytes(lw.dtype);
  t.values.assign(std::uint64_t{t.k} * t.n, 0.0);
  // Memory holds W (K rows of N) or, transposed, W^T (N rows of K).
  const std::uint64_t stride = lw.src_stride;  // the assembler fills in the dense default
  for (std::uint32_t k = 0; k < t.k; ++k)
    for (std::uint32_t n = 0; n < t.n; ++n) {
      const std::uint64_t offset = lw.transpose ? n * stride + k * size : k * stride + n * size;
      t.values[std::uint64_t{k} * t.n + n] = operand(vmem + lw.src.addr + offset, t.dtype);
    }
}

void MxuDatapath::matmul(const isa::MxuMatmul& mm, const std::uint8_t* vmem, std::uint8_t* accmem) {
  if (pending_ && !mm.keep) {
    std::swap(active_, staged_);
    pending_ = false;
  }
  const std::vector<double>& weights = active_.values;
  const std::uint32_t width = active_.n;
  const std::uint64_t size = dtype_bytes(mm.dtype);
  const std::uint64_t src_stride = mm.src_stride, dst_stride = mm.dst_stride;
  const bool integer = dtype_is_integer(mm.dtype);
  std::vector<double> row(mm.k);
  for (std::uint32_t m = 0; m < mm.m; ++m) {
    const std::uint8_t* in = vmem + mm.src.addr + m * src_stride;
    for (std::uint32_t k = 0; k < mm.k; ++k) row[k] = operand(in + k * size, mm.dtype);
    std::uint8_t* out = accmem + mm.dst.addr + m * dst_stride;
    for (std::uint32_t n = 0; n < mm.n; ++n) {
      std::uint8_t* cell = out + std::uint64_t{n} * 4;
      if (integer) {
        std::uint32_t acc =
            mm.accumulate ? static_cast<std::uint32_t>(load_integer(cell, DType::kInt32)) : 0;
        for (std::uint32_t k = 0; k < mm.k; ++k)
          acc += static_cast<std::uint32_t>(
              static_cast<std::int64_t>(row[k]) *
              static_cast<std::int64_t>(weights[std::uint64_t{k} * width + n]));
        std::memcpy(cell, &acc, 4);
      } else {
        float acc = 0.0f;
        for (std::uint32_t k = 0; k < mm.k; ++k)
          acc += static_cast<float>(row[k]) *
                 static_cast<float>(weights[std::uint64_t{k} * width + n]);
        if (mm.accumulate) acc = static_cast<float>(load_element(cell, DType::kFp32)) + acc;
        std::memcpy(cell, &acc, 4);
      }
    }
  }
}

}  // namespace tpusim::models
