#pragma once
// One entry point for every workload file format, chosen by extension.

#include <string>

#include "workloads/graph.h"

namespace tpusim::workloads {

// .yaml/.yml: a YAML graph (load_graph_yaml); .csv: a SCALE-Sim topology (load_scalesim_csv)
// with bf16 tensors, since SCALE-Sim files carry no data type. Anything else is a WorkloadError.
Graph load_workload(const std::string& path);

}  // namespace tpusim::workloads
