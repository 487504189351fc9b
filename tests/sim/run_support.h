#pragma once
// `tpusim run --functional` against the reference evaluator, and `tpusim compile`, for the run
// tests (test_run.cpp explains the tolerances).

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "tests/sim/test_support.h"
#include "workloads/load.h"
#include "workloads/npy.h"
#include "workloads/reference.h"
#include "workloads/yaml_graph.h"

namespace tpusim::test {

namespace wl = tpusim::workloads;

struct Outcome {
  int exit_code = -1;
  std::string err;
  double worst = 0;  // largest |got - want| / (1 + |want|) over all outputs
  std::size_t compared = 0;
  std::size_t nonzero = 0;  // outputs that are not 0: a run that wrote nothing cannot pass
};

inline Outcome run_and_compare(const std::string& chip, const std::string& graph_text,
                               const std::string& extra = "") {
  TempDir dir;
  const std::string graph_path = dir.write("graph.yaml", graph_text);
  const std::string dump = dir.path("dump");
  const std::string command = "cd '" TPUSIM_SOURCE_DIR "' && timeout 120 '" TPUSIM_EXE
                              "' run -q -c " +
                              chip + " -w '" + graph_path + "' --functional --seed 7 --dump '" +
                              dump + "' " + extra + " > /dev/null 2> '" + dir.path("err") + "'";
  const int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = slurp(dir.path("err"));
  if (o.exit_code != 0) return o;
  const wl::Graph graph = wl::load_graph_yaml(graph_path);
  std::map<std::string, wl::TensorData> inputs;
  for (const wl::Tensor& t : graph.tensors)
    if (t.role == wl::TensorRole::kInput || t.role == wl::TensorRole::kWeight)
      inputs[t.name] = wl::read_npy_for(dump + "/" + t.name + ".npy", t);
  const auto want = wl::evaluate(graph, inputs);
  for (const wl::Tensor& t : graph.tensors) {
    if (t.role != wl::TensorRole::kOutput) continue;
    const wl::TensorData got = wl::read_npy_for(dump + "/" + t.name + ".npy", t);
    const wl::TensorData& ref = want.at(t.name);
    REQUIRE(got.values.size() == ref.values.size());
    for (std::size_t i = 0; i < ref.values.size(); ++i) {
      o.worst = std::max(o.worst,
                         std::abs(got.values[i] - ref.values[i]) / (1.0 + std::abs(ref.values[i])));
      ++o.compared;
      o.nonzero += got.values[i] != 0.0;
    }
  }
  return o;
}

// `tpusim compile` of a graph: the program text (`.tasm`), or with explain the plan per operator.
inline std::string compile_text(const std::string& chip, const std::string& graph_text,
                                bool explain, const std::string& extra = "") {
  TempDir dir;
  const std::string graph_path = dir.write("graph.yaml", graph_text);
  const std::string out = dir.path(explain ? "explain.txt" : "program.tasm");
  const std::string command = "cd '" TPUSIM_SOURCE_DIR "' && '" TPUSIM_EXE "' compile -c " + chip +
                              " " + extra + " -w '" + graph_path + "' " +
                              (explain ? "--explain > '" + out + "'" : "-o '" + out + "'") +
                              " 2> /dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  return slurp(out);
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// report.json of a timing-mode `tpusim run` (`workload`: a sample name or a quoted path).
inline nlohmann::json timing_report(const std::string& chip, const std::string& workload) {
  TempDir dir;
  const std::string command =
      "cd '" TPUSIM_SOURCE_DIR "' && timeout 120 '" TPUSIM_EXE "' run -q -c " + chip + " -w " +
      workload + " -o '" + dir.path("out") + "' > /dev/null 2> '" + dir.path("err") + "'";
  const int status = std::system(command.c_str());
  INFO(slurp(dir.path("err")));
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  return nlohmann::json::parse(slurp(dir.path("out") + "/report.json"));
}

}  // namespace tpusim::test
