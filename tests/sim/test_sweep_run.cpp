// `tpusim sweep` end to end, through the real executable: a small sweep at -j 2, resuming after
// a kill, shards merged against the unsharded run, a crashing point, and bad sweep files.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/sweep/results.h"
#include "tests/sim/test_support.h"

using tpusim::test::position_of;
using tpusim::test::slurp;
using tpusim::test::TempDir;
namespace fs = std::filesystem;
namespace sw = tpusim::sweep;

namespace {

struct Result {
  int exit_code = -1;
  std::string out, err;
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

Result run_tpusim(const std::string& args, const std::string& env = "") {
  TempDir dir;
  const std::string command = "cd '" TPUSIM_SOURCE_DIR "' && " + env +
                              " timeout 120 '" TPUSIM_EXE "' " + args + " > '" + dir.path("out") +
                              "' 2> '" + dir.path("err") + "' < /dev/null";
  const int status = std::system(command.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir.path("out"));
  r.err = slurp(dir.path("err"));
  REQUIRE(r.exit_code != 124);  // timeout(1): a hang
  return r;
}

// The teaching chip's int8 4x4x4 matmul: a point takes a few hundredths of a second.
const std::string kMatmul = TPUSIM_SOURCE_DIR "/workloads/teach/matmul-4x4.yaml";

std::string teach_sweep() {
  return "chip: teach-4x4\nworkloads: [" + kMatmul +
         "]\naxes:\n  core.mxu.dataflow: [ws, os, is]\n"
         "  core.mxu.writeback_latency: [1 cycles, 4 cycles]\n";
}

// A sweep of six ResNet-50 points (about half a second each), so a signal lands mid-sweep.
const std::string kSlowSweep = R"(chip: tpu-v4i
workloads: [resnet50]
axes:
  core.mxu.dataflow: [ws, os, is]
zip:
  - core.mxu.rows: [64, 128]
    core.mxu.cols: [64, 128]
)";

// Starts `tpusim sweep FILE --out OUT -j 2 EXTRA` from the source tree, its stderr into `err`,
// and returns once a row is in results.csv (or 60 s have passed); the caller signals and reaps.
pid_t start_sweep(const std::string& file, const std::string& out, const char* extra,
                  const std::string& err) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(TPUSIM_SOURCE_DIR) != 0) _exit(126);
    dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
    dup2(open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
    execl(TPUSIM_EXE, TPUSIM_EXE, "sweep", file.c_str(), "--out", out.c_str(), "-j", "2", extra,
          static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (pid > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (fs::exists(out + "/results.csv") && !sw::read_results(out + "/results.csv").rows.empty())
      break;
  }
  return pid;
}

std::map<std::string, std::string> as_map(const sw::Row& header, const sw::Row& row) {
  std::map<std::string, std::string> m;
  for (std::size_t i = 0; i < header.size(); ++i) m[header[i]] = row[i];
  return m;
}

}  // namespace

