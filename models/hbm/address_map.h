#pragma once
// Splits a byte address into DRAM coordinates by the config's field order, most significant
// first (`ro-ba-bg-ch-co`): the address counts bursts, and each field takes its digit in a
// mixed-radix number whose least significant digit is the last field. `ch` enumerates every
// pseudo-channel of every stack.

#include <array>
#include <cstdint>
#include <string>

#include "models/hbm/dram_channel.h"

namespace tpusim::models {

class AddressMap {
 public:
  explicit AddressMap(const DramSpec& spec);
  DramAddress map(std::uint64_t byte_address) const;
  std::uint64_t burst_bytes() const { return burst_bytes_; }

 private:
  enum Field { kRow, kBank, kGroup, kChannel, kColumn };
  std::array<Field, 5> order_{};         // least significant first
  std::array<std::uint64_t, 5> size_{};  // by Field
  std::uint64_t burst_bytes_;
  // Every field a power of two (all presets): map() shifts and masks instead of dividing.
  bool pow2_ = false;
  std::array<std::uint32_t, 5> shift_{};  // by Field: position of its lowest bit in the burst index
  std::uint32_t burst_shift_ = 0;
};

}  // namespace tpusim::models
