// The program commands as a user runs them (asm, disasm, exec): round trips, bad programs, and
// the outputs they write or refuse to write.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/sim/cli_support.h"
#include "tests/sim/test_support.h"

using tpusim::test::Result;
using tpusim::test::run_tpusim;
using tpusim::test::slurp;
using tpusim::test::TempDir;

TEST_CASE("cli: asm and disasm round-trip an example byte for byte", "[cli][isa]") {
  TempDir dir;
  const std::string first = dir.path("a.tbin"), text = dir.path("a.tasm"),
                    second = dir.path("b.tbin");
  const Result assembled =
      run_tpusim("asm isa/examples/gemm-double-buffered.tasm -o '" + first + "' -c tpu-v4i");
  REQUIRE(assembled.exit_code == 0);
  REQUIRE(run_tpusim("disasm '" + first + "' -o '" + text + "'").exit_code == 0);
  REQUIRE(run_tpusim("asm '" + text + "' -o '" + second + "'").exit_code == 0);
  CHECK(slurp(first) == slurp(second));
  CHECK_FALSE(slurp(first).empty());
  const Result printed = run_tpusim("disasm '" + first + "'");
  CHECK(printed.exit_code == 0);
  CHECK(printed.out == slurp(text));
}

TEST_CASE("cli: bad programs exit 2 with one line and leave no output file", "[cli][isa]") {
  TempDir dir;
  const std::string source =
      dir.write("bad.tasm", ".core 0\nmxu.lw mxu0 src=vmem:0 k=4 n=4 dtype=int7\n");
  const std::string out = dir.path("bad.tbin");
  const Result r = run_tpusim("asm '" + source + "' -o '" + out + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK_THAT(r.err, Catch::StartsWith("error: " + source + ":2:"));
  CHECK_FALSE(std::filesystem::exists(out));
  const std::string junk = dir.write("junk.tbin", "TBIN\x01garbage");
  const Result d = run_tpusim("disasm '" + junk + "'");
  CHECK(d.exit_code == 2);
  CHECK(d.err_lines() == 1);
  CHECK_THAT(d.err, Catch::Contains("byte"));
  // A program that does not fit the chip is rejected by the checker, naming the line.
  const std::string big =
      dir.write("big.tasm",
                ".op 0 matmul \"m\"\n.core 0\n.op 0\nmxu.lw mxu0 src=vmem:0 k=8 n=8 dtype=int8\n");
  const Result c = run_tpusim("asm '" + big + "' -o '" + out + "' -c teach-4x4");
  CHECK(c.exit_code == 2);
  CHECK_THAT(c.err, Catch::StartsWith("error: " + big + ":4:"));
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("cli: a failed asm, disasm or compile removes what an earlier one left at -o",
          "[cli][isa]") {
  TempDir dir;
  const std::string bad =
      dir.write("bad.tasm", ".core 0\nmxu.lw mxu0 src=vmem:0 k=4 n=4 dtype=int7\n");
  const std::string junk = dir.write("junk.tbin", "TBIN\x01garbage");
  const std::string graph = dir.write("g.yaml", "name: g\ntensors: [\n");  // cut short
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"asm '" + bad + "' -o ", "old.tbin"},
      {"disasm '" + junk + "' -o ", "old.tasm"},
      {"compile -c teach-4x4 -w '" + graph + "' -o ", "old.tasm"},
      {"compile -c teach-4x4 -w '" + graph + "' -o ", "old.tbin"},
  };
  for (const auto& [args, name] : cases) {
    INFO(args + name);
    const std::string stale = dir.write(name, "an earlier command's output");
    const Result r = run_tpusim(args + "'" + stale + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK_FALSE(std::filesystem::exists(stale));
  }
  // An output that is one of the inputs is refused before anything, and the input stays.
  const Result w = run_tpusim("compile -c teach-4x4 -w '" + graph + "' -o '" + graph + "'");
  CHECK(w.exit_code == 2);
  CHECK(w.err == "error: " + graph + ": expected a .tasm or .tbin file name\n");
  CHECK(std::filesystem::exists(graph));
  const std::string program =
      dir.write("p.tasm", slurp(TPUSIM_SOURCE_DIR "/isa/examples/teach-4x4.tasm"));
  const Result a = run_tpusim("asm '" + program + "' -c '" + program + "' -o '" + program + "'");
  CHECK(a.exit_code == 2);
  CHECK(a.err ==
        "error: " + program + ": is an input of this command; write the result elsewhere\n");
  CHECK(std::filesystem::exists(program));
  // Each command writes one format: the other's extension is refused, and a file there is kept.
  const std::string other = dir.write("other.tasm", "; a program the user keeps\n");
  const Result t = run_tpusim("asm '" + program + "' -o '" + other + "'");
  CHECK(t.exit_code == 2);
  CHECK(t.err == "error: " + other + ": asm writes a binary program: name it .tbin, not .tasm\n");
  CHECK(slurp(other) == "; a program the user keeps\n");
  const std::string binary = dir.path("p.tbin");
  REQUIRE(run_tpusim("asm '" + program + "' -o '" + binary + "'").exit_code == 0);
  const std::string kept = dir.write("kept.tbin", "TBIN kept");
  const Result d = run_tpusim("disasm '" + binary + "' -o '" + kept + "'");
  CHECK(d.exit_code == 2);
  CHECK(d.err == "error: " + kept + ": disasm writes program text: name it .tasm, not .tbin\n");
  CHECK(slurp(kept) == "TBIN kept");
}

TEST_CASE("cli: unusable program and output paths exit 2 with one line, before simulating",
          "[cli][exec]") {
  TempDir dir;
  const std::string folder = dir.path("d.tasm");
  std::filesystem::create_directories(folder);
  const std::string empty = dir.write("empty.tasm", "; nothing but a comment\n");
  const std::string program = "isa/examples/teach-4x4.tasm";
  const std::string not_a_dir = dir.write("file.txt", "x");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"asm '" + folder + "' -o '" + dir.path("x.tbin") + "'", folder + ": is a directory"},
      {"exec '" + folder + "'", folder + ": is a directory"},
      {"exec '" + empty + "'", empty + ":1:1: no instructions"},
      {"exec " + program +
           " -c teach-4x4 --functional --dump hbm:0:99999999999=" + dir.path("y.bin"),
       "is outside memory.capacity"},
      {"exec " + program + " -c teach-4x4 --functional --load hbm:0=" + dir.path(""),
       "is a directory"},
      {"exec " + program + " -c teach-4x4 --load hbm:0=" + not_a_dir, "need --functional"},
      {"exec " + program + " -c teach-4x4 -o '" + not_a_dir + "'",
       "cannot create output directory"},
      // An output onto an input, or named twice, would lose one of them: refused first.
      {"exec '" + program + "' -c teach-4x4 --functional --dump hbm:0:16=" + program,
       program + ": is an input of this command"},
      {"exec " + program + " -c teach-4x4 --vcd ./" + program, "is an input of this command"},
      {"exec " + program + " -c teach-4x4 --functional --load hbm:0=" + not_a_dir +
           " --dump hbm:0:1=" + not_a_dir,
       not_a_dir + ": is an input of this command"},
      {"exec " + program + " -c teach-4x4 --functional --dump hbm:0:4=" + dir.path("z.bin") +
           " --dump hbm:8:4=" + dir.path(".") + "/z.bin",
       "z.bin: named as two outputs of this command"},
      // The report files -o writes are outputs too: a waveform written there would be lost.
      {"exec " + program + " -c teach-4x4 -o " + dir.path("o") + " --vcd " +
           dir.path("o/report.json"),
       "o/report.json: named as two outputs of this command"},
      // ... and an input named as one of them is refused before earlier reports are removed.
      {"exec " + program + " -c teach-4x4 -o " + dir.path("in") +
           " --functional --load hbm:0=" + dir.write("in/trace.json", "x"),
       "in/trace.json: is an input of this command"},
      {"run -c teach-4x4 -w workloads/teach/matmul-4x4.yaml --show --show-out " +
           dir.path("o/ops.csv") + " -o " + dir.path("o"),
       "o/ops.csv: named as two outputs of this command"},
      {"run -c teach-4x4 -w gemm-2048 --vcd configs/chips/teach-4x4.yaml",
       "configs/chips/teach-4x4.yaml: is an input of this command"},
      {"asm " + program + " -o " + dir.path("x.tbin") + " --set core.mxu.rows=8",
       "--set requires --chip"},
  };
  // A run removes its earlier outputs first thing: an input named as one must be refused before
  // that, chips and workloads named by preset included. Put back if a regression removed it.
  const std::string chip_file = TPUSIM_SOURCE_DIR "/configs/chips/teach-4x4.yaml";
  const std::string chip_text = slurp(chip_file);
  for (const auto& [args, message] : cases) {
    INFO(args);
    const Result r = run_tpusim(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Catch::Contains(message));
  }
  CHECK(slurp(dir.path("in/trace.json")) == "x");
  if (slurp(chip_file) != chip_text) {
    std::ofstream(chip_file, std::ios::binary) << chip_text;
    FAIL("the chip file named as --vcd was removed or changed");
  }
}