TEST_CASE("sweep run: every point at -j 2, figures equal its report and the matmul's", "[sweep]") {
  TempDir dir;
  const std::string file = dir.write("s.yaml", teach_sweep());
  const std::string out = dir.path("out");
  const Result r = run_tpusim("sweep " + file + " --out " + out + " -j 2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("sweep: 6 points (6 run, 0 already done), 0 failed"));
  // Not a terminal: one plain line per point, and no carriage returns.
  for (int k = 1; k <= 6; ++k)
    CHECK_THAT(r.err, Catch::Contains("[" + std::to_string(k) + "/6] point "));
  CHECK(r.err.find('\r') == std::string::npos);

  const sw::ResultsTable t = sw::read_results(out + "/results.csv");
  CHECK(t.header == sw::results_header({"core.mxu.dataflow", "core.mxu.writeback_latency"}));
  REQUIRE(t.rows.size() == 3 * 2);
  const char* dataflows[] = {"ws", "os", "is"};
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    auto row = as_map(t.header, t.rows[i]);
    INFO(row["error"]);
    CHECK(row["point"] == std::to_string(i));  // sorted by point, ids in enumeration order
    CHECK(row["core.mxu.dataflow"] == dataflows[i / 2]);
    CHECK(row["core.mxu.writeback_latency"] == (i % 2 == 0 ? "1 cycles" : "4 cycles"));
    REQUIRE(row["status"] == "ok");
    // A 4x4 int8 matmul: M x K x N = 64 MACs; reads A and W (16 B each), writes 16 int32 = 64 B.
    CHECK(row["macs"] == "64");
    CHECK(row["hbm_read_bytes"] == std::to_string(4 * 4 + 4 * 4));
    CHECK(row["hbm_write_bytes"] == std::to_string(4 * 4 * 4));
    CHECK(row["report"] == "points/" + std::to_string(i) + "/report.json");
    const nlohmann::json report = nlohmann::json::parse(slurp(out + "/" + row["report"]));
    CHECK(row["cycles"] == std::to_string(report["cycles"].get<std::uint64_t>()));
    const double seconds = report["seconds"].get<double>();
    const double joules = report["energy_pj"]["total"].get<double>() * 1e-12;
    CHECK(std::stod(row["seconds"]) == Approx(seconds).epsilon(1e-9));
    CHECK(std::stod(row["energy_j"]) == Approx(joules).epsilon(1e-9));
    CHECK(std::stod(row["edp_js"]) == Approx(joules * seconds).epsilon(1e-9));
    CHECK(std::stod(row["mxu_utilization"]) == Approx(report["utilization"]["mxu"].get<double>()));
    // The point really ran with its values: the report embeds the resolved chip.
    CHECK(report["config"]["core"]["mxu"]["dataflow"] == dataflows[i / 2]);
    CHECK(report["config"]["core"]["mxu"]["writeback_latency"] ==
          row["core.mxu.writeback_latency"]);
  }
  // The writeback is the last step of the one matmul: 4 cycles of it cost 3 more than 1.
  for (std::size_t i = 0; i + 1 < t.rows.size(); i += 2)
    CHECK(std::stoull(as_map(t.header, t.rows[i + 1])["cycles"]) ==
          std::stoull(as_map(t.header, t.rows[i])["cycles"]) + (4 - 1));
  // Deterministic: a second sweep of the same file gives the same file, byte for byte.
  const Result again = run_tpusim("sweep " + file + " --out " + dir.path("out2") + " -j 2");
  REQUIRE(again.exit_code == 0);
  CHECK(slurp(out + "/results.csv") == slurp(dir.path("out2") + "/results.csv"));
}

TEST_CASE("sweep run: killed midway, a rerun runs only the unfinished points", "[sweep]") {
  TempDir dir;
  const std::string file = dir.write("s.yaml", kSlowSweep);
  const std::string out = dir.path("out");
  // No flag of its own: an empty argument would be one.
  const pid_t pid = start_sweep(file, out, nullptr, dir.path("err"));
  REQUIRE(pid > 0);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(fs::exists(out + "/results.csv"));

  const sw::ResultsTable before = sw::read_results(out + "/results.csv");
  REQUIRE(!before.rows.empty());
  REQUIRE(before.rows.size() < 6);  // the kill came before the end
  const sw::Layout layout(before.header);
  std::map<std::string, fs::file_time_type> mtimes;
  for (const sw::Row& row : before.rows) {
    REQUIRE(row[layout.status] == "ok");
    mtimes[row[0]] = fs::last_write_time(out + "/" + row[layout.report]);
  }

  const Result rerun = run_tpusim("sweep " + file + " --out " + out + " -j 2");
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  const std::size_t done = before.rows.size();
  CHECK_THAT(rerun.out, Catch::Contains("sweep: 6 points (" + std::to_string(6 - done) + " run, " +
                                        std::to_string(done) + " already done), 0 failed"));
  const sw::ResultsTable after = sw::read_results(out + "/results.csv");
  REQUIRE(after.rows.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(after.rows[i][0] == std::to_string(i));  // every point once
    CHECK(after.rows[i][layout.status] == "ok");
  }
  // Finished points were not run again: their reports are the same files, untouched.
  for (const auto& [id, mtime] : mtimes)
    CHECK(fs::last_write_time(out + "/points/" + id + "/report.json") == mtime);
  for (const sw::Row& row : before.rows)
    CHECK(std::find(after.rows.begin(), after.rows.end(), row) != after.rows.end());
}

