// `tpusim exec --show / --vcd` on the teaching example: the events --show prints match the hand
// derivation in docs/teaching.md (whose table is read here, and whose numbers are re-derived
// here from the formulas); the waveform has a scope per PE; the HTML page is self-contained and
// its controls step through every cycle; misuse is an input error.

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/sim/test_support.h"

using tpusim::test::TempDir;

namespace {

const std::string kSource = TPUSIM_SOURCE_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs tpusim with `args`; returns the exit code and leaves stdout, stderr in the directory.
int run(const TempDir& dir, const std::string& args) {
  const std::string command = "cd '" + kSource + "' && timeout 60 '" TPUSIM_EXE "' " + args +
                              " > '" + dir.path("out") + "' 2> '" + dir.path("err") + "'";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const std::string kTeach = "exec isa/examples/teach-4x4.tasm -c configs/chips/teach-4x4.yaml ";

// Runs `program` functionally on teach-4x4 with `data` at hbm:0 and `flags` added; returns the
// summary and the `dump_bytes` from hbm:4096.
struct Functional {
  std::string summary, dump;
};
Functional run_functional(const TempDir& dir, const std::string& program, const std::string& data,
                          std::uint64_t dump_bytes, const std::string& flags) {
  dir.write("p.tasm", program);
  dir.write("data.bin", data);
  const std::string out = dir.path("y.bin");
  std::filesystem::remove(out);
  REQUIRE(run(dir, "exec '" + dir.path("p.tasm") +
                       "' -c configs/chips/teach-4x4.yaml --functional --load hbm:0='" +
                       dir.path("data.bin") + "' --dump hbm:4096:" + std::to_string(dump_bytes) +
                       "='" + out + "' " + flags) == 0);
  return {slurp(dir.path("out")), slurp(out)};
}

// "  cycle 57: mxu.mm #1 m=4 k=4 n=4: Y row 0 ready" -> {"Y row 0 ready": 57}
std::map<std::string, std::uint64_t> events(const std::string& show) {
  std::map<std::string, std::uint64_t> out;
  const std::regex line(R"(^  cycle (\d+): mxu\.(lw|mm)[^:]*: (.*)$)");
  std::istringstream in(show);
  std::string l;
  for (std::smatch m; std::getline(in, l);)
    if (std::regex_match(l, m, line)) out.emplace(m[3], std::stoull(m[1]));
  return out;
}

// The doc's table: event -> offset from A, for column 1 (ws) or 2 (os).
std::map<std::string, std::uint64_t> doc_table(int column) {
  std::map<std::string, std::uint64_t> out;
  const std::regex row(R"(^\| ([^|]+?) \| A \+ (\d+) \| A \+ (\d+) \|$)");
  std::istringstream in(slurp(kSource + "/docs/teaching.md"));
  std::string l;
  for (std::smatch m; std::getline(in, l);)
    if (std::regex_match(l, m, row)) out.emplace(m[1], std::stoull(m[column + 1]));
  return out;
}

}  // namespace

TEST_CASE("show: the cycles --show prints are the ones derived by hand in docs/teaching.md",
          "[show]") {
  const std::uint64_t R = 4, M = 4, K = 4, N = 4, wb = 1;
  // The derivation of docs/teaching.md, from the models/mxu/README.md formulas.
  std::map<std::string, std::uint64_t> ws = {{"load starts", 0},
                                             {"weights ready", R},
                                             {"starts", R},
                                             {"array takes the next instruction's input", R + M}};
  std::map<std::string, std::uint64_t> os = {
      {"load starts", 0},
      {"weights ready", K},
      {"starts", K},
      {"array takes the next instruction's input", K + (K + M + N - 2)}};
  for (std::uint64_t i = 0; i < M; ++i) {
    ws["Y row " + std::to_string(i) + " ready"] = R + i + R + N - 1 + wb;
    os["Y row " + std::to_string(i) + " ready"] = K + (K + M + N - 2) + i + 1 + wb;
  }
  ws["done"] = R + M + R + N - 2 + wb;
  os["done"] = K + (K + M + N - 2) + M + wb;

  for (const auto& [dataflow, derived] : {std::pair{"ws", ws}, std::pair{"os", os}}) {
    CAPTURE(dataflow);
    const auto doc = doc_table(std::string(dataflow) == "ws" ? 1 : 2);
    CHECK(doc == derived);
    TempDir dir;
    REQUIRE(run(dir, kTeach + "--show --set core.mxu.dataflow=" + dataflow) == 0);
    const auto shown = events(slurp(dir.path("out")));
    REQUIRE(shown.count("load starts") == 1);
    const std::uint64_t a = shown.at("load starts");
    std::map<std::string, std::uint64_t> relative;
    for (const auto& [event, cycle] : shown) relative[event] = cycle - a;
    CHECK(relative == doc);
    // The doc also quotes A itself, and the grids at A + 7 (ws) and A + 13 (os) by cycle.
    const std::string text = slurp(kSource + "/docs/teaching.md");
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex(R"(before it \((\d+) on)")));
    CHECK(std::stoull(m[1]) == a);
    const std::uint64_t grid = a + (std::string(dataflow) == "ws" ? 7 : 13);
    CHECK(text.find("(" + std::to_string(grid) + " in the run)") != std::string::npos);
    CHECK(text.find("\ncycle " + std::to_string(grid) + "\n") != std::string::npos);
  }
}

