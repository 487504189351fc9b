#pragma once
// The YAML graph format (documented in workloads/README.md): tensors, operators, `linear` and
// implicit weights as shorthand, and `repeat` blocks written once and expanded here.

#include <string>
#include <string_view>

#include "workloads/graph.h"

namespace tpusim::workloads {

// Reads and validates a graph file. Every problem is a WorkloadError "file:line:col: message".
Graph load_graph_yaml(const std::string& path);

// As load_graph_yaml, from text already in memory; `file_name` is used in messages only.
Graph parse_graph_yaml(std::string_view text, std::string file_name);

}  // namespace tpusim::workloads
