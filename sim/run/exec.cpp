// `tpusim exec`: simulate an assembled program on a chip and report.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include <spdlog/spdlog.h>

#include "isa/checker.h"
#include "isa/program_file.h"
#include "sim/base/errors.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"
#include "sim/config/chip_config.h"
#include "sim/report/writers.h"
#include "sim/run/simulate.h"

namespace tpusim::sim {
namespace {

struct MemoryImage {
  std::uint64_t addr = 0;
  std::uint64_t bytes = 0;
  std::string file;
};

std::uint64_t parse_number(const std::string& text, const std::string& spec) {
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-')
    throw InputError("'" + spec + "': expected a number, got '" + text + "'");
  return v;
}

// The FILE of "hbm:ADDR=FILE" or "hbm:ADDR:BYTES=FILE" (the whole text if it has no '=').
std::string image_file(const std::string& spec) {
  return spec.substr(std::min(spec.size(), spec.find('=') + 1));
}

// "hbm:ADDR=FILE" (load) or "hbm:ADDR:BYTES=FILE" (dump), checked against the memory and the
// file system before anything is simulated.
std::vector<MemoryImage> parse_images(const std::vector<std::string>& specs, bool dump,
                                      const ChipSpec& chip) {
  namespace fs = std::filesystem;
  std::vector<MemoryImage> out;
  for (const std::string& spec : specs) {
    const std::string form = dump ? "hbm:ADDR:BYTES=FILE" : "hbm:ADDR=FILE";
    const std::size_t eq = spec.find('=');
    if (spec.rfind("hbm:", 0) != 0 || eq == std::string::npos || eq + 1 == spec.size())
      throw InputError("'" + spec + "': expected " + form);
    MemoryImage image;
    image.file = image_file(spec);
    const std::string where = spec.substr(4, eq - 4);
    const std::size_t colon = where.find(':');
    if (dump != (colon != std::string::npos)) throw InputError("'" + spec + "': expected " + form);
    image.addr = parse_number(where.substr(0, colon), spec);
    std::error_code ec;
    if (fs::is_directory(image.file, ec))
      throw InputError(image.file + ": is a directory, not a file");
    if (dump) {
      image.bytes = parse_number(where.substr(colon + 1), spec);
      if (image.bytes == 0)
        throw InputError("'" + spec + "': BYTES is 0, so there is nothing to dump");
      const fs::path parent = fs::path(image.file).parent_path();
      if (!parent.empty() && !fs::is_directory(parent, ec))
        throw InputError(image.file + ": no such directory '" + parent.string() + "'");
    } else {
      if (!fs::is_regular_file(image.file, ec))
        throw InputError(image.file +
                         (fs::exists(image.file, ec) ? ": not a regular file" : ": no such file"));
      image.bytes = fs::file_size(image.file, ec);
      if (ec) throw InputError(image.file + ": cannot read file");
    }
    const std::uint64_t capacity = chip.memory.capacity.value();
    if (image.addr > capacity || image.bytes > capacity - image.addr)
      throw InputError("'" + spec + "': hbm range [" + std::to_string(image.addr) + ", +" +
                       std::to_string(image.bytes) + ") is outside memory.capacity (" +
                       std::to_string(capacity) + " B)");
    out.push_back(std::move(image));
  }
  return out;
}

std::vector<std::uint8_t> read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> data;
  try {
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    throw InputError(path + ": cannot read file");
  }
  if (!in && !in.eof()) throw InputError(path + ": cannot read file");
  return data;
}


}  // namespace

int run_exec(const ExecCommandArgs& args) {
  const auto wall_start = std::chrono::steady_clock::now();
  // An input named as one of the outputs would be deleted by the next line: refused first.
  // Resolved: `-c teach-4x4 --vcd configs/chips/teach-4x4.yaml` names the chip's file.
  std::vector<std::string> named_inputs{args.program, resolve_chip_path(args.chip)};
  for (const std::string& load : args.loads) named_inputs.push_back(image_file(load));
  std::vector<std::string> earlier = report_paths(args.out);
  earlier.push_back(args.watch.vcd);
  earlier.push_back(args.watch.show_out);
  for (const std::string& dump : args.dumps)
    if (dump.find('=') != std::string::npos) earlier.push_back(image_file(dump));
  check_output_files(earlier, named_inputs);
  remove_earlier_outputs(earlier);
  const config::ChipConfig chip = config::load_chip_config(resolve_chip_path(args.chip), args.overrides);
  if (!args.functional && !(args.loads.empty() && args.dumps.empty()))
    throw InputError("--load and --dump need --functional (timing mode carries no data)");
  const std::vector<MemoryImage> loads = parse_images(args.loads, false, chip.spec);
  const std::vector<MemoryImage> dumps = parse_images(args.dumps, true, chip.spec);
  if (!args.out.empty()) prepare_output_dir(args.out);
  isa::Program program = isa::read_program_file(args.program);
  isa::check(program, chip.spec);
  spdlog::debug("program {}: {} instructions, {} operators, checked for {}", args.program,
                program.instructions.size(), program.ops.size(), chip.spec.name);
  SimulateRequest request{chip, program};
  request.functional = args.functional;
  request.out_dir = args.out;
  request.wall_start = wall_start;
  request.watch = WatchOptions{args.watch.vcd, args.watch.show, args.watch.show_format,
                               args.watch.show_out, args.watch.mxu};
  request.title = args.program;
  request.before = [&](models::BackingStore& store) {
    for (const MemoryImage& image : loads) {
      const std::vector<std::uint8_t> data = read_binary(image.file);
      store.write(image.addr, data.data(), data.size());
    }
  };
  request.after = [&](models::BackingStore& store) {
    // In pieces: a dump may cover gigabytes of memory that was never written.
    for (const MemoryImage& image : dumps)
      write_file(image.file, [&](std::ostream& out) {
        std::vector<std::uint8_t> piece(std::min<std::uint64_t>(image.bytes, 1 << 20));
        for (std::uint64_t done = 0; done < image.bytes && out;) {
          const std::uint64_t n = std::min<std::uint64_t>(piece.size(), image.bytes - done);
          store.read(image.addr + done, piece.data(), n);
          out.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(n));
          done += n;
        }
      });
  };
  return simulate(request);
}

}  // namespace tpusim::sim