TEST_CASE("show: the text view has a legend and a grid row per array row", "[show]") {
  TempDir dir;
  REQUIRE(run(dir, kTeach + "--show") == 0);
  const std::string out = slurp(dir.path("out"));
  CHECK(out.find("legend:") != std::string::npos);
  // One grid per cycle the array works, from the load at A to the last output's cycle,
  // A + 2R + M + N - 3 (the derivation above: done at A + 2R + M + N - 2 + wb), and no more.
  const std::uint64_t R = 4, M = 4, N = 4;
  const auto shown = events(out);
  REQUIRE(shown.count("load starts") == 1);
  const std::uint64_t a = shown.at("load starts"), last = a + 2 * R + M + N - 3;
  for (std::uint64_t c = a; c <= last; ++c) {
    CAPTURE(c);
    CHECK(out.find("\ncycle " + std::to_string(c) + "\n") != std::string::npos);
  }
  CHECK(out.find("\ncycle " + std::to_string(last + 1) + "\n") == std::string::npos);
  REQUIRE(a > 0);
  CHECK(out.find("\ncycle " + std::to_string(a - 1) + "\n") == std::string::npos);
  for (const char* row : {"\n  r0 ", "\n  r1 ", "\n  r2 ", "\n  r3 "})
    CHECK(out.find(row) != std::string::npos);
}

TEST_CASE("show: --vcd writes one scope per PE of the 4x4 array", "[show][vcd]") {
  TempDir dir;
  REQUIRE(run(dir, kTeach + "--vcd '" + dir.path("a.vcd") + "'") == 0);
  const std::string vcd = slurp(dir.path("a.vcd"));
  CHECK(vcd.rfind("$version tpusim $end\n$timescale 1 ps $end\n", 0) == 0);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      CHECK(vcd.find("$scope module pe_" + std::to_string(r) + "_" + std::to_string(c) + " $end") !=
            std::string::npos);
  CHECK(vcd.find("$scope module pe_4_0") == std::string::npos);
  // 100 MHz: one cycle is 10000 ps, so the load (cycle A) appears at a multiple of it.
  CHECK(vcd.find("\n#10000\n") != std::string::npos);
}

