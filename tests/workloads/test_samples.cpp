#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "workloads/load.h"

using namespace tpusim;
using namespace tpusim::workloads;

namespace {

std::string sample(const std::string& rel) {
  return std::string(TPUSIM_SOURCE_DIR) + "/workloads/" + rel;
}

// MACs of a conv layer: output pixels x output channels x window (KH*KW*Cin/groups).
std::int64_t conv(std::int64_t n, std::int64_t out_hw, std::int64_t cout, std::int64_t k,
                  std::int64_t cin_per_group) {
  return n * out_hw * out_hw * cout * k * k * cin_per_group;
}

// ResNet (He et al. 2016, Table 1): stem, four stages, fc. Bottleneck v1.5 or basic blocks.
std::int64_t resnet_macs(std::int64_t n, bool bottleneck) {
  std::int64_t macs = conv(n, 112, 64, 7, 3);  // conv1 7x7/2
  const std::int64_t blocks50[] = {3, 4, 6, 3}, blocks18[] = {2, 2, 2, 2};
  std::int64_t cin = 64, hw = 56;
  for (int s = 0; s < 4; ++s) {
    const std::int64_t width = 64 << s, out = bottleneck ? width * 4 : width;
    const std::int64_t out_hw = s == 0 ? 56 : hw / 2;
    for (std::int64_t b = 0; b < (bottleneck ? blocks50[s] : blocks18[s]); ++b) {
      const std::int64_t in_hw = b == 0 ? hw : out_hw;
      if (bottleneck) {
        macs += conv(n, in_hw, width, 1, cin);     // 1x1 reduce (stride 1 in v1.5)
        macs += conv(n, out_hw, width, 3, width);  // 3x3, carries the stride
        macs += conv(n, out_hw, out, 1, width);    // 1x1 expand
      } else {
        macs += conv(n, out_hw, width, 3, cin) + conv(n, out_hw, width, 3, width);
      }
      if (b == 0 && (cin != out || out_hw != in_hw)) macs += conv(n, out_hw, out, 1, cin);
      cin = out;
    }
    hw = out_hw;
  }
  return macs + n * cin * 1000;  // fc
}

// MobileNetV2 (Sandler et al. 2018, Table 2).
std::int64_t mobilenetv2_macs() {
  std::int64_t macs = conv(1, 112, 32, 3, 3);
  const std::int64_t cfg[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                 {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  std::int64_t cin = 32, hw = 112;
  for (const auto& [t, c, n, s] : cfg) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t stride = i == 0 ? s : 1, hidden = cin * t, out_hw = hw / stride;
      if (t != 1) macs += conv(1, hw, hidden, 1, cin);
      macs += conv(1, out_hw, hidden, 3, 1);  // depthwise: one input channel per output
      macs += conv(1, out_hw, c, 1, hidden);
      cin = c;
      hw = out_hw;
    }
  }
  return macs + conv(1, 7, 1280, 1, 320) + 1280 * 1000;
}

// One encoder layer: Q, K, V, output projections, two FFN matmuls, Q K^T and P V per head.
std::int64_t bert_layer_macs(std::int64_t s, std::int64_t d, std::int64_t heads, std::int64_t ffn) {
  return 4 * s * d * d + 2 * s * d * ffn + 2 * heads * s * s * (d / heads);
}

}  // namespace

TEST_CASE("samples: every workload file loads and validates", "[workloads][samples]") {
  int count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(sample(""))) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".csv") continue;
    INFO(entry.path().string());
    const Graph g = load_workload(entry.path().string());
    REQUIRE_NOTHROW(validate(g));
    REQUIRE(!g.ops.empty());
    ++count;
  }
  REQUIRE(count >= 35);  // 10 sample and teaching graphs, 22 TPUv3 workloads, 3 SCALE-Sim files
}

TEST_CASE("samples: CNN MACs equal the per-layer formula", "[workloads][samples]") {
  REQUIRE(resnet_macs(1, true) == 4089184256);  // the ~4.09 GMACs quoted for ResNet-50 v1.5
  REQUIRE(graph_macs(load_workload(sample("resnet50.yaml"))) == resnet_macs(1, true));
  REQUIRE(graph_macs(load_workload(sample("tpuv3/resnet50.yaml"))) == resnet_macs(1, true));
  REQUIRE(graph_macs(load_workload(sample("resnet50-b8.yaml"))) == resnet_macs(8, true));
  REQUIRE(graph_macs(load_workload(sample("tpuv3/resnet18.yaml"))) == resnet_macs(1, false));
  REQUIRE(graph_macs(load_workload(sample("mobilenetv2.yaml"))) == mobilenetv2_macs());
  REQUIRE(mobilenetv2_macs() / 1000000 == 300);  // "300M multiply-adds", Sandler et al. Table 3
  const Graph r50 = load_workload(sample("resnet50.yaml"));
  REQUIRE(r50.tensor(*r50.find_tensor("logits")).shape == Shape{1, 1000});
}

