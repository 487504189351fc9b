#include "sim/config/units_parse.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "sim/base/errors.h"

namespace tpusim::config {
namespace {

struct Unit {
  std::string_view name;
  double scale;  // to the base unit of the quantity
};

struct Quantity {
  std::string_view kind;     // "frequency"
  std::string_view example;  // "940 MHz"
  std::vector<Unit> units;
};

const Quantity kFrequency{"frequency", "940 MHz", {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}}};
const Quantity kSize{"size",
                     "16 MiB",
                     {{"B", 1},
                      {"KiB", 1024.0},
                      {"MiB", 1024.0 * 1024},
                      {"GiB", 1024.0 * 1024 * 1024},
                      {"TiB", 1024.0 * 1024 * 1024 * 1024},
                      {"KB", 1e3},
                      {"kB", 1e3},
                      {"MB", 1e6},
                      {"GB", 1e9},
                      {"TB", 1e12}}};
// B/cycle is marked by a negative scale: it is resolved against a clock later, not here.
const Quantity kBandwidth{"bandwidth",
                          "614 GB/s",
                          {{"B/s", 1},
                           {"KB/s", 1e3},
                           {"kB/s", 1e3},
                           {"MB/s", 1e6},
                           {"GB/s", 1e9},
                           {"TB/s", 1e12},
                           {"KiB/s", 1024.0},
                           {"MiB/s", 1024.0 * 1024},
                           {"GiB/s", 1024.0 * 1024 * 1024},
                           {"TiB/s", 1024.0 * 1024 * 1024 * 1024},
                           {"B/cycle", -1}}};
const Quantity kDuration{"time",
                         "100 ns",
                         {{"ps", 1e-12},
                          {"ns", 1e-9},
                          {"us", 1e-6},
                          {"ms", 1e-3},
                          {"s", 1},
                          {"cycles", -1},
                          {"cycle", -1}}};
const Quantity kEnergy{"energy", "0.3 pJ", {{"fJ", 1e-3}, {"pJ", 1}, {"nJ", 1e3}, {"uJ", 1e6}}};
const Quantity kPower{"power", "40 W", {{"uW", 1e-6}, {"mW", 1e-3}, {"W", 1}, {"kW", 1e3}}};

std::string unit_list(const Quantity& q) {
  std::string out;
  for (const Unit& u : q.units) {
    if (!out.empty()) out += ", ";
    out += u.name;
  }
  return out;
}

// Length of a leading decimal number ([+-]digits[.digits][e[+-]digits]), or 0. strtod alone
// would also take hex, inf and nan, which no human config means.
std::size_t scan_number(const std::string& s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    const std::size_t before = i++;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) i = before;
  }
  return i;
}

// Splits "940 MHz" into 940 and the MHz entry; rejects anything else with a message naming it.
std::pair<double, const Unit*> split(std::string_view text, const Quantity& q) {
  const std::string s(text);
  const std::string expected = "expected a " + std::string(q.kind) + " such as \"" +
                               std::string(q.example) + "\" (units: " + unit_list(q) + ")";
  const std::size_t number_length = scan_number(s);
  if (number_length == 0) throw UnitError(expected + ", got " + quoted_excerpt(s));
  const double value = std::strtod(s.substr(0, number_length).c_str(), nullptr);
  if (!std::isfinite(value)) throw UnitError(expected + ", got " + quoted_excerpt(s));
  std::size_t pos = number_length;
  // "0x64 MHz" would read as 0 in unit "x64 MHz": name what is really wrong.
  if (pos < s.size() && (s[pos] == 'x' || s[pos] == 'X' || s[pos] == 'b' || s[pos] == 'B') &&
      pos + 1 < s.size() && std::isxdigit(static_cast<unsigned char>(s[pos + 1])) &&
      s.substr(0, number_length) == "0")
    throw UnitError(expected + ", got " + quoted_excerpt(s) + ": write the number in decimal");
  while (pos < s.size() && s[pos] == ' ') ++pos;
  const std::string unit = s.substr(pos);
  if (unit.empty()) throw UnitError(expected + ", got " + quoted_excerpt(s) + " with no unit");
  for (const Unit& u : q.units)
    if (u.name == unit) {
      if (value < 0)
        throw UnitError("expected a non-negative " + std::string(q.kind) + ", got " +
                        quoted_excerpt(s));
      return {value, &u};
    }
  throw UnitError("unknown " + std::string(q.kind) + " unit " + quoted_excerpt(unit) + " in " +
                  quoted_excerpt(s) + " (units: " + unit_list(q) + ")");
}

bool is_whole(double v) { return std::fabs(v - std::round(v)) < 1e-9 * std::max(1.0, std::fabs(v)); }

std::uint64_t whole_count(double v, std::string_view text, std::string_view what) {
  if (!is_whole(v))
    throw UnitError("expected a whole number of " + std::string(what) + ", got " +
                    quoted_excerpt(std::string(text)));
  if (v >= 9.2e18) throw UnitError("value " + quoted_excerpt(std::string(text)) + " is too large");
  return static_cast<std::uint64_t>(std::llround(v));
}

