#include <catch2/catch.hpp>

#include "sim/config/units_parse.h"

using namespace tpusim;
using namespace tpusim::config;

TEST_CASE("units: frequencies in every unit", "[config][units]") {
  CHECK(parse_frequency("940 MHz").value() == Approx(940e6));
}
