// Sweep files and point enumeration, in process (no SystemC, no child processes): counts and
// orders derived by hand from the axes, constraint semantics, error locations, results.csv.

#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "sim/config/config_tree.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/results.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_file.h"
#include "tests/sim/test_support.h"

using tpusim::test::position_of;
using tpusim::test::slurp;
using tpusim::test::TempDir;
namespace sw = tpusim::sweep;

namespace {

// The cells of every point, one string per point ("workload|v1|v2..."), in id order.
std::vector<std::string> cells_of(const sw::SweepFile& s, const std::vector<sw::Point>& points) {
  std::vector<std::string> out;
  for (const sw::Point& p : points) {
    std::string line = s.expanded[p.workload].name;
    for (const std::string& c : sw::point_cells(s, p)) line += "|" + c;
    out.push_back(line);
  }
  return out;
}

std::vector<std::uint64_t> ids_of(const std::vector<sw::Point>& points) {
  std::vector<std::uint64_t> ids;
  for (const sw::Point& p : points) ids.push_back(p.id);
  return ids;
}

std::string error_of(const std::string& text) {
  return tpusim::test::error_of(
      [&] { sw::enumerate_points(sw::parse_sweep_text(text, "s.yaml")); });
}

// A chip tree with a few keys and a `memory.hbm` section, and an environment that resolves
// names to files in `dir`: enough for check_sweep without the real config binder.
struct FakeChip {
  TempDir dir;
  sw::SweepEnvironment env;
  FakeChip() {
    dir.write("chip.yaml",
              "name: c\ncore:\n  mxu: {rows: 4, cols: 4, dataflow: ws}\n"
              "memory:\n  model: simple\n  hbm: {standard: hbm2, stacks: 1}\n");
    dir.write("hbm3.yaml", "standard: hbm3\nstacks: 1\ntiming: {tRCD: 29 cycles}\n");
    dir.write("w.yaml", "name: w\n");
    dir.write("g-b1.yaml", "");
    dir.write("g-b8.yaml", "");
    const std::string root = dir.path("");
    const auto in_dir = [root](const std::string& n) { return root + n + ".yaml"; };
    env.resolve_chip = in_dir;
    env.resolve_workload = in_dir;
    env.resolve_memory_preset = in_dir;
    env.load_chip = [](const std::string& path, const std::vector<std::string>& overrides) {
      tpusim::config::ConfigNode tree = tpusim::config::load_config_file(path);
      for (const std::string& o : overrides) {
        // The real binder rejects unknown keys; here anything absent from the file is unknown.
        const std::string key = o.substr(0, o.find('='));
        if (!tpusim::config::find_path(tree, key))
          throw tpusim::ConfigError({"--set " + o}, key, "unknown key");
        tpusim::config::apply_override(tree, o);
      }
      return tree;
    };
  }
  sw::SweepFile checked(const std::string& text) {
    sw::SweepFile s = sw::parse_sweep_text(text, dir.write("s.yaml", text));
    sw::check_sweep(s, env);
    return s;
  }
  std::string check_error(const std::string& text) {
    return tpusim::test::error_of([&] { checked(text); });
  }
};

}  // namespace

TEST_CASE("sweep: cartesian axes multiply, workloads outermost, the last axis fastest", "[sweep]") {
  const sw::SweepFile s = sw::parse_sweep_text(R"(chip: c
workloads: [w1, w2]
axes:
  a: [1, 2, 3]
  b: [x, y]
)",
                                               "s.yaml");
  std::uint64_t combinations = 0;
  const auto points = sw::enumerate_points(s, &combinations);
  // 2 workloads x 3 values of a x 2 of b.
  CHECK(combinations == 2 * 3 * 2);
  REQUIRE(points.size() == 12);
  CHECK(s.columns() == std::vector<std::string>{"a", "b"});
  const auto cells = cells_of(s, points);
  CHECK(cells[0] == "w1|1|x");
  CHECK(cells[1] == "w1|1|y");
  CHECK(cells[2] == "w1|2|x");
  CHECK(cells[5] == "w1|3|y");
  CHECK(cells[6] == "w2|1|x");
  CHECK(cells[11] == "w2|3|y");
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(points[i].id == i);
}