TEST_CASE("cli: results that cannot all be written to stdout are a failed run", "[cli][isa]") {
  // disasm prints to stdout unless -o is given: a full disk must not pass for success.
  TempDir dir;
  const std::string err = dir.path("err");
  const std::string command = "cd '" TPUSIM_SOURCE_DIR "' && timeout 60 '" TPUSIM_EXE
                              "' disasm isa/examples/teach-4x4.tasm > /dev/full 2> '" +
                              err + "'";
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(slurp(err) ==
        "error: cannot write the results to standard output: No space left on device\n");
  CHECK(run_tpusim("disasm isa/examples/teach-4x4.tasm").exit_code == 0);
}

TEST_CASE("cli: -o through a link writes what the link names and keeps the link", "[cli][isa]") {
  // Results are written beside their path and renamed over it. Renaming over a device node
  // would replace the node (as root, /dev/null by a regular file); renaming over a link would
  // replace the link. A link to /dev/null tests both without touching /dev if it fails.
  namespace fs = std::filesystem;
  TempDir dir;
  const std::string to_device = dir.path("null.tbin");
  fs::create_symlink("/dev/null", to_device);
  CHECK(run_tpusim("asm isa/examples/teach-4x4.tasm -o '" + to_device + "'").exit_code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(to_device)));
  CHECK(fs::is_character_file(fs::status("/dev/null")));
  CHECK_FALSE(fs::exists(to_device + ".partial"));

  // A link to a file: the file gets the whole result, the link stays a link.
  const std::string file = dir.write("real.tbin", "old");
  const std::string to_file = dir.path("link.tbin");
  fs::create_symlink(file, to_file);
  REQUIRE(run_tpusim("asm isa/examples/teach-4x4.tasm -o '" + to_file + "'").exit_code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(to_file)));
  const std::string direct = dir.path("direct.tbin");
  REQUIRE(run_tpusim("asm isa/examples/teach-4x4.tasm -o '" + direct + "'").exit_code == 0);
  CHECK(slurp(file) == slurp(direct));

  // The report directory's files too: a report.json that links to /dev/null stays a link.
  const std::string out = dir.path("run");
  fs::create_directories(out);
  fs::create_symlink("/dev/null", out + "/report.json");
  REQUIRE(run_tpusim("run -c teach-4x4 -w workloads/teach/matmul-4x4.yaml -q -o '" + out + "'")
              .exit_code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(out + "/report.json")));
  CHECK(fs::file_size(out + "/ops.csv") > 0);
}