TEST_CASE("show: the HTML page is self-contained and its controls reach every cycle",
          "[show][html]") {
  TempDir dir;
  REQUIRE(run(dir, kTeach + "--show --show-format html --show-out '" + dir.path("p.html") + "'") ==
          0);
  const std::string page = slurp(dir.path("p.html"));
  CHECK(page.find("<!DOCTYPE html>") == 0);
  CHECK(page.find("type=\"range\"") != std::string::npos);
  CHECK(page.find(" src=") == std::string::npos);  // no external scripts or images
  CHECK(page.find("href=") == std::string::npos);
  CHECK(page.find("http") == std::string::npos);
  // The same command from another folder writes the same page (the title names the workload
  // as given, not as found).
  const auto page_from = [&](const std::string& folder, const std::string& page) {
    const std::string command = "cd '" + folder +
                                "' && '" TPUSIM_EXE
                                "' run -c teach-4x4 -w teach/matmul-4x4 --show --show-format html "
                                "--show-out '" +
                                dir.path(page) + "' > /dev/null 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
  };
  page_from(kSource, "s.html");
  page_from(dir.path(""), "t.html");
  CHECK(slurp(dir.path("s.html")) == slurp(dir.path("t.html")));
  if (std::system("command -v node > /dev/null 2>&1") != 0) {
    // CTest reports the test as skipped on this line (SKIP_REGULAR_EXPRESSION), not passed.
    std::cout << "node not found: the page's script is not run\n";
    return;
  }
  // Run the page's own script against a minimal DOM; press "next" until the end, then use
  // the slider and "first"; report what the label showed.
  dir.write("step.js", R"JS(
const fs = require("fs");
const html = fs.readFileSync(process.argv[2], "utf8");
const script = html.slice(html.indexOf("<script>") + 8, html.indexOf("</script>"));
const els = {};
function el() { return { textContent: "", value: 0, max: 0, className: "", children: [],
  set innerHTML(v) { this.children = []; }, appendChild(c) { this.children.push(c); } }; }
global.document = { getElementById: (id) => (els[id] = els[id] || el()), createElement: el };
global.setInterval = () => 1; global.clearInterval = () => {};
eval(script + "\n;globalThis.D = D;");  // const declarations stay inside eval
const total = D.frames.length;
const seen = [els.label.textContent];
for (let i = 1; i < total; i++) { els.next.onclick(); seen.push(els.label.textContent); }
els.next.onclick();  // past the end: stays on the last cycle
const stays = els.label.textContent === seen[total - 1];
for (let i = 0; i < total; i++) {
  const f = D.frames[i];
  const want = "cycle " + f.t + " (" + (i + 1) + " of " + total + ")" +
      (f.last > f.t ? ", idle to cycle " + f.last : "");
  if (seen[i] !== want) { console.log("bad " + i + ": " + seen[i] + " != " + want); process.exit(1); }
}
els.slider.oninput({ target: { value: String(Math.floor(total / 2)) } });
const mid = els.label.textContent.startsWith("cycle " + D.frames[Math.floor(total / 2)].t + " ");
els.first.onclick();
const first = els.label.textContent.startsWith("cycle " + D.frames[0].t + " ");
const rows = els.grid.children.length;
console.log("ok " + total + " " + stays + " " + mid + " " + first + " " + rows);
)JS");
  const std::string command = "node '" + dir.path("step.js") + "' '" + dir.path("p.html") +
                              "' > '" + dir.path("node.out") + "' 2>&1";
  CHECK(std::system(command.c_str()) == 0);
  const std::string result = slurp(dir.path("node.out"));
  CAPTURE(result);
  CHECK(std::regex_search(result, std::regex(R"(^ok \d+ true true true 5\n$)")));
}

TEST_CASE("show: in a whole run the cycle-level MXU gives the fast model's cycles and values",
          "[show][cycle]") {
  // Loads that replace a tile in use, ragged shapes, an accumulating matmul and a one-row
  // matmul, through the chip (semaphores, DMA, vector-memory port) in every dataflow.
  const std::string program = R"(.op 0 matmul "gemm"
.core 0
load dma0 dst=vmem:0 src=hbm:0 elem=256
sem.signal dma0 s0
sem.wait mxu0 s0
mxu.lw mxu0 src=vmem:0 k=4 n=3 dtype=int8
mxu.mm mxu0 src=vmem:64 dst=accmem:0 m=9 k=4 n=3 dtype=int8
mxu.lw mxu0 src=vmem:16 k=2 n=4 dtype=int8
mxu.mm mxu0 src=vmem:128 dst=accmem:256 m=3 k=2 n=4 dtype=int8
mxu.mm mxu0 src=vmem:128 dst=accmem:256 m=5 k=2 n=4 dtype=int8 accumulate
mxu.lw mxu0 src=vmem:32 k=4 n=4 dtype=int8
mxu.mm mxu0 src=vmem:64 dst=accmem:512 m=1 k=4 n=4 dtype=int8
sem.signal mxu0 s1
sem.wait dma0 s1
store dma0 dst=hbm:4096 src=accmem:0 elem=768
halt
)";
  TempDir dir;
  std::string data;
  for (int i = 0; i < 256; ++i) data += static_cast<char>((i * 73 + 11) % 256);
  for (const char* dataflow : {"ws", "is", "os"})
    for (const char* db : {"true", "false"}) {
      CAPTURE(dataflow, db);
      Functional runs[2];
      for (int cycle = 0; cycle < 2; ++cycle)
        runs[cycle] =
            run_functional(dir, program, data, 768,
                           std::string("--set core.mxu.model=") + (cycle ? "cycle" : "fast") +
                               " --set core.mxu.dataflow=" + dataflow +
                               " --set core.mxu.weight_double_buffer=" + db);
      CHECK(runs[0].summary == runs[1].summary);  // cycles, stats, energy: everything
      CHECK(runs[0].dump == runs[1].dump);
      CHECK(runs[0].dump.size() == 768);
    }
}

