// `tpusim sweep FILE --out DIR` and `tpusim sweep --merge DIR... --out DIR`.
//
// DIR/results.csv is rewritten whole (through a renamed temporary) at the start, keeping the
// rows still valid, then appended one flushed row per finished point, and rewritten sorted by
// point at the end. DIR/points/<id>/ holds each point's report.json, ops.csv, trace.json, the
// child's stdout.txt and stderr.txt, and command.txt (the command line, to rerun it by hand).

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "sim/base/errors.h"
#include "sim/base/fnv1a.h"
#include "sim/base/input_file.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"
#include "sim/config/chip_config.h"
#include "sim/config/config_tree.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/results.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_file.h"

namespace tpusim::sim {
namespace {
namespace fs = std::filesystem;
using sweep::Point;
using sweep::Row;

// Held for the whole run, so two sweeps never append to one results.csv.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) {
    const std::string path = (fs::path(dir) / ".sweep.lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError(dir + ": cannot create " + path);
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw InputError(dir + ": another tpusim sweep is writing to this directory");
    }
  }
  ~DirLock() { ::close(fd_); }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

std::string shell_quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                         "OPQRSTUVWXYZ0123456789_-./=:+,@") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

// The key cells of a point's row: point, workload, then its parameter and axis values.
Row key_cells(const sweep::SweepFile& s, const Point& p) {
  Row cells{std::to_string(p.id), s.expanded[p.workload].name};
  for (std::string& c : sweep::point_cells(s, p)) cells.push_back(std::move(c));
  return cells;
}

std::string label_of(const sweep::SweepFile& s, const Point& p) {
  std::string label = s.expanded[p.workload].name;
  const std::vector<std::string> columns = s.columns();
  const std::vector<std::string> cells = sweep::point_cells(s, p);
  for (std::size_t i = 0; i < columns.size(); ++i) label += " " + columns[i] + "=" + cells[i];
  return label;
}

struct Plan {
  std::vector<Row> kept;         // rows of results.csv that stay
  std::set<std::uint64_t> done;  // selected points those rows finish
};

