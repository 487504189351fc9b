#include "sim/sweep/results.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/base/errors.h"
#include "sim/base/output_file.h"

namespace tpusim::sweep {
namespace fs = std::filesystem;

namespace {

const char* const kMetricColumns[kMetricCount] = {"cycles",
                                                  "seconds",
                                                  "mxu_utilization",
                                                  "vpu_utilization",
                                                  "memory_bw_utilization",
                                                  "hbm_read_bytes",
                                                  "hbm_write_bytes",
                                                  "macs",
                                                  "energy_j",
                                                  "edp_js"};

std::string number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

std::size_t column(const Row& header, const char* name) {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) throw InputError(std::string("results.csv has no '") + name + "' column");
  return static_cast<std::size_t>(it - header.begin());
}

}  // namespace

Row results_header(const std::vector<std::string>& columns) {
  Row header{"point", "workload"};
  header.insert(header.end(), columns.begin(), columns.end());
  header.push_back("status");
  header.push_back("error");
  header.insert(header.end(), std::begin(kMetricColumns), std::end(kMetricColumns));
  header.push_back("report");
  return header;
}

void check_results_header(const Row& header, const std::string& file) {
  const auto bad = [&](const std::string& what) {
    throw InputError(file + ": not a sweep's results.csv (" + what + ")");
  };
  if (header.size() < 2 || header[0] != "point" || header[1] != "workload")
    bad("its header must start with point,workload");
  const auto status = std::find(header.begin() + 2, header.end(), "status");
  if (status == header.end()) bad("no 'status' column");
  // Whatever the parameter and axis columns, the rest is what results_header writes after them.
  if (header != results_header(std::vector<std::string>(header.begin() + 2, status)))
    bad("after 'status' its header must be status,error,cycles,...,edp_js,report");
}

Layout::Layout(const Row& header)
    : status(column(header, "status")),
      error(status + 1),
      report(header.size() - 1),
      metrics(status + 2),
      width(header.size()) {}

std::vector<std::string> report_metrics(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": no report (the run wrote none)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not a readable report: " + e.what());
  }
  const auto get = [&](const char* a, const char* b = nullptr) -> const nlohmann::json& {
    const nlohmann::json* node = &j;
    for (const char* key : {a, b}) {
      if (!key) break;
      if (!node->is_object() || !node->contains(key) || node->at(key).is_null())
        throw InputError(path + ": report lacks '" + std::string(a) +
                         (b ? std::string(".") + b : "") + "'");
      node = &node->at(key);
    }
    if (!node->is_number())
      throw InputError(path + ": report's '" + std::string(a) + "' is not a number");
    return *node;
  };
  const double seconds = get("seconds").get<double>();
  const double energy_j = get("energy_pj", "total").get<double>() * 1e-12;
  return {std::to_string(get("cycles").get<std::uint64_t>()),
          number(seconds),
          number(get("utilization", "mxu").get<double>()),
          number(get("utilization", "vpu").get<double>()),
          number(get("utilization", "memory_bandwidth").get<double>()),
          std::to_string(get("traffic_bytes", "hbm_read").get<std::uint64_t>()),
          std::to_string(get("traffic_bytes", "hbm_write").get<std::uint64_t>()),
          std::to_string(get("macs").get<std::uint64_t>()),
          number(energy_j),
          number(energy_j * seconds)};
}

std::string csv_line(const Row& row, std::size_t always_quoted) {
  std::string line;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const std::string& cell = row[i];
    const bool quote = i == always_quoted || cell.find_first_of(",\"\r\n") != std::string::npos ||
                       (!cell.empty() && (cell.front() == ' ' || cell.back() == ' '));
    if (i > 0) line += ',';
    if (!quote) {
      line += cell;
      continue;
    }
    line += '"';
    for (char c : cell) {
      if (c == '"') line += '"';
      line += c;
    }
    line += '"';
  }
  return line + "\n";
}