TEST_CASE("sweep: zip groups advance together, their length counts once", "[sweep]") {
  const sw::SweepFile s = sw::parse_sweep_text(R"(chip: c
workloads: w
axes:
  core.mxu.dataflow: [ws, os]
zip:
  - core.mxu.rows: [32, 64, 128]
    core.mxu.cols: [32, 64, 128]
  - core.vpu.lanes: [8, 16]
    core.vpu.sublanes: [1, 2]
)",
                                               "s.yaml");
  const auto points = sw::enumerate_points(s);
  // 2 dataflows x 3 (first group) x 2 (second group), not 2 x 3 x 3 x 2 x 2.
  REQUIRE(points.size() == 2 * 3 * 2);
  const auto cells = cells_of(s, points);
  CHECK(cells.front() == "w|ws|32|32|8|1");
  CHECK(cells[1] == "w|ws|32|32|16|2");
  CHECK(cells[2] == "w|ws|64|64|8|1");
  CHECK(cells.back() == "w|os|128|128|16|2");
  for (const std::string& c : cells) {
    // rows == cols and sublanes == lanes / 8 in every point: the pairs never cross.
    const auto parts = [&] {
      std::vector<std::string> v;
      std::size_t start = 0;
      for (std::size_t bar; (bar = c.find('|', start)) != std::string::npos; start = bar + 1)
        v.push_back(c.substr(start, bar - start));
      v.push_back(c.substr(start));
      return v;
    }();
    CHECK(parts[2] == parts[3]);
    CHECK(std::stoi(parts[5]) == std::stoi(parts[4]) / 8);
  }
}

TEST_CASE("sweep: constraints filter points and keep the unfiltered ids", "[sweep]") {
  const std::string base = R"(chip: c
workloads: w
axes:
  r: [32, 64, 128]
  c: [32, 64, 128]
  d: [ws, os]
constraints:
)";
  const auto run = [&](const std::string& condition) {
    return sw::enumerate_points(sw::parse_sweep_text(base + "  - " + condition + "\n", "s.yaml"));
  };
  // r == c: the diagonal of the 3 x 3 grid, both dataflows: ids (3 i + i) x 2 + d.
  CHECK(ids_of(run("r == c")) == std::vector<std::uint64_t>{0, 1, 8, 9, 16, 17});
  // r <= c: 6 of the 9 pairs; without r == 64: (32,32) (32,64) (32,128) (128,128) = 4 pairs.
  CHECK(run("r <= c").size() == 6 * 2);
  CHECK(run("r <= c and r != 64").size() == 4 * 2);
  CHECK(run("r <= c and not (r == 64)").size() == 4 * 2);
  // Text compares with == and !=; numbers numerically (128 > 64 although "128" < "64").
  CHECK(run("d == 'ws' and r > 64").size() == 3);
  CHECK(run("d != \"ws\" or r == 32").size() == 9 + 3);
}

TEST_CASE("sweep: workload parameters expand their entry and become columns", "[sweep]") {
  const sw::SweepFile t = sw::parse_sweep_text(R"(chip: c
workloads:
  - workload: g-b{batch}.yaml   # braces inside a {flow: mapping} would need quotes
    batch: [1, 8]
  - {workload: other.yaml, batch: 4}
axes:
  x: [1, 2]
constraints: [batch <= 4]
)",
                                               "s.yaml");
  CHECK(t.columns() == std::vector<std::string>{"batch", "x"});
  REQUIRE(t.expanded.size() == 3);
  CHECK(t.expanded[0].name == "g-b1.yaml");
  CHECK(t.expanded[1].name == "g-b8.yaml");
  CHECK(t.expanded[2].name == "other.yaml");
  // 3 workloads x 2 values of x, less batch 8 (ids 2 and 3).
  const auto points = sw::enumerate_points(t);
  CHECK(ids_of(points) == std::vector<std::uint64_t>{0, 1, 4, 5});
  CHECK(cells_of(t, points)[2] == "other.yaml|4|1");
}

