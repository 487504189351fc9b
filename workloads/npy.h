#pragma once
// Tensor data in NumPy .npy files (format version 1.0; 2.0 is read too), and deterministic random
// tensors for runs without user data. Little-endian, C order, element types int8 ('|i1'),
// int16 ('<i2'), int32 ('<i4') and float32 ('<f4'); bf16 tensors travel as float32.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/graph.h"

namespace tpusim::workloads {

// Values as double: exact for every int32 and fp32 (and so bf16) value.
struct TensorData {
  Shape shape;
  DType dtype = DType::kFp32;
  std::vector<double> values;  // row-major, shape_elements(shape) of them
};

// Decodes a whole .npy file held in memory. Errors are WorkloadError "file: problem".
TensorData parse_npy(std::string_view bytes, const std::string& file_name);
TensorData read_npy(const std::string& path);

// `data` made fit to be the contents of `tensor`: the shape must be equal; float32 data feeds an
// fp32 tensor exactly and a bf16 tensor rounded to nearest even; integer data must have the
// tensor's dtype exactly (silent narrowing would hide a wrong file).
TensorData conform_to(TensorData data, const Tensor& tensor, const std::string& file_name);
TensorData read_npy_for(const std::string& path, const Tensor& tensor);

// The .npy bytes for `data` (bf16 written as float32). fp8 is refused.
std::string encode_npy(const TensorData& data);
void write_npy(const std::string& path, const TensorData& data);

// Deterministic data for a tensor: splitmix64 keyed by `seed` and an FNV-1a hash of the tensor
// name, so results are the same on every platform and standard library. Floats are uniform in
// [-1, 1) in steps of 2^-23, then rounded to the dtype (bf16 can round up to exactly 1.0); integers
// are uniform in [-8, 7], or in [0, max_value] when max_value >= 0 (embedding indices).
TensorData random_tensor(const Tensor& tensor, std::uint64_t seed, std::int64_t max_value = -1);

// random_tensor for every input and weight of the graph; indices read by an embedding are kept
// below the table's row count.
std::map<std::string, TensorData> random_inputs(const Graph& graph, std::uint64_t seed);

}  // namespace tpusim::workloads
