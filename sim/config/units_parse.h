#pragma once
// Human units in config text: "940 MHz", "128 MiB", "614 GB/s", "14 cycles", "3.9 pJ", "40 W".
// A quantity must carry its unit; a bare number is rejected, because "16" could mean bytes,
// KiB or MiB and guessing is how configs silently go wrong.

#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/base/units.h"

namespace tpusim::config {

// The message says what was expected and what was found; the caller adds file, line and key.
class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Hertz parse_frequency(std::string_view text);
Bytes parse_size(std::string_view text);
Bandwidth parse_bandwidth(std::string_view text);
Duration parse_duration(std::string_view text);
Picojoules parse_energy(std::string_view text);
Watts parse_power(std::string_view text);

// Canonical text for a value, in the largest unit that keeps it exact or short, e.g. 16 MiB.
std::string format_frequency(Hertz f);
std::string format_size(Bytes b);
std::string format_bandwidth(const Bandwidth& b);
std::string format_duration(const Duration& d);
std::string format_energy(Picojoules e);
std::string format_power(Watts w);
// A plain number: the shortest fixed-point text that reads back as the value (1, 0.5,
// 0.0009765625).
std::string format_number(double v);

}  // namespace tpusim::config