TEST_CASE("sweep run: interrupted, it says which command resumes, --force or not", "[sweep]") {
  for (const bool force : {false, true}) {
    CAPTURE(force);
    TempDir dir;
    const std::string file = dir.write("s.yaml", kSlowSweep);
    const std::string out = dir.path("out");
    const pid_t pid = start_sweep(file, out, force ? "--force" : nullptr, dir.path("err"));
    REQUIRE(pid > 0);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    const std::string err = slurp(dir.path("err"));
    CHECK_THAT(err, Catch::Contains(force ? "; the same command without --force resumes\n"
                                          : "; the same command resumes\n"));
    // What it says resumes does: the finished points are kept.
    const std::size_t done = sw::read_results(out + "/results.csv").rows.size();
    REQUIRE(done >= 1);
    const Result rerun = run_tpusim("sweep " + file + " --out " + out + " -j 2");
    CHECK_THAT(rerun.out, Catch::Contains(std::to_string(done) + " already done"));
  }
}

TEST_CASE("sweep run: two shards merged equal the unsharded sweep", "[sweep]") {
  TempDir dir;
  const std::string file =
      dir.write("s.yaml", teach_sweep() + "constraints: [core.mxu.dataflow != 'is']\n");
  REQUIRE(run_tpusim("sweep " + file + " --out " + dir.path("all") + " -j 2").exit_code == 0);
  REQUIRE(
      run_tpusim("sweep " + file + " --out " + dir.path("s0") + " -j 2 --shard 0/2").exit_code ==
      0);
  REQUIRE(
      run_tpusim("sweep " + file + " --out " + dir.path("s1") + " -j 2 --shard 1/2").exit_code ==
      0);
  const sw::ResultsTable s0 = sw::read_results(dir.path("s0") + "/results.csv");
  const sw::ResultsTable s1 = sw::read_results(dir.path("s1") + "/results.csv");
  CHECK(s0.rows.size() == 2);  // 4 points (is excluded): positions 0, 2 and 1, 3
  CHECK(s1.rows.size() == 2);

  const std::string m = dir.path("merged");
  const Result merge = run_tpusim("sweep --merge " + dir.path("s0") + " " + dir.path("s1") + " " +
                                  dir.path("s0") + " --out " + m);
  INFO(merge.err);
  REQUIRE(merge.exit_code == 0);
  CHECK_THAT(merge.out, Catch::Contains("4 points, 0 failed, 2 duplicate row(s) dropped"));
  const sw::ResultsTable all = sw::read_results(dir.path("all") + "/results.csv");
  const sw::ResultsTable merged = sw::read_results(m + "/results.csv");
  CHECK(merged.header == all.header);
  REQUIRE(merged.rows.size() == all.rows.size());
  const sw::Layout layout(all.header);
  for (std::size_t i = 0; i < all.rows.size(); ++i) {
    sw::Row a = all.rows[i], b = merged.rows[i];
    // Reports are rewritten to where the shard put them, relative to the merged directory.
    CHECK(fs::is_regular_file(fs::path(m) / b[layout.report]));
    CHECK(slurp(m + "/" + b[layout.report]).size() > 0);
    a[layout.report].clear();
    b[layout.report].clear();
    CHECK(a == b);
  }
  // A shard stopped while writing its last row: the row is left out, and the merge says so.
  const std::string s1_csv = dir.path("s1") + "/results.csv";
  const std::string s1_text = slurp(s1_csv);
  dir.write("s1/results.csv", s1_text.substr(0, s1_text.size() - 7));
  const Result cut = run_tpusim("sweep --merge " + dir.path("s0") + " " + dir.path("s1") +
                                " --out " + dir.path("cut"));
  CHECK(cut.exit_code == 0);
  CHECK_THAT(cut.out, Catch::Contains("3 points, 0 failed"));
  CHECK(cut.err == "warning: " + s1_csv +
                       ":3: last row cut short (the sweep stopped while writing it); its point "
                       "is left out: resume that sweep to run it\n");
  // No directory before --out: CLI11 hands --out to --merge, which must say so, not that --out
  // is missing.
  const Result none = run_tpusim("sweep --merge --out " + m);
  CHECK(none.exit_code == 2);
  CHECK(none.err ==
        "error: tpusim sweep --merge: expected sweep output directories before \"--out\" "
        "(--merge DIR... --out DIR)\n");
}

