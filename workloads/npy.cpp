#include "workloads/npy.h"

#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/base/fnv1a.h"
#include "sim/base/output_file.h"
#include "workloads/numerics.h"

namespace tpusim::workloads {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// Larger .npy files are refused: the reference evaluator holds values as doubles.
constexpr std::size_t kMaxNpyBytes = std::size_t{1} << 32;

[[noreturn]] void fail(const std::string& file, const std::string& message) {
  throw WorkloadError(SourceLocation{file, 0, 0}, message);
}

struct Descr {
  std::string_view text;
  DType dtype;
  std::size_t bytes;
};
constexpr Descr kDescrs[] = {{"|i1", DType::kInt8, 1},
                             {"<i1", DType::kInt8, 1},
                             {"<i2", DType::kInt16, 2},
                             {"<i4", DType::kInt32, 4},
                             {"<f4", DType::kFp32, 4}};

// The header is a Python dict literal written by numpy.lib.format:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        seen_descr = true;
      } else if (key == "fortran_order") {
        fortran = word() == "True";
        seen_order = true;
      } else if (key == "shape") {
        shape = tuple();
        seen_shape = true;
      } else {
        fail(file_, "header: unknown key '" + key.substr(0, 40) + "'");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    if (!seen_descr || !seen_order || !seen_shape)
      fail(file_, "header: needs 'descr', 'fortran_order' and 'shape'");
  }

 private:
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool peek(char c) {
    skip_space();
    return i_ < s_.size() && s_[i_] == c;
  }
  void expect(char c) {
    if (!peek(c))
      fail(file_, std::string("header: expected '") + c + "' at offset " + std::to_string(i_));
    ++i_;
  }
  std::string quoted() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"'))
      fail(file_, "header: expected a quoted string at offset " + std::to_string(i_));
    const char q = s_[i_++];
    const std::size_t end = s_.find(q, i_);
    if (end == std::string_view::npos) fail(file_, "header: unterminated string");
    std::string out(s_.substr(i_, end - i_));
    i_ = end + 1;
    return out;
  }
  std::string word() {
    skip_space();
    const std::size_t start = i_;
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    std::string w(s_.substr(start, i_ - start));
    if (w != "True" && w != "False") fail(file_, "header: fortran_order must be True or False");
    return w;
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (!peek(')')) {
      skip_space();
      std::int64_t v = -1;
      const auto [end, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), v);
      if (ec != std::errc() || v < 0 || v >= kMaxDim)
        fail(file_, "header: bad shape dimension at offset " + std::to_string(i_));
      i_ = static_cast<std::size_t>(end - s_.data());
      shape.push_back(v);
      if (shape.size() > 64) fail(file_, "header: more than 64 dimensions");
      if (!peek(')')) expect(',');
    }
    expect(')');
    return shape;
  }

  std::string_view s_;
  const std::string& file_;
  std::size_t i_ = 0;
};

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    fail(path, "cannot read: not a regular file (or does not exist)");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read: " + ec.message());
  if (size > kMaxNpyBytes) fail(path, "file is larger than 4 GiB");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

