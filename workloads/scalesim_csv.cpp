#include "workloads/scalesim_csv.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/base/input_file.h"

namespace tpusim::workloads {
namespace {

// A cell as an error message quotes it: its first 40 bytes, with control characters and bytes
// outside ASCII written \xNN so the message stays one printable line (a NUL used to cut it).
std::string shown(const std::string& cell) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : cell.substr(0, 40)) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7F) {
      out += c;
    } else {
      out += "\\x";
      out += kDigits[b >> 4];
      out += kDigits[b & 15];
    }
  }
  return out;
}

constexpr std::size_t kMaxCsvBytes = std::size_t{16} << 20;

const std::vector<std::string> kConvHeader = {"layer name",    "ifmap height", "ifmap width",
                                              "filter height", "filter width", "channels",
                                              "num filter",    "strides"};
// SCALE-Sim's own writer (topology_utils.write_topo_file) splits the stride in two.
const std::vector<std::string> kConvHeaderHW = {"layer name",    "ifmap height",  "ifmap width",
                                                "filter height", "filter width",  "channels",
                                                "num filter",    "stride height", "stride width"};
const std::vector<std::string> kGemmHeader = {"layer", "m", "n", "k"};

struct Cell {
  std::string text;
  int column = 0;  // 1-based character column of its first non-blank character
};

// A row's cells and the column just past its last non-blank character, where a missing cell
// is reported.
struct Row {
  std::vector<Cell> cells;
  int end_column = 1;
};

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Cells of one line, trimmed. Trailing empty cells (the customary trailing comma) are dropped,
// and so is everything from a cell starting with '#' (SCALE-Sim files mark depthwise rows "#dw").
Row split(std::string_view line) {
  Row row;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    const std::string_view raw = line.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::size_t lead = 0;
    while (lead < raw.size() && std::isspace(static_cast<unsigned char>(raw[lead]))) ++lead;
    const std::string text = trim(raw);
    if (!text.empty() && text[0] == '#') break;
    row.cells.push_back(Cell{text, static_cast<int>(start + lead) + 1});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  while (!row.cells.empty() && row.cells.back().text.empty()) row.cells.pop_back();
  if (!row.cells.empty()) {
    const Cell& last = row.cells.back();
    row.end_column = last.column + static_cast<int>(last.text.size());
  }
  return row;
}

std::string lower_words(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

bool matches(const std::vector<Cell>& cells, const std::vector<std::string>& header) {
  if (cells.size() != header.size()) return false;
  for (std::size_t i = 0; i < header.size(); ++i)
    if (lower_words(cells[i].text) != header[i]) return false;
  return true;
}

class CsvReader {
 public:
  CsvReader(std::string file, DType dtype) : file_(std::move(file)), dtype_(dtype) {}
  Graph read(std::string_view text);

 private:
  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw WorkloadError(SourceLocation{file_, line, column}, message);
  }
  std::int64_t number(int line, const Cell& c, const std::string& what) const;
  TensorId add(std::string name, Shape shape, DType dtype, TensorRole role, int line);
  void conv_row(int line, const Row& row, bool split_stride);
  void gemm_row(int line, const Row& row);
  std::string layer_name(int line, const Cell& c);

  std::string file_;
  DType dtype_;
  Graph g_;
  std::set<std::string> layers_;
};

std::int64_t CsvReader::number(int line, const Cell& c, const std::string& what) const {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(c.text.data(), c.text.data() + c.text.size(), v);
  if (c.text.empty() || ec != std::errc() || end != c.text.data() + c.text.size() || v < 1 ||
      v >= kMaxDim)
    fail(line, c.column, what + ": expected an integer in [1, 2^31), got '" + shown(c.text) + "'");
  return v;
}

TensorId CsvReader::add(std::string name, Shape shape, DType dtype, TensorRole role, int line) {
  g_.tensors.push_back(
      Tensor{std::move(name), std::move(shape), dtype, role, SourceLocation{file_, line, 1}});
  return static_cast<TensorId>(g_.tensors.size() - 1);
}

std::string CsvReader::layer_name(int line, const Cell& c) {
  if (c.text.empty()) fail(line, c.column, "layer name is empty");
  if (c.text.size() > 200) fail(line, c.column, "layer name is longer than 200 characters");
  if (!layers_.insert(c.text).second)
    fail(line, c.column, "duplicate layer name '" + shown(c.text) + "'");
  return c.text;
}

