// The --show HTML page in a real browser (Debian's chromium, headless): a script appended to the
// page presses its controls like a student would and writes what the page displayed into the
// DOM, which chromium dumps. Every cycle is reached in order, and every PE's text in every cycle
// is the one derived here from the inputs the test chose and the weight-stationary schedule of
// docs/teaching.md. test_show.cpp runs the page's script in node against a fake DOM; this test
// runs it against the real one.

#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/sim/test_support.h"

using tpusim::test::slurp;
using tpusim::test::TempDir;

namespace {

constexpr int R = 4, C = 4;         // teach-4x4's array
constexpr int M = 4, K = 4, N = 4;  // matmul-4x4: M x K inputs, K x N weights

// The inputs, small enough to read in the page: X[i][k] = 4i + k + 1, W[k][c] in -2..2.
int x_at(int i, int k) { return 4 * i + k + 1; }
int w_at(int k, int c) { return (k + 2 * c) % 5 - 2; }

// An int8 matrix as .npy (format 1.0: magic, header length, a Python dict padded with spaces to a
// multiple of 64 bytes and ended by a newline, then the bytes in C order).
std::string npy_int8(int rows, int cols, int (*at)(int, int)) {
  std::string header = "{'descr': '|i1', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += std::string("\x01\x00", 2);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out += static_cast<char>(static_cast<std::int8_t>(at(r, c)));
  return out;
}

// Records each control press: step | label | slider position | grid rows (";") of cells (",") |
// event list items (";").
const char* kDriver = R"JS(
<script>
(function () {
  const $ = (id) => document.getElementById(id);
  const grid = () => Array.from($("grid").rows).slice(1).map(
      (tr) => Array.from(tr.cells).slice(1).map((td) => td.textContent).join(",")).join(";");
  const events = () => Array.from($("events").children).map((li) => li.textContent).join(";");
  const lines = [];
  const record = (step) => lines.push([step, $("label").textContent, $("slider").value, grid(),
                                       events()].join("|"));
  record("start");
  for (let i = 0; i < 1000; i++) {
    const before = $("label").textContent;
    $("next").click();
    if ($("label").textContent === before) break;  // pressed past the last cycle
    record("next");
  }
  record("end");
  const slider = $("slider");
  slider.value = String(Math.floor(Number(slider.max) / 2));
  slider.dispatchEvent(new Event("input"));
  record("slider");
  $("first").click();
  record("first");
  $("last").click();
  record("last");
  document.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowLeft"}));
  record("left");
  const pre = document.createElement("pre");
  pre.id = "record";
  pre.textContent = lines.join("\n");
  document.body.appendChild(pre);
})();
</script>
)JS";

struct Shown {
  std::string step, label, grid, events;
  int slider = -1;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

std::vector<Shown> parse_record(const std::string& dom) {
  const std::string open = "<pre id=\"record\">";
  const std::size_t at = dom.find(open), end = dom.find("</pre>", at);
  std::vector<Shown> out;
  if (at == std::string::npos || end == std::string::npos) return out;
  for (const std::string& line :
       split(dom.substr(at + open.size(), end - at - open.size()), '\n')) {
    const auto f = split(line, '|');
    if (f.size() == 5) out.push_back({f[0], f[1], f[3], f[4], std::stoi(f[2])});
  }
  return out;
}

// What PE(r,c) shows at cycle t of a weight-stationary tile whose first X row enters at cycle
// `start` (docs/teaching.md): X row i reaches PE(r,c) at start + i + r + c, where it multiplies
// X[i][r] by W[r][c] and latches sum over k <= r of X[i][k] W[k][c]. Idle, a PE shows the weight
// of its active plane: W[r][c] once the tile's first row has passed it, 0 before.
std::string expected_cell(std::int64_t t, std::int64_t start, int r, int c) {
  const std::int64_t i = t - start - r - c;
  if (i >= 0 && i < M) {
    int sum = 0;
    for (int k = 0; k <= r; ++k) sum += x_at(int(i), k) * w_at(k, c);
    return std::to_string(x_at(int(i), r)) + "*" + std::to_string(w_at(r, c)) + "=" +
           std::to_string(sum);
  }
  return "(" + std::to_string(i >= M ? w_at(r, c) : 0) + ")";
}

std::string expected_grid(std::int64_t t, std::int64_t start) {
  std::string out;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      out += expected_cell(t, start, r, c) + (c + 1 < C ? "," : r + 1 < R ? ";" : "");
  return out;
}

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string chromium(const TempDir& dir) {
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --user-data-dir='" + dir.path("profile") + "'";
  return "timeout 120 chromium" + flags;
}

}  // namespace

