#pragma once
// SCALE-Sim topology files (github.com/scalesim-project/scale-sim-v2, topologies/): the
// convolution format "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width,
// Channels, Num Filter, Strides," and the GEMM format "Layer, M, N, K". Documented in README.md.

#include <string>
#include <string_view>

#include "workloads/graph.h"

namespace tpusim::workloads {

// Each row becomes one independent operator with its own input, weight and output tensors:
// conv rows a conv2d (batch 1, NHWC, no padding: OH = (H - FH) / S + 1, as SCALE-Sim computes
// it), GEMM rows a matmul A[M,K] x B[K,N]. Errors are "file:line:column-index: message".
Graph load_scalesim_csv(const std::string& path, DType dtype);
Graph parse_scalesim_csv(std::string_view text, const std::string& file_name, DType dtype);

}  // namespace tpusim::workloads