void CsvReader::conv_row(int line, const Row& row, bool split_stride) {
  const std::vector<Cell>& cells = row.cells;
  const std::size_t want = split_stride ? 9 : 8;
  if (cells.size() < want)
    fail(line, row.end_column,
         "expected " + std::to_string(want) + " columns (" +
             (split_stride ? "name, H, W, FH, FW, C, filters, stride H, stride W"
                           : "name, H, W, FH, FW, C, filters, stride") +
             "), got " + std::to_string(cells.size()));
  if (cells.size() > want)
    fail(line, cells[want].column,
         "unexpected value '" + shown(cells[want].text) + "' after the last column");
  const std::string name = layer_name(line, cells[0]);
  const std::int64_t h = number(line, cells[1], "IFMAP Height");
  const std::int64_t w = number(line, cells[2], "IFMAP Width");
  const std::int64_t fh = number(line, cells[3], "Filter Height");
  const std::int64_t fw = number(line, cells[4], "Filter Width");
  const std::int64_t c = number(line, cells[5], "Channels");
  const std::int64_t nf = number(line, cells[6], "Num Filter");
  const std::int64_t sh = number(line, cells[7], split_stride ? "Stride height" : "Strides");
  const std::int64_t sw = split_stride ? number(line, cells[8], "Stride width") : sh;
  if (fh > h)
    fail(line, cells[3].column,
         "Filter Height " + std::to_string(fh) + " is larger than IFMAP Height " +
             std::to_string(h));
  if (fw > w)
    fail(line, cells[4].column,
         "Filter Width " + std::to_string(fw) + " is larger than IFMAP Width " + std::to_string(w));
  Op op;
  op.name = name;
  op.kind = OpKind::kConv2d;
  op.where = SourceLocation{file_, line, 1};
  op.attrs.stride_h = sh;
  op.attrs.stride_w = sw;
  // SCALE-Sim runs a layer whose name contains "DP" as Channels separate one-channel convolutions
  // (topology_utils.load_arrays_conv): that is a depthwise conv with channel multiplier Num Filter.
  const bool depthwise = name.find("DP") != std::string::npos;
  op.attrs.groups = depthwise ? c : 1;
  const std::int64_t cout = depthwise ? c * nf : nf;
  if (cout >= kMaxDim) fail(line, cells[6].column, "Channels x Num Filter is too large");
  op.inputs.push_back(add(name + ".ifmap", {1, h, w, c}, dtype_, TensorRole::kInput, line));
  op.inputs.push_back(
      add(name + ".filter", {fh, fw, depthwise ? 1 : c, cout}, dtype_, TensorRole::kWeight, line));
  const Shape out = infer_output_shape(g_, op);
  op.output = add(name + ".ofmap", out, infer_output_dtype(g_, op), TensorRole::kOutput, line);
  g_.ops.push_back(std::move(op));
}

void CsvReader::gemm_row(int line, const Row& row) {
  const std::vector<Cell>& cells = row.cells;
  if (cells.size() < 4)
    fail(line, row.end_column,
         "expected 4 columns (name, M, N, K), got " + std::to_string(cells.size()));
  if (cells.size() > 4)
    fail(line, cells[4].column,
         "unexpected value '" + shown(cells[4].text) + "' after the last column");
  const std::string name = layer_name(line, cells[0]);
  const std::int64_t m = number(line, cells[1], "M");
  const std::int64_t n = number(line, cells[2], "N");
  const std::int64_t k = number(line, cells[3], "K");
  Op op;
  op.name = name;
  op.kind = OpKind::kMatmul;
  op.where = SourceLocation{file_, line, 1};
  op.inputs.push_back(add(name + ".a", {m, k}, dtype_, TensorRole::kInput, line));
  op.inputs.push_back(add(name + ".b", {k, n}, dtype_, TensorRole::kWeight, line));
  op.output = add(name + ".c", {m, n}, infer_output_dtype(g_, op), TensorRole::kOutput, line);
  g_.ops.push_back(std::move(op));
}

Graph CsvReader::read(std::string_view text) {
  if (text.size() > kMaxCsvBytes)
    fail(0, 0, "file is larger than 16 MiB (" + std::to_string(text.size()) + " bytes)");
  // As the YAML reader does: a name with bytes that are not UTF-8 cannot go into report.json.
  if (const std::size_t bad = invalid_utf8_offset(text); bad != std::string_view::npos) {
    const auto [line, column] = line_column_of(text, bad);
    fail(line, column, "not UTF-8 text");
  }
  g_.name = std::filesystem::path(file_).stem().string();
  g_.where = SourceLocation{file_, 0, 0};
  enum class Format { kUnknown, kConv, kConvHW, kGemm } format = Format::kUnknown;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const std::string trimmed = trim(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    const Row row = split(line);
    const std::vector<Cell>& cells = row.cells;
    if (cells.empty()) continue;  // a row of empty cells, as some SCALE-Sim files have
    if (format == Format::kUnknown) {
      if (matches(cells, kConvHeader))
        format = Format::kConv;
      else if (matches(cells, kConvHeaderHW))
        format = Format::kConvHW;
      else if (matches(cells, kGemmHeader))
        format = Format::kGemm;
      else
        fail(line_no, 1,
             "not a SCALE-Sim topology header: expected 'Layer name, IFMAP Height, IFMAP Width, "
             "Filter Height, Filter Width, Channels, Num Filter, Strides' or 'Layer, M, N, K'");
      continue;
    }
    if (g_.ops.size() >= 100000) fail(line_no, 1, "more than 100000 layers");
    if (format == Format::kGemm)
      gemm_row(line_no, row);
    else
      conv_row(line_no, row, format == Format::kConvHW);
  }
  if (format == Format::kUnknown) fail(0, 0, "empty file: no SCALE-Sim header");
  if (g_.ops.empty()) fail(line_no, 1, "no layers after the header");
  validate(g_);
  return std::move(g_);
}

}  // namespace

Graph parse_scalesim_csv(std::string_view text, const std::string& file_name, DType dtype) {
  return CsvReader(file_name, dtype).read(text);
}

Graph load_scalesim_csv(const std::string& path, DType dtype) {
  const SourceLocation where{path, 0, 0};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw WorkloadError(where, "cannot read: not a regular file (or does not exist)");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxCsvBytes)
    throw WorkloadError(where,
                        ec ? "cannot read: " + ec.message()
                           : "file is larger than 16 MiB (" + std::to_string(size) + " bytes)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scalesim_csv(text.str(), path, dtype);
}

}  // namespace tpusim::workloads