TEST_CASE("browser: the --show page's controls step through every cycle in chromium",
          "[show][html][browser]") {
  if (shell("command -v chromium > /dev/null 2>&1") != 0) {
    // CTest's SKIP_REGULAR_EXPRESSION matches this line; scripts/setup.sh installs chromium.
    std::cout << "chromium not found: the --show page was not opened in a browser\n";
    return;
  }
  TempDir dir;
  dir.write("in/a.npy", npy_int8(M, K, x_at));
  dir.write("in/b.npy", npy_int8(K, N, w_at));
  const std::string page = dir.path("page.html");
  REQUIRE(shell("cd '" TPUSIM_SOURCE_DIR "' && timeout 60 '" TPUSIM_EXE
                "' run -q -c configs/chips/teach-4x4.yaml -w workloads/teach/matmul-4x4.yaml "
                "--functional --inputs '" +
                dir.path("in") + "' --show --show-format html --show-out '" + page + "' > '" +
                dir.path("run.err") + "' 2>&1") == 0);
  std::string html = slurp(page);
  const std::size_t body_end = html.rfind("</body>");
  REQUIRE(body_end != std::string::npos);
  html.insert(body_end, kDriver);
  const std::string driven = dir.write("driven.html", html);
  REQUIRE(shell(chromium(dir) + " --dump-dom --virtual-time-budget=10000 'file://" + driven +
                "' > '" + dir.path("dom.html") + "' 2> '" + dir.path("chromium.err") + "'") == 0);
  const std::vector<Shown> shown = parse_record(slurp(dir.path("dom.html")));
  const std::string err = slurp(dir.path("chromium.err"));
  CAPTURE(err.substr(err.size() > 1500 ? err.size() - 1500 : 0));
  REQUIRE(!shown.empty());

  // The page opens on the weight load's first cycle A (its event is listed there); the tile's
  // first row enters R cycles later, when the weights are ready; the last cycle shown is the
  // last one before the last result row is ready: A + R + M + R + N - 2, the "done" of
  // test_show.cpp without the writeback. So the page has R + M + R + N - 1 cycles.
  const std::regex label(R"(cycle (\d+) \((\d+) of (\d+)\))");
  std::smatch m;
  REQUIRE(std::regex_match(shown[0].label, m, label));
  const std::int64_t a = std::stoll(m[1]);
  const std::int64_t frames = R + M + R + N - 1;
  CHECK(std::stoll(m[3]) == frames);
  CHECK(shown[0].events.find("cycle " + std::to_string(a) + ": mxu.lw #1 k=4 n=4: load starts") !=
        std::string::npos);
  const std::int64_t start = a + R;

  // "start" and one "next" per further cycle (frames records), then "end" (a press past the last
  // cycle), "slider", "first", "last" and "left".
  REQUIRE(std::int64_t(shown.size()) == frames + 5);
  for (std::int64_t k = 0; k < frames; ++k) {
    const Shown& s = shown[k];
    CAPTURE(k, s.label);
    CHECK(s.step == (k == 0 ? "start" : "next"));
    CHECK(s.label == "cycle " + std::to_string(a + k) + " (" + std::to_string(k + 1) + " of " +
                         std::to_string(frames) + ")");
    CHECK(s.slider == k);
    CHECK(s.grid == expected_grid(a + k, start));
  }
  // The full product is in the bottom row as each X row passes: Y[0][0] at PE(3,0).
  int y00 = 0;
  for (int k = 0; k < K; ++k) y00 += x_at(0, k) * w_at(k, 0);
  CHECK(split(split(shown[start + R - 1 - a].grid, ';')[3], ',')[0] ==
        std::to_string(x_at(0, 3)) + "*" + std::to_string(w_at(3, 0)) + "=" + std::to_string(y00));

  const auto at = [&](const std::string& step) {
    for (const Shown& s : shown)
      if (s.step == step) return s;
    FAIL("no record of " << step);
    return Shown{};
  };
  CHECK(at("end").label == shown[frames - 1].label);
  const std::int64_t mid = (frames - 1) / 2;
  CHECK(at("slider").slider == mid);
  CHECK(at("slider").label.rfind("cycle " + std::to_string(a + mid) + " ", 0) == 0);
  CHECK(at("slider").grid == expected_grid(a + mid, start));
  CHECK(at("first").label == shown[0].label);
  CHECK(at("last").label == shown[frames - 1].label);
  CHECK(at("left").label == shown[frames - 2].label);
  // Each cycle lists the events since the previous one, and the last also those after it (the
  // results reach accumulator memory once the array has drained): stepping through the page
  // shows every event once, none before its cycle.
  std::vector<std::string> listed;
  const std::regex event(R"(cycle (\d+): mxu\.(lw|mm) [^:]*: (.*))");
  for (std::int64_t k = 0; k < frames; ++k)
    for (const std::string& e : split(shown[k].events, ';')) {
      if (e.empty()) continue;
      CAPTURE(k, e);
      REQUIRE(std::regex_match(e, m, event));
      CHECK((std::stoll(m[1]) <= a + k || k == frames - 1));
      listed.push_back(m[3]);
    }
  std::vector<std::string> all = {"load starts", "weights ready", "starts",
                                  "array takes the next instruction's input"};
  for (int i = 0; i < M; ++i) all.push_back("Y row " + std::to_string(i) + " ready");
  all.push_back("done");
  CHECK(listed == all);
}

TEST_CASE("browser: chromium renders the --show page to a screenshot", "[show][html][browser]") {
  if (shell("command -v chromium > /dev/null 2>&1") != 0) {
    std::cout << "chromium not found: the --show page was not opened in a browser\n";
    return;
  }
  TempDir dir;
  const std::string page = dir.path("page.html");
  REQUIRE(shell("cd '" TPUSIM_SOURCE_DIR "' && timeout 60 '" TPUSIM_EXE
                "' run -q -c configs/chips/teach-4x4.yaml -w workloads/teach/matmul-4x4.yaml "
                "--show --show-format html --show-out '" +
                page + "' > /dev/null 2>&1") == 0);
  const std::string shot = dir.path("shot.png");
  REQUIRE(shell(chromium(dir) + " --screenshot='" + shot + "' --window-size=1000,700 'file://" +
                page + "' > /dev/null 2>&1") == 0);
  const std::string png = slurp(shot);
  REQUIRE(png.size() > 1000);
  CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  // IHDR's width and height, big-endian, right after the signature and the chunk header.
  const auto be32 = [&](std::size_t at) {
    return (std::uint32_t(std::uint8_t(png[at])) << 24) |
           (std::uint32_t(std::uint8_t(png[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(png[at + 2])) << 8) |
           std::uint32_t(std::uint8_t(png[at + 3]));
  };
  CHECK(png.compare(12, 4, "IHDR") == 0);
  CHECK(be32(16) == 1000);
  CHECK(be32(20) == 700);
}
