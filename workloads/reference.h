#pragma once
// A plain reference evaluator: every operator as straightforward loops, slow and obviously right.
// Functional-mode runs of compiled programs are checked against it.
//
// Numerics contract (also in README.md): arithmetic is done in double; each operator's output is
// rounded once to its tensor's dtype (fp32: nearest float; bf16: nearest float, then nearest bf16,
// ties to even; integers wrap). conv2d/matmul sum their products in double, which is exact for
// int8 x int8 -> int32, add the bias, then round. GELU is the tanh approximation; softmax subtracts
// the row maximum; layernorm uses the biased (population) variance.

#include <map>
#include <string>

#include "workloads/graph.h"
#include "workloads/npy.h"

namespace tpusim::workloads {

// Computes every operator of a validated graph. `inputs_and_weights` must hold exactly the graph's
// input and weight tensors, each with the tensor's shape and dtype. Returns every tensor
// (inputs, weights, activations, outputs) by name. Bad data (a missing tensor, an embedding
// index out of range) is a WorkloadError.
std::map<std::string, TensorData> evaluate(
    const Graph& graph, const std::map<std::string, TensorData>& inputs_and_weights);

}  // namespace tpusim::workloads