std::string hex64(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// A file's bytes, empty when it cannot be read (a missing inputs.txt then matches nothing); a
// FIFO or device is cut off at the limit, past which the bytes read still tell inputs apart.
std::string file_text(const std::string& path) {
  std::string text;
  (void)read_input_file(path, std::uint64_t{64} << 20, text);
  return text;
}

// Every figure of an energy table, exactly: the chip config holds only the table's path, and an
// edited table changes every point's energy.
std::string energy_text(const EnergyTable& t) {
  std::ostringstream out;
  out << std::hexfloat << t.name << ' ' << t.node_nm << '\n';
  for (const auto& [dtype, pj] : t.mac)
    out << "mac " << dtype_name(dtype) << ' ' << pj.value() << '\n';
  for (const Picojoules& pj : t.vector_op) out << "vector " << pj.value() << '\n';
  for (const SramEnergyPoint& p : t.sram)
    out << "sram " << p.macro.value() << ' ' << p.read_per_byte.value() << ' '
        << p.write_per_byte.value() << '\n';
  out << "register " << t.register_per_byte.value() << "\nnoc " << t.noc_per_bit_hop.value()
      << '\n';
  for (const auto& [standard, pj] : t.dram_per_bit)
    out << "dram " << standard << ' ' << pj.value() << '\n';
  return out.str();
}

// What a point's result depends on besides the simulator: its command (chip, workload and every
// --set, swapped sections inline) and the contents of the chip (its energy table included) and
// workload files, fingerprinted.
// Saved beside its report as points/<id>/inputs.txt; a resumed sweep reuses a result only when
// this is unchanged, so an edited chip file or `set:` cannot mix old and new results.
class PointInputs {
 public:
  PointInputs(const sweep::SweepFile& s, std::string chip) : s_(s), chip_(std::move(chip)) {
    const config::ChipConfig c = config::load_chip_config(chip_);
    chip_digest_ = hex64(fnv1a64(config::to_yaml(c.resolved) + energy_text(c.spec.energy.table)));
  }
  std::vector<std::string> run_args(const Point& p) const {
    std::vector<std::string> args = {"run", "-c", chip_, "-w", s_.expanded[p.workload].path};
    for (const std::string& o : sweep::point_overrides(s_, p)) {
      args.push_back("--set");
      args.push_back(o);
    }
    return args;
  }
  std::string text(const Point& p) {
    const std::string& workload = s_.expanded[p.workload].path;
    auto it = workload_digests_.find(workload);
    if (it == workload_digests_.end())
      it = workload_digests_.emplace(workload, hex64(fnv1a64(file_text(workload)))).first;
    return shell_quoted(run_args(p)) + "\nchip config " + chip_digest_ + "\nworkload file " +
           it->second + "\n";
  }

 private:
  const sweep::SweepFile& s_;
  std::string chip_, chip_digest_;
  std::map<std::string, std::string> workload_digests_;
};

std::string inputs_path(const std::string& out, std::uint64_t id) {
  return (fs::path(out) / "points" / std::to_string(id) / "inputs.txt").string();
}

// Which rows of an existing results.csv still hold: rows of this sweep's points with the same
// values, finished ok, with their report in place. A row the sweep file no longer produces
// means the file changed under the results: an error, unless --force starts those over.
Plan reconcile(const std::string& out, const std::string& results_path, const Row& header,
               const sweep::SweepFile& s, const std::vector<Point>& all,
               const std::vector<Point>& selected, PointInputs& inputs, bool force) {
  Plan plan;
  std::error_code ec;
  if (!fs::exists(results_path, ec)) return plan;
  sweep::ResultsTable table;
  try {
    table = sweep::read_results(results_path);
  } catch (const InputError&) {
    if (force) return plan;  // starting over: whatever the file held goes
    throw;
  }
  const std::string restart = "; rerun with --force to start over, or use another --out";
  if (table.header != header) {
    if (force) return plan;
    throw InputError(results_path + ": its columns are not this sweep's (the sweep file changed)" +
                     restart);
  }
  const sweep::Layout layout(header);
  std::map<std::uint64_t, const Point*> by_id;
  for (const Point& p : all) by_id.emplace(p.id, &p);
  std::set<std::uint64_t> chosen;
  for (const Point& p : selected) chosen.insert(p.id);
  std::set<std::uint64_t> kept_ids;
  for (Row& row : table.rows) {
    const std::uint64_t id = sweep::row_point(row, results_path);
    const auto it = by_id.find(id);
    const bool same = it != by_id.end() && std::equal(row.begin(), row.begin() + layout.status,
                                                      key_cells(s, *it->second).begin());
    if (!same) {
      if (force) continue;
      throw InputError(results_path + ": the row of point " + std::to_string(id) +
                       " does not match the sweep file (its values or constraints changed)" +
                       restart);
    }
    if (kept_ids.count(id)) continue;
    const std::string report = "points/" + std::to_string(id) + "/report.json";
    if (row[layout.status] == "ok" && !force &&
        (row[layout.report] != report ||
         file_text(inputs_path(out, id)) != inputs.text(*it->second)))
      throw InputError(results_path + ": point " + std::to_string(id) +
                       " was run with other inputs (the chip, its set: values or the workload "
                       "changed since; points/" +
                       std::to_string(id) + "/inputs.txt)" + restart);
    if (chosen.count(id)) {
      const bool report_there = fs::is_regular_file(fs::path(out) / row[layout.report], ec) &&
                                !row[layout.report].empty();
      if (force || row[layout.status] != "ok" || !report_there) continue;
      plan.done.insert(id);
    }
    kept_ids.insert(id);
    plan.kept.push_back(std::move(row));
  }
  return plan;
}

int run_merge(const SweepCommandArgs& args) {
  // CLI11 gives --merge the next word even when it is an option: `--merge --out DIR` leaves
  // --out among the directories and no --out.
  for (const std::string& dir : args.merge)
    if (dir.rfind("-", 0) == 0)
      throw InputError("tpusim sweep --merge: expected sweep output directories before " +
                       quoted_excerpt(dir) + " (--merge DIR... --out DIR)");
  if (!args.file.empty() || args.force || !args.shard.empty() || args.jobs != 0 ||
      args.timeout_seconds != 0 || args.list)
    throw InputError(
        "tpusim sweep --merge DIR... --out DIR takes no sweep file and no run options");
  if (args.out.empty()) throw InputError("tpusim sweep --merge: --out DIR is required");
  const sweep::MergeSummary m = sweep::merge_results(args.merge, args.out);
  for (const std::string& where : m.cut_short)
    std::cerr << "warning: " << where
              << ": last row cut short (the sweep stopped while writing it); its point is left "
                 "out: resume that sweep to run it\n";
  std::cout << "merged " << args.merge.size() << " sweep output(s): " << m.rows << " points, "
            << m.failed << " failed, " << m.duplicates << " duplicate row(s) dropped -> "
            << (fs::path(args.out) / "results.csv").string() << "\n";
  return kExitOk;
}

}  // namespace

