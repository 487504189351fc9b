#include "models/mxu/array_latches.h"

#include <algorithm>

namespace tpusim::models {

ArrayLatches load_latches(const MxuSpec& spec, const isa::MxuLoadWeights& lw) {
  ArrayLatches h;
  if (spec.dataflow == Dataflow::kWeightStationary)
    h.weights = std::uint64_t{lw.k} * lw.n * spec.rows;
  return h;
}

ArrayLatches matmul_latches(const MxuSpec& spec, const isa::MxuMatmul& mm) {
  const std::uint64_t R = spec.rows, C = spec.cols, M = mm.m, K = mm.k, N = mm.n;
  ArrayLatches h;
  switch (spec.dataflow) {
    case Dataflow::kWeightStationary:
      // Input rows cross the C columns; each of the M x N sums runs down the R rows.
      h.inputs = M * K * C;
      h.sums = M * N * R;
      break;
    case Dataflow::kInputStationary: {
      // Each fold's X^T tile (K x mf) goes down the load chain's R rows, then the N weight
      // columns of K elements cross the C columns, and its N x mf sums run down the R rows.
      const std::uint64_t folds = (M + C - 1) / C;
      h.inputs = M * K * R;
      h.weights = folds * N * K * C;
      h.sums = M * N * R;
      break;
    }
    case Dataflow::kOutputStationary: {
      // Each fold's rf input rows cross the C columns and the K x N weights come down the R
      // rows; each MAC writes its accumulator; then result row r climbs r rows to the top and
      // leaves it: r + 1 latches.
      h.inputs = M * K * C;
      h.sums = M * N * K;
      for (std::uint64_t m0 = 0; m0 < M; m0 += R) {
        const std::uint64_t rf = std::min(R, M - m0);
        h.weights += K * N * R;
        h.sums += N * rf * (rf + 1) / 2;
      }
      break;
    }
  }
  return h;
}

}  // namespace tpusim::models