TEST_CASE("samples: transformer MACs equal the per-layer formula", "[workloads][samples]") {
  REQUIRE(graph_macs(load_workload(sample("bert-base-layer-s128.yaml"))) ==
          bert_layer_macs(128, 768, 12, 3072));
  REQUIRE(graph_macs(load_workload(sample("bert-base-layer-s512.yaml"))) ==
          bert_layer_macs(512, 768, 12, 3072));
  REQUIRE(graph_macs(load_workload(sample("bert-base-12layer-s512.yaml"))) ==
          12 * bert_layer_macs(512, 768, 12, 3072));
  REQUIRE(graph_macs(load_workload(sample("bert-large-layer-s512.yaml"))) ==
          bert_layer_macs(512, 1024, 16, 4096));
  REQUIRE(graph_macs(load_workload(sample("tpuv3/bert_base.yaml"))) ==
          bert_layer_macs(512, 768, 12, 3072));
  REQUIRE(graph_macs(load_workload(sample("tpuv3/bert_large.yaml"))) ==
          bert_layer_macs(512, 1024, 16, 4096));
  REQUIRE(graph_macs(load_workload(sample("tpuv3/bert_xlarge.yaml"))) ==
          bert_layer_macs(512, 2048, 32, 8192));
  // GPT-2 decode: per layer 4 projections and 2 MLP matmuls on one token, scores and context over
  // 1024 cached + 1 new positions in 12 heads of 64; then the tied LM head.
  const std::int64_t gpt2_layer = 4 * 768 * 768 + 2 * 768 * 3072 + 2 * 12 * 1025 * 64;
  const Graph gpt2 = load_workload(sample("gpt2-small-decode.yaml"));
  REQUIRE(graph_macs(gpt2) == 12 * gpt2_layer + 768 * 50257);
  REQUIRE(gpt2.tensor(*gpt2.find_tensor("logits")).shape == Shape{1, 50257});
  REQUIRE(gpt2.tensor(*gpt2.find_tensor("k_cache.11")).role == TensorRole::kInput);
}

TEST_CASE("samples: GEMM, teaching and TPUv3 kernels", "[workloads][samples]") {
  REQUIRE(graph_macs(load_workload(sample("gemm-2048.yaml"))) == 2048LL * 2048 * 2048);
  const Graph teach = load_workload(sample("teach/matmul-4x4.yaml"));
  REQUIRE(graph_macs(teach) == 64);
  REQUIRE(teach.tensor(teach.ops[0].output).dtype == DType::kInt32);
  for (std::int64_t m : {256, 512, 1024, 2048})
    REQUIRE(graph_macs(
                load_workload(sample("tpuv3/gemm_" + std::to_string(m) + "x" + std::to_string(m) +
                                     "x" + std::to_string(m) + ".yaml"))) == m * m * m);
  // conv_B x H x W x Cin x Cout x 3 x 1 x 1: same-size output.
  for (auto [h, c] : {std::pair{56, 64}, {28, 128}, {14, 256}, {7, 512}}) {
    const std::string name = "tpuv3/conv_64x" + std::to_string(h) + "x" + std::to_string(h) + "x" +
                             std::to_string(c) + "x" + std::to_string(c) + "x3x1x1.yaml";
    REQUIRE(graph_macs(load_workload(sample(name))) == conv(64, h, c, 3, c));
  }
  for (std::int64_t heads : {12, 16, 32})
    REQUIRE(graph_macs(load_workload(sample("tpuv3/attention_" + std::to_string(heads) +
                                            "x512x64.yaml"))) == 2 * heads * 512 * 512 * 64);
  REQUIRE(graph_macs(load_workload(sample("tpuv3/layernorm_8192x768.yaml"))) == 0);
  REQUIRE(load_workload(sample("tpuv3/softmax_8192x8192.yaml")).ops[0].kind == OpKind::kSoftmax);
}

// The TPUv1 paper's memory-bound applications (Jouppi et al., ISCA 2017, Table 1): the stand-ins
// keep each one's batch, FC layer count and weight count (within the rounding of equal widths),
// so the work (batch x weights MACs) and the weight bytes are the published ones.
TEST_CASE("samples: TPUv1 applications carry Table 1's counts", "[workloads][samples]") {
  struct App {
    const char* file;
    std::int64_t batch, fc_layers, weights;
  };
  for (const App& app :
       {App{"tpuv1/mlp0.yaml", 200, 5, 20'000'000}, App{"tpuv1/mlp1.yaml", 168, 4, 5'000'000},
        App{"tpuv1/lstm0.yaml", 64, 24, 52'000'000}, App{"tpuv1/lstm1.yaml", 96, 37, 34'000'000}}) {
    INFO(app.file);
    const Graph g = load_workload(sample(app.file));
    std::int64_t fc = 0, weights = 0;
    for (const Op& op : g.ops) fc += op.kind == OpKind::kMatmul;
    for (const Tensor& t : g.tensors)
      if (t.role == TensorRole::kWeight) {
        std::int64_t n = 1;
        for (std::int64_t d : t.shape) n *= d;
        weights += n;
      }
    CHECK(fc == app.fc_layers);
    CHECK(std::abs(weights - app.weights) <= app.weights / 1000);
    CHECK(graph_macs(g) == app.batch * weights);
    CHECK(g.tensor(g.ops[0].inputs[0]).shape[0] == app.batch);
  }
}

TEST_CASE("samples: load_workload refuses unknown extensions", "[workloads][samples][errors]") {
  REQUIRE_THROWS_WITH(load_workload("model.onnx"),
                      "model.onnx: unknown workload format '.onnx': expected a YAML graph (.yaml, "
                      ".yml) or a SCALE-Sim topology (.csv)");
  // A directory, or a file with no extension, used to be "unknown workload format ''".
  const std::string dir = TPUSIM_SOURCE_DIR "/workloads/tpuv3";
  REQUIRE_THROWS_WITH(load_workload(dir), dir + ": is a directory, not a workload file");
  REQUIRE_THROWS_WITH(load_workload("/dev/null"),
                      "/dev/null: no file extension: expected a YAML graph (.yaml, .yml) or a "
                      "SCALE-Sim topology (.csv)");
}
