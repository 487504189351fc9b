// The VCD writer and the cycle-level array's waveform: a header GTKWave accepts, one scope per
// PE, and value changes at the times the dataflow predicts.

#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "models/mxu/array_vcd.h"
#include "models/mxu/vcd_writer.h"
#include "tests/models/mxu_reference.h"

using namespace tpusim;
using namespace tpusim::models;

namespace {

// Time of each change of signal `id`, with its value text ("1", "0", "b101").
std::vector<std::pair<std::uint64_t, std::string>> changes(const std::string& vcd,
                                                           const std::string& id) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  std::istringstream in(vcd.substr(vcd.find("$enddefinitions $end")));
  std::string line;
  std::uint64_t t = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      t = std::stoull(line.substr(1));
    } else if (line[0] == 'b') {
      const auto space = line.find(' ');
      if (line.substr(space + 1) == id) out.emplace_back(t, line.substr(0, space));
    } else if (line.substr(1) == id) {
      out.emplace_back(t, line.substr(0, 1));
    }
  }
  return out;
}

// The identifier of `scope`.`name`, from the declarations.
std::string id_of(const std::string& vcd, const std::string& scope, const std::string& name) {
  const auto at = vcd.find("$scope module " + scope + " $end");
  REQUIRE(at != std::string::npos);
  std::istringstream in(vcd.substr(at));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string var, wire, width, id, signal;
    words >> var >> wire >> width >> id >> signal;
    if (var == "$var" && signal == name) return id;
    if (line.rfind("$upscope", 0) == 0) break;
  }
  FAIL("no " << scope << "." << name);
  return "";
}

}  // namespace

TEST_CASE("vcd: header, declarations and changes only when a value changes", "[vcd]") {
  std::ostringstream out;
  VcdWriter w(out, "1 ps");
  w.push_scope("top");
  const auto bit = w.add("valid", 1);
  const auto bus = w.add("data", 8);
  w.pop_scope();
  w.end_definitions();
  w.time(0);
  w.change(bit, 1);
  w.change(bus, 5);
  w.time(10);
  w.change(bit, 1);      // unchanged: not written
  w.change(bus, 0x1ff);  // masked to 8 bits
  w.time(20);
  w.change(bit, 1);  // nothing changes at 20: no time stamp either
  w.close(30);
  CHECK(out.str() ==
        "$version tpusim $end\n$timescale 1 ps $end\n"
        "$scope module top $end\n$var wire 1 ! valid $end\n$var wire 8 \" data [7:0] $end\n"
        "$upscope $end\n$enddefinitions $end\n"
        "#0\n1!\nb101 \"\n#10\nb11111111 \"\n#30\n");
}