TEST_CASE("cli: a failed run leaves no earlier run's waveform, array page or dumps",
          "[cli][show]") {
  // As with the reports: files of an earlier run under the names this run writes would pass for
  // its own. They go first thing, with a temporary a killed run left behind.
  TempDir dir;
  const std::string vcd = dir.path("w.vcd"), page = dir.path("p.html"), dump = dir.path("dump");
  const std::string watch =
      " --vcd '" + vcd + "' --show --show-format html --show-out '" + page + "'";
  const std::string teach = "run -q -c teach-4x4 -w workloads/teach/matmul-4x4.yaml";
  REQUIRE(run_tpusim(teach + watch).exit_code == 0);
  REQUIRE(std::filesystem::exists(vcd));
  REQUIRE(std::filesystem::exists(page));
  dir.write("w.vcd.partial", "a run killed while writing");
  // Refused with the chip (an integer-only cycle-level array cannot take bf16 operands).
  CHECK(run_tpusim(teach + watch + " --set 'core.mxu.precisions={bf16: 1}'").exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(vcd));
  CHECK_FALSE(std::filesystem::exists(page));
  CHECK_FALSE(std::filesystem::exists(vcd + ".partial"));
  // Dumps: refused after the data is made (a graph of int8 on a bf16-only array is timing only).
  const std::string gemmini =
      "run -q -c gemmini-16x16 -w workloads/teach/matmul-4x4.yaml --functional --dump '" + dump +
      "'";
  REQUIRE(run_tpusim(gemmini).exit_code == 0);
  for (const char* name : {"/a.npy", "/b.npy", "/c.npy"})
    REQUIRE(std::filesystem::exists(dump + name));
  dir.write("dump/keep.npy", "not this run's");
  CHECK(run_tpusim(gemmini + " --set 'core.mxu.precisions={bf16: 1}'").exit_code == 2);
  for (const char* name : {"/a.npy", "/b.npy", "/c.npy"})
    CHECK_FALSE(std::filesystem::exists(dump + name));
  CHECK(std::filesystem::exists(dump + "/keep.npy"));  // not a name this run writes
}