TEST_CASE("show: misuse is an input error", "[show]") {
  TempDir dir;
  CHECK(run(dir, kTeach + "--show --set core.mxu.model=fast") == 2);
  CHECK(slurp(dir.path("err")) ==
        "error: --vcd and --show watch the cycle-level MXU; this chip has core.mxu.model: fast "
        "(add --set core.mxu.model=cycle)\n");
  // A 128x128 array (16,384 PEs) is above the cycle model's limit: that hint would fail.
  CHECK(run(dir, "exec isa/examples/teach-4x4.tasm -c tpu-v4i --show ") == 2);
  CHECK(slurp(dir.path("err")) ==
        "error: --vcd and --show watch the cycle-level MXU; this chip has core.mxu.model: fast "
        "(its 128x128 array is above the cycle model's 4096 PEs: watch a smaller chip, e.g. -c "
        "teach-4x4)\n");
  CHECK(run(dir, kTeach + "--show --show-format html") == 2);
  CHECK(slurp(dir.path("err")) ==
        "error: --show-format html needs --show-out FILE (the page is one file)\n");
  CHECK(run(dir, kTeach + "--show-format html --show-out x.html") == 2);
  CHECK(slurp(dir.path("err")) == "error: --show-format and --show-out go with --show\n");
  CHECK(run(dir, kTeach + "--vcd /nonexistent-dir/a.vcd") == 2);
  CHECK(slurp(dir.path("err")) == "error: /nonexistent-dir/a.vcd: cannot write file\n");
}

TEST_CASE("show: the teaching program stores relu(X W), computed here from its operand files",
          "[show]") {
  const std::string x = slurp(kSource + "/isa/examples/teach-4x4.x.bin");
  const std::string w = slurp(kSource + "/isa/examples/teach-4x4.w.bin");
  REQUIRE(x.size() == 16);
  REQUIRE(w.size() == 16);
  TempDir dir;
  REQUIRE(run(dir, kTeach +
                       "--functional --load hbm:0x0=isa/examples/teach-4x4.x.bin "
                       "--load hbm:0x10=isa/examples/teach-4x4.w.bin --dump hbm:0x20:16='" +
                       dir.path("y.bin") + "'") == 0);
  const std::string y = slurp(dir.path("y.bin"));
  REQUIRE(y.size() == 16);
  bool any_nonzero = false;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      int sum = 0;
      for (int k = 0; k < 4; ++k) sum += std::int8_t(x[4 * i + k]) * std::int8_t(w[4 * k + j]);
      const int expected = std::max(0, std::min(127, sum));  // scale 1, saturate, relu
      CHECK(int(std::int8_t(y[4 * i + j])) == expected);
      any_nonzero = any_nonzero || expected != 0;
    }
  CHECK(any_nonzero);
}

