#include "models/hbm/address_map.h"

#include <sstream>
#include <vector>

namespace tpusim::models {

AddressMap::AddressMap(const DramSpec& spec)
    : burst_bytes_(spec.burst_bytes().value()), hash_(spec.channel_hash) {
  size_[kRow] = spec.rows;
  size_[kBank] = spec.banks_per_group;
  size_[kGroup] = spec.bank_groups;
  size_[kChannel] = spec.total_channels();
  size_[kColumn] = spec.columns;
  // The config validator has checked that each of the five fields appears exactly once.
  std::vector<Field> most_first;
  std::stringstream split(spec.address_mapping);
  for (std::string f; std::getline(split, f, '-');) {
    most_first.push_back(f == "ro"   ? kRow
                         : f == "ba" ? kBank
                         : f == "bg" ? kGroup
                         : f == "ch" ? kChannel
                                     : kColumn);
  }
  for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = most_first[most_first.size() - 1 - i];
  const auto is_pow2 = [](std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; };
  const auto log2 = [](std::uint64_t v) { return static_cast<std::uint32_t>(__builtin_ctzll(v)); };
  pow2_ = is_pow2(burst_bytes_);
  std::uint32_t bit = 0;
  for (Field f : order_) {
    pow2_ = pow2_ && is_pow2(size_[f]);
    shift_[f] = bit;
    if (pow2_) bit += log2(size_[f]);
  }
  if (pow2_) burst_shift_ = log2(burst_bytes_);
  if (pow2_) index_mask_ = bit >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bit) - 1;
}

AddressMap::Shifts AddressMap::shifts() const {
  const auto mask = [&](Field f) { return static_cast<std::uint32_t>(size_[f] - 1); };
  const std::uint32_t channel_bits =
      hash_ ? static_cast<std::uint32_t>(__builtin_ctzll(size_[kChannel])) : 0;
  return Shifts{burst_shift_, shift_[kChannel], shift_[kGroup], shift_[kBank],
                shift_[kRow], mask(kChannel),   mask(kGroup),   mask(kBank),
                mask(kRow),   channel_bits,     index_mask_};
}

DramAddress AddressMap::map_any(std::uint64_t byte_address) const {
  std::array<std::uint64_t, 5> digit{};
  std::uint64_t index = byte_address / burst_bytes_;
  std::uint64_t above_channel = 0, weight = 1;  // the number the fields above the channel form
  bool above = false;
  for (Field f : order_) {
    digit[f] = index % size_[f];
    index /= size_[f];
    if (above) {
      above_channel += digit[f] * weight;
      weight *= size_[f];
    }
    above = above || f == kChannel;
  }
  // With one channel every address is in it (and the digit sum below would never end).
  if (hash_ && size_[kChannel] > 1) {
    const std::uint64_t channels = size_[kChannel];
    for (; above_channel != 0; above_channel /= channels)
      digit[kChannel] += above_channel % channels;
    digit[kChannel] %= channels;
  }
  DramAddress a;
  a.row = static_cast<std::uint32_t>(digit[kRow]);
  a.bank = static_cast<std::uint32_t>(digit[kBank]);
  a.bank_group = static_cast<std::uint32_t>(digit[kGroup]);
  a.channel = static_cast<std::uint32_t>(digit[kChannel]);
  a.column = static_cast<std::uint32_t>(digit[kColumn]);
  return a;
}

}  // namespace tpusim::models
