#pragma once
// Shared by the cycle-level and RTL co-simulation tests: random tiles and the plain reference
// product, int8 operands accumulated in int32 (wrapping), k = 0 first.

#include <cstdint>
#include <random>
#include <vector>

#include "isa/program.h"

namespace tpusim::test {

inline std::vector<std::int32_t> random_int8(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int32_t> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

// Y (M x N) = X (M x K) * W (K x N), row-major.
inline std::vector<std::int32_t> reference_matmul(const std::vector<std::int32_t>& x,
                                                  const std::vector<std::int32_t>& w,
                                                  std::uint32_t m, std::uint32_t k,
                                                  std::uint32_t n) {
  std::vector<std::int32_t> y(std::size_t{m} * n);
  for (std::uint32_t i = 0; i < m; ++i)
    for (std::uint32_t j = 0; j < n; ++j) {
      std::uint32_t acc = 0;
      for (std::uint32_t q = 0; q < k; ++q)
        acc += static_cast<std::uint32_t>(x[std::size_t{i} * k + q] * w[std::size_t{q} * n + j]);
      y[std::size_t{i} * n + j] = static_cast<std::int32_t>(acc);
    }
  return y;
}

inline isa::MxuLoadWeights make_lw(std::uint32_t k, std::uint32_t n) {
  isa::MxuLoadWeights w;
  w.k = k;
  w.n = n;
  w.dtype = DType::kInt8;
  return w;
}

inline isa::MxuMatmul make_mm(std::uint32_t m, std::uint32_t k, std::uint32_t n) {
  isa::MxuMatmul x;
  x.m = m;
  x.k = k;
  x.n = n;
  x.dtype = DType::kInt8;
  return x;
}

}  // namespace tpusim::test
