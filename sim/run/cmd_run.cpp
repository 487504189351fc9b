// `tpusim run` (compile a workload for a chip and simulate it) and `tpusim compile`.

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include <spdlog/spdlog.h>

#include "isa/checker.h"
#include "isa/disassembler.h"
#include "isa/lower/lower.h"
#include "isa/program_file.h"
#include "sim/base/errors.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"
#include "sim/run/functional_io.h"
#include "sim/report/writers.h"
#include "sim/run/simulate.h"
#include "workloads/load.h"

namespace tpusim::sim {

namespace {

// Names each tensor's HBM bytes, so the program text reads `src=conv1.w+256`, not a number.
// Activations kept in vmem get none: their slots are reused, and the disassembler would name an
// address by the first tensor ever placed there.
void add_regions(isa::Lowered& lowered) {
  std::set<std::string> used;
  for (const isa::TensorPlacement& t : lowered.tensors) {
    if (t.space != isa::Space::kHbm) continue;
    std::string name;
    for (char c : t.name) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || name[0] == '.') name = "t_" + name;
    if (isa::is_reserved_name(name)) name = "t_" + name;
    std::string unique = name;
    for (int i = 2; used.count(unique); ++i) unique = name + "_" + std::to_string(i);
    used.insert(unique);
    lowered.program.regions.push_back(isa::Region{
        unique, isa::Space::kHbm, t.base, std::max<std::uint64_t>(1, t.storage_bytes()), 0});
  }
}

isa::Lowered compile_workload(const config::ChipConfig& chip, const workloads::Graph& graph,
                              const isa::LowerOptions& options) {
  isa::Lowered lowered = isa::lower(graph, chip.spec, options);
  add_regions(lowered);
  isa::check(lowered.program, chip.spec);
  return lowered;
}

int compile_to(const CompileCommandArgs& args) {
  const config::ChipConfig chip = config::load_chip_config(resolve_chip_path(args.chip), args.overrides);
  const workloads::Graph graph = workloads::load_workload(resolve_workload_path(args.workload));
  isa::LowerOptions options;
  options.overlap_operators = !args.no_overlap;
  const isa::Lowered lowered = compile_workload(chip, graph, options);
  if (args.explain) std::cout << isa::explain(lowered, chip.spec);
  if (args.output.empty()) {
    if (!args.explain)
      std::cout << lowered.program.instructions.size() << " instructions for " << graph.name << " on "
                << chip.spec.name << " (use -o FILE to write them, --explain for the tiling)\n";
    return kExitOk;
  }
  if (std::filesystem::path(args.output).extension() == ".tbin") {
    isa::write_binary_file(lowered.program, args.output);
    return kExitOk;
  }
  std::string text;
  text += "; " + graph.name + " lowered for " + chip.spec.name + " by tpusim compile\n";
  std::string plan = isa::explain(lowered, chip.spec);
  for (std::size_t start = 0; start < plan.size();) {
    const std::size_t end = plan.find('\n', start);
    text += "; " + plan.substr(start, end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  text += "\n" + isa::disassemble(lowered.program);
  write_file(args.output, text);
  return kExitOk;
}

}  // namespace

int run_compile(const CompileCommandArgs& args) {
  // Checked first: an output that is neither is never removed (it may be a workload's YAML).
  const std::string ext = std::filesystem::path(args.output).extension().string();
  if (!args.output.empty() && ext != ".tasm" && ext != ".tbin")
    throw InputError(args.output + ": expected a .tasm or .tbin file name");
  return replacing_output(args.output,
                          {resolve_workload_path(args.workload), resolve_chip_path(args.chip)},
                          [&] { return compile_to(args); });
}

int run_run(const RunCommandArgs& args) {
  const auto wall_start = std::chrono::steady_clock::now();
  // Test hook (tests/sim/test_sweep.cpp): a run given the override named here dies of a signal,
  // so the sweep's handling of a crashed point is tested on a real crash, not an error exit.
  if (const char* crash = std::getenv("TPUSIM_TEST_CRASH"))
    for (const std::string& o : args.overrides)
      if (o == crash) std::abort();
  // An input named as one of the outputs would be deleted by the next line: refused first.
  std::vector<std::string> earlier = report_paths(args.out);
  earlier.push_back(args.watch.vcd);
  earlier.push_back(args.watch.show_out);
  // Resolved: `-c teach-4x4 --vcd configs/chips/teach-4x4.yaml` names the chip's file.
  check_output_files(earlier, {resolve_workload_path(args.workload), resolve_chip_path(args.chip)});
  remove_earlier_outputs(earlier);
  const config::ChipConfig chip = config::load_chip_config(resolve_chip_path(args.chip), args.overrides);
  spdlog::debug("chip {} from {}", chip.spec.name, resolve_chip_path(args.chip));
  const std::string workload_path = resolve_workload_path(args.workload);
  const workloads::Graph graph = workloads::load_workload(workload_path);
  spdlog::debug("workload {} from {}: {} operators, {} tensors", graph.name, workload_path,
                graph.ops.size(), graph.tensors.size());
  if (!args.functional && !(args.inputs.empty() && args.dump.empty()))
    throw InputError("--inputs and --dump need --functional (timing mode carries no data)");
  if (!args.out.empty()) prepare_output_dir(args.out);
  if (!args.dump.empty()) prepare_output_dir(args.dump);

  FunctionalData data;
  isa::LowerOptions options;
  options.overlap_operators = !args.no_overlap;
  if (args.functional) {
    check_functional_data_fits(graph, chip.spec);
    if (!args.inputs.empty() || !args.dump.empty()) check_npy_file_names(graph);
    data = prepare_functional_data(graph, args.inputs, args.seed);
    options.index_values = data.indices;
    // The arrays this run will dump; an earlier run's must not pass for them if it fails. (Not
    // every .npy there: --inputs may name the same directory.)
    if (!args.dump.empty()) {
      std::vector<std::string> dumped;
      for (const workloads::Tensor& t : graph.tensors)
        if (t.role == workloads::TensorRole::kOutput || data.generated.count(t.name))
          dumped.push_back((std::filesystem::path(args.dump) / npy_file_name(t.name)).string());
      remove_earlier_outputs(dumped);
    }
  }
  const auto lower_start = std::chrono::steady_clock::now();
  isa::Lowered lowered = compile_workload(chip, graph, options);
  spdlog::debug(
      "lowered to {} instructions in {:.3f} s", lowered.program.instructions.size(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lower_start).count());
  if (!lowered.dtype_note.empty()) {
    if (args.functional) throw InputError("--functional: " + lowered.dtype_note);
    spdlog::info("{}", lowered.dtype_note);
  }

  SimulateRequest request{chip, lowered.program};
  request.functional = args.functional;
  request.out_dir = args.out;
  request.workload = graph.name;
  request.wall_start = wall_start;
  request.title = args.workload;  // as given: the page must not depend on the folder run from
  request.watch = WatchOptions{args.watch.vcd, args.watch.show, args.watch.show_format,
                               args.watch.show_out, args.watch.mxu};
  request.before = [&](models::BackingStore& store) { write_tensors(store, lowered, data); };
  request.after = [&](models::BackingStore& store) { dump_tensors(store, lowered, data, args.dump); };
  return simulate(request);
}

}  // namespace tpusim::sim
