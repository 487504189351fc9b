#include "models/mxu/mxu_datapath.h"

#include <cstring>

#include "models/common/elements.h"
#include "sim/base/errors.h"

namespace tpusim::models {

void MxuDatapath::load_weights(const isa::MxuLoadWeights& lw, const std::uint8_t* vmem) {
  if (!functional_dtype(lw.dtype))
    throw NotImplemented("--functional: " + std::string(dtype_name(lw.dtype)) +
                         " arithmetic is not modelled yet");
  dtype_ = lw.dtype;
  k_ = lw.k;
  n_ = lw.n;
  const std::uint64_t size = dtype_bytes(lw.dtype);
  weights_.assign(std::uint64_t{k_} * n_, 0.0);
  // Memory holds W (K rows of N) or, transposed, W^T (N rows of K).
  const std::uint64_t stride = lw.src_stride;  // the assembler fills in the dense default
  for (std::uint32_t k = 0; k < k_; ++k)
    for (std::uint32_t n = 0; n < n_; ++n) {
      const std::uint64_t offset = lw.transpose ? n * stride + k * size : k * stride + n * size;
      weights_[std::uint64_t{k} * n_ + n] = load_element(vmem + lw.src.addr + offset, dtype_);
    }
}

void MxuDatapath::matmul(const isa::MxuMatmul& mm, const std::uint8_t* vmem,
                         std::uint8_t* accmem) const {
  const std::uint64_t size = dtype_bytes(mm.dtype);
  const std::uint64_t src_stride = mm.src_stride, dst_stride = mm.dst_stride;
  const bool integer = dtype_is_integer(mm.dtype);
  std::vector<double> row(mm.k);
  for (std::uint32_t m = 0; m < mm.m; ++m) {
    const std::uint8_t* in = vmem + mm.src.addr + m * src_stride;
    for (std::uint32_t k = 0; k < mm.k; ++k) row[k] = load_element(in + k * size, mm.dtype);
    std::uint8_t* out = accmem + mm.dst.addr + m * dst_stride;
    for (std::uint32_t n = 0; n < mm.n; ++n) {
      std::uint8_t* cell = out + std::uint64_t{n} * 4;
      if (integer) {
        std::uint32_t acc = mm.accumulate ? static_cast<std::uint32_t>(load_integer(cell, DType::kInt32)) : 0;
        for (std::uint32_t k = 0; k < mm.k; ++k)
          acc += static_cast<std::uint32_t>(static_cast<std::int64_t>(row[k]) *
                                            static_cast<std::int64_t>(weights_[std::uint64_t{k} * n_ + n]));
        std::memcpy(cell, &acc, 4);
      } else {
        float acc = 0.0f;
        for (std::uint32_t k = 0; k < mm.k; ++k)
          acc += static_cast<float>(row[k]) * static_cast<float>(weights_[std::uint64_t{k} * n_ + n]);
        if (mm.accumulate) acc = static_cast<float>(load_element(cell, DType::kFp32)) + acc;
        std::memcpy(cell, &acc, 4);
      }
    }
  }
}

}  // namespace tpusim::models
