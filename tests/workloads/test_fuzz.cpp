// Mutated sample files must give a WorkloadError or a valid graph: never a crash, a hang, or any
// other exception. Deterministic (fixed seeds) so a failure reproduces; run under the ASan build
// (-DTPUSIM_SANITIZE=ON) to catch memory errors as well.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "workloads/npy.h"
#include "workloads/scalesim_csv.h"
#include "workloads/yaml_graph.h"

using namespace tpusim;
using namespace tpusim::workloads;

namespace {

// A sample's text; a missing one fails the test rather than fuzzing an empty string.
std::string read(const std::string& rel) {
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/workloads/" + rel, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  INFO(rel);
  REQUIRE(!s.str().empty());
  return s.str();
}

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  std::size_t below(std::size_t n) { return n ? next() % n : 0; }
};

std::string mutate(std::string text, Rng& rng) {
  static const std::string kBytes = "[]{}:,-&*!|>#'\"\n\t 0123456789-xe.~?%@`\\";
  static const char* kTokens[] = {"0",
                                  "-1",
                                  "99999999999999999999",
                                  "2147483647",
                                  "1e308",
                                  "nan",
                                  "repeat",
                                  "{count: 10000, input: x, output: y, ops: []}",
                                  "[[[[",
                                  "null",
                                  "~",
                                  "&a",
                                  "*a",
                                  "<<: *a",
                                  "\xff\xfe",
                                  "---"};
  const int n = 1 + static_cast<int>(rng.below(4));
  for (int i = 0; i < n && !text.empty(); ++i) {
    const std::size_t at = rng.below(text.size());
    switch (rng.below(6)) {
      case 0:
        text.erase(at, 1 + rng.below(20));
        break;
      case 1:
        text.insert(at, 1, kBytes[rng.below(kBytes.size())]);
        break;
      case 2:
        text.insert(at, kTokens[rng.below(std::size(kTokens))]);
        break;
      case 3:
        text[at] = kBytes[rng.below(kBytes.size())];
        break;
      case 4:
        text.resize(at);
        break;
      default: {  // duplicate a line elsewhere
        const std::size_t b = text.rfind('\n', at), e = text.find('\n', at);
        const std::size_t start = b == std::string::npos ? 0 : b + 1;
        const std::string line = text.substr(start, e == std::string::npos ? e : e - start + 1);
        text.insert(rng.below(text.size()), line);
      }
    }
  }
  return text;
}

// TPUSIM_FUZZ_RUNS multiplies the runs for a longer search (e.g. under the ASan build).
template <typename F>
void fuzz(const std::string& original, std::uint64_t seed, int runs, F&& parse) {
  Rng rng{seed};
  const char* scale = std::getenv("TPUSIM_FUZZ_RUNS");
  if (scale) runs *= std::max(1, std::atoi(scale));
  for (int i = 0; i < runs; ++i) {
    const std::string text = mutate(original, rng);
    try {
      parse(text);
    } catch (const WorkloadError&) {
      // expected for most mutations
    } catch (const std::exception& e) {
      INFO("run " << i << " input:\n" << text);
      FAIL("unexpected exception: " << e.what());
    }
  }
}

}  // namespace

TEST_CASE("fuzz: mutated YAML graphs fail cleanly", "[workloads][fuzz]") {
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (const char* file : {"bert-base-layer-s128.yaml", "gpt2-small-decode.yaml",
                           "mobilenetv2.yaml", "teach/matmul-4x4.yaml"}) {
    const std::string text = read(file);
    CHECK_NOTHROW(parse_graph_yaml(text, "f.yaml"));  // unmutated, it parses
    fuzz(text, seed++, 150, [](const std::string& t) { parse_graph_yaml(t, "f.yaml"); });
  }
}

TEST_CASE("fuzz: mutated SCALE-Sim CSVs fail cleanly", "[workloads][fuzz]") {
  for (const char* file : {"scalesim/mobilnet_paper.csv", "scalesim/gpt2.csv"}) {
    const std::string text = read(file);
    CHECK_NOTHROW(parse_scalesim_csv(text, "f.csv", DType::kInt8));
    fuzz(text, 12345, 200,
         [](const std::string& t) { parse_scalesim_csv(t, "f.csv", DType::kInt8); });
  }
}

TEST_CASE("fuzz: mutated .npy files fail cleanly", "[workloads][fuzz]") {
  const std::string npy = encode_npy(TensorData{{3, 4}, DType::kInt32, std::vector<double>(12, 7)});
  fuzz(npy, 777, 300, [](const std::string& t) { parse_npy(t, "f.npy"); });
}
