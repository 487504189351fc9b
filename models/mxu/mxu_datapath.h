#pragma once
// The values an MXU computes (functional mode), independent of when: weights of the tile the
// matmul uses (the last one staged by mxu.lw, or with `keep` the one already in use); each
// output element accumulates its K products in the array's order, k = 0 first (the
// partial sum enters at the top row and gains one product per row on its way down). Integer
// operands accumulate in int32, wrapping; floating ones in fp32, rounding after every add (the
// product of two bf16 values is exact in fp32).

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "isa/program.h"

namespace tpusim::models {

class MxuDatapath {
 public:
  // `rounding`: operand types rounded, as they enter the array, to the precision given
  // (core.mxu.rounding).
  explicit MxuDatapath(std::map<DType, DType> rounding = {}) : rounding_(std::move(rounding)) {}
  // Stages a tile; the next matmul without `keep` switches to it.
  void load_weights(const isa::MxuLoadWeights& lw, const std::uint8_t* vmem);
  void matmul(const isa::MxuMatmul& mm, const std::uint8_t* vmem, std::uint8_t* accmem);
  // The last tile staged, K x N row-major.
  const std::vector<double>& staged() const { return staged_.values; }

 private:
  struct Tile {
    DType dtype = DType::kBf16;
    std::uint32_t k = 0, n = 0;
    std::vector<double> values;  // K x N, row-major; exact for every supported dtype
  };
  // An operand element as the array multiplies it.
  double operand(const std::uint8_t* p, DType t) const;
  std::map<DType, DType> rounding_;
  Tile active_, staged_;
  bool pending_ = false;
};

}  // namespace tpusim::models