int run_sweep(const SweepCommandArgs& args) {
  if (!args.merge.empty()) return run_merge(args);
  if (args.file.empty()) throw InputError("tpusim sweep: give a sweep FILE (or --merge DIR...)");
  if (args.out.empty() && !args.list) throw InputError("tpusim sweep: --out DIR is required");
  if (args.timeout_seconds < 0) throw InputError("--timeout: expected seconds >= 0");

  sweep::SweepFile s = sweep::parse_sweep_file(args.file);
  const sweep::SweepEnvironment env{
      resolve_chip_path, resolve_workload_path, resolve_memory_preset_path,
      [](const std::string& path, const std::vector<std::string>& overrides) {
        return config::load_chip_config(path, overrides).resolved;
      }};
  const std::string chip = sweep::check_sweep(s, env);
  const sweep::Shard shard = args.shard.empty() ? sweep::Shard{} : sweep::parse_shard(args.shard);
  std::uint64_t combinations = 0;
  const std::vector<Point> all = sweep::enumerate_points(s, &combinations);
  const std::vector<Point> selected = sweep::shard_points(all, shard);

  if (args.list) {
    const Row header = sweep::results_header(s.columns());
    std::cout << sweep::csv_line(Row(header.begin(), header.begin() + 2 + s.columns().size()),
                                 header.size());
    for (const Point& p : selected) std::cout << sweep::csv_line(key_cells(s, p), header.size());
    return kExitOk;
  }

  std::error_code ec;
  fs::create_directories(fs::path(args.out) / "points", ec);
  if (!fs::is_directory(fs::path(args.out) / "points", ec))
    throw InputError(args.out + ": cannot create output directory");
  const DirLock lock(args.out);
  const std::string results_path = (fs::path(args.out) / "results.csv").string();
  const Row header = sweep::results_header(s.columns());
  const sweep::Layout layout(header);
  PointInputs inputs(s, chip);
  Plan plan = reconcile(args.out, results_path, header, s, all, selected, inputs, args.force);
  // Rewritten whole first: drops the rows being rerun and any row a kill cut short.
  sweep::write_results(results_path, {header, plan.kept});

  const std::string exe = sweep::self_executable();
  std::vector<sweep::Job> jobs;
  std::map<std::uint64_t, const Point*> point_of;
  for (const Point& p : selected) {
    if (plan.done.count(p.id)) continue;
    const std::string dir = (fs::path(args.out) / "points" / std::to_string(p.id)).string();
    // A rerun starts from an empty directory: nothing of an earlier attempt can pass for its
    // output.
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    sweep::Job job;
    job.id = p.id;
    job.dir = dir;
    job.label = label_of(s, p);
    job.argv = inputs.run_args(p);
    job.argv.insert(job.argv.begin(), exe);
    job.argv.insert(job.argv.begin() + 2, {"-o", dir});
    std::ofstream(fs::path(dir) / "command.txt") << shell_quoted(job.argv) << "\n";
    std::ofstream(inputs_path(args.out, p.id)) << inputs.text(p);
    point_of[p.id] = &p;
    jobs.push_back(std::move(job));
  }

  std::cerr << "sweep " << args.file << ": " << combinations << " combinations, " << all.size()
            << " points after constraints";
  if (shard.count > 1)
    std::cerr << ", shard " << shard.index << "/" << shard.count << ": " << selected.size();
  std::cerr << "; " << plan.done.size() << " already done, " << jobs.size() << " to run\n";

  sweep::ResultsAppender appender(results_path, layout.error);
  std::vector<Row> new_rows;
  std::size_t failed = 0;
  const auto on_done = [&](const sweep::Job& job, const sweep::JobOutcome& outcome) {
    Row row = key_cells(s, *point_of.at(job.id));
    std::vector<std::string> metrics;
    std::string error = outcome.error;
    const std::string report = "points/" + std::to_string(job.id) + "/report.json";
    if (outcome.exited_ok) {
      try {
        metrics = sweep::report_metrics((fs::path(args.out) / report).string());
      } catch (const InputError& e) {
        error = e.what();
      }
    }
    const bool ok = !metrics.empty();
    row.push_back(ok ? "ok" : "failed");
    row.push_back(error);
    metrics.resize(sweep::kMetricCount);
    row.insert(row.end(), metrics.begin(), metrics.end());
    row.push_back(ok ? report : "");
    appender.append(row);
    new_rows.push_back(row);
    failed += !ok;
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.2f s", outcome.wall_seconds);
    return sweep::JobVerdict{
        ok, ok ? "ok, " + metrics[0] + " cycles (" + wall + ")" : "failed: " + error};
  };
  sweep::RunOptions options;
  options.parallel = args.jobs != 0 ? args.jobs : std::max(1u, std::thread::hardware_concurrency());
  options.timeout_seconds = args.timeout_seconds;
  options.tty = isatty(STDERR_FILENO) != 0;
  if (sweep::run_jobs(jobs, options, on_done) == sweep::RunEnd::kInterrupted) {
    std::cerr << "sweep interrupted: " << new_rows.size() << " of " << jobs.size()
              << " points finished this run and are in " << results_path
              << (args.force ? "; the same command without --force resumes\n"
                             : "; the same command resumes\n");
    return 130;
  }

  // Sorted by point, so a finished sweep's file does not depend on which process ended first.
  std::vector<Row> rows = std::move(plan.kept);
  rows.insert(rows.end(), new_rows.begin(), new_rows.end());
  sweep::sort_rows(rows, results_path);
  sweep::write_results(results_path, {header, rows});
  std::cout << "sweep: " << selected.size() << " points (" << jobs.size() << " run, "
            << plan.done.size() << " already done), " << failed << " failed -> " << results_path
            << "\n";
  return failed == 0 ? kExitOk : kExitSimError;
}

}  // namespace tpusim::sim
