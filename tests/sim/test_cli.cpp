// The real executable, as a user runs it: exit codes and one-line errors on stderr.

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/config/config_tree.h"
#include "tests/sim/cli_support.h"
#include "tests/sim/test_support.h"

using tpusim::test::kMinimalChip;
using tpusim::test::position_of;
using tpusim::test::replaced;
using tpusim::test::Result;
using tpusim::test::run_tpusim;
using tpusim::test::slurp;
using tpusim::test::TempDir;
using tpusim::test::write_chip;

namespace fs = std::filesystem;

TEST_CASE("cli: validate accepts every preset and prints one line each", "[cli]") {
  const Result r = run_tpusim("validate configs/chips/*.yaml");
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("ok: configs/chips/tpu-v4i.yaml: tpu-v4i: "));
  CHECK_THAT(r.out, Catch::Contains("ok: configs/chips/teach-4x4.yaml: teach-4x4: "));
}

TEST_CASE("cli: a broken config exits 2 with one line naming file, line, column and key", "[cli]") {
  TempDir dir;
  const std::string text = replaced(kMinimalChip, "    rows: 8", "    rwos: 8");
  const std::string path = write_chip(dir, text);
  const Result r = run_tpusim("validate '" + path + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: " + path + ":" + position_of(text, "rwos") +
                     ": core.mxu.rwos: unknown key; did you mean 'rows'?\n");
  CHECK(r.out.empty());
}

TEST_CASE("cli: files that are not configs exit 2 with one line", "[cli]") {
  TempDir dir;
  const std::string empty = dir.write("empty.yaml", "");
  const std::string binary = dir.write("binary.yaml", std::string("\x7f" "ELF\0\0\x01", 7));
  const std::string prose = dir.write("prose.yaml", "<html><body>not yaml</body></html>\n");
  const std::string broken = dir.write("broken.yaml", "name: [unclosed\nclock: 1 GHz\n");
  const std::string cycle = dir.write("cycle.yaml", "extends: cycle.yaml\n");
  for (const std::string& path : {empty, binary, prose, broken, cycle, dir.path("missing.yaml")}) {
    INFO(path);
    const Result r = run_tpusim("validate '" + path + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Catch::StartsWith("error: " + path));
  }
}

TEST_CASE("cli: a chip file or --set value that is a lone ',' exits 2 at once", "[cli]") {
  // yaml-cpp 0.7 reads empty documents forever after a stray ',' (jbeder/yaml-cpp#1040);
  // run_tpusim fails the test if timeout(1) has to stop the run.
  TempDir dir;
  const std::string comma = dir.write("comma.yaml", ",\n");
  Result r = run_tpusim("config '" + comma + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: " + comma + ":1:1: invalid YAML: unexpected ','\n");
  r = run_tpusim("config tpu-v4i --set core.mxu.rows=,");
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "error: --set core.mxu.rows=,: core.mxu.rows: invalid YAML at column 1 of the value: "
        "unexpected ','\n");
  CHECK(r.out.empty());
}

TEST_CASE("cli: --functional refuses up front inputs and weights it cannot hold", "[cli]") {
  TempDir dir;
  // 10^12 bf16 values: 2 TB, past tpu-v4i's 8 GiB of HBM. Generating them first ran out of memory.
  const std::string big = dir.write(
      "big.yaml",
      "name: big\ndtype: bf16\ntensors:\n  - {name: a, shape: [1000000, 1000000], role: input}\n"
      "  - {name: c, role: output}\nops:\n  - {name: c, op: relu, inputs: [a]}\n");
  Result r = run_tpusim("run -q -c tpu-v4i --functional -w '" + big + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "error: graph 'big': its inputs and weights need 2000000000000 bytes of HBM; "
        "tpu-v4i has 8589934592 (memory.capacity)\n");
  // With 2 TiB of HBM they fit the chip, but not as the doubles functional mode keeps them in
  // (8 B each beside their 2 B copy: 9,313 GiB), on any machine this runs on.
  r = run_tpusim("run -q -c tpu-v4i --functional -w '" + big +
                 "' --set 'memory.capacity=2 TiB' --set memory.hbm.rows=4194304");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK_THAT(r.err, Catch::StartsWith("error: --functional holds the inputs and weights of graph "
                                      "'big' (1000000000000 values, 9313 GiB with their copy in "
                                      "memory), more than this machine's "));
}

