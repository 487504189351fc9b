#include <catch2/catch.hpp>

#include "sim/config/units_parse.h"

using namespace tpusim;
using namespace tpusim::config;

TEST_CASE("units: frequencies in every unit", "[config][units]") {
  CHECK(parse_frequency("50 Hz").value() == 50);
  CHECK(parse_frequency("2 kHz").value() == 2e3);
  CHECK(parse_frequency("940 MHz").value() == Approx(940e6));
  CHECK(parse_frequency("1.05 GHz").value() == Approx(1.05e9));
  CHECK(parse_frequency("700MHz").value() == Approx(700e6));  // the space is optional
  CHECK(parse_frequency("1e3 MHz").value() == Approx(1e9));
}

TEST_CASE("units: sizes in binary and decimal units", "[config][units]") {
  CHECK(parse_size("64 B").value() == 64);
  CHECK(parse_size("4 KiB").value() == 4 * 1024);
  CHECK(parse_size("24 MiB").value() == 24ull * 1024 * 1024);
  CHECK(parse_size("8 GiB").value() == 8ull << 30);
  CHECK(parse_size("1 TiB").value() == 1ull << 40);
  CHECK(parse_size("2 KB").value() == 2000);
  CHECK(parse_size("2 kB").value() == 2000);
  CHECK(parse_size("16 MB").value() == 16000000);
  CHECK(parse_size("16 GB").value() == 16000000000ull);
  CHECK(parse_size("1 TB").value() == 1000000000000ull);
  CHECK(parse_size("1.5 KiB").value() == 1536);
}

TEST_CASE("units: bandwidths per second and per cycle", "[config][units]") {
  const Hertz ghz(1e9);
  CHECK(parse_bandwidth("614 GB/s").bytes_per_second(ghz).value() == Approx(614e9));
  CHECK(parse_bandwidth("1.2 TB/s").bytes_per_second(ghz).value() == Approx(1.2e12));
  CHECK(parse_bandwidth("10 B/s").bytes_per_second(ghz).value() == 10);
  CHECK(parse_bandwidth("30 GiB/s").bytes_per_second(ghz).value() == Approx(30.0 * (1ull << 30)));
  CHECK(parse_bandwidth("3 MB/s").bytes_per_second(ghz).value() == Approx(3e6));
  const Bandwidth per_cycle = parse_bandwidth("256 B/cycle");
  CHECK(per_cycle.per_cycle());
  // Per-cycle bandwidth scales with the clock it is resolved against.
  CHECK(per_cycle.bytes_per_second(Hertz(700e6)).value() == Approx(256 * 700e6));
  CHECK(per_cycle.bytes_per_cycle(Hertz(700e6)) == 256);
  CHECK(parse_bandwidth("614 GB/s").bytes_per_cycle(Hertz(1.05e9)) == Approx(614e9 / 1.05e9));
  // Bounded like the other quantities: 1e308 TB/s would print as null in report.json.
  CHECK(parse_bandwidth("1000 TB/s").bytes_per_second(ghz).value() == Approx(1e15));
  CHECK_THROWS_WITH(
      parse_bandwidth("1001 TB/s"),
      "expected a bandwidth of at most 1000 TB/s (or 1e6 B/cycle), got \"1001 TB/s\"");
  CHECK_THROWS_WITH(
      parse_bandwidth("1e308 TB/s"),
      "expected a bandwidth of at most 1000 TB/s (or 1e6 B/cycle), got \"1e308 TB/s\"");
  CHECK(parse_bandwidth("1000000 B/cycle").bytes_per_cycle(ghz) == 1e6);
  CHECK_THROWS(parse_bandwidth("1000001 B/cycle"));
}

TEST_CASE("units: times in seconds or cycles of the owner's clock", "[config][units]") {
  const Hertz ghz(1e9);
  CHECK(parse_duration("14 cycles").cycles(ghz).value() == 14);
  CHECK(parse_duration("1 cycle").cycles(ghz).value() == 1);
  CHECK(parse_duration("500 ps").seconds(ghz).value() == Approx(500e-12));
  CHECK(parse_duration("100 ns").seconds(ghz).value() == Approx(100e-9));
  CHECK(parse_duration("3.9 us").seconds(ghz).value() == Approx(3.9e-6));
  CHECK(parse_duration("2 ms").seconds(ghz).value() == Approx(2e-3));
  CHECK(parse_duration("1 s").seconds(ghz).value() == 1);
  // 14 ns at 1 GHz is exactly 14 cycles; 14 ns at 1.2 GHz is 16.8, so 17 whole cycles.
  CHECK(parse_duration("14 ns").cycles(ghz).value() == 14);
  CHECK(parse_duration("14 ns").cycles(Hertz(1.2e9)).value() == 17);
  CHECK(parse_duration("10 cycles").seconds(Hertz(500e6)).value() == Approx(20e-9));
}

