#include <catch2/catch.hpp>

#include "workloads/scalesim_csv.h"

using namespace tpusim;
using namespace tpusim::workloads;
using Catch::Matchers::StartsWith;

namespace {

const char* kConvHeader =
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
    "Strides,\n";

std::string error_of(const std::string& text) {
  try {
    parse_scalesim_csv(text, "t.csv", DType::kBf16);
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("scalesim: conv rows with trailing commas, padding spaces, tabs and #dw marks",
          "[workloads][scalesim]") {
  const Graph g =
      parse_scalesim_csv(std::string(kConvHeader) +
                             "\n"
                             "Conv1     ,224         ,224  ,11  ,11  ,3   ,96  ,4      ,\r\n"
                             ",,,,,,,,,,\n"
                             "\tConv2_dw, 112, 112, 3, 3, 1, 1, 2,#dw\n"
                             "FC, 1, 1, 1, 1, 1024, 1000, 1\n",
                         "t.csv", DType::kInt8);
  REQUIRE(g.name == "t");
  REQUIRE(g.ops.size() == 3);
  // SCALE-Sim: no padding, OH = (H - FH) / S + 1 = (224 - 11) / 4 + 1 = 54.
  REQUIRE(g.tensor(*g.find_tensor("Conv1.ofmap")).shape == Shape{1, 54, 54, 96});
  REQUIRE(g.tensor(*g.find_tensor("Conv1.filter")).shape == Shape{11, 11, 3, 96});
  REQUIRE(g.tensor(*g.find_tensor("Conv1.ifmap")).dtype == DType::kInt8);
  REQUIRE(g.tensor(*g.find_tensor("Conv1.ofmap")).dtype == DType::kInt32);
  REQUIRE(g.tensor(*g.find_tensor("Conv2_dw.ofmap")).shape == Shape{1, 55, 55, 1});
  REQUIRE(g.ops[1].where.str() == "t.csv:5:1");
  REQUIRE(op_macs(g, g.ops[0]) == 54LL * 54 * 96 * 11 * 11 * 3);
  REQUIRE(op_macs(g, g.ops[2]) == 1024LL * 1000);
}

TEST_CASE("scalesim: 'DP' layers are depthwise, and a split stride header", "[workloads][scalesim]") {
  const Graph g = parse_scalesim_csv(
      "Layer name,IFMAP height,IFMAP width,Filter height,Filter width,Channels,Num filter,"
      "Stride height,Stride width,\n"
      "DP1,10,10,3,3,16,2,1,2,\n",
      "dp.csv", DType::kBf16);
  // SCALE-Sim runs it as 16 one-channel convs of 2 filters: a depthwise conv, multiplier 2.
  REQUIRE(g.ops[0].attrs.groups == 16);
  REQUIRE(g.tensor(g.ops[0].output).shape == Shape{1, 8, 4, 32});
  REQUIRE(op_macs(g, g.ops[0]) == 16 * (8 * 4 * 3 * 3 * 1 * 2));
}

TEST_CASE("scalesim: GEMM rows become A[M,K] x B[K,N]", "[workloads][scalesim]") {
  const Graph g = parse_scalesim_csv("Layer,M,N,K\nQKT,1024,1024,64\nLinear1, 1024, 4800, 1600,\n",
                                     "gpt2.csv", DType::kBf16);
  REQUIRE(g.tensor(*g.find_tensor("QKT.a")).shape == Shape{1024, 64});
  REQUIRE(g.tensor(*g.find_tensor("QKT.b")).shape == Shape{64, 1024});
  REQUIRE(g.tensor(*g.find_tensor("Linear1.c")).shape == Shape{1024, 4800});
  REQUIRE(graph_macs(g) == 1024LL * 1024 * 64 + 1024LL * 4800 * 1600);
}

TEST_CASE("scalesim: the copied SCALE-Sim topologies", "[workloads][scalesim]") {
  const std::string dir = std::string(TPUSIM_SOURCE_DIR) + "/workloads/scalesim/";
  // AlexNet rows (H, FH, C, NF, S) from the file, SCALE-Sim's unpadded output size.
  const std::int64_t rows[][5] = {{224, 11, 3, 96, 4},
                                  {27, 5, 96, 256, 1},
                                  {13, 3, 256, 384, 1},
                                  {13, 3, 384, 384, 1},
                                  {13, 3, 384, 256, 1}};
  std::int64_t macs = 0;
  for (const auto& [h, f, c, nf, s] : rows) {
    const std::int64_t o = (h - f) / s + 1;
    macs += o * o * f * f * c * nf;
  }
  REQUIRE(graph_macs(load_scalesim_csv(dir + "alexnet.csv", DType::kBf16)) == macs);
  REQUIRE(load_scalesim_csv(dir + "mobilnet_paper.csv", DType::kBf16).ops.size() == 28);
  REQUIRE(load_scalesim_csv(dir + "gpt2.csv", DType::kBf16).ops.size() == 6);
}

TEST_CASE("scalesim: bad files name line and character column", "[workloads][scalesim][errors]") {
  const std::string h = kConvHeader;
  // Columns count characters from 1, as an editor does: the cell's first non-blank one, or just
  // past the row's last for a missing cell.
  CHECK(error_of(h + "c1, 8, 8, 3, 3, 4, x, 1,\n") ==
        "t.csv:2:20: Num Filter: expected an integer in [1, 2^31), got 'x'");
  CHECK(error_of(h + "c1, 8, 8, 3, 3, 4, 2\n") ==
        "t.csv:2:21: expected 8 columns (name, H, W, FH, FW, C, filters, stride), got 7");
  CHECK(error_of(h + "c1, 8, 8, 3, 3, 4, 2, 1, 5\n") ==
        "t.csv:2:26: unexpected value '5' after the last column");
  CHECK(error_of(h + "c1, 8, 8, 9, 3, 4, 2, 1\n") ==
        "t.csv:2:11: Filter Height 9 is larger than IFMAP Height 8");
  CHECK(error_of(h + "c1, 8, 8, 3, 3, 4, 2, 1\nc1, 8, 8, 3, 3, 4, 2, 1\n") ==
        "t.csv:3:1: duplicate layer name 'c1'");
  CHECK(error_of(h + ", 8, 8, 3, 3, 4, 2, 1\n") == "t.csv:2:1: layer name is empty");
  CHECK_THAT(error_of("Layer,M,N\nx,1,2\n"),
             StartsWith("t.csv:1:1: not a SCALE-Sim topology header"));
  CHECK(error_of("Layer,M,N,K\n") == "t.csv:1:1: no layers after the header");
  CHECK(error_of("") == "t.csv: empty file: no SCALE-Sim header");
  CHECK(error_of("Layer,M,N,K\ng,1,2,99999999999\n") ==
        "t.csv:2:7: K: expected an integer in [1, 2^31), got '99999999999'");
  // A NUL or other control byte in a cell is shown escaped (it cut the message short).
  CHECK(error_of("Layer,M,N,K\ng,6" + std::string(1, '\0') + "4,2,3\n") ==
        "t.csv:2:3: M: expected an integer in [1, 2^31), got '6\\x004'");
  // A layer name that is not UTF-8 was renamed on its way to the report; YAML refuses it.
  CHECK(error_of("Layer,M,N,K\ng1,1,2,3\nla\xFFyer,1,2,3\n") == "t.csv:3:3: not UTF-8 text");
  REQUIRE_THROWS_WITH(load_scalesim_csv("/nonexistent.csv", DType::kBf16),
                      "/nonexistent.csv: cannot read: not a regular file (or does not exist)");
}
