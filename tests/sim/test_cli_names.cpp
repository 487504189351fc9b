// How the command line finds presets and samples by name, and what it says when a name is
// none of them.

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "tests/sim/cli_support.h"
#include "tests/sim/test_support.h"

namespace fs = std::filesystem;
using tpusim::test::Result;
using tpusim::test::run_tpusim;
using tpusim::test::TempDir;

TEST_CASE("cli: samples in subfolders and preset file names resolve, a missing file is named",
          "[cli]") {
  // Run from the source tree (run_tpusim does): workloads/tpuv1/mlp0.yaml by its sample name,
  // configs/chips/tpu-v4i.yaml by its file name.
  const Result mlp = run_tpusim("run -c tpu-v4i.yaml -w tpuv1/mlp0");
  CHECK(mlp.exit_code == 0);
  CHECK(mlp.out.rfind("tpusim: mlp0 on tpu-v4i\n", 0) == 0);
  const Result missing = run_tpusim("run -w nowhere/graph");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err ==
        "error: nowhere/graph: no such file (a sample is named without folder or extension, e.g. "
        "'resnet50' or 'tpuv1/mlp0', for workloads/NAME.yaml)\n");
}

TEST_CASE("cli: a folder named like a preset does not hide it, a file without one is used",
          "[cli]") {
  TempDir dir;
  fs::create_directories(dir.path("tpu-v4i"));
  fs::create_directories(dir.path("gemm-2048"));
  dir.write("mychip", "extends: " TPUSIM_SOURCE_DIR "/configs/chips/teach-4x4.yaml\nname: mine\n");
  const Result presets = run_tpusim("config tpu-v4i", dir.path(""));
  CHECK(presets.exit_code == 0);
  CHECK_THAT(presets.out, Catch::Contains("name: tpu-v4i"));
  // No preset is called mychip: the file of that name in the working directory.
  const Result own = run_tpusim("config mychip", dir.path(""));
  CHECK(own.exit_code == 0);
  CHECK_THAT(own.out, Catch::Contains("name: mine"));
  // The sample gemm-2048 despite the folder of that name, which is also the output folder.
  const Result run = run_tpusim("run -c tpu-v4i -w gemm-2048 -o gemm-2048", dir.path(""));
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::StartsWith("tpusim: gemm-2048 on tpu-v4i\n"));
  CHECK(fs::is_regular_file(dir.path("gemm-2048/report.json")));
}

TEST_CASE("cli: an unknown preset or sample name says so and suggests the nearest", "[cli]") {
  // From a folder with no configs/ of its own: the names come from the source tree.
  TempDir dir;
  const Result chip = run_tpusim("run -c tpu-v4x -w resnet50", dir.path(""));
  CHECK(chip.exit_code == 2);
  CHECK(chip.err ==
        "error: unknown chip 'tpu-v4x': no configs/chips/tpu-v4x.yaml here or in the source "
        "tree, and no file of that name (did you mean 'tpu-v4'?)\n");
  const Result workload = run_tpusim("run -w resnet5", dir.path(""));
  CHECK(workload.exit_code == 2);
  CHECK_THAT(workload.err, Catch::StartsWith("error: unknown workload 'resnet5': ") &&
                               Catch::EndsWith("(did you mean 'resnet50'?)\n"));
  // Nothing close: the samples are listed (few enough), each once though found twice.
  const Result far = run_tpusim("run -w zzzzzzzzzzzz");
  CHECK(far.exit_code == 2);
  CHECK_THAT(far.err, Catch::Contains("(expected one of: bert-base-12layer-s512,") &&
                          Catch::Contains(", resnet50, resnet50-b8)\n"));
  CHECK(far.err.find("resnet50, resnet50,") == std::string::npos);
  // A sweep file names the line of its chip.
  dir.write("s.yaml", "chip: tpu-v4x\nworkloads: [resnet50]\naxes:\n  core.mxu.rows: [64]\n");
  const Result sweep = run_tpusim("sweep s.yaml --list", dir.path(""));
  CHECK(sweep.exit_code == 2);
  CHECK_THAT(sweep.err, Catch::StartsWith("error: s.yaml:1:7: chip: unknown chip 'tpu-v4x'") &&
                            Catch::EndsWith("(did you mean 'tpu-v4'?)\n"));
}