TEST_CASE("cli: --functional refuses up front a chip whose memories exceed the machine's",
          "[cli]") {
  // 1024 cores of tpu-v4 took 86 MiB each in functional mode and were killed (out of memory)
  // partway through. 1024 cores x 1 TiB of vmem is beyond any machine.
  const Result r = run_tpusim(
      "exec isa/examples/single-matmul.tasm --functional -c tpu-v4 --set cores=1024 "
      "--set 'core.vmem.capacity=1 TiB'");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: --functional keeps every on-chip memory's contents: "
                                      "1024 cores x "));
  CHECK(r.err_lines() == 1);
  CHECK(run_tpusim("exec isa/examples/single-matmul.tasm --functional -c tpu-v4").exit_code == 0);
}

TEST_CASE("cli: validate quotes a value with a line break on one line", "[cli]") {
  TempDir dir;
  const std::string chip =
      write_chip(dir, replaced(kMinimalChip, "clock: 1 GHz", "clock: \"1\\n GHz\""));
  const Result r = run_tpusim("validate '" + chip + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err == "error: " + chip +
                     ":2:8: clock: unknown frequency unit \"\\n GHz\" in \"1\\n GHz\" "
                     "(units: Hz, kHz, MHz, GHz)\n");
}

TEST_CASE("cli: validate reports every failing file and still exits 2", "[cli]") {
  TempDir dir;
  const std::string good = write_chip(dir);
  const std::string bad = dir.write("bad.yaml", replaced(kMinimalChip, "cores: 2", "cores: -2"));
  const Result r = run_tpusim("validate '" + bad + "' '" + good + "' '" + bad + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 2);
  CHECK_THAT(r.out, Catch::Contains("ok: " + good));
}

TEST_CASE("cli: config prints the resolved YAML, which loads back", "[cli]") {
  const Result r = run_tpusim("config tpu-v4i --set core.mxu.rows=64");
  REQUIRE(r.exit_code == 0);
  const tpusim::config::ConfigNode root = tpusim::config::parse_yaml(r.out, "stdout");
  CHECK(tpusim::config::find_path(root, "name")->text() == "tpu-v4i");
  CHECK(tpusim::config::find_path(root, "core.mxu.rows")->text() == "64");
  // Defaults are filled in, so the dump says everything the simulator will use.
  CHECK(tpusim::config::find_path(root, "core.sequencer.queue_depth") != nullptr);
  CHECK(tpusim::config::find_path(root, "memory.hbm.timing.tRCD") != nullptr);
}

TEST_CASE("cli: bad flags exit 2, help and version exit 0", "[cli]") {
  const Result flag = run_tpusim("validate --bogus configs/chips/tpu-v4i.yaml");
  CHECK(flag.exit_code == 2);
  CHECK(flag.err_lines() == 1);
  const Result none = run_tpusim("");
  CHECK(none.exit_code == 2);
  const Result set = run_tpusim("validate tpu-v4i --set core.mxu.rows");
  CHECK(set.exit_code == 2);
  CHECK(set.err == "error: --set core.mxu.rows: expected key.path=value\n");
  const Result sweep = run_tpusim("sweep");
  CHECK(sweep.exit_code == 2);
  CHECK(sweep.err_lines() == 1);
  CHECK_THAT(sweep.err, Catch::Contains("give a sweep FILE"));
  const Result version = run_tpusim("--version");
  CHECK(version.exit_code == 0);
  CHECK(version.out == "tpusim " TPUSIM_VERSION "\n");
  for (const char* cmd : {"", "run", "config", "validate", "sweep"}) {
    const Result help = run_tpusim(std::string(cmd) + " --help");
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("Usage:"));
  }
}

