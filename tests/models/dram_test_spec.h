#pragma once
// The small DRAM channel the controller tests derive their cycles from: one channel of 4 bank
// groups x 4 banks, 1024 rows x 32 bursts of 32 B, at 1 GHz, with these timings (tCK).

#include "sim/base/spec/memory_spec.h"

namespace tpusim::test::dram {

constexpr std::uint64_t RCD = 14, RP = 14, RAS = 34, RC = 50, CL = 14, WL = 4, CCD_S = 2, CCD_L = 4,
                        RRD_S = 4, RRD_L = 6, FAW = 30, WR = 16, WTR_S = 6, WTR_L = 8, RTP = 5,
                        RFC = 260, REFI = 3900, RTW = 0, BURST = 2;
constexpr std::uint64_t kBurstBytes = 32;  // 64 bits x BL4

inline DramSpec channel_spec() {
  DramSpec s;
  s.stacks = 1;
  s.channels = 1;
  s.pseudo_channels = 1;
  s.bank_groups = 4;
  s.banks_per_group = 4;
  s.rows = 1024;
  s.columns = 32;
  s.burst_length = 4;
  s.bus_width_bits = 64;
  s.transfers_per_clock = 2;
  s.clock = Hertz(1e9);
  const auto c = [](std::uint64_t n) { return Duration::of_cycles(n); };
  s.timing = {c(RCD),   c(RP),  c(RAS), c(RC),    c(CL),    c(WL),  c(CCD_S), c(CCD_L), c(RRD_S),
              c(RRD_L), c(FAW), c(WR),  c(WTR_S), c(WTR_L), c(RTP), c(RFC),   c(REFI),  c(RTW)};
  return s;
}

}  // namespace tpusim::test::dram
