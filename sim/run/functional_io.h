#pragma once
// Functional runs of a lowered workload: tensor data into off-chip memory before the run (from
// .npy files or the seed), results out of it afterwards, through each tensor's HBM placement.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "isa/lower/lower.h"
#include "models/memory/memory.h"
#include "workloads/graph.h"
#include "workloads/npy.h"

namespace tpusim::sim {

struct FunctionalData {
  std::map<std::string, workloads::TensorData> tensors;  // every input and weight, by name
  std::set<std::string> generated;                        // made from the seed, not read
  std::map<std::string, std::vector<std::int64_t>> indices;  // embedding indices, for the lowering
};

// The file a tensor is read from or dumped to under a directory: NAME.npy, with every character
// but letters, digits, '.', '_' and '-' written as '_' (and a leading '.' too), so a name such
// as "enc/x" or a CSV layer "../x" stays a file inside the directory.
std::string npy_file_name(const std::string& tensor);
// Refuses, before anything runs, two inputs, weights or outputs that would share a file.
void check_npy_file_names(const workloads::Graph& graph);

// Inputs and weights from `inputs_dir`/NAME.npy where present (empty dir: none), the rest from
// the seed. Bad files are InputErrors naming the file.
FunctionalData prepare_functional_data(const workloads::Graph& graph, const std::string& inputs_dir,
                                       std::uint64_t seed);

// Writes data tensors, constants and halos into memory.
void write_tensors(models::BackingStore& store, const isa::Lowered& lowered, const FunctionalData& data);

// Writes every graph output, and every generated input, as DIR/NAME.npy (empty dir: nothing).
void dump_tensors(models::BackingStore& store, const isa::Lowered& lowered, const FunctionalData& data,
                  const std::string& dir);

}  // namespace tpusim::sim
