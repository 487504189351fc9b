#include "workloads/load.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "workloads/scalesim_csv.h"
#include "workloads/yaml_graph.h"

namespace tpusim::workloads {

Graph load_workload(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".yaml" || ext == ".yml") return load_graph_yaml(path);
  if (ext == ".csv") return load_scalesim_csv(path, DType::kBf16);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw WorkloadError(SourceLocation{path, 0, 0}, "is a directory, not a workload file");
  if (ext.empty() && !std::filesystem::exists(path, ec))
    throw WorkloadError(SourceLocation{path, 0, 0},
                        "no such file (a sample is named without folder or extension, e.g. "
                        "'resnet50' or 'tpuv1/mlp0', for workloads/NAME.yaml)");
  throw WorkloadError(
      SourceLocation{path, 0, 0},
      (ext.empty() ? "no file extension" : "unknown workload format '" + ext + "'") +
          ": expected a YAML graph (.yaml, .yml) or a SCALE-Sim topology (.csv)");
}

}  // namespace tpusim::workloads