TEST_CASE("sweep run: a crashing point is recorded as failed, the sweep completes", "[sweep]") {
  TempDir dir;
  const std::string file = dir.write("s.yaml", teach_sweep());
  const std::string out = dir.path("out");
  // The test hook aborts `tpusim run` given this override: a real SIGABRT in one child per os
  // point.
  const Result r = run_tpusim("sweep " + file + " --out " + out + " -j 2",
                              "TPUSIM_TEST_CRASH=core.mxu.dataflow=os");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("6 points (6 run, 0 already done), 2 failed"));
  const sw::ResultsTable t = sw::read_results(out + "/results.csv");
  REQUIRE(t.rows.size() == 6);
  for (const sw::Row& row : t.rows) {
    auto m = as_map(t.header, row);
    if (m["core.mxu.dataflow"] == "os") {
      CHECK(m["status"] == "failed");
      CHECK_THAT(m["error"], Catch::StartsWith("crashed: signal 6 (Aborted)"));
      CHECK(m["cycles"].empty());
      CHECK(m["report"].empty());
    } else {
      CHECK(m["status"] == "ok");
      CHECK(m["error"].empty());
    }
  }
  // The rerun retries the failed points only.
  const Result rerun = run_tpusim("sweep " + file + " --out " + out + " -j 2");
  CHECK(rerun.exit_code == 0);
  CHECK_THAT(rerun.out, Catch::Contains("6 points (2 run, 4 already done), 0 failed"));
}

TEST_CASE("sweep run: bad sweep files exit 2 with one line and write nothing", "[sweep]") {
  TempDir dir;
  struct Case {
    std::string text;
    std::string at;
    std::string message;
  };
  const std::string head = "chip: teach-4x4\nworkloads: [" + kMatmul + "]\n";
  const Case cases[] = {
      {head + "axes:\n  core.mxu.rowz: [4]\n", "core.mxu.rowz",
       "core.mxu.rowz: not a key of chip teach-4x4; did you mean 'core.mxu.rows'?"},
      {head + "axes:\n  core.mxu.rows: [4]\nconstraints:\n  - core.mxu.rows => 4\n", "=> 4",
       "constraints: unknown operator '=' (comparisons: == != < <= > >=) in 'core.mxu.rows => 4'"},
      {"chip: teach-4x4\nworkloads: [resnet51]\n", "resnet51",
       "workloads: unknown workload 'resnet51': no workloads/resnet51.yaml here or in the source "
       "tree, and no file of that name (did you mean 'resnet50'?)"},
      {"chip: teach-4x4\nworkloads: [graphs/none.yaml]\n", "graphs/none.yaml",
       "workloads: workload 'graphs/none.yaml' not found (no file "},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const std::string file = dir.write("bad.yaml", c.text);
    const Result r = run_tpusim("sweep " + file + " --out " + dir.path("out"));
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Catch::StartsWith("error: " + file + ":" + position_of(c.text, c.at) + ": " +
                                        c.message));
    CHECK_FALSE(fs::exists(dir.path("out")));
  }
}

TEST_CASE("sweep run: results of an edited sweep file are not mixed in, --force starts over",
          "[sweep]") {
  TempDir dir;
  const std::string file = dir.write("s.yaml", teach_sweep());
  const std::string out = dir.path("out");
  REQUIRE(run_tpusim("sweep " + file + " --out " + out + " -j 2").exit_code == 0);
  dir.write("s.yaml", tpusim::test::replaced(teach_sweep(), "[ws, os, is]", "[os, ws, is]"));
  const Result r = run_tpusim("sweep " + file + " --out " + out + " -j 2");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK_THAT(r.err,
             Catch::Contains("results.csv: the row of point 0 does not match the sweep file"));
  const Result forced = run_tpusim("sweep " + file + " --out " + out + " -j 2 --force");
  CHECK(forced.exit_code == 0);
  CHECK_THAT(forced.out, Catch::Contains("6 points (6 run, 0 already done), 0 failed"));
}

TEST_CASE("sweep run: a resume from another folder reuses the points", "[sweep]") {
  // The chip is a preset, found from any folder; the points' commands name it by its absolute
  // path, so where the sweep was started does not count as an input.
  TempDir dir;
  dir.write("w.yaml", slurp(kMatmul));
  const std::string file = dir.write(
      "s.yaml", "chip: teach-4x4\nworkloads: [w.yaml]\naxes:\n  core.mxu.dataflow: [ws, os]\n");
  const std::string command = "sweep " + file + " --out " + dir.path("out") + " -j 2";
  REQUIRE(run_tpusim(command).exit_code == 0);
  const Result elsewhere = run_tpusim(command, "cd '" + dir.path("") + "' &&");
  INFO(elsewhere.err);
  CHECK(elsewhere.exit_code == 0);
  CHECK_THAT(elsewhere.out, Catch::Contains("2 points (0 run, 2 already done)"));
}

