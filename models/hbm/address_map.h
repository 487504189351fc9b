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
  DramAddress map(std::uint64_t byte_address) const {
    if (!pow2_) return map_any(byte_address);
    const std::uint64_t index = byte_address >> burst_shift_;
    // Masking the most significant field wraps beyond capacity exactly as map_any's modulo.
    const auto field = [&](Field f) {
      return static_cast<std::uint32_t>((index >> shift_[f]) & (size_[f] - 1));
    };
    DramAddress a;
    a.channel = hash_ ? hashed_channel(index) : field(kChannel);
    a.bank_group = field(kGroup);
    a.bank = field(kBank);
    a.row = field(kRow);
    a.column = field(kColumn);
    return a;
  }
  std::uint64_t burst_bytes() const { return burst_bytes_; }

  // map() for a power-of-two organisation as a value: a caller that maps many addresses copies
  // it once, so the compiler need not reload the shifts after every store it makes.
  struct Shifts {
    std::uint32_t burst, channel, group, bank, row;
    std::uint32_t channel_mask, group_mask, bank_mask, row_mask;
    std::uint32_t channel_bits;  // log2(channels); 0 when the channel is not hashed
    std::uint64_t index_mask;    // the burst index within the capacity
    // The column (a burst's place in its row) plays no part in the timing: left 0.
    DramAddress map(std::uint64_t byte_address) const {
      DramAddress a;
      map_range(byte_address, 1, 0, &a);
      return a;
    }
    // map() of `n` bursts from burst-aligned `first_byte`, `burst_bytes` apart, into `out`. With
    // channel_hash the digits above the channel field, channel_bits wide, are summed into it;
    // that sum changes only when those digits do, which for consecutive bursts is once every
    // channels x (bursts below the channel) of them.
    void map_range(std::uint64_t first_byte, std::uint32_t n, std::uint64_t burst_bytes,
                   DramAddress* out) const {
      std::uint64_t last_above = ~std::uint64_t{0};
      std::uint32_t above_sum = 0;
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint64_t index =
            ((first_byte + std::uint64_t{i} * burst_bytes) >> burst) & index_mask;
        DramAddress& a = out[i];
        a.channel = static_cast<std::uint32_t>(index >> channel) & channel_mask;
        if (channel_bits > 0) {
          const std::uint64_t above = index >> (channel + channel_bits);
          if (above != last_above) {
            last_above = above;
            above_sum = 0;
            for (std::uint64_t digits = above; digits != 0; digits >>= channel_bits)
              above_sum += static_cast<std::uint32_t>(digits) & channel_mask;
          }
          a.channel = (a.channel + above_sum) & channel_mask;
        }
        a.bank_group = static_cast<std::uint32_t>(index >> group) & group_mask;
        a.bank = static_cast<std::uint32_t>(index >> bank) & bank_mask;
        a.row = static_cast<std::uint32_t>(index >> row) & row_mask;
        a.column = 0;
      }
    }
  };
  // Every field a power of two (all presets): shifts() is valid.
  bool power_of_two() const { return pow2_; }
  Shifts shifts() const;

 private:
  enum Field { kRow, kBank, kGroup, kChannel, kColumn };
  DramAddress map_any(std::uint64_t byte_address) const;
  // The channel of a power-of-two organisation's burst `index` with channel_hash.
  std::uint32_t hashed_channel(std::uint64_t index) const {
    return shifts().map(index << burst_shift_).channel;
  }
  std::array<Field, 5> order_{};         // least significant first
  std::array<std::uint64_t, 5> size_{};  // by Field
  std::uint64_t burst_bytes_;
  // Every field a power of two (all presets): map() shifts and masks instead of dividing.
  bool pow2_ = false;
  bool hash_ = false;                     // channel_hash
  std::array<std::uint32_t, 5> shift_{};  // by Field: position of its lowest bit in the burst index
  std::uint32_t burst_shift_ = 0;
  std::uint64_t index_mask_ = ~std::uint64_t{0};
};

}  // namespace tpusim::models
