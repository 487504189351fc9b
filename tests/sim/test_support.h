#pragma once
// Helpers for config tests: scratch files, a minimal valid chip, and positions of text in it so
// that expected error locations are derived from the test's own input, not copied from output.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "sim/base/errors.h"

namespace tpusim::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tpusim-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The message of the ConfigError that `f` throws; fails the test if it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return "";
}

// "line:col" (1-based) of the first occurrence of `needle` in `text`.
inline std::string position_of(const std::string& text, const std::string& needle,
                               std::size_t from = 0) {
  const std::size_t at = text.find(needle, from);
  if (at == std::string::npos) throw std::runtime_error("test text lacks '" + needle + "'");
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

// `text` with the first `from` replaced by `to`.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("test text lacks '" + from + "'");
  return text.replace(at, from.size(), to);
}

inline const std::string kEnergyTable = R"(name: test-energy
node_nm: 45
mac: {int8: 0.3 pJ, bf16: 1.5 pJ}
vector_op:
  add: 0.9 pJ
  sub: 0.9 pJ
  mul: 3.7 pJ
  max: 0.9 pJ
  min: 0.9 pJ
  relu: 0.9 pJ
  gelu: 20 pJ
  exp: 15 pJ
  rsqrt: 15 pJ
  reciprocal: 15 pJ
  cast: 0.5 pJ
  requantize: 4 pJ
  reduce_sum: 0.9 pJ
  reduce_max: 0.9 pJ
  broadcast: 0.1 pJ
  move: 0.1 pJ
  mac: 4.6 pJ
sram:
  - {macro: 8 KiB, read_per_byte: 1.25 pJ, write_per_byte: 1.25 pJ}
  - {macro: 1 MiB, read_per_byte: 12.5 pJ, write_per_byte: 12.5 pJ}
register_per_byte: 0.02 pJ
noc_per_bit_hop: 0.05 pJ
dram_per_bit: {hbm2: 3.9 pJ, ddr3: 70 pJ}
)";

// Organisation: 8 channels x 2 pseudo-channels x 16 banks x 16384 rows x 32 columns x 32 B
// bursts (64 bits x BL4) = 4 GiB.
inline const std::string kHbm = R"(standard: hbm2
channels: 8
pseudo_channels: 2
bank_groups: 4
banks_per_group: 4
rows: 16384
columns: 32
burst_length: 4
bus_width_bits: 64
clock: 1 GHz
timing:
  tRCD: 14 cycles
  tRP: 14 cycles
  tRAS: 34 cycles
  tRC: 48 cycles
  tCL: 14 cycles
  tWL: 4 cycles
  tCCD_S: 1 cycles
  tCCD_L: 2 cycles
  tRRD_S: 4 cycles
  tRRD_L: 6 cycles
  tFAW: 30 cycles
  tWR: 16 cycles
  tWTR_S: 6 cycles
  tWTR_L: 8 cycles
  tRTP: 4 cycles
  tRFC: 260 ns
  tREFI: 3.9 us
)";

inline const std::string kMinimalChip = R"(name: test-chip
clock: 1 GHz
cores: 2
core:
  mxu:
    count: 2
    rows: 8
    cols: 8
    precisions: {int8: 1, bf16: 0.5}
  vmem:
    capacity: 64 KiB
    banks: 4
    port_width: 32 B
  accmem:
    capacity: 16 KiB
    banks: 2
memory:
  capacity: 1 GiB
  bandwidth: 100 GB/s
  hbm:
    extends: hbm.yaml
energy:
  table: energy.yaml
)";

// Writes the minimal chip (optionally edited) with its energy table and HBM file beside it.
inline std::string write_chip(const TempDir& dir, const std::string& chip_text = kMinimalChip,
                              const std::string& name = "chip.yaml") {
  dir.write("energy.yaml", kEnergyTable);
  dir.write("hbm.yaml", kHbm);
  return dir.write(name, chip_text);
}

}  // namespace tpusim::test
