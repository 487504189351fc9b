// Operator semantics at their edges, each case first found wrong by differential testing
// against a NumPy reference (session 7's fuzzing rounds): scalars, halo'd batched matmuls, int8
// on the vector unit, requantize, concat buffers, gelu's form, graphs without MXU operators.
// Expected values come from the reference evaluator of workloads/ (run_support.h).

#include <catch2/catch.hpp>

#include "tests/sim/run_support.h"

namespace {

using tpusim::test::Outcome;
using tpusim::test::run_and_compare;

// Runs `graph` functionally on each chip: every one of its `elements` output values equals the
// reference's, and some are not zero.
void check_exact_on(std::initializer_list<const char*> chips, const std::string& graph,
                    std::uint64_t elements) {
  for (const char* chip : chips) {
    INFO(chip);
    const Outcome o = run_and_compare(chip, graph);
    REQUIRE(o.exit_code == 0);
    CHECK(o.nonzero > 0);
    CHECK(o.compared == elements);
    CHECK(o.worst == 0);
  }
}

}  // namespace

TEST_CASE("run: scalar tensors: a scalar operand broadcasts over rows, a scalar relu runs",
          "[run]") {
  // The scalar is one element in HBM: the row it is added to must see it in every column (a
  // run that read the neighbouring bytes as the rest of the row would differ after column 0).
  const Outcome o = run_and_compare("tpu-v4i", R"(name: scalars
dtype: bf16
tensors:
  - {name: x, shape: [4, 256], role: input}
  - {name: s, shape: [], role: weight}
  - {name: t, shape: [], role: input}
  - {name: y, shape: [4, 256], role: output}
  - {name: z, shape: [], role: output}
ops:
  - {name: a, op: add, inputs: [x, s]}
  - {name: y, op: mul, inputs: [a, s]}
  - {name: z, op: relu, inputs: [t]}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 4 * 256 + 1);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("run: batched matmuls read and write tensors stored with a convolution's halo", "[run]") {
  // x feeds a padded convolution, so it is stored with a border; as a batched matmul's A its
  // matrices are not dense blocks (every value of y was wrong). y likewise as a matmul's output.
  const Outcome o = run_and_compare("tpu-v4i", R"(name: halos
dtype: bf16
tensors:
  - {name: x, shape: [1, 2, 6, 3], role: input}
  - {name: b, shape: [1, 2, 3, 5], role: weight}
  - {name: b2, shape: [1, 2, 5, 4], role: weight}
  - {name: c, shape: [1, 2, 6, 4], role: output}
  - {name: z, shape: [1, 2, 6, 4], role: output}
ops:
  - {name: c, op: conv2d, inputs: [x], filters: 4, kernel: 3, padding: 1}
  - {name: y, op: matmul, inputs: [x, b]}
  - {name: y2, op: matmul, inputs: [y, b2]}
  - {name: z, op: conv2d, inputs: [y2], filters: 4, kernel: 3, padding: 1}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 2 * 2 * 6 * 4);
  CHECK(o.worst < 1.0 / 32);
}

TEST_CASE("run: int8 on the vector unit is exact: wrapping products, padded max pool, relu6",
          "[run]") {
  // x * x * x wraps in int8 (through fp32 it saturated at 127); the max pool's border must
  // lose to negative values (it read as 0); relu6 after an int8 linear leaves int32 (it was
  // compiled to an invalid requantize).
  const Outcome o = run_and_compare("teach-4x4", R"(name: int8s
dtype: int8
tensors:
  - {name: x, shape: [1, 3, 3, 4], role: input}
  - {name: y, shape: [1, 3, 3, 4], role: output}
  - {name: p, shape: [1, 2, 2, 4], role: output}
  - {name: z, shape: [1, 3, 3, 4], dtype: int32, role: output}
ops:
  - {name: sq, op: mul, inputs: [x, x]}
  - {name: y, op: mul, inputs: [sq, x]}
  - {name: p, op: max_pool, inputs: [x], kernel: 2, stride: 2, padding: 1}
  - {name: fc, op: linear, inputs: [x], features: 4}
  - {name: z, op: relu6, inputs: [fc]}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 36 + 16 + 36);
  CHECK(o.worst == 0);
}

TEST_CASE("run: batched matmuls broadcast batch dimensions both ways", "[run]") {
  // [2,1] against [1,2] batches are four products, each pairing a's batch i with b's batch j;
  // only two were computed (equal batch counts were taken for equal batch shapes), and a batch
  // rank 1 against rank 2 must align the dimensions from the right.
  const Outcome o = run_and_compare("tpu-v4i", R"(name: bmm
dtype: bf16
tensors:
  - {name: a, shape: [2, 1, 4, 5], role: input}
  - {name: b, shape: [1, 2, 5, 6], role: input}
  - {name: c, shape: [2, 2, 4, 6], role: output}
  - {name: p, shape: [1, 3, 4, 5], role: input}
  - {name: q, shape: [3, 1, 5, 6], role: input}
  - {name: r, shape: [3, 3, 4, 6], role: output}
  - {name: s, shape: [3, 5, 2], role: input}
  - {name: t, shape: [2, 3, 4, 2], role: output}
ops:
  - {name: c, op: matmul, inputs: [a, b]}
  - {name: r, op: matmul, inputs: [p, q]}
  - {name: t, op: matmul, inputs: [a, s]}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 96 + 216 + 48);
  CHECK(o.worst < 1.0 / 64);
}

TEST_CASE("run: int32 relu, relu6 and max pool keep values above 2^24 exact", "[run]") {
  // Generated integers are -8..7, so x^11 reaches 7^11 = 1,977,326,743: odd and above 2^24,
  // it has no fp32 of its own, and a relu or max pool computed through fp32 changed it.
  const Outcome o = run_and_compare("tpu-v1", R"(name: int32s
dtype: int32
tensors:
  - {name: x, shape: [1, 4, 4, 8], role: input}
  - {name: y, shape: [1, 4, 4, 8], role: output}
  - {name: z, shape: [1, 4, 4, 8], role: output}
  - {name: p, shape: [1, 2, 2, 8], role: output}
ops:
  - {name: x2, op: mul, inputs: [x, x]}
  - {name: x4, op: mul, inputs: [x2, x2]}
  - {name: x8, op: mul, inputs: [x4, x4]}
  - {name: x10, op: mul, inputs: [x8, x2]}
  - {name: x11, op: mul, inputs: [x10, x]}
  - {name: y, op: relu, inputs: [x11]}
  - {name: z, op: relu6, inputs: [x11]}
  - {name: p, op: max_pool, inputs: [x11], kernel: 2, stride: 2}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.compared == 128 + 128 + 32);
  CHECK(o.worst == 0);
}

TEST_CASE("run: an int8 MLP requantized between layers is exact on every int8 chip", "[run]") {
  // Each layer's int32 result is scaled back to int8 (what TPUv1's Activate does), so the next
  // layer multiplies int8 again; tpu-v1 runs it functionally, not as a bf16 stand-in.
  const std::string mlp = R"(name: int8_mlp
dtype: int8
tensors:
  - {name: x, shape: [16, 64], role: input}
  - {name: y, shape: [16, 32], role: output}
ops:
  - {name: fc1, op: linear, inputs: [x], features: 64}
  - {name: r1, op: relu, inputs: [fc1]}
  - {name: q1, op: requantize, inputs: [r1], scale: 0.01}
  - {name: fc2, op: linear, inputs: [q1], features: 32}
  - {name: y, op: requantize, inputs: [fc2], scale: 0.02, to: int8}
)";
  check_exact_on({"teach-4x4", "tpu-v1", "gemmini-16x16", "tpu-v4i"}, mlp, 16 * 32);
  // Fused into a depthwise convolution's read-out on the vector unit, and on its own when its
  // input has a second reader.
  const Outcome dw = run_and_compare("gemmini-16x16", R"(name: int8_dw
dtype: int8
tensors:
  - {name: x, shape: [1, 6, 6, 8], role: input}
  - {name: y, shape: [1, 6, 6, 8], role: output}
  - {name: s, shape: [1, 6, 6, 8], role: output}
ops:
  - {name: d, op: conv2d, inputs: [x], filters: 8, kernel: 3, groups: 8, padding: 1}
  - {name: y, op: requantize, inputs: [d], scale: 0.05}
  - {name: c, op: conv2d, inputs: [x], filters: 8, kernel: 1}
  - {name: s, op: requantize, inputs: [c], scale: 0.1, to: int8}
  - {name: c2, op: relu, inputs: [c]}
)");
  REQUIRE(dw.exit_code == 0);
  CHECK(dw.nonzero > 0);
  CHECK(dw.worst == 0);
}

