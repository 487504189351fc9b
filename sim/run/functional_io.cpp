#include "sim/run/functional_io.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstring>
#include <filesystem>

#include "sim/base/errors.h"
#include "workloads/suggest.h"

namespace tpusim::sim {

namespace {

namespace fs = std::filesystem;
using isa::TensorInit;
using isa::TensorPlacement;

std::uint16_t to_bf16_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<std::uint16_t>(bits >> 16);
}

float from_bf16_bits(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void encode(double v, DType t, std::uint8_t* out) {
  switch (t) {
    case DType::kInt8: { const auto x = static_cast<std::int8_t>(v); std::memcpy(out, &x, 1); return; }
    case DType::kInt16: { const auto x = static_cast<std::int16_t>(v); std::memcpy(out, &x, 2); return; }
    case DType::kInt32: { const auto x = static_cast<std::int32_t>(v); std::memcpy(out, &x, 4); return; }
    case DType::kFp32: { const auto x = static_cast<float>(v); std::memcpy(out, &x, 4); return; }
    case DType::kBf16: { const auto x = to_bf16_bits(static_cast<float>(v)); std::memcpy(out, &x, 2); return; }
    case DType::kFp8: break;
  }
  throw InputError("--functional: fp8 tensors are not supported");
}

double decode(const std::uint8_t* in, DType t) {
  switch (t) {
    case DType::kInt8: { std::int8_t x; std::memcpy(&x, in, 1); return x; }
    case DType::kInt16: { std::int16_t x; std::memcpy(&x, in, 2); return x; }
    case DType::kInt32: { std::int32_t x; std::memcpy(&x, in, 4); return x; }
    case DType::kFp32: { float x; std::memcpy(&x, in, 4); return x; }
    case DType::kBf16: { std::uint16_t x; std::memcpy(&x, in, 2); return from_bf16_bits(x); }
    case DType::kFp8: break;
  }
  throw InputError("--functional: fp8 tensors are not supported");
}

// Calls f(storage element offset, logical element index) for every logical element, row-major.
template <typename F>
void for_each_element(const TensorPlacement& t, F f) {
  const std::size_t rank = t.shape.size();
  std::vector<std::int64_t> idx(rank, 0);
  std::uint64_t logical = 0;
  std::uint64_t total = 1;
  for (std::int64_t d : t.shape) total *= static_cast<std::uint64_t>(d);
  std::vector<std::uint64_t> stride(rank, 1);
  for (std::size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * static_cast<std::uint64_t>(t.storage[i]);
  for (; logical < total; ++logical) {
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < rank; ++i) at += static_cast<std::uint64_t>(idx[i] + t.origin[i]) * stride[i];
    f(at, logical);
    for (std::size_t i = rank; i-- > 0;) {
      if (++idx[i] < t.shape[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace

std::string npy_file_name(const std::string& tensor) {
  std::string name;
  for (const char c : tensor) {
    const bool plain =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    name += plain ? c : '_';
  }
  if (name.empty())
    name = "_";
  else if (name[0] == '.')
    name[0] = '_';
  return name + ".npy";
}

void check_npy_file_names(const workloads::Graph& graph) {
  std::map<std::string, std::string> owner;
  for (const workloads::Tensor& t : graph.tensors) {
    if (t.role == workloads::TensorRole::kActivation) continue;
    const auto [it, fresh] = owner.emplace(npy_file_name(t.name), t.name);
    if (!fresh)
      throw InputError("tensors '" + it->second + "' and '" + t.name + "' would share the file " +
                       it->first +
                       " under --inputs or --dump (characters other than letters, "
                       "digits, '.', '_' and '-' are written as '_')");
  }
}

FunctionalData prepare_functional_data(const workloads::Graph& graph, const std::string& inputs_dir,
                                       std::uint64_t seed) {
  FunctionalData data;
  data.tensors = workloads::random_inputs(graph, seed);
  if (!inputs_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(inputs_dir, ec)) throw InputError(inputs_dir + ": no such directory (--inputs)");
    // A misspelt file name would otherwise leave its tensor to the generated data unnoticed.
    // Names of other tensors (a --dump directory's outputs) are allowed and not read.
    std::vector<std::string> names;
    for (const workloads::Tensor& t : graph.tensors)
      names.push_back(fs::path(npy_file_name(t.name)).stem().string());
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(inputs_dir, ec))
      if (entry.path().extension() == ".npy") files.push_back(entry.path());
    std::sort(files.begin(), files.end());  // the first unknown one named, whatever the order
    for (const fs::path& file : files) {
      const std::string stem = file.stem().string();
      if (std::find(names.begin(), names.end(), stem) == names.end())
        throw InputError(file.string() + ": the workload has no tensor named '" + stem + "'" +
                         workloads::suggestion(stem, names) + " (--inputs reads NAME.npy files)");
    }
  }
  for (const workloads::Tensor& t : graph.tensors) {
    if (t.role != workloads::TensorRole::kInput && t.role != workloads::TensorRole::kWeight) continue;
    const fs::path file = fs::path(inputs_dir) / npy_file_name(t.name);
    std::error_code ec;
    if (!inputs_dir.empty() && fs::exists(file, ec) && !fs::is_regular_file(file, ec))
      throw InputError(file.string() + ": not a file (--inputs reads NAME.npy files)");
    if (!inputs_dir.empty() && fs::is_regular_file(file, ec))
      data.tensors[t.name] = workloads::read_npy_for(file.string(), t);
    else
      data.generated.insert(t.name);
  }
  for (const workloads::Op& op : graph.ops) {
    if (op.kind != workloads::OpKind::kEmbedding) continue;
    const workloads::Tensor& ids = graph.tensor(op.inputs[1]);
    const std::string& name = ids.name;
    // The lowering places the gathered rows from the index values it is given, so they must be
    // known before the run: data of the graph's, not values an operator computes.
    if (ids.role != workloads::TensorRole::kInput && ids.role != workloads::TensorRole::kWeight)
      throw NotImplemented("--functional: embedding '" + op.name + "' reads its indices from '" +
                           name +
                           "', which an operator computes; functional mode takes indices "
                           "only from the graph's inputs");
    auto it = data.tensors.find(name);
    if (it == data.tensors.end()) continue;
    std::vector<std::int64_t> values;
    for (double v : it->second.values) values.push_back(static_cast<std::int64_t>(v));
    data.indices[name] = std::move(values);
  }
  return data;
}

void write_tensors(models::BackingStore& store, const isa::Lowered& lowered, const FunctionalData& data) {
  for (const TensorPlacement& t : lowered.tensors) {
    if (!t.alias_of.empty()) continue;
    const bool padded = t.storage != t.shape;
    if (t.init == TensorInit::kNone && !padded) continue;
    assert(t.space == isa::Space::kHbm);  // only activations are kept in vmem, never these
    const std::uint64_t e = dtype_bytes(t.dtype);
    std::vector<std::uint8_t> bytes(t.storage_bytes());
    // The halo (and, for constants, everything) holds the fill value.
    for (std::uint64_t at = 0; at < bytes.size(); at += e) encode(t.fill, t.dtype, &bytes[at]);
    if (t.init == TensorInit::kData) {
      auto it = data.tensors.find(t.name);
      if (it == data.tensors.end()) throw InputError("--functional: no data for tensor '" + t.name + "'");
      const std::vector<double>& values = it->second.values;
      for_each_element(t, [&](std::uint64_t at, std::uint64_t i) { encode(values[i], t.dtype, &bytes[at * e]); });
    } else if (t.init == TensorInit::kCausalMask) {
      const auto cols = static_cast<std::uint64_t>(t.shape.back());
      for (std::uint64_t i = 0; i * e < bytes.size(); ++i)
        encode(i % cols > i / cols ? t.fill : 0.0, t.dtype, &bytes[i * e]);
    } else if (t.init == TensorInit::kNone) {
      // An activation stored with a halo: only the halo matters; producers write the interior.
    }
    store.write(t.base, bytes.data(), bytes.size());
  }
}

void dump_tensors(models::BackingStore& store, const isa::Lowered& lowered, const FunctionalData& data,
                  const std::string& dir) {
  if (dir.empty()) return;
  for (const TensorPlacement& t : lowered.tensors) {
    const bool output = t.role == workloads::TensorRole::kOutput;
    if (!output && !data.generated.count(t.name)) continue;
    assert(t.space == isa::Space::kHbm);  // graph inputs and outputs stay in HBM
    const std::uint64_t e = dtype_bytes(t.dtype);
    std::vector<std::uint8_t> bytes(t.storage_bytes());
    store.read(t.base, bytes.data(), bytes.size());
    workloads::TensorData out;
    out.shape = t.shape;
    out.dtype = t.dtype;
    std::uint64_t total = 1;
    for (std::int64_t d : t.shape) total *= static_cast<std::uint64_t>(d);
    out.values.resize(total);
    for_each_element(t, [&](std::uint64_t at, std::uint64_t i) { out.values[i] = decode(&bytes[at * e], t.dtype); });
    workloads::write_npy((fs::path(dir) / npy_file_name(t.name)).string(), out);
  }
}

}  // namespace tpusim::sim