TEST_CASE("sweep run: a resume reuses no result whose chip, set: or workload changed", "[sweep]") {
  TempDir dir;
  // A chip and an energy table of its own, so that editing them changes no path in the command.
  const std::string energy_yaml = tpusim::test::replaced(
      slurp(TPUSIM_SOURCE_DIR "/configs/energy/horowitz-45nm.yaml"), "extends: dram.yaml",
      "extends: " TPUSIM_SOURCE_DIR "/configs/energy/dram.yaml");
  dir.write("e.yaml", energy_yaml);
  const std::string chip_yaml = "extends: " TPUSIM_SOURCE_DIR
                                "/configs/chips/teach-4x4.yaml\nclock: 100 MHz\n"
                                "energy: {table: " +
                                dir.path("e.yaml") + "}\n";
  dir.write("chip.yaml", chip_yaml);
  dir.write("w.yaml", slurp(kMatmul));
  const std::string sweep = "chip: " + dir.path("chip.yaml") + "\nworkloads: [" +
                            dir.path("w.yaml") + "]\naxes:\n  core.mxu.dataflow: [ws, os]\n";
  const std::string file = dir.write("s.yaml", sweep);
  const std::string out = dir.path("out");
  const std::string command = "sweep " + file + " --out " + out + " -j 2";
  REQUIRE(run_tpusim(command).exit_code == 0);
  REQUIRE(fs::is_regular_file(out + "/points/1/inputs.txt"));
  // Unchanged: both points are reused.
  CHECK_THAT(run_tpusim(command).out, Catch::Contains("2 points (0 run, 2 already done)"));
  const auto refused = [&](const std::string& what) {
    INFO(what);
    const Result r = run_tpusim(command);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Catch::Contains("results.csv: point 0 was run with other inputs"));
  };
  dir.write("chip.yaml", tpusim::test::replaced(chip_yaml, "100 MHz", "200 MHz"));
  refused("the chip file edited");
  dir.write("chip.yaml", chip_yaml);
  // The config names the table by its path; its figures are what changed.
  dir.write("e.yaml", tpusim::test::replaced(energy_yaml, "int8: 0.3 pJ", "int8: 3 pJ"));
  refused("the energy table edited");
  dir.write("e.yaml", energy_yaml);
  dir.write("s.yaml", sweep + "set: {core.mxu.writeback_latency: 3 cycles}\n");
  refused("a set: value added");
  dir.write("s.yaml", sweep);
  dir.write("w.yaml", slurp(kMatmul) + "# edited\n");
  refused("the workload file edited");
  dir.write("w.yaml", slurp(kMatmul));
  CHECK_THAT(run_tpusim(command).out, Catch::Contains("2 points (0 run, 2 already done)"));
  // A row's report column naming another file is not this point's result.
  const std::string results = slurp(out + "/results.csv");
  dir.write("out/results.csv",
            tpusim::test::replaced(results, "points/0/report.json", "points/1/report.json"));
  refused("a row naming another point's report");
  dir.write("out/results.csv", results);
  const Result forced = run_tpusim(command + " --force");
  CHECK(forced.exit_code == 0);
  CHECK_THAT(forced.out, Catch::Contains("2 points (2 run, 0 already done), 0 failed"));
}

TEST_CASE("sweep run: the example sweeps check and list their points", "[sweep]") {
  struct Example {
    const char* file;
    std::size_t points;
  };
  const Example examples[] = {
      {"resnet50-array", 4 * 3},     // square arrays only: 4 sizes x 3 dataflows
      {"gpt2-hbm-batch", 2 * 3},     // 2 batches x 3 DRAM presets
      {"bert-vector-width", 4 * 2},  // 4 lane counts x 2 sublane counts
  };
  for (const Example& e : examples) {
    INFO(e.file);
    const Result r = run_tpusim(std::string("sweep configs/sweeps/") + e.file + ".yaml --list");
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("error") == std::string::npos);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == static_cast<long>(e.points + 1));
  }
  // The batched GPT-2 graphs of the second example lower for the example's chip.
  for (const char* batch : {"1", "2"}) {
    const Result r =
        run_tpusim(std::string("compile -c tpu-v4i -w configs/sweeps/gpt2/gpt2-small-decode-b") +
                   batch + ".yaml");
    CHECK(r.exit_code == 0);
  }
}