TEST_CASE("run: a requantize alone keeps the graph's int8 and lowers on a chip without it",
          "[run]") {
  // No MXU operator and an int32 input: the int8 output used to be lowered as bf16 on chips
  // with both types, an invalid vpu.requantize ("dtype must be int8, int16 or fp8").
  const std::string graph = R"(name: requantize_only
dtype: int8
tensors:
  - {name: a, shape: [8, 256], role: input, dtype: int32}
  - {name: y, role: output}
ops:
  - {name: y, op: requantize, inputs: [a], scale: 0.5}
)";
  check_exact_on({"tpu-v4i", "tpu-v5e", "tpu-v1"}, graph, 8 * 256);
  // tpu-v3 has no integer type: the tensors become floating (timing only) and the requantize a
  // cast, as in the MXU's read-out.
  const std::string program = tpusim::test::compile_text("tpu-v3", graph, false);
  CHECK(tpusim::test::contains(program, "vpu.cast"));
  CHECK_FALSE(tpusim::test::contains(program, "vpu.requantize"));
}

TEST_CASE("run: a concat along a leading axis copies each input whole (no buffer race)", "[run]") {
  // One copy pipeline per input, on the same vmem buffers: x's first loads (another DMA engine)
  // overwrote y's buffer while y's last store still read it, and c[1, :58] held x's values.
  const Outcome o = run_and_compare("tpu-v4i", R"(name: concat_rows
dtype: bf16
tensors:
  - {name: x, shape: [2, 116, 103], role: input}
  - {name: y, shape: [2, 58, 103], role: input}
  - {name: c, shape: [2, 174, 103], role: output}
ops:
  - {name: c, op: concat, inputs: [y, x], axis: 1}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.compared == 2 * 174 * 103);
  CHECK(o.worst == 0);
}

