#pragma once
// Builds small graphs in code for the shape-inference and reference tests.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/graph.h"

namespace tpusim::workloads::test {

struct GraphMaker {
  Graph g;

  TensorId tensor(const std::string& name, Shape shape, DType dtype = DType::kBf16,
                  TensorRole role = TensorRole::kInput) {
    g.tensors.push_back(
        Tensor{name, std::move(shape), dtype, role, SourceLocation{"t.yaml", 1, 1}});
    return static_cast<TensorId>(g.tensors.size() - 1);
  }

  // Appends an op; its output tensor gets the inferred shape and dtype and the given role.
  const Tensor& op(const std::string& name, OpKind kind, std::vector<TensorId> inputs,
                   OpAttrs attrs = {}, TensorRole role = TensorRole::kOutput) {
    Op op;
    op.name = name;
    op.kind = kind;
    op.inputs = std::move(inputs);
    op.attrs = std::move(attrs);
    op.where = SourceLocation{"t.yaml", static_cast<int>(g.ops.size()) + 2, 3};
    const Shape shape = infer_output_shape(g, op);
    const DType dtype = infer_output_dtype(g, op);
    op.output = tensor(name, shape, dtype, role);
    g.ops.push_back(op);
    return g.tensors.back();
  }

  // The error infer_output_shape gives for an op that does not fit.
  std::string shape_error(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs = {}) {
    Op op;
    op.name = "bad";
    op.kind = kind;
    op.inputs = std::move(inputs);
    op.attrs = std::move(attrs);
    op.where = SourceLocation{"t.yaml", 9, 5};
    try {
      infer_output_shape(g, op);
      infer_output_dtype(g, op);
    } catch (const WorkloadError& e) {
      return e.what();
    }
    return "no error";
  }
};

}  // namespace tpusim::workloads::test