TEST_CASE("show: an idle stationary cell holds the operand its legend names", "[show]") {
  const std::string x = slurp(kSource + "/isa/examples/teach-4x4.x.bin");
  const std::string w = slurp(kSource + "/isa/examples/teach-4x4.w.bin");
  REQUIRE(x.size() == 16);
  REQUIRE(w.size() == 16);
  // Row-major 4x4 int8 operands: what PE(r,c) keeps in each dataflow.
  const auto held_ws = [&](int r, int c) { return int(std::int8_t(w[4 * r + c])); };
  const auto held_is = [&](int r, int c) { return int(std::int8_t(x[4 * c + r])); };
  for (const char* dataflow : {"ws", "is"}) {
    CAPTURE(dataflow);
    const bool ws = std::string(dataflow) == "ws";
    TempDir dir;
    REQUIRE(run(dir, kTeach + "--show --set core.mxu.dataflow=" + dataflow +
                         " --functional --load hbm:0x0=isa/examples/teach-4x4.x.bin"
                         " --load hbm:0x10=isa/examples/teach-4x4.w.bin") == 0);
    const std::string out = slurp(dir.path("out"));
    CHECK(out.find(ws ? "(w)    idle, holding its weight W[r][c]"
                      : "(w)    idle, holding its input X[c][r]") != std::string::npos);
    CHECK(out.find(ws ? "multiplies input a (an element of X) by its weight w = W[r][c]"
                      : "multiplies weight a (an element of W) by its input w = X[c][r]") !=
          std::string::npos);
    // Every idle cell shows the operand the legend names, from the PE's first product on (ahead
    // of the wavefront a PE's active plane is still the previous tile's).
    std::istringstream in(out);
    std::string line;
    bool computing[4][4] = {};
    int idle_cells = 0, products = 0;
    const std::regex row_re(R"(^  r(\d) +(.*)$)"), cell_re(R"(\((-?\d+)\)|(-?\d+)\*(-?\d+)=)");
    for (std::smatch m; std::getline(in, line);) {
      if (!std::regex_match(line, m, row_re)) continue;
      const int r = std::stoi(m[1]);
      const std::string cells = m[2];
      int c = 0;
      for (std::sregex_iterator it(cells.begin(), cells.end(), cell_re), end; it != end;
           ++it, ++c) {
        REQUIRE((r < 4 && c < 4));
        const int held = ws ? held_ws(r, c) : held_is(r, c);
        if ((*it)[1].matched) {
          if (!computing[r][c]) continue;
          ++idle_cells;
          CHECK(std::stoi((*it)[1]) == held);
        } else {
          computing[r][c] = true;
          ++products;
          CHECK(std::stoi((*it)[3]) == held);  // a*w: the held operand is w
        }
      }
    }
    CHECK(products == 64);  // M x K x N multiplications, one per busy cell
    CHECK(idle_cells > 0);
  }
}

TEST_CASE("show: --watch-mxu picks the array, and an idle watched array is named with the busy one",
          "[show]") {
  // The teaching program moved to mxu1 of a two-MXU core: the work is the same, on another array.
  TempDir dir;
  const std::string program = std::regex_replace(slurp(kSource + "/isa/examples/teach-4x4.tasm"),
                                                 std::regex("\\bmxu0\\b"), "mxu1");
  REQUIRE(program.find(" mxu1 ") != std::string::npos);
  const std::string moved = "exec '" + dir.write("mxu1.tasm", program) +
                            "' -c configs/chips/teach-4x4.yaml --set core.mxu.count=2 ";
  TempDir original;
  REQUIRE(run(original, kTeach + "--show") == 0);
  const auto expected = events(slurp(original.path("out")));
  REQUIRE(expected.count("load starts") == 1);

  // Watching the default, idle mxu0: idle for the whole run, and the warning names the array
  // that worked. The waveform lasts the run too (10 ns a cycle at 100 MHz).
  REQUIRE(run(dir, moved + "--show --vcd '" + dir.path("idle.vcd") + "'") == 0);
  CHECK(events(slurp(dir.path("out"))).empty());
  std::smatch cycles;
  const std::string idle_out = slurp(dir.path("out"));
  REQUIRE(std::regex_search(idle_out, cycles, std::regex(R"(\n  cycles +(\d+) )")));
  const std::uint64_t run_cycles = std::stoull(cycles[1]);
  CHECK(idle_out.find("cycles 0.." + std::to_string(run_cycles - 1) + ": array idle\n") !=
        std::string::npos);
  CHECK(slurp(dir.path("idle.vcd")).find("\n#" + std::to_string(run_cycles * 10000) + "\n") !=
        std::string::npos);
  CHECK(slurp(dir.path("err")) ==
        "warning: chip.core0.mxu0 (watched by --vcd/--show) ran no matmul; chip.core0.mxu1 did: "
        "add --watch-mxu chip.core0.mxu1\n");
  // Watching mxu1 shows the events of the original run, cycle for cycle, and warns of nothing.
  REQUIRE(run(dir, moved + "--show --watch-mxu chip.core0.mxu1") == 0);
  CHECK(events(slurp(dir.path("out"))) == expected);
  CHECK(slurp(dir.path("out")).find("cycle by cycle (chip.core0.mxu1)\n") != std::string::npos);
  CHECK(slurp(dir.path("err")).empty());
  REQUIRE(run(dir, moved + "--vcd '" + dir.path("a.vcd") + "' --watch-mxu core0.mxu1") == 0);
  CHECK(slurp(dir.path("a.vcd")).find("$scope module pe_3_3 $end") != std::string::npos);

  // Misuse: an MXU the chip lacks, a malformed name, the option with nothing to watch.
  CHECK(run(dir, moved + "--show --watch-mxu core0.mxu2") == 2);
  CHECK(slurp(dir.path("err")) ==
        "error: --watch-mxu: \"core0.mxu2\" is not an MXU of teach-4x4: it has chip.core0.mxu0 "
        "to chip.core0.mxu1\n");
  CHECK(run(dir, moved + "--show --watch-mxu core01.mxu1") == 2);
  CHECK(slurp(dir.path("err")).rfind("error: --watch-mxu: \"core01.mxu1\" is not an MXU", 0) == 0);
  CHECK(run(dir, moved + "--watch-mxu core0.mxu1") == 2);
  CHECK(slurp(dir.path("err")) == "error: --watch-mxu goes with --vcd or --show\n");
  CHECK(run(dir, moved + "--show --watch-mxu ''") == 2);
  CHECK_THAT(slurp(dir.path("err")),
             Catch::Contains("--watch-mxu: expected an MXU such as chip.core0.mxu1, got ''"));
}