TEST_CASE("run: fp32 gelu is the tanh form the graph format defines", "[run]") {
  // The erf form differs by up to about 1.5e-4 around |x| = 2.
  const Outcome o = run_and_compare("tpu-v4i", R"(name: gelu
dtype: fp32
tensors:
  - {name: x, shape: [8, 256], role: input}
  - {name: y, shape: [8, 256], role: output}
ops:
  - {name: s, op: mul, inputs: [x, x]}
  - {name: y, op: gelu, inputs: [s]}
)");
  REQUIRE(o.exit_code == 0);
  CHECK(o.nonzero > 0);
  CHECK(o.worst < 1e-6);
}

TEST_CASE("run: a graph without MXU operators whose types the chip lacks is timing only",
          "[run][errors]") {
  // A bf16 relu on an int8-only chip was lowered as int8 without a word, and computed zeros.
  const Outcome o = run_and_compare("teach-4x4", R"(name: relu_only
dtype: bf16
tensors:
  - {name: x, shape: [4, 4], role: input}
  - {name: y, shape: [4, 4], role: output}
ops:
  - {name: y, op: relu, inputs: [x]}
)");
  CHECK(o.exit_code == 2);
  CHECK(o.err ==
        "error: --functional: the graph's bf16 is not a type of teach-4x4's MXU side; tensors "
        "were lowered as int8 (timing only)\n");
}

TEST_CASE("run: an fp32 global average pool sums its input in place, odd and even areas", "[run]") {
  // fp32 skips the widening copy: the first halving reads the input, and an odd area carries
  // its middle row over.
  for (const char* hw : {"3, 5", "2, 4", "1, 1"}) {
    CAPTURE(hw);
    const Outcome o = run_and_compare("tpu-v4i", std::string(R"(name: gap
dtype: fp32
tensors:
  - {name: x, shape: [2, )") + hw + R"(, 24], role: input}
  - {name: y, shape: [2, 1, 1, 24], role: output}
ops:
  - {name: y, op: global_avg_pool, inputs: [x]}
)");
    REQUIRE(o.exit_code == 0);
    CHECK(o.nonzero > 0);
    CHECK(o.compared == 48);
    CHECK(o.worst < 1e-5);
  }
}

TEST_CASE("run: embedding indices come from the graph's inputs, generated to fit every table",
          "[run]") {
  // Two tables read the same generated indices: each index must fit the smaller table.
  check_exact_on({"tpu-v4i"}, R"(name: two_tables
dtype: bf16
tensors:
  - {name: small, shape: [3, 6], role: weight}
  - {name: big, shape: [50, 6], role: weight}
  - {name: ids, shape: [8], dtype: int32, role: input}
  - {name: a, role: output}
  - {name: b, role: output}
ops:
  - {name: a, op: embedding, inputs: [small, ids]}
  - {name: b, op: embedding, inputs: [big, ids]}
)",
                 2 * 8 * 6);
  // Indices an operator computes are not known when the gathers are placed: refused, exit 3,
  // never gathered from placeholder rows.
  const Outcome o = run_and_compare("teach-4x4", R"(name: computed_ids
dtype: int8
tensors:
  - {name: t, shape: [10, 4], role: weight}
  - {name: i, shape: [2, 3], role: input, dtype: int32}
  - {name: o, role: output}
ops:
  - {name: r, op: reshape, inputs: [i], shape: [6]}
  - {name: o, op: embedding, inputs: [t, r]}
)");
  CHECK(o.exit_code == 3);
  CHECK(
      o.err ==
      "error: --functional: embedding 'o' reads its indices from 'r', which an operator computes; "
      "functional mode takes indices only from the graph's inputs\n");
}