TEST_CASE("cli: a waveform, array page or dumped tensor cut short is not left behind",
          "[cli][show]") {
  // A file-size limit of 1 KiB (SIGXFSZ ignored, so writes fail instead) cuts both files short.
  TempDir dir;
  const std::string vcd = dir.path("w.vcd"), page = dir.path("p.html");
  for (const std::string& flags :
       {"--vcd '" + vcd + "'", "--show --show-format html --show-out '" + page + "'"}) {
    const std::string command = "cd '" TPUSIM_SOURCE_DIR
                                "' && bash -c \"trap '' XFSZ; ulimit -f 1; "
                                "timeout 60 '" TPUSIM_EXE
                                "' run -q -c teach-4x4 -w workloads/teach/matmul-4x4.yaml " +
                                flags + "\" > /dev/null 2> '" + dir.path("err") + "'";
    const int status = std::system(command.c_str());
    INFO(flags << ": " << slurp(dir.path("err")));
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK_THAT(slurp(dir.path("err")), Catch::Contains("cannot write file"));
  }
  CHECK_FALSE(std::filesystem::exists(vcd));
  CHECK_FALSE(std::filesystem::exists(page));
  CHECK_FALSE(std::filesystem::exists(vcd + ".partial"));
  CHECK_FALSE(std::filesystem::exists(page + ".partial"));
  // Dumped tensors likewise.
  const std::string graph =
      dir.write("mm32.yaml",
                "name: mm32\ndtype: int8\ntensors:\n"
                "  - {name: a, shape: [32, 32], role: input}\n"
                "  - {name: b, shape: [32, 32], role: weight}\n"
                "  - {name: c, shape: [32, 32], dtype: int32, role: output}\n"
                "ops:\n  - {name: gemm, op: matmul, inputs: [a, b], output: c}\n");
  const std::string dump = dir.path("dump");
  const std::string dump_command =
      "bash -c \"trap '' XFSZ; ulimit -f 1; timeout 60 '" TPUSIM_EXE "' run -q -c teach-4x4 -w '" +
      graph + "' --functional --dump '" + dump + "'\" > /dev/null 2> '" + dir.path("err") + "'";
  const int dump_status = std::system(dump_command.c_str());
  INFO(slurp(dir.path("err")));
  REQUIRE(WIFEXITED(dump_status));
  CHECK(WEXITSTATUS(dump_status) == 2);
  CHECK_THAT(slurp(dir.path("err")), Catch::Contains(".npy: cannot write the file"));
  // Every tensor's file exceeds the limit (a and b are 1 KiB of data after their headers), so
  // none can be whole: nothing may be left, not even a temporary.
  for (const auto& entry : std::filesystem::directory_iterator(dump)) FAIL_CHECK(entry.path());
  // Without the limit both are written whole.
  REQUIRE(run_tpusim("run -q -c teach-4x4 -w workloads/teach/matmul-4x4.yaml --vcd '" + vcd + "'")
              .exit_code == 0);
  CHECK(std::filesystem::file_size(vcd) > 1024);
}