TEST_CASE("vcd: the cycle-level array has one scope per PE and changes on the wavefront",
          "[vcd][cycle]") {
  const std::uint32_t R = 2, C = 3, M = 3, K = 2, N = 3;
  const std::uint64_t period = 10000;  // 10 ns in ps
  MxuSpec spec;
  spec.rows = R;
  spec.cols = C;
  spec.precisions = {{DType::kInt8, 1.0}};
  std::ostringstream out;
  const std::vector<std::int32_t> w = {1, 2, 3, 4, 5, 6}, x = {1, 2, 3, 4, 5, 6};
  {
    ArrayVcd vcd(out, period);
    CycleMxu cycle(spec, Hertz(1e8));
    cycle.set_observer(&vcd);
    cycle.load_weights(test::make_lw(K, N), 0, w);
    cycle.matmul(test::make_mm(M, K, N), 0, x);
    cycle.finish();
  }
  const std::string vcd = out.str();
  for (std::uint32_t r = 0; r < R; ++r)
    for (std::uint32_t c = 0; c < C; ++c)
      CHECK(vcd.find("$scope module pe_" + std::to_string(r) + "_" + std::to_string(c) + " $end") !=
            std::string::npos);
  std::size_t scopes = 0, upscopes = 0;
  for (std::size_t at = 0; (at = vcd.find("$scope module pe_", at)) != std::string::npos; ++at)
    ++scopes;
  for (std::size_t at = 0; (at = vcd.find("$upscope $end", at)) != std::string::npos; ++at)
    ++upscopes;
  CHECK(scopes == R * C);
  CHECK(upscopes == R * C + 1);  // every PE scope and the mxu scope are closed

  // ws: the load takes R cycles, so X row i meets PE(r,c) at R + i + r + c. PE(1,2)'s input
  // is valid in cycles [R + 3, R + 3 + M) and carries X[i][1] = 2, 4, 6.
  const std::uint64_t start = R;
  const auto valid = changes(vcd, id_of(vcd, "pe_1_2", "a_valid"));
  REQUIRE(valid.size() >= 3);
  CHECK(valid[0] == std::make_pair(std::uint64_t{0}, std::string("0")));
  CHECK(valid[1] == std::make_pair((start + 1 + 2) * period, std::string("1")));
  CHECK(valid[2] == std::make_pair((start + 1 + 2 + M) * period, std::string("0")));
  const auto a = changes(vcd, id_of(vcd, "pe_1_2", "a"));
  const std::vector<std::pair<std::uint64_t, std::string>> a_expected = {
      {0, "b0"},
      {(start + 3) * period, "b10"},
      {(start + 4) * period, "b100"},
      {(start + 5) * period, "b110"}};
  REQUIRE(a.size() >= a_expected.size());
  CHECK(std::vector<std::pair<std::uint64_t, std::string>>(a.begin(), a.begin() + 4) == a_expected);
  // The clock: high at each cycle's start, low at its middle.
  const auto clk = changes(vcd, id_of(vcd, "mxu", "clk"));
  REQUIRE(clk.size() >= 2);
  CHECK(clk[0] == std::make_pair(std::uint64_t{0}, std::string("1")));
  CHECK(clk[1] == std::make_pair(period / 2, std::string("0")));
}

TEST_CASE("vcd: a and w are as wide as the operands, and the clock runs to the run's end",
          "[vcd][cycle]") {
  // int16 operands through a 2x2 array: a and w are declared 16 bits, so PE(0,0)'s weight -1000
  // reads 0xfc18, not its low byte 0x18. The run ends 20 cycles after the array went idle: clk
  // and cycle keep counting to its last cycle.
  const std::uint64_t period = 1000;
  MxuSpec spec;
  spec.rows = 2;
  spec.cols = 2;
  spec.precisions = {{DType::kInt16, 1.0}};
  auto lw = test::make_lw(2, 2);
  auto mm = test::make_mm(2, 2, 2);
  lw.dtype = mm.dtype = DType::kInt16;
  std::ostringstream out;
  std::uint64_t run_end = 0;
  {
    ArrayVcd vcd(out, period, 16);
    CycleMxu cycle(spec, Hertz(1e9));
    cycle.set_observer(&vcd);
    cycle.load_weights(lw, 0, {-1000, 3, 2, 400});
    const CycleMatmulResult r = cycle.matmul(mm, 0, {300, -2, 1000, 7});
    cycle.finish();
    run_end = r.timing.end + 20;
    vcd.end(run_end);
  }
  const std::string vcd = out.str();
  const std::string w_id = id_of(vcd, "pe_0_0", "w");
  CHECK(vcd.find("$var wire 16 " + w_id + " w [15:0] $end") != std::string::npos);
  bool seen = false;
  for (const auto& [t, value] : changes(vcd, w_id)) seen |= value == "b1111110000011000";
  CHECK(seen);
  const auto clk = changes(vcd, id_of(vcd, "mxu", "clk"));
  REQUIRE(!clk.empty());
  CHECK(clk.back() == std::make_pair((run_end - 1) * period + period / 2, std::string("0")));
  const auto cycle_count = changes(vcd, id_of(vcd, "mxu", "cycle"));
  REQUIRE(!cycle_count.empty());
  CHECK(cycle_count.back().first == (run_end - 1) * period);
}