TEST_CASE("cli: each config error class exits 2 with its exact one-line message", "[cli]") {
  struct Case {
    const char* from;
    const char* to;
    const char* marker;  // where the error points, in the edited text
    const char* message;
  };
  const Case cases[] = {
      {"cores: 2", "cores: 2.5", "2.5", "cores: expected an integer from 1 to 1024, got \"2.5\""},
      {"clock: 1 GHz\n", "", "name", "clock: missing required key"},
      {"    rows: 8", "    rows: 5000", "5000", "core.mxu.rows: expected an integer from 1 to 4096, got \"5000\""},
      {"bandwidth: 100 GB/s", "bandwidth: 100 GB", "100 GB",
       "memory.bandwidth: unknown bandwidth unit \"GB\" in \"100 GB\" (units: B/s, KB/s, kB/s, MB/s, "
       "GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, B/cycle)"},
      {"    banks: 2", "    banks: 3", "3\n", "core.accmem.banks: 16 KiB does not divide into 3 equal banks"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const std::string text = replaced(kMinimalChip, c.from, c.to);
    const std::string path = write_chip(dir, text);
    const Result r = run_tpusim("validate '" + path + "'");
    INFO(c.message);
    CHECK(r.exit_code == 2);
    // A missing key is reported at the start of the section that lacks it: here the top level.
    const std::string where = std::string(c.marker) == "name" ? "1:1" : position_of(text, c.marker);
    CHECK(r.err == "error: " + path + ":" + where + ": " + c.message + "\n");
  }
}

// (No ';' in test names: catch_discover_tests cuts the name there and the test never runs.)
TEST_CASE("cli: unknown subcommands are named", "[cli]") {
  const Result unknown = run_tpusim("simulate");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::StartsWith("tpusim: error: unknown subcommand 'simulate'"));
}