TEST_CASE("show: the text view reads in time order, instructions numbered", "[show]") {
  for (const std::string dataflow : {"ws", "os", "is"}) {
    INFO(dataflow);
    TempDir dir;
    REQUIRE(run(dir, kTeach + "--show --set core.mxu.dataflow=" + dataflow) == 0);
    // Every line that names a time starts no earlier than the one before: a grid "cycle T", an
    // event "  cycle T: ...", or an idle span "cycles A..B" with its events after it.
    const std::regex timed(R"(^(?:  )?cycles? (\d+)(?:\.\.\d+)?(?::.*)?$)");
    std::istringstream in(slurp(dir.path("out")));
    std::uint64_t last = 0;
    int lines = 0;
    for (std::string l; std::getline(in, l);) {
      std::smatch m;
      if (!std::regex_match(l, m, timed)) continue;
      const std::uint64_t t = std::stoull(m[1]);
      CHECK(t >= last);
      last = t;
      ++lines;
    }
    CHECK(lines > 20);
    // The one load and one matmul of the program, numbered.
    CHECK(slurp(dir.path("out")).find(": mxu.lw #1 k=4 n=4: load starts\n") != std::string::npos);
    CHECK(slurp(dir.path("out")).find(": mxu.mm #1 m=4 k=4 n=4: done\n") != std::string::npos);
  }
}

