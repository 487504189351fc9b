#pragma once
// The values an MXU computes (functional mode), independent of when: weights of the most recent
// mxu.lw; each output element accumulates its K products in the array's order, k = 0 first (the
// partial sum enters at the top row and gains one product per row on its way down). Integer
// operands accumulate in int32, wrapping; floating ones in fp32, rounding after every add (the
// product of two bf16 values is exact in fp32).

#include <cstdint>
#include <vector>

#include "isa/program.h"

namespace tpusim::models {

class MxuDatapath {
 public:
  void load_weights(const isa::MxuLoadWeights& lw, const std::uint8_t* vmem);
  void matmul(const isa::MxuMatmul& mm, const std::uint8_t* vmem, std::uint8_t* accmem) const;
  // The last tile, K x N row-major.
  const std::vector<double>& weights() const { return weights_; }

 private:
  DType dtype_ = DType::kBf16;
  std::uint32_t k_ = 0, n_ = 0;
  std::vector<double> weights_;  // K x N, row-major; exact for every supported dtype
};

}  // namespace tpusim::models
