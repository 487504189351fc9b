#include <cmath>
#include <filesystem>

#include <catch2/catch.hpp>

#include "workloads/npy.h"
#include "workloads/numerics.h"

using namespace tpusim;
using namespace tpusim::workloads;
using Catch::Matchers::Contains;

namespace {

Tensor tensor(const std::string& name, Shape shape, DType dtype) {
  return Tensor{name, std::move(shape), dtype, TensorRole::kInput, {}};
}

std::string error_of(const std::string& bytes, const Tensor* t = nullptr) {
  try {
    TensorData d = parse_npy(bytes, "d.npy");
    if (t) conform_to(std::move(d), *t, "d.npy");
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("npy: bf16 rounding is to nearest, ties to even", "[workloads][npy]") {
  // bf16 keeps 7 fraction bits: next to 1.0 the step is 2^-7.
  REQUIRE(round_to_bf16(1.0f + 0x1p-8f) == 1.0f);                    // tie, 1.0 is even
  REQUIRE(round_to_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 2 * 0x1p-7f);  // tie, rounds up to even
  REQUIRE(round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);
  REQUIRE(std::isnan(round_to_bf16(NAN)));
  REQUIRE(round_to_dtype(300, DType::kInt8) == 44);  // wraps like 8-bit hardware
  REQUIRE(round_to_dtype(-2.7, DType::kInt32) == -2);
}

TEST_CASE("npy: round trip of every dtype, header as numpy writes it", "[workloads][npy]") {
  for (DType t : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kFp32, DType::kBf16}) {
    INFO(dtype_name(t));
    TensorData d{{2, 3}, t, {1, -2, 3, 4, -5, 127}};
    const std::string bytes = encode_npy(d);
    REQUIRE(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    REQUIRE((bytes.size() - 6 * (t == DType::kInt8 ? 1 : t == DType::kInt16 ? 2 : 4)) % 64 == 0);
    REQUIRE_THAT(bytes, Contains("'fortran_order': False, 'shape': (2, 3), }"));
    TensorData back = parse_npy(bytes, "x.npy");
    REQUIRE(back.shape == d.shape);
    REQUIRE(back.values == d.values);
    // bf16 travels as float32 and comes back as bf16 through the tensor it belongs to.
    back = conform_to(back, tensor("x", {2, 3}, t), "x.npy");
    REQUIRE(back.dtype == t);
  }
  REQUIRE_THAT(encode_npy(TensorData{{5}, DType::kInt8, {0, 0, 0, 0, 0}}),
               Contains("'descr': '|i1'") && Contains("'shape': (5,)"));
  REQUIRE_THAT(encode_npy(TensorData{{}, DType::kFp32, {1.5}}), Contains("'shape': ()"));
  const auto path = std::filesystem::temp_directory_path() / "tpusim_test_npy.npy";
  write_npy(path.string(), TensorData{{2}, DType::kFp32, {0.25, -8}});
  REQUIRE(read_npy_for(path.string(), tensor("v", {2}, DType::kFp32)).values ==
          std::vector<double>{0.25, -8});
  std::filesystem::remove(path);
}

TEST_CASE("npy: float32 data for a bf16 tensor is rounded", "[workloads][npy]") {
  const TensorData f{{2}, DType::kFp32, {1.0 + 0x1p-8 + 0x1p-20, 3.0}};
  const TensorData b = conform_to(f, tensor("w", {2}, DType::kBf16), "w.npy");
  REQUIRE(b.dtype == DType::kBf16);
  REQUIRE(b.values == std::vector<double>{1.0 + 0x1p-7, 3.0});
}

TEST_CASE("npy: bad files are refused with one line", "[workloads][npy][errors]") {
  const std::string good = encode_npy(TensorData{{2, 2}, DType::kFp32, {1, 2, 3, 4}});
  CHECK(error_of("PK\x03\x04 not numpy") ==
        "d.npy: not a .npy file (wrong magic; expected \\x93NUMPY)");
  CHECK(error_of(good.substr(0, good.size() - 1)) ==
        "d.npy: data is 15 bytes but shape [2,2] of <f4 needs 16");
  std::string f8 = good;
  f8.replace(f8.find("<f4"), 3, "<f8");
  CHECK_THAT(error_of(f8), Contains("d.npy: unsupported dtype '<f8'"));
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  CHECK_THAT(error_of(fortran), Contains("Fortran-order arrays are not supported"));
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<f4"), 3, ">f4");
  CHECK_THAT(error_of(big_endian), Contains("unsupported dtype '>f4'"));
  std::string garbage_header = good;
  garbage_header.replace(garbage_header.find("(2, 2)"), 6, "(2, -)");
  CHECK_THAT(error_of(garbage_header), Contains("header: bad shape dimension"));
  // Version 3 (a version 2 header in UTF-8) whose 4-byte header length points past the end.
  std::string v3 = good;
  v3[6] = '\x03';
  v3.insert(10, 2, '\0');  // header length: 2 bytes in version 1, 4 from version 2 on
  v3[10] = '\x7F';
  const std::size_t after_length = v3.size() - 12;
  CHECK(error_of(v3) ==
        "d.npy: truncated header: it declares " +
            std::to_string(0x7F0000 + (std::uint8_t(good[8]) | std::uint8_t(good[9]) << 8)) +
            " bytes, the file has " + std::to_string(after_length) + " after the header length");
  const Tensor t33 = tensor("w", {3, 3}, DType::kFp32);
  CHECK(error_of(good, &t33) == "d.npy: shape [2,2] does not match tensor 'w' [3,3]");
  const Tensor i8 = tensor("q", {2, 2}, DType::kInt8);
  CHECK(error_of(good, &i8) == "d.npy: dtype fp32 does not fit tensor 'q' of dtype int8");
  const std::string ints = encode_npy(TensorData{{2, 2}, DType::kInt32, {1, 2, 3, 4}});
  const Tensor b16 = tensor("b", {2, 2}, DType::kBf16);
  CHECK(error_of(ints, &b16) ==
        "d.npy: dtype int32 does not fit tensor 'b' of dtype bf16 (store bf16 as float32)");
  REQUIRE_THROWS_WITH(read_npy("/nonexistent.npy"),
                      "/nonexistent.npy: cannot read: not a regular file (or does not exist)");
}

TEST_CASE("npy: random tensors are deterministic, in range and platform-independent",
          "[workloads][npy]") {
  const Tensor w = tensor("w", {64, 64}, DType::kFp32);
  const TensorData a = random_tensor(w, 42), b = random_tensor(w, 42), c = random_tensor(w, 43);
  REQUIRE(a.values == b.values);
  REQUIRE(a.values != c.values);
  // Pinned to the algorithm (splitmix64, FNV-1a of the name), computed independently in Python.
  REQUIRE(a.values[0] == -0.27276647090911865);
  REQUIRE(a.values[1] == 0.5563226938247681);
  REQUIRE(random_tensor(tensor("w", {2}, DType::kBf16), 42).values ==
          std::vector<double>{-0.2734375, 0.5546875});
  for (double v : a.values) REQUIRE((v >= -1.0 && v < 1.0));
  for (double v : random_tensor(tensor("q", {1000}, DType::kInt8), 1).values)
    REQUIRE((v >= -8 && v <= 7 && v == std::floor(v)));
  for (double v : random_tensor(tensor("ids", {1000}, DType::kInt32), 1, 9).values)
    REQUIRE((v >= 0 && v <= 9));
}