// Picks the largest unit in which the value is at least 1 (scales ascending in `units`).
std::string format_scaled(double base_value, const std::vector<Unit>& units) {
  const Unit* best = &units.front();
  for (const Unit& u : units)
    if (u.scale > 0 && std::fabs(base_value) >= u.scale) best = &u;
  return format_number(base_value / best->scale) + " " + std::string(best->name);
}

}  // namespace

// Shortest fixed-point text that reads back as the value to 12 significant digits; scaled
// values such as 100e-9 / 1e-9 carry binary noise that nobody wrote and nobody wants to read.
std::string format_number(double v) {
  char buf[64];
  for (int decimals = 0; decimals <= 15; ++decimals) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    const double back = std::strtod(buf, nullptr);
    if (std::fabs(back - v) <= 1e-12 * std::max(1.0, std::fabs(v))) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Hertz parse_frequency(std::string_view text) {
  auto [v, unit] = split(text, kFrequency);
  if (v * unit->scale <= 0)
    throw UnitError("expected a frequency above 0, got " + quoted_excerpt(std::string(text)));
  return Hertz(v * unit->scale);
}

Bytes parse_size(std::string_view text) {
  auto [v, unit] = split(text, kSize);
  return Bytes(whole_count(v * unit->scale, text, "bytes"));
}

// Upper bounds far above any chip's, low enough that sums of them stay finite and a run stays
// within SystemC's time range (about 9,223 s at femtosecond resolution).
constexpr double kMaxSeconds = 1.0, kMaxCycles = 1e9;
constexpr double kMaxBytesPerSecond = 1e15, kMaxBytesPerCycle = 1e6;  // 1 PB/s, 1 MB/cycle

Bandwidth parse_bandwidth(std::string_view text) {
  auto [v, unit] = split(text, kBandwidth);
  const bool per_cycle = unit->scale < 0;
  if (per_cycle ? v > kMaxBytesPerCycle : v * unit->scale > kMaxBytesPerSecond)
    throw UnitError("expected a bandwidth of at most 1000 TB/s (or 1e6 B/cycle), got " +
                    quoted_excerpt(std::string(text)));
  if (per_cycle) return Bandwidth::of_bytes_per_cycle(v);
  return Bandwidth::of_bytes_per_second(v * unit->scale);
}
constexpr double kMaxPicojoules = 1e6, kMaxWatts = 1e6;

Duration parse_duration(std::string_view text) {
  auto [v, unit] = split(text, kDuration);
  const bool cycles = unit->scale < 0;
  if (cycles ? v > kMaxCycles : v * unit->scale > kMaxSeconds)
    throw UnitError("expected a duration of at most 1 s (or 1e9 cycles), got " +
                    quoted_excerpt(std::string(text)));
  if (cycles) return Duration::of_cycles(whole_count(v, text, "cycles"));
  return Duration::of_seconds(v * unit->scale);
}

Picojoules parse_energy(std::string_view text) {
  auto [v, unit] = split(text, kEnergy);
  if (v * unit->scale > kMaxPicojoules)
    throw UnitError("expected an energy of at most 1 uJ, got " + quoted_excerpt(std::string(text)));
  return Picojoules(v * unit->scale);
}

Watts parse_power(std::string_view text) {
  auto [v, unit] = split(text, kPower);
  if (v * unit->scale > kMaxWatts)
    throw UnitError("expected a power of at most 1000 kW, got " +
                    quoted_excerpt(std::string(text)));
  return Watts(v * unit->scale);
}

std::string format_frequency(Hertz f) { return format_scaled(f.value(), kFrequency.units); }

std::string format_size(Bytes b) {
  // Binary units when exact (capacities are powers of two in practice), else plain bytes.
  const std::uint64_t v = b.value();
  const char* names[] = {"TiB", "GiB", "MiB", "KiB"};
  const std::uint64_t scales[] = {kGiB * 1024, kGiB, kMiB, kKiB};
  for (int i = 0; i < 4; ++i)
    if (v >= scales[i] && v % scales[i] == 0) return std::to_string(v / scales[i]) + " " + names[i];
  return std::to_string(v) + " B";
}

std::string format_bandwidth(const Bandwidth& b) {
  if (b.per_cycle()) return format_number(b.bytes_per_cycle(Hertz(1))) + " B/cycle";
  const double v = b.bytes_per_second(Hertz(1)).value();
  const std::vector<Unit> decimal = {{"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12}};
  return format_scaled(v, decimal);
}

std::string format_duration(const Duration& d) {
  if (d.in_cycles()) return std::to_string(d.cycles(Hertz(1)).value()) + " cycles";
  const double s = d.seconds(Hertz(1)).value();
  if (s == 0) return "0 ns";
  const std::vector<Unit> units = {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  return format_scaled(s, units);
}

std::string format_energy(Picojoules e) {
  if (e.value() == 0) return "0 pJ";
  return format_scaled(e.value(), kEnergy.units);
}

std::string format_power(Watts w) {
  if (w.value() == 0) return "0 W";
  return format_scaled(w.value(), kPower.units);
}

}  // namespace tpusim::config