TEST_CASE("units: energies and powers", "[config][units]") {
  CHECK(parse_energy("300 fJ").value() == Approx(0.3));
  CHECK(parse_energy("3.9 pJ").value() == Approx(3.9));
  CHECK(parse_energy("2 nJ").value() == Approx(2000));
  CHECK(parse_energy("1 uJ").value() == Approx(1e6));
  CHECK(parse_power("500 uW").value() == Approx(500e-6));
  CHECK(parse_power("40 W").value() == 40);
  CHECK(parse_power("250 mW").value() == Approx(0.25));
  CHECK(parse_power("1.5 kW").value() == Approx(1500));
}

TEST_CASE("units: bare numbers, unknown units and nonsense are rejected by name",
          "[config][units]") {
  CHECK_THROWS_WITH(parse_frequency("940"),
                    "expected a frequency such as \"940 MHz\" (units: Hz, kHz, MHz, GHz), got "
                    "\"940\" with no unit");
  CHECK_THROWS_WITH(parse_frequency("940 Mhz"),
                    "unknown frequency unit \"Mhz\" in \"940 Mhz\" (units: Hz, kHz, MHz, GHz)");
  CHECK_THROWS_WITH(parse_frequency("fast"),
                    "expected a frequency such as \"940 MHz\" (units: Hz, kHz, MHz, GHz), got "
                    "\"fast\"");
  CHECK_THROWS_WITH(parse_frequency("0 MHz"), "expected a frequency above 0, got \"0 MHz\"");
  CHECK_THROWS_WITH(parse_size("-1 MiB"), "expected a non-negative size, got \"-1 MiB\"");
  CHECK_THROWS_WITH(parse_size("0.3 B"), "expected a whole number of bytes, got \"0.3 B\"");
  CHECK_THROWS_WITH(parse_size("1e30 TiB"), "value \"1e30 TiB\" is too large");
  CHECK_THROWS_AS(parse_size("16"), UnitError);
  CHECK_THROWS_AS(parse_size("16 mib"), UnitError);
  CHECK_THROWS_AS(parse_size("0x10 B"), UnitError);
  CHECK_THROWS_AS(parse_size("inf B"), UnitError);
  CHECK_THROWS_AS(parse_size("nan B"), UnitError);
  CHECK_THROWS_AS(parse_size(""), UnitError);
  CHECK_THROWS_AS(parse_bandwidth("614 GB"), UnitError);
  // Upper bounds: at the bound accepted, above it refused (a run must stay inside SystemC's
  // time range, and energy sums finite).
  CHECK(parse_duration("1 s").seconds(Hertz(1e9)).value() == 1.0);
  CHECK(parse_duration("1000000000 cycles").cycles(Hertz(1e9)).value() == 1000000000);
  CHECK_THROWS_WITH(parse_duration("1001 ms"),
                    "expected a duration of at most 1 s (or 1e9 cycles), got \"1001 ms\"");
  CHECK_THROWS_AS(parse_duration("1000000001 cycles"), UnitError);
  CHECK(parse_energy("1 uJ").value() == 1e6);
  CHECK_THROWS_WITH(parse_energy("1.5 uJ"), "expected an energy of at most 1 uJ, got \"1.5 uJ\"");
  CHECK(parse_power("1000 kW").value() == 1e6);
  CHECK_THROWS_WITH(parse_power("1e300 kW"),
                    "expected a power of at most 1000 kW, got \"1e300 kW\"");
  CHECK_THROWS_AS(parse_bandwidth("614 Gbps"), UnitError);
  CHECK_THROWS_WITH(parse_duration("1.5 cycles"),
                    "expected a whole number of cycles, got \"1.5 cycles\"");
  CHECK_THROWS_AS(parse_duration("14"), UnitError);
  CHECK_THROWS_AS(parse_energy("3.9 pj"), UnitError);
  CHECK_THROWS_AS(parse_power("40"), UnitError);
  CHECK_THROWS_AS(parse_power("-40 W"), UnitError);
}

TEST_CASE("units: formatting reads back as the same value", "[config][units]") {
  CHECK(format_size(Bytes(16 * kMiB)) == "16 MiB");
  CHECK(format_size(Bytes(1536)) == "1536 B");
  CHECK(format_frequency(Hertz(940e6)) == "940 MHz");
  CHECK(format_frequency(Hertz(1.05e9)) == "1.05 GHz");
  CHECK(format_bandwidth(Bandwidth::of_bytes_per_second(614e9)) == "614 GB/s");
  CHECK(format_bandwidth(Bandwidth::of_bytes_per_cycle(256)) == "256 B/cycle");
  CHECK(format_duration(Duration::of_cycles(14)) == "14 cycles");
  CHECK(format_duration(Duration::of_seconds(100e-9)) == "100 ns");
  CHECK(format_energy(Picojoules(0.3)) == "300 fJ");
  CHECK(format_power(Watts(40)) == "40 W");
  for (double hz : {1e3, 700e6, 940e6, 1.5e9, 2.4e9})
    CHECK(parse_frequency(format_frequency(Hertz(hz))).value() == hz);
  for (double pj : {0.03, 0.3, 3.9, 1300.0})
    CHECK(parse_energy(format_energy(Picojoules(pj))).value() == Approx(pj));
}
