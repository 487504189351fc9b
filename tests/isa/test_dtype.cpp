#include <catch2/catch.hpp>

#include "sim/base/dtype.h"

TEST_CASE("dtype: names round-trip and sizes match their widths", "[isa][dtype]") {
  for (tpusim::DType t : tpusim::kAllDTypes) {
    REQUIRE(tpusim::dtype_from_name(tpusim::dtype_name(t)) == t);
  }
  CHECK(tpusim::dtype_bytes(tpusim::DType::kBf16) == 2);
  CHECK(tpusim::dtype_bytes(tpusim::DType::kInt32) == 4);
  CHECK_FALSE(tpusim::dtype_from_name("int7").has_value());
}