TensorData parse_npy(std::string_view bytes, const std::string& file_name) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic)
    fail(file_name, "not a .npy file (wrong magic; expected \\x93NUMPY)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(file_name, "truncated header");
    for (int i = 3; i >= 0; --i)
      header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    fail(file_name, "unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > bytes.size() - offset)
    fail(file_name, "truncated header: it declares " + std::to_string(header_len) +
                        " bytes, the file has " + std::to_string(bytes.size() - offset) +
                        " after the header length");
  std::string descr;
  bool fortran = false;
  TensorData data;
  HeaderParser(bytes.substr(offset, header_len), file_name).parse(descr, fortran, data.shape);
  if (fortran) fail(file_name, "Fortran-order arrays are not supported (save with C order)");
  const Descr* d = nullptr;
  for (const Descr& k : kDescrs)
    if (k.text == descr) d = &k;
  if (!d)
    fail(file_name, "unsupported dtype '" + descr.substr(0, 20) +
                        "' (expected int8 '|i1', int16 '<i2', int32 '<i4' or float32 '<f4')");
  data.dtype = d->dtype;
  const std::int64_t n = shape_elements(data.shape);
  const std::size_t payload = bytes.size() - offset - header_len;
  if (n > kMaxElements || static_cast<std::uint64_t>(n) * d->bytes != payload)
    fail(file_name, "data is " + std::to_string(payload) + " bytes but shape " +
                        shape_str(data.shape) + " of " + descr + " needs " +
                        std::to_string(static_cast<std::uint64_t>(n) * d->bytes));
  data.values.resize(static_cast<std::size_t>(n));
  const char* p = bytes.data() + offset + header_len;
  for (std::size_t i = 0; i < data.values.size(); ++i, p += d->bytes) {
    switch (d->dtype) {
      case DType::kInt8:
        data.values[i] = static_cast<std::int8_t>(*p);
        break;
      case DType::kInt16: {
        std::int16_t v;
        std::memcpy(&v, p, 2);
        data.values[i] = v;
        break;
      }
      case DType::kInt32: {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        data.values[i] = v;
        break;
      }
      default: {
        float v;
        std::memcpy(&v, p, 4);
        data.values[i] = v;
        break;
      }
    }
  }
  return data;
}

TensorData read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

TensorData conform_to(TensorData data, const Tensor& tensor, const std::string& file_name) {
  if (data.shape != tensor.shape)
    fail(file_name, "shape " + shape_str(data.shape) + " does not match tensor '" + tensor.name +
                        "' " + shape_str(tensor.shape));
  const bool float_ok =
      data.dtype == DType::kFp32 && (tensor.dtype == DType::kFp32 || tensor.dtype == DType::kBf16);
  if (!float_ok && data.dtype != tensor.dtype)
    fail(file_name, "dtype " + std::string(dtype_name(data.dtype)) + " does not fit tensor '" +
                        tensor.name + "' of dtype " + std::string(dtype_name(tensor.dtype)) +
                        (tensor.dtype == DType::kBf16 ? " (store bf16 as float32)" : ""));
  for (double& v : data.values) v = round_to_dtype(v, tensor.dtype);
  data.dtype = tensor.dtype;
  return data;
}

TensorData read_npy_for(const std::string& path, const Tensor& tensor) {
  return conform_to(read_npy(path), tensor, path);
}

std::string encode_npy(const TensorData& data) {
  const char* descr = nullptr;
  std::size_t width = 4;
  switch (data.dtype) {
    case DType::kInt8:
      descr = "|i1";
      width = 1;
      break;
    case DType::kInt16:
      descr = "<i2";
      width = 2;
      break;
    case DType::kInt32:
      descr = "<i4";
      break;
    case DType::kBf16:
    case DType::kFp32:
      descr = "<f4";
      break;
    case DType::kFp8:
      throw WorkloadError(SourceLocation{}, "fp8 tensors cannot be written as .npy");
  }
  if (static_cast<std::int64_t>(data.values.size()) != shape_elements(data.shape))
    throw WorkloadError(SourceLocation{}, "tensor data has " + std::to_string(data.values.size()) +
                                              " values for shape " + shape_str(data.shape));
  std::string shape = "(";
  for (std::size_t i = 0; i < data.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(data.shape[i]);
  shape += data.shape.size() == 1 ? ",)" : ")";  // Python's one-element tuple is "(5,)"
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy pads the header with spaces and a newline so the data starts 64-byte aligned.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (double v : data.values) {
    char buf[4];
    const double r = round_to_dtype(v, data.dtype);
    if (width == 1) {
      buf[0] = static_cast<char>(static_cast<std::int8_t>(r));
    } else if (width == 2) {
      const auto i = static_cast<std::int16_t>(r);
      std::memcpy(buf, &i, 2);
    } else if (data.dtype == DType::kInt32) {
      const auto i = static_cast<std::int32_t>(r);
      std::memcpy(buf, &i, 4);
    } else {
      const auto f = static_cast<float>(r);
      std::memcpy(buf, &f, 4);
    }
    out.append(buf, width);
  }
  return out;
}

void write_npy(const std::string& path, const TensorData& data) {
  const std::string bytes = encode_npy(data);
  // Staged: a full disk must not leave a short array under the tensor's name.
  try {
    commit_file(stage_file(path, [&](std::ostream& out) {
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }));
  } catch (const InputError&) {
    fail(path, "cannot write the file");
  }
}

TensorData random_tensor(const Tensor& tensor, std::uint64_t seed, std::int64_t max_value) {
  TensorData data{tensor.shape, tensor.dtype, {}};
  const std::int64_t n = tensor.elements();
  if (n > kMaxElements) fail(tensor.name, "tensor is too large to generate");
  data.values.resize(static_cast<std::size_t>(n));
  std::uint64_t state = seed ^ fnv1a64(tensor.name);
  splitmix64(state);  // decorrelate seeds that differ in few bits
  const bool integer = dtype_is_integer(tensor.dtype);
  for (double& v : data.values) {
    const std::uint64_t u = splitmix64(state);
    if (!integer) {
      v = round_to_dtype(static_cast<double>(u >> 40) / 8388608.0 - 1.0, tensor.dtype);
    } else if (max_value >= 0) {
      v = static_cast<double>(u % (static_cast<std::uint64_t>(max_value) + 1));
    } else {
      v = static_cast<double>(static_cast<std::int64_t>(u >> 60) - 8);
    }
  }
  return data;
}

std::map<std::string, TensorData> random_inputs(const Graph& graph, std::uint64_t seed) {
  std::vector<std::int64_t> max_value(graph.tensors.size(), -1);
  for (const Op& op : graph.ops)
    if (op.kind == OpKind::kEmbedding && op.inputs.size() == 2) {
      // Indices read by several tables must fit the smallest.
      const std::int64_t last_row = graph.tensor(op.inputs[0]).shape.at(0) - 1;
      std::int64_t& m = max_value[op.inputs[1]];
      m = m < 0 ? last_row : std::min(m, last_row);
    }
  std::map<std::string, TensorData> out;
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor& t = graph.tensors[i];
    if (t.role == TensorRole::kInput || t.role == TensorRole::kWeight)
      out.emplace(t.name, random_tensor(t, seed, max_value[i]));
  }
  return out;
}

}  // namespace tpusim::workloads