TEST_CASE("run: a tensor padded by a max pool and an average pool is not implemented, exit 3",
          "[run]") {
  // A valid graph: the lowering keeps one padding value per stored tensor (-inf for max, 0 for
  // the average), so it refuses this one as its own limit, not as bad input (exit 2).
  const Outcome o = run_and_compare("tpu-v4i", R"(name: two_fills
dtype: bf16
tensors:
  - {name: x, shape: [1, 4, 4, 8], role: input}
  - {name: m, role: output}
  - {name: a, role: output}
ops:
  - {name: m, op: max_pool, inputs: [x], kernel: 3, padding: 1}
  - {name: a, op: avg_pool, inputs: [x], kernel: 3, padding: 1}
)");
  CHECK(o.exit_code == 3);
  CHECK_THAT(o.err, Catch::Contains("padded both by a max pool"));
}

TEST_CASE("run: --dump and --inputs file names stay inside their directory", "[run]") {
  tpusim::test::TempDir dir;
  const std::string graph = dir.write("g.yaml", R"(name: names
dtype: bf16
tensors:
  - {name: enc/x, shape: [4, 8], role: input}
  - {name: dec/y, shape: [4, 8], role: output}
ops:
  - {name: dec/y, op: relu, inputs: [enc/x]}
)");
  const std::string dump = dir.path("a/dump");
  const std::string run = "timeout 60 '" TPUSIM_EXE "' run -q -c tpu-v4i -w '" + graph +
                          "' --functional --dump '" + dump + "' > /dev/null 2> '" +
                          dir.path("err") + "'";
  REQUIRE(std::system(run.c_str()) == 0);
  CHECK(std::filesystem::is_regular_file(dump + "/enc_x.npy"));
  CHECK(std::filesystem::is_regular_file(dump + "/dec_y.npy"));
  // A SCALE-Sim layer name is free text: "../x" must not climb out of the directory.
  const std::string csv = dir.write("t.csv", "Layer, M, N, K,\n../x, 4, 5, 6,\n");
  const std::string layer = "timeout 60 '" TPUSIM_EXE "' run -q -c tpu-v4i -w '" + csv +
                            "' --functional --dump '" + dir.path("b/dump") + "' > /dev/null 2>&1";
  REQUIRE(std::system(layer.c_str()) == 0);
  CHECK(std::filesystem::is_regular_file(dir.path("b/dump/_._x.c.npy")));
  CHECK_FALSE(std::filesystem::exists(dir.path("b/x.c.npy")));
  // Read back through --inputs under the same names.
  const std::string again = "timeout 60 '" TPUSIM_EXE "' run -q -c tpu-v4i -w '" + graph +
                            "' --functional --inputs '" + dump + "' > /dev/null 2>&1";
  CHECK(std::system(again.c_str()) == 0);
  // Two tensors that would share a file are refused before the run.
  const std::string clash = dir.write("c.yaml", R"(name: clash
dtype: bf16
tensors:
  - {name: a/b, shape: [4, 8], role: input}
  - {name: a_b, role: output}
ops:
  - {name: a_b, op: relu, inputs: [a/b]}
)");
  const std::string refused = "timeout 60 '" TPUSIM_EXE "' run -q -c tpu-v4i -w '" + clash +
                              "' --functional --dump '" + dump + "' > /dev/null 2> '" +
                              dir.path("err") + "'";
  const int status = std::system(refused.c_str());
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(tpusim::test::slurp(dir.path("err")) ==
        "error: tensors 'a/b' and 'a_b' would share the file a_b.npy under --inputs or --dump "
        "(characters other than letters, digits, '.', '_' and '-' are written as '_')\n");
}