TEST_CASE("sweep: malformed files name file:line:col and the key", "[sweep]") {
  struct Case {
    std::string text;
    std::string at;  // where the error points, found in the text
    std::string message;
  };
  const std::string head = "chip: c\nworkloads: w\n";
  std::string deep_not, deep_paren = "a == 1";
  for (int i = 0; i < 201; ++i) {
    deep_not += "not ";
    deep_paren = "(" + deep_paren + ")";
  }
  deep_not += "a == 1";
  const Case cases[] = {
      {head + "axis:\n  a: [1]\n", "axis", "s.yaml:3:1: axis: unknown key (did you mean 'axes'?)"},
      {"workloads: w\n", "", "s.yaml:1:1: chip: missing"},
      {head + "axes:\n  a: []\n", "[]", "a: an empty list of values"},
      {head + "axes:\n  a: [1, 2, 1]\n", "1]", "a: value '1' appears twice"},
      {head + "zip:\n  - {a: [1, 2], b: [1, 2, 3]}\n", "[1, 2, 3]",
       "b: a zip group's axes need equal lengths: this one has 3 values, the first 2"},
      {head + "set: {a: 1}\naxes:\n  a: [1, 2]\n", "a: [", "a: appears twice (also at s.yaml:3:7)"},
      {head + "axes:\n  status: [1]\n", "status", "status: is a results.csv column"},
      {head + "axes:\n  a..b: [1]\n", "a..b", "a..b: not a key path"},
      {"chip: c\nworkloads:\n  - {workload: x, n: 1}\n  - y\n", "y",
       "workloads: every entry needs the same parameters, in the same order, as the first (n)"},
      {"chip: c\nworkloads:\n  - workload: x{m}\n    n: [1]\n",
       "workload:", "'{m}' in 'x{m}' names no parameter of this entry"},
      {head + "axes: {a: [1]}\nconstraints: [a == ]\n", " ]",
       "constraints: expected a key, a number or quoted text, found 'end' in 'a =='"},
      {head + "axes: {a: [1]}\nconstraints: [a === 1]\n", "= 1",
       "constraints: unknown operator '=' (comparisons: == != < <= > >=) in 'a === 1'"},
      {head + "axes: {a: [1]}\nconstraints: [a * 2 == 1]\n", "* 2",
       "constraints: unexpected character '*' in 'a * 2 == 1'"},
      {head + "axes: {core.mxu.rows: [1]}\nconstraints: [core.mxu.row == 1]\n", "core.mxu.row ",
       "unknown key 'core.mxu.row'; did you mean 'core.mxu.rows'?"},
      {head + "axes: {a: [1]}\nconstraints: [a < 1 < 2]\n", "< 2", "comparisons do not chain"},
      {head + "axes: {a: [1]}\nconstraints: ['a == 1']\n", "a == 1'", ""},
      {head + "axes: {d: [ws, os]}\nconstraints: [d < 'os']\n", "d < ",
       "cannot order 'ws' < 'os': only numbers are ordered"},
      // Nesting is bounded (a deeper one exhausted the stack); a long constraint is quoted by
      // its first 77 characters.
      {head + "axes: {a: [1]}\nconstraints: [" + deep_not + "]\n", "not a == 1",
       "nested too deeply (more than 200 'not' and parentheses) in '" + deep_not.substr(0, 77) +
           "...'"},
      {head + "axes: {a: [1]}\nconstraints: [" + deep_paren + "]\n", "(a == 1",
       "nested too deeply"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    if (c.message.empty()) {  // a quoted condition is fine; its columns count inside the quotes
      CHECK_NOTHROW(sw::enumerate_points(sw::parse_sweep_text(c.text, "s.yaml")));
      continue;
    }
    const std::string e = error_of(c.text);
    CHECK_THAT(e, Catch::Contains(c.message));
    if (!c.at.empty()) CHECK_THAT(e, Catch::StartsWith("s.yaml:" + position_of(c.text, c.at)));
  }
}

TEST_CASE("sweep: shards are disjoint, balanced, and together every point", "[sweep]") {
  const sw::SweepFile s = sw::parse_sweep_text(
      "chip: c\nworkloads: w\naxes: {r: [1, 2, 3, 4, 5], c: [1, 2, 3, 4, 5]}\n"
      "constraints: [r == c]\n",
      "s.yaml");
  const auto all = sw::enumerate_points(s);
  // The diagonal: ids 0, 6, 12, 18, 24. Slicing by id mod 2 would put 3 in one shard and 2 in
  // the other only by luck (id mod 3 would give 0/12/24 and 6/18 and nothing); by position it
  // is 3 + 2 for N = 2 and 2 + 2 + 1 for N = 3.
  REQUIRE(ids_of(all) == std::vector<std::uint64_t>{0, 6, 12, 18, 24});
  for (unsigned n : {1u, 2u, 3u, 7u}) {
    std::multiset<std::uint64_t> seen;
    for (unsigned i = 0; i < n; ++i) {
      const auto part =
          sw::shard_points(all, sw::parse_shard(std::to_string(i) + "/" + std::to_string(n)));
      CHECK(part.size() == all.size() / n + (i < all.size() % n ? 1 : 0));
      for (const sw::Point& p : part) seen.insert(p.id);
    }
    CHECK(std::vector<std::uint64_t>(seen.begin(), seen.end()) == ids_of(all));
  }
  CHECK(ids_of(sw::shard_points(all, sw::parse_shard("1/2"))) == std::vector<std::uint64_t>{6, 18});
  for (const char* bad : {"2/2", "1", "-1/2", "0/0", "a/b", "1/2/3", ""})
    CHECK_THROWS_AS(sw::parse_shard(bad), tpusim::InputError);
}

TEST_CASE("sweep: keys are checked against the chip, with the nearest key named", "[sweep]") {
  FakeChip chip;
  const std::string file = chip.dir.path("s.yaml") + ":";
  const std::string head = "chip: chip\nworkloads: w\n";
  const std::string unknown = head + "axes:\n  core.mxu.rowz: [4, 8]\n";
  CHECK(chip.check_error(unknown) == file + position_of(unknown, "core.mxu.rowz") +
                                         ": core.mxu.rowz: not a key of chip chip; did you mean "
                                         "'core.mxu.rows'?");
  const std::string bad_set = head + "set: {memory.modle: hbm}\n";
  CHECK_THAT(chip.check_error(bad_set), Catch::Contains("did you mean 'memory.model'?"));
  const std::string missing = "chip: chip\nworkloads: [w, nope]\n";
  CHECK_THAT(chip.check_error(missing),
             Catch::StartsWith(file + position_of(missing, "nope") +
                               ": workloads: workload 'nope' not found"));
  const std::string missing_chip = "chip: nochip\nworkloads: w\n";
  CHECK_THAT(chip.check_error(missing_chip), Catch::StartsWith(file + "1:7: chip: ") &&
                                                 Catch::EndsWith("nochip.yaml: no such file"));
  const std::string missing_preset = head + "axes:\n  memory.hbm: [hbm3, hbm9]\n";
  CHECK_THAT(chip.check_error(missing_preset),
             Catch::StartsWith(file + position_of(missing_preset, "hbm9") + ": memory.hbm: ") &&
                 Catch::Contains("hbm9.yaml' is not a file (memory.hbm is a section"));
}

TEST_CASE("sweep: a workload listed twice is an error, by name or by path", "[sweep]") {
  FakeChip chip;
  const std::string file = chip.dir.path("s.yaml") + ":";
  const std::string twice = "chip: chip\nworkloads: [w, g-b1, w]\n";
  CHECK(chip.check_error(twice) ==
        file + "2:22: workloads: workload 'w' is listed twice (also 'w' at " + file + "2:13)");
  // A sample's name and its path are the same file.
  const std::string by_path = "chip: chip\nworkloads: [w, ./w.yaml]\n";
  CHECK_THAT(chip.check_error(by_path),
             Catch::Contains("workload './w.yaml' is listed twice (also 'w' at "));
  // Parameters that expand to the same file twice.
  const std::string expanded =
      "chip: chip\nworkloads:\n  - workload: g-b{b}\n    b: [1, 8]\n"
      "  - workload: g-b{b}\n    b: 8\n";
  CHECK_THAT(chip.check_error(expanded), Catch::Contains("workload 'g-b8' is listed twice"));
  // Distinct files, or one file under distinct parameters, are fine.
  CHECK(chip.checked("chip: chip\nworkloads: [w, g-b1, g-b8]\n").expanded.size() == 3);
}

TEST_CASE("sweep: a section given a file swaps it, swaps apply before plain values", "[sweep]") {
  FakeChip chip;
  const sw::SweepFile s = chip.checked(R"(chip: chip
workloads: w
set:
  memory.model: hbm
  memory.hbm.stacks: 2
axes:
  core.mxu.rows: [4, 8]
  memory.hbm: [hbm3]
)");
  const auto points = sw::enumerate_points(s);
  REQUIRE(points.size() == 2);
  const auto overrides = sw::point_overrides(s, points[1]);
  REQUIRE(overrides.size() == 4);
  CHECK(overrides[0] == "memory.hbm={standard: hbm3, stacks: 1, timing: {tRCD: 29 cycles}}");
  CHECK(overrides[1] == "memory.model=hbm");
  CHECK(overrides[2] == "memory.hbm.stacks=2");
  CHECK(overrides[3] == "core.mxu.rows=8");
  // The CSV cell is the value as written, not the file's contents.
  CHECK(sw::point_cells(s, points[1]) == std::vector<std::string>{"8", "hbm3"});
  // Applied in that order to the chip, the swapped section keeps the later adjustment.
  tpusim::config::ConfigNode tree = chip.env.load_chip(chip.dir.path("chip.yaml"), {});
  for (const std::string& o : overrides) tpusim::config::apply_override(tree, o);
  CHECK(tpusim::config::find_path(tree, "memory.hbm.standard")->text() == "hbm3");
  CHECK(tpusim::config::find_path(tree, "memory.hbm.stacks")->text() == "2");
  CHECK(tpusim::config::find_path(tree, "memory.hbm.timing.tRCD")->text() == "29 cycles");
}

TEST_CASE("sweep: results.csv quoting round-trips, a row cut short is dropped", "[sweep]") {
  TempDir dir;
  const sw::Row header = sw::results_header({"a", "b"});
  CHECK(header.size() == 2 + 2 + 2 + sw::kMetricCount + 1);
  CHECK(header[4] == "status");
  sw::Row row(header.size());
  row[0] = "3";
  row[1] = "w";
  row[2] = "{int8: 1, bf16: 1}";
  row[3] = " lead";
  row[4] = "failed";
  row[5] = "exit 2: error: x.yaml:1:2: \"quoted\", comma";
  const sw::Layout layout(header);
  CHECK_THAT(sw::csv_line(row, layout.error),
             Catch::StartsWith("3,w,\"{int8: 1, bf16: 1}\",\" lead\",failed,"
                               "\"exit 2: error: x.yaml:1:2: \"\"quoted\"\", comma\",,,"));
  const std::string path = dir.path("results.csv");
  sw::write_results(path, {header, {row}});
  sw::Row second = row;
  second[0] = "4";
  {
    sw::ResultsAppender append(path, layout.error);
    append.append(second);
  }
  // A kill in the middle of a write leaves a line without its newline.
  std::ofstream(path, std::ios::app) << "5,w,\"unterminated";
  const sw::ResultsTable t = sw::read_results(path);
  CHECK(t.header == header);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == row);
  CHECK(t.rows[1] == second);
  std::ofstream(path, std::ios::trunc) << sw::csv_line(header, 0) << "1,2\n";
  CHECK_THROWS_WITH(sw::read_results(path),
                    path + ":2: 2 cells, the header has " + std::to_string(header.size()));
}