ResultsTable read_results(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  ResultsTable table;
  std::vector<Row> rows;
  Row row;
  std::string cell;
  bool quoted = false, after_quote = false;
  int line = 1;
  const auto bad = [&](const std::string& what) {
    throw InputError(path + ":" + std::to_string(line) + ": " + what);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
        after_quote = true;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
    } else if (c == ',' || c == '\n') {
      row.push_back(std::move(cell));
      cell.clear();
      after_quote = false;
      if (c == '\n') {
        rows.push_back(std::move(row));
        row.clear();
        ++line;
      }
    } else if (c == '"' && cell.empty() && !after_quote) {
      quoted = true;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;
    } else {
      if (after_quote || c == '"') bad("malformed quoting");
      cell += c;
    }
  }
  // Whatever follows the last newline is a row whose write was cut short (a sweep stopped
  // part-way): its point counts as not run, and a resumed sweep runs it again.
  if (!row.empty() || !cell.empty() || quoted || after_quote) table.cut_short_line = line;
  if (rows.empty()) bad("no header line");
  table.header = std::move(rows.front());
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].size() != table.header.size())
      throw InputError(path + ":" + std::to_string(r + 1) + ": " + std::to_string(rows[r].size()) +
                       " cells, the header has " + std::to_string(table.header.size()));
    table.rows.push_back(std::move(rows[r]));
  }
  return table;
}

void write_results(const std::string& path, const ResultsTable& table) {
  const Layout layout(table.header);
  commit_file(stage_file(path, [&](std::ostream& out) {
    out << csv_line(table.header, table.header.size());
    for (const Row& row : table.rows) out << csv_line(row, layout.error);
  }));
}

ResultsAppender::ResultsAppender(const std::string& path, std::size_t error_column)
    : path_(path), error_column_(error_column), file_(std::fopen(path.c_str(), "ab")) {
  if (!file_) throw InputError(path + ": cannot append (" + std::strerror(errno) + ")");
}

ResultsAppender::~ResultsAppender() {
  if (file_) std::fclose(file_);
}

void ResultsAppender::append(const Row& row) {
  const std::string line = csv_line(row, error_column_);
  // One write per row, flushed: an interrupted sweep keeps every finished row whole.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw InputError(path_ + ": cannot append (" + std::strerror(errno) + ")");
}

std::uint64_t row_point(const Row& row, const std::string& file) {
  const std::string& id = row.empty() ? std::string() : row.front();
  if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(file + ": '" + id + "' is not a point id");
  return std::stoull(id);
}

void sort_rows(std::vector<Row>& rows, const std::string& file) {
  std::vector<std::pair<std::uint64_t, Row>> keyed;
  for (Row& r : rows) keyed.emplace_back(row_point(r, file), std::move(r));
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  rows.clear();
  for (auto& [id, r] : keyed) rows.push_back(std::move(r));
}

MergeSummary merge_results(const std::vector<std::string>& dirs, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (!fs::is_directory(out_dir, ec))
    throw InputError(out_dir + ": cannot create output directory");
  const fs::path out_abs = fs::absolute(out_dir).lexically_normal();

  ResultsTable merged;
  std::map<std::uint64_t, std::pair<Row, std::string>> by_point;  // row, its directory
  MergeSummary summary;
  for (const std::string& dir : dirs) {
    const std::string file = (fs::path(dir) / "results.csv").string();
    if (!fs::is_regular_file(file, ec))
      throw InputError(dir + ": no results.csv (not a sweep output)");
    ResultsTable t = read_results(file);
    check_results_header(t.header, file);
    if (t.cut_short_line > 0)
      summary.cut_short.push_back(file + ":" + std::to_string(t.cut_short_line));
    if (merged.header.empty()) merged.header = t.header;
    if (t.header != merged.header)
      throw InputError(file + ": columns differ from " + dirs.front() +
                       "/results.csv (not shards of one sweep)");
    const Layout layout(t.header);
    const fs::path dir_abs = fs::absolute(dir).lexically_normal();
    for (Row& row : t.rows) {
      const std::uint64_t id = row_point(row, file);
      std::string& report = row[layout.report];
      if (!report.empty())
        report = (dir_abs / report).lexically_normal().lexically_relative(out_abs).generic_string();
      const auto it = by_point.find(id);
      if (it == by_point.end()) {
        by_point.emplace(id, std::make_pair(std::move(row), dir));
        continue;
      }
      ++summary.duplicates;
      Row& kept = it->second.first;
      if (!std::equal(row.begin(), row.begin() + layout.status, kept.begin()))
        throw InputError("point " + std::to_string(id) + " has different axis values in " +
                         it->second.second + " and " + dir + " (not shards of one sweep)");
      if (kept[layout.status] != "ok" && row[layout.status] == "ok")
        it->second = {std::move(row), dir};
    }
  }
  const Layout layout(merged.header);
  for (auto& [id, entry] : by_point) {
    summary.failed += entry.first[layout.status] != "ok";
    merged.rows.push_back(std::move(entry.first));
  }
  summary.rows = merged.rows.size();
  write_results((out_abs / "results.csv").string(), merged);
  return summary;
}

}  // namespace tpusim::sweep