TEST_CASE("show: a long wait between two matmuls is one idle frame, however long", "[show][html]") {
  // The second weights are loaded only after the first matmul: the array waits the memory's
  // latency in between. A frame per idle cycle made the page (and the recording) grow with the
  // wait: 2,048 frames at 20 us, 58 at 100 ns.
  TempDir dir;
  dir.write("gap.tasm", R"(.op 0 matmul "fc"
.core 0
load dma0 dst=vmem:0 src=hbm:0 elem=32
sem.signal dma0 s0
sem.wait mxu0 s0
mxu.lw mxu0 src=vmem:16 k=4 n=4 dtype=int8
mxu.mm mxu0 src=vmem:0 dst=accmem:0 m=4 k=4 n=4 dtype=int8
sem.signal mxu0 s1
sem.wait dma0 s1
load dma0 dst=vmem:32 src=hbm:32 elem=16
sem.signal dma0 s2
sem.wait mxu0 s2
mxu.lw mxu0 src=vmem:32 k=4 n=4 dtype=int8
mxu.mm mxu0 src=vmem:0 dst=accmem:64 m=4 k=4 n=4 dtype=int8
halt
)");
  const auto frames = [&](const std::string& latency) {
    const std::string page = dir.path("p.html");
    REQUIRE(run(dir, "exec '" + dir.path("gap.tasm") +
                         "' -c configs/chips/teach-4x4.yaml --set 'memory.latency=" + latency +
                         "' --show --show-format html --show-out '" + page + "'") == 0);
    const std::string html = slurp(page);
    std::size_t n = 0;
    for (std::size_t at = html.find("\"last\":"); at != std::string::npos;
         at = html.find("\"last\":", at + 1))
      ++n;
    return n;
  };
  const std::size_t short_wait = frames("100 ns"), long_wait = frames("20 us");
  CHECK(short_wait > 0);
  CHECK(long_wait <= short_wait + 1);  // at most the wait's own frame more
  // The text view names the whole wait: 20 us at 100 MHz is 2,000 cycles and more.
  REQUIRE(run(dir, "exec '" + dir.path("gap.tasm") +
                       "' -c configs/chips/teach-4x4.yaml --set 'memory.latency=20 us' --show") ==
          0);
  const std::regex span(R"(cycles (\d+)\.\.(\d+): array idle)");
  const std::string text = slurp(dir.path("out"));
  std::uint64_t longest = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), span); it != std::sregex_iterator();
       ++it)
    longest = std::max<std::uint64_t>(longest, std::stoull((*it)[2]) - std::stoull((*it)[1]) + 1);
  CHECK(longest >= 2000);
}

TEST_CASE("show: a cycle-level array idle for long gives the cycles stepping every cycle gives",
          "[show][cycle]") {
  // A slow memory (1 MB/s: the second load's 256 B take 25,600 cycles at 100 MHz) leaves the
  // array idle between its matmuls; a settled array skips such a wait instead of computing it
  // cycle by cycle. With --vcd every cycle is computed (the waveform needs each), so the three
  // runs (fast model, cycle-level, cycle-level stepping) must agree on cycles and values.
  const std::string program = R"(.op 0 matmul "gemm"
.core 0
load dma0 dst=vmem:0 src=hbm:0 elem=256
sem.signal dma0 s0
sem.wait mxu0 s0
mxu.lw mxu0 src=vmem:0 k=4 n=4 dtype=int8
mxu.mm mxu0 src=vmem:64 dst=accmem:0 m=4 k=4 n=4 dtype=int8
sem.signal mxu0 s1
sem.wait dma0 s1
load dma0 dst=vmem:256 src=hbm:256 elem=256
sem.signal dma0 s2
sem.wait mxu0 s2
mxu.mm mxu0 src=vmem:256 dst=accmem:256 m=4 k=4 n=4 dtype=int8
sem.signal mxu0 s3
sem.wait dma0 s3
store dma0 dst=hbm:4096 src=accmem:0 elem=512
halt
)";
  TempDir dir;
  std::string data;
  for (int i = 0; i < 512; ++i) data += static_cast<char>((i * 37 + 5) % 256);
  const std::regex cycles_line(R"(\n  cycles +(\d+) )");
  for (const char* dataflow : {"ws", "is", "os"}) {
    CAPTURE(dataflow);
    Functional runs[3];
    std::uint64_t cycles[3] = {0, 0, 0};
    for (int variant = 0; variant < 3; ++variant) {
      runs[variant] = run_functional(
          dir, program, data, 512,
          std::string("--set memory.bandwidth=1MB/s --set core.mxu.dataflow=") + dataflow +
              " --set core.mxu.model=" + (variant == 0 ? "fast" : "cycle") +
              (variant == 2 ? " --vcd '" + dir.path("w.vcd") + "'" : ""));
      std::smatch m;
      REQUIRE(std::regex_search(runs[variant].summary, m, cycles_line));
      cycles[variant] = std::stoull(m[1]);
    }
    CHECK(cycles[0] > 25600);  // the wait is there
    CHECK(runs[1].summary == runs[0].summary);
    CHECK(cycles[2] == cycles[1]);
    CHECK(runs[1].dump == runs[0].dump);
    CHECK(runs[2].dump == runs[0].dump);
    CHECK(runs[0].dump.size() == 512);
  }
}