TEST_CASE("cli: inputs found by fuzzing exit 2 with one line, and leave no report", "[cli]") {
  TempDir dir;
  // A device is cut off at the size limit instead of being read until memory runs out.
  const std::string tbin = dir.path("x.tbin");
  for (const std::string& args :
       {std::string("validate /dev/zero"), "asm /dev/zero -o " + tbin,
        std::string("disasm /dev/zero"), std::string("exec -c teach-4x4 /dev/zero")}) {
    INFO(args);
    const Result r = run_tpusim(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
  }
  // Text that is not UTF-8 is refused where it is read (it used to fail writing the report).
  const std::string text = replaced(kMinimalChip, "name: test-chip", "name: test-chip\xff");
  const std::string path = write_chip(dir, text);
  Result r = run_tpusim("validate '" + path + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "error: " + path + ":" + position_of(text, "\xff") + ": not UTF-8 text (byte 0xFF)\n");
  // A --set value is quoted on one line, its newline escaped.
  r = run_tpusim("validate teach-4x4 --set \"$(printf 'core.mxu.rows=4\\n---\\n8')\"");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: --set core.mxu.rows=4\\n---\\n8:"));
  CHECK(r.err_lines() == 1);
  r = run_tpusim("validate teach-4x4 --set 'energy.table=\"\"'");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK_THAT(r.err, Catch::Contains("energy.table: expected the path of an energy table file"));
  // A memory of 1 B/s needs about 786,432 s for this GEMM's 786,432 bytes: past SystemC's
  // time range (9,223 s), which would saturate into a wrong figure.
  // The folder held an earlier run's reports: they must not pass for this run's.
  const std::string out = dir.path("out");
  const std::string gemm = "run -q -c tpu-v4i -w workloads/tpuv3/gemm_256x256x256.yaml ";
  REQUIRE(run_tpusim(gemm + "-o '" + out + "'").exit_code == 0);
  REQUIRE(std::filesystem::exists(out + "/report.json"));
  r = run_tpusim(gemm + "--set 'memory.bandwidth=1 B/s' -o '" + out + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK_THAT(r.err, Catch::Contains("the simulated time passed 9000 s"));
  CHECK(std::filesystem::is_empty(out));
  // Nor when this run fails before simulating: on its chip, its workload or its program.
  const std::string tasm = TPUSIM_SOURCE_DIR "/isa/examples/teach-4x4.tasm";
  for (const std::string& failing :
       {gemm + "--set core.mxu.rows=0", std::string("run -q -c tpu-v4i -w missing.yaml"),
        "exec -q -c teach-4x4 '" + dir.write("bad.tasm", "nop\n") + "'",
        "exec -q -c teach-4x4 --set core.mxu.rows=0 '" + tasm + "'"}) {
    INFO(failing);
    const bool exec = failing.rfind("exec", 0) == 0;
    REQUIRE(run_tpusim((exec ? "exec -q -c teach-4x4 '" + tasm + "'" : gemm) + " -o '" + out + "'")
                .exit_code == 0);
    REQUIRE(std::filesystem::exists(out + "/report.json"));
    CHECK(run_tpusim(failing + " -o '" + out + "'").exit_code == 2);
    CHECK(std::filesystem::is_empty(out));
  }
  // A report that cannot be written takes back the files written before it.
  std::filesystem::create_directories(out + "/report.json");
  r = run_tpusim(gemm + "-o '" + out + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: " + out + "/report.json: cannot write file (Is a directory)\n");
  CHECK_FALSE(std::filesystem::exists(out + "/ops.csv"));
  CHECK_FALSE(std::filesystem::exists(out + "/trace.json"));
  for (const char* name : {"report.json", "ops.csv", "trace.json"})
    CHECK_FALSE(std::filesystem::exists(out + "/" + name + ".partial"));
  CHECK(std::filesystem::is_directory(out + "/report.json"));  // not ours to remove
}

TEST_CASE("cli: values that used to be taken silently exit 2 with one line", "[cli]") {
  TempDir dir;
  const std::string teach = "run -q -c teach-4x4 -w workloads/teach/matmul-4x4.yaml ";
  struct Case {
    std::string args, message;
  };
  const std::string tasm =
      dir.write("a.tasm", slurp(TPUSIM_SOURCE_DIR "/isa/examples/teach-4x4.tasm"));
  const std::string npy_dir = dir.path("inputs");
  std::filesystem::create_directories(npy_dir + "/a.npy");
  // A misspelt input file was ignored, its tensor silently generated.
  const std::string typo_dir = dir.path("typo");
  std::filesystem::create_directories(typo_dir);
  dir.write("typo/bb.npy", "");
  const Case cases[] = {
      {teach + "--seed -1", "--seed: expected a whole number from 0 to 18446744073709551615"},
      {teach + "--seed 18446744073709551616", "got '18446744073709551616'"},
      {teach + "-o ''", "--out: expected a path, got ''"},
      {teach + "--vcd ''", "--vcd: expected a path, got ''"},
      {"sweep configs/sweeps/resnet50-array.yaml --list --timeout nan",
       "--timeout: expected a number of seconds above 0 and at most 1e7, got 'nan'"},
      {"asm '" + tasm + "' -o '" + tasm + "'",
       "is an input of this command; write the result elsewhere"},
      {teach + "--functional --inputs '" + npy_dir + "'", "a.npy: not a file"},
      {"sweep configs/sweeps/resnet50-array.yaml --list -j 0",
       "--jobs: Value 0 not in range 1 to 4096"},
      {"validate teach-4x4 --set 'name=\"\"'",
       "name: expected a non-empty name (reports and sweeps show it)"},
      {teach + "--functional --inputs '" + typo_dir + "'",
       "bb.npy: the workload has no tensor named 'bb' (did you mean 'b'?) (--inputs reads "
       "NAME.npy files)"},
      // Found by the session-32 audit: an empty dump, a name that breaks the summary's line.
      {"exec isa/examples/teach-4x4.tasm -c teach-4x4 --functional --dump 'hbm:0x20:0=" +
           dir.path("zero.bin") + "'",
       "'hbm:0x20:0=" + dir.path("zero.bin") + "': BYTES is 0, so there is nothing to dump"},
      {"validate teach-4x4 --set 'name=\"a\\tb\"'",
       "name: expected a name without control characters"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = run_tpusim(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
  CHECK(slurp(tasm) == slurp(TPUSIM_SOURCE_DIR "/isa/examples/teach-4x4.tasm"));
  CHECK_FALSE(std::filesystem::exists(dir.path("zero.bin")));
  CHECK(run_tpusim(teach + "--seed 18446744073709551615").exit_code == 0);
}

TEST_CASE("cli: messages an audit found misleading name what is really wrong", "[cli]") {
  TempDir dir;
  const std::string head =
      "tensors:\n  - {name: x, shape: [1, 8, 8, 4], role: input}\n"
      "  - {name: y, role: output}\nops:\n";
  struct Case {
    std::string file, text, message;
  };
  const Case cases[] = {
      // b exists: it is read too early, not unknown (was "unknown tensor 'b' (did you mean 'x'?)").
      {"order.yaml",
       head + "  - {name: a, op: add, inputs: [x, b]}\n  - {name: b, op: add, inputs: [a, x]}\n"
              "  - {name: y, op: relu, inputs: [b]}\n",
       "tensor 'b' is read before the op that produces it (ops run in the order written)"},
      // Lists are valid here; three entries are not (was "expected an integer ..., got a list").
      {"kernel.yaml",
       head + "  - {name: y, op: conv2d, inputs: [x], filters: 4, kernel: [3, 3, 3]}\n",
       "kernel: expected n or [h, w], got a list of 3"},
      // "0x20 -16" is 0x20 - 16 and no size (was only "missing operand size=").
      {"region.tasm", ".region y hbm 0x20 -16\n.core 0\nhalt\n",
       ".region: missing operand size= (the base and a signed size read as one expression; a "
       "size is a number of at least 1)"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.write(c.file, c.text);
    const bool program = c.file.find(".tasm") != std::string::npos;
    const Result r = run_tpusim(program ? "asm '" + path + "' -o '" + dir.path("p.tbin") + "'"
                                        : "compile -c tpu-v4i -w '" + path + "' -o '" +
                                              dir.path("p.tbin") + "'");
    INFO(c.file << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Catch::Contains(path + ":") && Catch::Contains(c.message));
  }
}

TEST_CASE("cli: messages found misleading by fuzzing say what is wrong, in one short line",
          "[cli]") {
  TempDir dir;
  std::string nested = "{a: ";
  for (int i = 0; i < 12; ++i) nested += nested;  // 4096 levels of flow maps
  const std::string deep = dir.write("deep.yaml", "name: deep\ncore: " + nested + "\n");
  const std::string long_value(100000, 'a');
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"validate '" + deep + "'", "deep.yaml:2:"},  // yaml-cpp's own words are "bad file"
      {"validate '" + deep + "'", ": invalid YAML: nested too deeply"},
      {"run -q -c ''", "--chip: expected a path, got ''"},
      {"compile -w '' -o x.tasm", "--workload: expected a path, got ''"},
      {"exec --functional isa/examples/teach-4x4.tasm -c teach-4x4 --load hbm:0=/dev/zero",
       "/dev/zero: not a regular file"},
      {"validate teach-4x4 --set core.mxu.rows=" + long_value,
       "--set core.mxu.rows=" + long_value.substr(0, 80 - 14) +
           "... (100014 bytes): "
           "core.mxu.rows: expected an integer from 1 to 4096, got \"" +
           long_value.substr(0, 80) + "... (100000 bytes)\""},
      {"validate teach-4x4 --set " + long_value + "=1", "... (100000 bytes): unknown key"},
  };
  for (const Case& c : cases) {
    INFO(c.args.substr(0, 200));
    const Result r = run_tpusim(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.size() < 600);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
}

TEST_CASE("cli: a row too wide for vmem names what vmem already holds", "[cli]") {
  // A layernorm over 8192 fp32 features keeps gamma and beta resident (2 x 32 KiB) and
  // double-buffers a row in and out (at least 2 x 2 x 32 KiB). With 250 KiB of vmem the row
  // alone would fit; the message must say what else is there, not "196,616 B does not fit
  // 256,000 B".
  TempDir dir;
  const std::string graph = dir.write("ln.yaml", R"(name: ln
dtype: fp32
tensors:
  - {name: x, shape: [4, 8192], role: input}
  - {name: g, shape: [8192], role: weight}
  - {name: b, shape: [8192], role: weight}
  - {name: y, shape: [4, 8192], role: output}
ops:
  - {name: n, op: layernorm, inputs: [x, g, b], output: y}
)");
  const Result r =
      run_tpusim("compile -c tpu-v4i --set core.vmem.capacity=250KiB -w '" + graph + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  unsigned long long row = 0, capacity = 0, held = 0, slack = 0;
  const std::size_t at = r.err.find("one row (");
  REQUIRE(at != std::string::npos);
  REQUIRE(std::sscanf(r.err.c_str() + at,
                      "one row (%llu B with double buffering) does not fit vmem (%llu B) beside "
                      "the %llu B already held there (resident operands, constants, kept "
                      "activations) and %llu B of slot alignment",
                      &row, &capacity, &held, &slack) == 4);
  CHECK(capacity == 250 * 1024);
  CHECK(row >= 4 * 8192 * 4);
  CHECK(row < capacity);
  CHECK(held >= 2 * 8192 * 4);
  CHECK(row + held + slack > capacity);
}

TEST_CASE("cli: what the lowering cannot do yet exits 3, quoted keys stay on one line", "[cli]") {
  TempDir dir;
  const std::string multiplier = dir.write("dw.yaml", R"(name: dw
dtype: bf16
tensors:
  - {name: x, shape: [1, 4, 4, 2], role: input}
  - {name: y, role: output}
ops:
  - {name: y, op: conv2d, inputs: [x], filters: 4, kernel: 3, groups: 2, padding: 1}
)");
  Result r = run_tpusim("run -q -c tpu-v4i -w '" + multiplier + "'");
  CHECK(r.exit_code == 3);
  CHECK(r.err == "error: " + multiplier +
                     ":7:5: op 'y' (conv2d): depthwise convolution with a channel "
                     "multiplier (not implemented in the lowering yet)\n");
  // A dtype the graph format names but no operator takes yet.
  const std::string fp8 = dir.write("fp8.yaml", R"(name: f
dtype: fp8
tensors:
  - {name: x, shape: [4, 4], role: input}
  - {name: w, shape: [4, 4], role: weight}
  - {name: y, role: output}
ops:
  - {name: y, op: matmul, inputs: [x, w]}
)");
  r = run_tpusim("run -q -c tpu-v4i -w '" + fp8 + "'");
  CHECK(r.exit_code == 3);
  CHECK(r.err == "error: " + fp8 +
                     ":8:5: op 'y' (matmul): fp8 tensors are not supported by any operator yet\n");
  // fp8 beside int8 is a bad graph, whatever fp8's support: exit 2.
  const std::string mixed =
      dir.write("mixed.yaml", replaced(slurp(fp8), "{name: w, shape: [4, 4], role: weight}",
                                       "{name: w, shape: [4, 4], role: weight, dtype: int8}"));
  const Result bad_mix = run_tpusim("run -q -c tpu-v4i -w '" + mixed + "'");
  CHECK(bad_mix.exit_code == 2);
  CHECK_THAT(bad_mix.err, Catch::Contains("dtypes differ: 'x' is fp8, 'w' is int8"));
  // A program beyond the lowering's instruction limit: 2048^3 MACs on one 4x4 array.
  r = run_tpusim("compile -q -c teach-4x4 -w gemm-2048 -o '" + dir.path("big.tbin") + "'");
  CHECK(r.exit_code == 3);
  CHECK(r.err_lines() == 1);
  CHECK_THAT(r.err, Catch::Contains("op 'gemm' (matmul): the program would exceed 16000000 "
                                    "instructions, the lowering's limit"));
  CHECK_FALSE(std::filesystem::exists(dir.path("big.tbin")));
  // A key with a newline in it is quoted escaped: the error stays one line.
  const std::string key = dir.write("key.yaml",
                                    "tensors:\n  - {name: x, shape: [4], role: input, "
                                    "\"a\\nb\": 1}\nops: []\n");
  r = run_tpusim("run -q -c tpu-v4i -w '" + key + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK_THAT(r.err, Catch::Contains("unknown key 'a\\nb'"));
}

TEST_CASE("cli: -v logs what a run did on stderr, stdout holds the summary alone", "[cli]") {
  const Result quiet = run_tpusim("run -w bert-base-layer-s128");
  const Result verbose = run_tpusim("run -v -w bert-base-layer-s128");
  REQUIRE(quiet.exit_code == 0);
  REQUIRE(verbose.exit_code == 0);
  CHECK(quiet.err.empty());
  CHECK(verbose.out == quiet.out);
  CHECK(verbose.err.find("tpusim: debug: lowered to ") != std::string::npos);
  // The cycles it logs are the summary's.
  const std::size_t at = quiet.out.find("cycles ");
  REQUIRE(at != std::string::npos);
  const std::string cycles = std::to_string(std::stoull(quiet.out.substr(at + 7)));
  CHECK(verbose.err.find("tpusim: debug: simulated " + cycles + " cycles") != std::string::npos);
}

TEST_CASE("cli: the summary says when its energy is dynamic only", "[cli][energy]") {
  // tpu-v4i has no public static power (0 W); tpu-v1 has one (34.7 W, derived in its file).
  const Result v4i = run_tpusim("run -c tpu-v4i -w tpuv1/mlp1");
  const Result v1 = run_tpusim("run -c tpu-v1 -w tpuv1/mlp1");
  REQUIRE(v4i.exit_code == 0);
  REQUIRE(v1.exit_code == 0);
  const std::string label = " TOPS/W (dynamic only: energy.static_power is 0 W)\n";
  CHECK(v4i.out.find(label) != std::string::npos);
  CHECK(v1.out.find(" TOPS/W\n") != std::string::npos);
  CHECK(v1.out.find(label) == std::string::npos);
}

TEST_CASE("cli: the README's quick-start summary is what tpusim run prints", "[cli][docs]") {
  const std::string readme = slurp(TPUSIM_SOURCE_DIR "/README.md");
  const std::string open = "```text\ntpusim: ";
  const std::size_t start = readme.find(open);
  REQUIRE(start != std::string::npos);
  const std::size_t end = readme.find("```\n", start + open.size());
  REQUIRE(end != std::string::npos);
  const std::size_t body = start + std::string("```text\n").size();
  const std::string quoted = readme.substr(body, end - body);
  const Result r = run_tpusim("run");
  REQUIRE(r.exit_code == 0);
  // The README quotes the first lines: the summary and the top operators.
  CHECK(r.out.substr(0, quoted.size()) == quoted);
}

TEST_CASE("cli: the summary's operator names keep both ends when shortened", "[cli]") {
  // MobileNetV2's fused operators ("b2_0_expand+b2_0_expand_relu6", repeats ending ".3") are
  // longer than the 28-column field: the first 12 and last 14 characters show, ".." between.
  TempDir dir;
  const Result r = run_tpusim("run -c tpu-v4i -w mobilenetv2 -o '" + dir.path("out") + "'");
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(slurp(dir.path("out") + "/report.json"));
  std::vector<nlohmann::json> ops(report["ops"].begin(), report["ops"].end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a["cycles"].template get<std::uint64_t>() > b["cycles"].template get<std::uint64_t>();
  });
  int shortened = 0;
  for (std::size_t i = 0; i < 10 && i < ops.size(); ++i) {
    const std::string name = ops[i]["name"];
    char id[16];
    std::snprintf(id, sizeof id, "\n    %-4u ", ops[i]["id"].get<unsigned>());
    const std::size_t at = r.out.find(id);
    REQUIRE(at != std::string::npos);
    const std::string shown = r.out.substr(at + std::string(id).size(), 28);
    CAPTURE(name, shown);
    if (name.size() <= 28) {
      CHECK(shown.substr(0, name.size()) == name);
    } else {
      ++shortened;
      CHECK(shown == name.substr(0, 12) + ".." + name.substr(name.size() - 14));
    }
  }
  CHECK(shortened > 0);
}

TEST_CASE("cli: ideal memory is no slower than the same chip with boundless simple memory",
          "[cli][memory]") {
  // Planned for an infinite rate, ideal memory ran 6-8% slower than simple memory at 1000 TB/s
  // and no latency (the DMA's issue rate still binds): a lower bound that was not one.
  const auto cycles = [](const std::string& sets) {
    const Result r = run_tpusim("run -w bert-base-layer-s128 " + sets);
    REQUIRE(r.exit_code == 0);
    const std::string key = "cycles       ";
    const std::size_t at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    return std::stoull(r.out.substr(at + key.size()));
  };
  CHECK(cycles("--set memory.model=ideal") <=
        cycles("--set 'memory.bandwidth=1000 TB/s' --set 'memory.latency=0 ns'"));
}
