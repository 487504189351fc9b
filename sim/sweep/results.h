#pragma once
// results.csv: one row per point, in the column contract that plots read:
//   point,workload,<parameters and axes>,status,error,cycles,seconds,mxu_utilization,
//   vpu_utilization,memory_bw_utilization,hbm_read_bytes,hbm_write_bytes,macs,energy_j,edp_js,report
// Reading, writing (whole files through a temporary renamed into place; rows appended and
// flushed one at a time), the figures taken from a point's report.json, and merging shards.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tpusim::sweep {

using Row = std::vector<std::string>;

struct ResultsTable {
  Row header;
  std::vector<Row> rows;
  // The line of a last row cut short (no newline: a sweep stopped while writing it), left out
  // of `rows`; 0 if there is none.
  int cut_short_line = 0;
};

// The header for a sweep whose parameter and axis columns are `columns`.
Row results_header(const std::vector<std::string>& columns);

// InputError naming `file` unless `header` has results_header's shape (what --merge reads).
void check_results_header(const Row& header, const std::string& file);

// Column positions in a row of a header made by results_header.
struct Layout {
  explicit Layout(const Row& header);
  std::size_t status, error, report, metrics;  // metrics: first of the 10 figures
  std::size_t width;
};

// The ten figures, in header order, from `cycles` to `edp_js`.
inline constexpr std::size_t kMetricCount = 10;

// Reads a point's report.json; InputError naming the file when it is missing or lacks a key.
std::vector<std::string> report_metrics(const std::string& report_json_path);

// RFC 4180: a field is quoted when it holds a comma, quote, CR/LF or outer spaces; the error
// column always is.
std::string csv_line(const Row& row, std::size_t always_quoted);

// Parses a results file. An unterminated last line (a write cut short) is dropped; any other
// malformation is an InputError naming file:line.
ResultsTable read_results(const std::string& path);

// Writes a whole table through a temporary file renamed into place.
void write_results(const std::string& path, const ResultsTable& table);

// Appends rows to an existing results file, each flushed as it is written.
class ResultsAppender {
 public:
  ResultsAppender(const std::string& path, std::size_t error_column);
  ~ResultsAppender();
  ResultsAppender(const ResultsAppender&) = delete;
  ResultsAppender& operator=(const ResultsAppender&) = delete;
  void append(const Row& row);

 private:
  std::string path_;
  std::size_t error_column_;
  std::FILE* file_ = nullptr;
};

// The point id of a row (its first cell); InputError when it is not a number.
std::uint64_t row_point(const Row& row, const std::string& file);

// Sorts rows by point id.
void sort_rows(std::vector<Row>& rows, const std::string& file);

// `tpusim sweep --merge`: the union of the shard directories' results.csv, sorted by point,
// one row per point (an ok row wins over a failed one; otherwise the first directory's), with
// report paths rewritten relative to `out_dir`. InputError when the shards' columns differ or
// one point has different axis values in two of them (not shards of one sweep).
struct MergeSummary {
  std::size_t rows = 0;
  std::size_t duplicates = 0;
  std::size_t failed = 0;
  std::vector<std::string> cut_short;  // "file:line" of each last row cut short, left out
};
MergeSummary merge_results(const std::vector<std::string>& dirs, const std::string& out_dir);

}  // namespace tpusim::sweep
