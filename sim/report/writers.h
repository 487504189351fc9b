#pragma once
// Formats a Report: the terminal summary, report.json (schema tpusim.report/1), ops.csv and
// trace.json (Chrome trace event format). docs/report.md documents every field.

#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/base/output_file.h"
#include "sim/report/report.h"

namespace tpusim::sim {

// The files `-o DIR` holds after a run, in the order they are renamed into place: report.json
// last, as it marks a complete run.
inline constexpr const char* kReportFiles[] = {"ops.csv", "trace.json", "report.json"};

// Writes `text` to `path` through a temporary file renamed into place, so a failure never
// leaves half a file behind. InputError naming the path when it cannot.
void write_file(const std::filesystem::path& path, const std::string& text);
// The same for text too large to hold at once: `render` writes it to the stream.
void write_file(const std::filesystem::path& path,
                const std::function<void(std::ostream&)>& render);
// Its two halves, stage_file and commit_file, are in sim/base/output_file.h.
// A result file written while the run goes on (a waveform, a page of the array's cycles): under
// its temporary name until commit(), removed if the run stops before it. InputError naming the
// path when it cannot be opened or written.
class StagedStream {
 public:
  explicit StagedStream(const std::filesystem::path& path);
  StagedStream(const StagedStream&) = delete;
  StagedStream& operator=(const StagedStream&) = delete;
  ~StagedStream();
  std::ostream& out() { return out_; }
  void commit();

 private:
  std::filesystem::path path_;
  StagedFile file_;
  std::ofstream out_;
  bool committed_ = false;
};
// Runs `produce`, which writes its result to `output` (if not empty). When it fails, a file an
// earlier command left at `output` is removed before the error goes on, as compilers do: a
// failed command leaves no result that could pass for its own. An `output` that is one of the
// command's `inputs` is refused first: writing the result there would lose the input.
int replacing_output(const std::string& output, const std::vector<std::string>& inputs,
                     const std::function<int()>& produce);

// Refuses, before anything runs, an output file that is one of `inputs` or is named twice among
// `outputs` (empty names are skipped): writing it would lose an input or one of the results.
void check_output_files(const std::vector<std::string>& outputs,
                        const std::vector<std::string>& inputs);

std::string terminal_summary(const Report& report);
std::string report_json(const Report& report);
std::string ops_csv(const Report& report);
// Streams trace.json to `out` (a trace has one event per instruction: hundreds of MB for a
// program of a million instructions, so it is never held whole).
void write_trace_json(std::ostream& out, const models::TraceRecorder& trace,
                      const isa::Program& program);

// Writes report.json, ops.csv and trace.json into `dir`, each through a temporary file;
// report.json is written last, so its presence means the set is complete.
void write_outputs(const std::string& dir, const Report& report,
                   const models::TraceRecorder& trace, const isa::Program& program);

}  // namespace tpusim::sim