TEST_CASE("sweep: --merge refuses a results.csv that is not a sweep's", "[sweep]") {
  TempDir dir;
  const std::string out = dir.path("merged");
  const auto merge_of = [&](const std::string& header_line) -> std::string {
    dir.write("in/results.csv", header_line + "\n");
    try {
      sw::merge_results({dir.path("in")}, out);
    } catch (const tpusim::InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string file = dir.path("in") + "/results.csv";
  const std::string good = sw::csv_line(sw::results_header({"a"}), 0);
  CHECK(merge_of(good.substr(0, good.size() - 1)).empty());  // the shape it accepts
  CHECK(merge_of("point,workload,x") == file + ": not a sweep's results.csv (no 'status' column)");
  // A status column alone would leave error, the figures and report to be read past the row.
  CHECK(merge_of("point,workload,status") ==
        file +
            ": not a sweep's results.csv (after 'status' its header must be "
            "status,error,cycles,...,edp_js,report)");
  CHECK(merge_of("id,workload,status") ==
        file + ": not a sweep's results.csv (its header must start with point,workload)");
}

TEST_CASE("sweep: the process pool runs N at a time and says how each child ended", "[sweep]") {
  TempDir dir;
  const std::string log = dir.path("log");
  const auto job = [&](std::uint64_t id, const std::string& script) {
    const std::string d = dir.path("job" + std::to_string(id));
    std::filesystem::create_directories(d);
    return sw::Job{id, {"/bin/sh", "-c", script}, d, "job"};
  };
  // Two jobs that log their start and end: run two at a time, both start before either ends.
  const std::string logged = "echo start >> '" + log + "'; sleep 0.3; echo end >> '" + log + "'";
  for (const unsigned parallel : {2u, 1u}) {
    std::ofstream(log, std::ios::trunc).flush();
    std::vector<sw::JobOutcome> outcomes;
    sw::RunOptions options;
    options.parallel = parallel;
    const auto end = sw::run_jobs({job(0, logged), job(1, logged)}, options,
                                  [&](const sw::Job&, const sw::JobOutcome& o) {
                                    outcomes.push_back(o);
                                    return sw::JobVerdict{true, "ok"};
                                  });
    CHECK(end == sw::RunEnd::kDone);
    CHECK(outcomes.size() == 2);
    CHECK(slurp(log) == (parallel == 2 ? "start\nstart\nend\nend\n" : "start\nend\nstart\nend\n"));
  }

  std::map<std::uint64_t, sw::JobOutcome> by_id;
  sw::RunOptions options;
  options.parallel = 3;
  options.timeout_seconds = 0.5;
  sw::run_jobs(
      {job(0, "echo warming up >&2; echo 'error: bad thing' >&2; exit 3"),
       job(1, "echo about to crash >&2; kill -SEGV $$"), job(2, "sleep 30"), job(3, "echo fine")},
      options, [&](const sw::Job& j, const sw::JobOutcome& o) {
        by_id[j.id] = o;
        return sw::JobVerdict{o.exited_ok, o.error};
      });
  REQUIRE(by_id.size() == 4);
  CHECK(by_id[0].error == "exit 3: error: bad thing");  // the last line of its stderr
  CHECK(by_id[1].error == "crashed: signal 11 (Segmentation fault): about to crash");
  CHECK(by_id[2].error == "timed out after 0.5 s (killed)");
  CHECK(by_id[2].wall_seconds < 10);
  CHECK(by_id[3].exited_ok);
  CHECK(by_id[3].error.empty());
  CHECK(slurp(dir.path("job3/stdout.txt")) == "fine\n");
}
