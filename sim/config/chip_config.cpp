#include "sim/config/chip_config.h"

#include <algorithm>

#include <filesystem>

#include "sim/config/config_reader.h"
#include "sim/config/units_parse.h"

namespace tpusim::config {
namespace {
namespace fs = std::filesystem;

// Bounds that reject absurd values (a typo'd exponent, a negative) without constraining designs.
constexpr std::uint64_t kMaxCount = 1u << 16;
constexpr std::uint64_t kMaxOnChip = 1024 * kGiB;
constexpr std::uint64_t kMaxOffChip = 1024 * 1024 * kGiB;
// The least MXU rate and vector-op throughput: one result per PE or lane every 1024 cycles.
constexpr double kLeastRate = 1.0 / 1024;

const Choices<Dataflow> kDataflows = {{"ws", Dataflow::kWeightStationary},
                                      {"os", Dataflow::kOutputStationary},
                                      {"is", Dataflow::kInputStationary}};
const Choices<MxuSkew> kMxuSkews = {{"tile", MxuSkew::kTile}, {"array", MxuSkew::kArray}};
const Choices<MxuModel> kMxuModels = {{"fast", MxuModel::kFast}, {"cycle", MxuModel::kCycle}};
const Choices<MemoryModel> kMemoryModels = {
    {"simple", MemoryModel::kSimple}, {"hbm", MemoryModel::kHbm}, {"ideal", MemoryModel::kIdeal}};
const Choices<DramScheduler> kSchedulers = {{"frfcfs", DramScheduler::kFrFcfs},
                                            {"fcfs", DramScheduler::kFcfs}};
const Choices<PagePolicy> kPagePolicies = {{"open", PagePolicy::kOpen},
                                           {"close", PagePolicy::kClose}};
const Choices<DramEngine> kDramEngines = {{"command", DramEngine::kCommand},
                                          {"timeline", DramEngine::kTimeline}};
const Choices<NocTopology> kTopologies = {{"crossbar", NocTopology::kCrossbar},
                                          {"mesh", NocTopology::kMesh}};
const Choices<ActivationHome> kActivationHomes = {{"hbm", ActivationHome::kHbm},
                                                  {"vmem", ActivationHome::kVmem}};

Bytes size_in(ConfigReader& r, const std::string& key, std::optional<Bytes> fallback,
              std::uint64_t lo, std::uint64_t hi) {
  const Bytes b = fallback ? r.opt<Bytes>(key, *fallback) : r.req<Bytes>(key);
  r.require(b.value() >= lo && b.value() <= hi, key,
            "expected a size from " + format_size(Bytes(lo)) + " to " + format_size(Bytes(hi)) +
                ", got " + format_size(b));
  return b;
}

Hertz clock_in(ConfigReader& r, const std::string& key) {
  const Hertz f = r.req<Hertz>(key);
  r.require(f.value() >= 1e3 && f.value() <= 100e9, key,
            "expected a clock from 1 kHz to 100 GHz, got " + format_frequency(f));
  return f;
}

std::uint32_t count_in(ConfigReader& r, const std::string& key, std::uint32_t fallback,
                       std::uint64_t lo = 1, std::uint64_t hi = kMaxCount) {
  return static_cast<std::uint32_t>(r.opt_uint(key, fallback, lo, hi));
}

SequencerSpec read_sequencer(ConfigReader r) {
  SequencerSpec s;
  s.queue_depth = count_in(r, "queue_depth", s.queue_depth, 1, 4096);
  s.dispatch_latency = r.opt<Duration>("dispatch_latency", s.dispatch_latency);
  s.semaphores = count_in(r, "semaphores", s.semaphores, 1, 4096);
  r.finish();
  return s;
}

MxuSpec read_mxu(ConfigReader r) {
  MxuSpec s;
  s.count = count_in(r, "count", s.count, 1, 64);
  s.rows = count_in(r, "rows", s.rows, 1, 4096);
  s.cols = count_in(r, "cols", s.cols, 1, 4096);
  s.dataflow = r.opt_choice("dataflow", s.dataflow, kDataflows);
  s.model = r.opt_choice("model", s.model, kMxuModels);
  if (auto p = r.opt_section("precisions")) {
    s.precisions.clear();
    for (const std::string& name : p->keys()) {
      const auto dtype = dtype_from_name(name);
      if (!dtype)
        p->fail_key(name, "unknown dtype (expected one of int8, int16, int32, bf16, fp32, fp8)");
      // A floor keeps every cycle count an instruction can take within range.
      const double rate = p->req_number(name, kLeastRate, 16);
      s.precisions[*dtype] = rate;
    }
    r.require(!s.precisions.empty(), "precisions", "at least one operand dtype is required");
    p->finish();
  } else if (ConfigNode* out = r.resolved_section("precisions")) {
    for (const auto& [dtype, rate] : s.precisions)
      out->set(std::string(dtype_name(dtype)), ConfigNode::scalar(format_number(rate), {}));
  }
  if (auto p = r.opt_section("rounding")) {
    s.rounding.clear();
    for (const std::string& name : p->keys()) {
      const auto from = dtype_from_name(name);
      if (!from)
        p->fail_key(name, "unknown dtype (expected one of int8, int16, int32, bf16, fp32, fp8)");
      const std::string target = p->req<std::string>(name);
      const auto to = dtype_from_name(target);
      if (!to)
        p->fail_key(name,
                    "rounds to '" + target +
                        "', not a dtype (expected one of int8, int16, int32, bf16, fp32, fp8)");
      s.rounding[*from] = *to;
    }
    p->finish();
  } else {
    r.resolved_section("rounding");  // shown as {}: no operand type is rounded
  }
  s.weight_double_buffer = r.opt<bool>("weight_double_buffer", s.weight_double_buffer);
  s.writeback_latency = r.opt<Duration>("writeback_latency", s.writeback_latency);
  s.skew = r.opt_choice("skew", s.skew, kMxuSkews);
  r.finish();
  return s;
}

VpuSpec read_vpu(ConfigReader r) {
  VpuSpec s;
  s.lanes = count_in(r, "lanes", s.lanes, 1, 4096);
  s.sublanes = count_in(r, "sublanes", s.sublanes, 1, 1024);
  std::optional<ConfigReader> ops = r.opt_section("ops");
  ConfigNode* ops_out = ops ? nullptr : r.resolved_section("ops");
  for (std::size_t i = 0; i < kNumVectorOps; ++i) {
    const std::string name(vector_op_name(static_cast<VectorOp>(i)));
    VectorOpTiming& t = s.ops[i];
    std::optional<ConfigReader> op = ops ? ops->opt_section(name) : std::nullopt;
    if (!op) {
      ConfigNode* out = ops ? ops->resolved_section(name) : &ops_out->set(name, ConfigNode::map({}));
      if (out) {
        out->set("latency", ConfigNode::scalar(format_duration(t.latency), {}));
        out->set("throughput", ConfigNode::scalar("1", {}));
      }
      continue;
    }
    t.latency = op->opt<Duration>("latency", t.latency);
    // Results per ALU slot (one of lanes x sublanes) per cycle.
    t.throughput = op->opt_number("throughput", t.throughput, kLeastRate, 64);
    op->finish();
  }
  if (ops) ops->finish();
  r.finish();
  return s;
}

SramSpec read_sram(ConfigReader r) {
  SramSpec s;
  s.capacity = size_in(r, "capacity", std::nullopt, 1, kMaxOnChip);
  s.banks = count_in(r, "banks", s.banks);
  s.port_width = size_in(r, "port_width", s.port_width, 1, 64 * kKiB);
  s.ports = count_in(r, "ports", s.ports, 1, 64);
  s.latency = r.opt<Duration>("latency", s.latency);
  r.finish();
  return s;
}

DmaSpec read_dma(ConfigReader r) {
  DmaSpec s;
  s.engines = count_in(r, "engines", s.engines, 1, 64);
  s.max_outstanding = count_in(r, "max_outstanding", s.max_outstanding, 1, 4096);
  s.chunk = size_in(r, "chunk", s.chunk, 1, kMiB);
  s.setup_latency = r.opt<Duration>("setup_latency", s.setup_latency);
  r.finish();
  return s;
}

// A section whose keys all have defaults may be left out; it is read from an empty map then, so
// the resolved config still shows every default.
ConfigReader defaulted_section(ConfigReader& parent, const std::string& key) {
  if (auto section = parent.opt_section(key)) return *section;
  static const ConfigNode empty = ConfigNode::map({});
  return ConfigReader(empty, parent.path_of(key), parent.resolved_section(key));
}

template <typename Spec>
Spec read_defaulted(ConfigReader& parent, const std::string& key, Spec (*read)(ConfigReader)) {
  return read(defaulted_section(parent, key));
}

CoreSpec read_core(ConfigReader r) {
  CoreSpec s;
  s.sequencer = read_defaulted(r, "sequencer", read_sequencer);
  s.mxu = read_defaulted(r, "mxu", read_mxu);
  s.vpu = read_defaulted(r, "vpu", read_vpu);
  s.vmem = read_sram(r.section("vmem"));
  s.accmem = read_sram(r.section("accmem"));
  if (auto cmem = r.opt_section("cmem")) s.cmem = read_sram(*cmem);
  s.dma = read_defaulted(r, "dma", read_dma);
  r.finish();
  return s;
}

DramTiming read_dram_timing(ConfigReader r) {
  DramTiming t;
  const std::pair<const char*, Duration DramTiming::*> fields[] = {
      {"tRCD", &DramTiming::tRCD},     {"tRP", &DramTiming::tRP},       {"tRAS", &DramTiming::tRAS},
      {"tRC", &DramTiming::tRC},       {"tCL", &DramTiming::tCL},       {"tWL", &DramTiming::tWL},
      {"tCCD_S", &DramTiming::tCCD_S}, {"tCCD_L", &DramTiming::tCCD_L}, {"tRRD_S", &DramTiming::tRRD_S},
      {"tRRD_L", &DramTiming::tRRD_L}, {"tFAW", &DramTiming::tFAW},     {"tWR", &DramTiming::tWR},
      {"tWTR_S", &DramTiming::tWTR_S}, {"tWTR_L", &DramTiming::tWTR_L}, {"tRTP", &DramTiming::tRTP},
      {"tRFC", &DramTiming::tRFC},     {"tREFI", &DramTiming::tREFI}};
  std::vector<std::string> keys = {"tRTW"};
  for (const auto& field : fields) keys.push_back(field.first);
  r.expect(keys);
  for (const auto& [key, member] : fields) t.*member = r.req<Duration>(key);
  t.tRTW = r.opt<Duration>("tRTW", t.tRTW);
  r.finish();
  return t;
}

void read_controller(ConfigReader c, DramSpec& s) {
  s.queue_depth = count_in(c, "queue_depth", s.queue_depth, 1, 4096);
  s.scheduler = c.opt_choice("scheduler", s.scheduler, kSchedulers);
  s.page_policy = c.opt_choice("page_policy", s.page_policy, kPagePolicies);
  s.engine = c.opt_choice("engine", s.engine, kDramEngines);
  c.require(s.engine == DramEngine::kCommand ||
                (s.scheduler == DramScheduler::kFrFcfs && s.page_policy == PagePolicy::kOpen),
            "engine",
            "the timeline engine models FR-FCFS with an open page only; scheduler fcfs and "
            "page_policy close need engine: command");
  c.finish();
}

DramSpec read_dram(ConfigReader r) {
  DramSpec s;
  s.standard = r.req<std::string>("standard");
  s.stacks = count_in(r, "stacks", s.stacks, 1, 64);
  s.channels = count_in(r, "channels", s.channels, 1, 64);
  s.pseudo_channels = count_in(r, "pseudo_channels", s.pseudo_channels, 1, 4);
  s.bank_groups = count_in(r, "bank_groups", s.bank_groups, 1, 16);
  s.banks_per_group = count_in(r, "banks_per_group", s.banks_per_group, 1, 64);
  s.rows = count_in(r, "rows", s.rows, 1, 1u << 24);
  s.columns = count_in(r, "columns", s.columns, 1, 1u << 16);
  s.burst_length = count_in(r, "burst_length", s.burst_length, 1, 64);
  s.bus_width_bits = count_in(r, "bus_width_bits", s.bus_width_bits, 8, 1024);
  s.clock = clock_in(r, "clock");
  s.transfers_per_clock = count_in(r, "transfers_per_clock", s.transfers_per_clock, 1, 16);
  s.timing = read_dram_timing(r.section("timing"));
  read_controller(defaulted_section(r, "controller"), s);
  s.address_mapping = r.opt<std::string>("address_mapping", s.address_mapping);
  s.channel_hash = r.opt<bool>("channel_hash", s.channel_hash);
  s.activate_energy = r.opt<Picojoules>("activate_energy", s.activate_energy);
  r.finish();
  return s;
}

MemorySpec read_memory(ConfigReader r) {
  MemorySpec s;
  s.model = r.opt_choice("model", s.model, kMemoryModels);
  s.capacity = size_in(r, "capacity", std::nullopt, 1, kMaxOffChip);
  s.channels = count_in(r, "channels", s.channels, 1, 4096);
  s.bandwidth = r.req<Bandwidth>("bandwidth");
  r.require(s.bandwidth.bytes_per_second(Hertz(1)).value() > 0, "bandwidth",
            "expected a bandwidth above 0");
  s.latency = r.opt<Duration>("latency", s.latency);
  // Required whatever the model: its standard prices the off-chip bits (energy.dram_per_bit).
  if (!r.has("hbm"))
    r.fail_key("hbm",
               "missing required key: the DRAM organisation, needed by every model (its standard "
               "prices off-chip energy), e.g. 'hbm: {extends: ../memory/hbm2-2400.yaml}'");
  s.hbm = read_dram(r.section("hbm"));
  r.finish();
  return s;
}

CompilerSpec read_compiler(ConfigReader r) {
  CompilerSpec s;
  s.activations = r.opt_choice("activations", s.activations, kActivationHomes);
  r.finish();
  return s;
}

NocSpec read_noc(ConfigReader r) {
  NocSpec s;
  s.topology = r.opt_choice("topology", s.topology, kTopologies);
  s.mesh_columns = count_in(r, "mesh_columns", s.mesh_columns, 1, 1024);
  s.link_width = size_in(r, "link_width", s.link_width, 1, 64 * kKiB);
  s.hop_latency = r.opt<Duration>("hop_latency", s.hop_latency);
  r.finish();
  return s;
}

EnergySpec read_energy(ConfigReader r) {
  EnergySpec s;
  const std::string table = r.req<std::string>("table");
  if (table.empty()) r.fail("table", "expected the path of an energy table file, got \"\"");
  // Relative to the file that names it, or to the working directory for a --set value. The
  // resolved config records the absolute path, so a saved `tpusim config` output loads anywhere.
  const SourceLocation where = r.where_of("table");
  const bool from_override = where.line == 0 && where.file.rfind("--set ", 0) == 0;
  const fs::path base = from_override ? fs::path() : fs::path(where.file).parent_path();
  s.table_path = fs::absolute(base / table).lexically_normal().generic_string();
  r.record("table", s.table_path);
  try {
    s.table = load_energy_table(s.table_path);
  } catch (const ConfigError& e) {
    // A missing table is reported where the chip names it; errors inside it where they are,
    // saying which role the file was read in.
    if (e.key_path().empty() && e.where().file == s.table_path && e.where().line == 0)
      r.fail("table", "'" + s.table_path + "': " + e.message());
    throw ConfigError(e.where(), e.key_path(), e.message() + " (in the energy table named by energy.table)");
  }
  s.static_power = r.opt<Watts>("static_power", s.static_power);
  r.finish();
  return s;
}

EnergyTable read_energy_table(ConfigReader r) {
  EnergyTable t;
  t.name = r.req<std::string>("name");
  t.node_nm = static_cast<std::uint32_t>(r.req_uint("node_nm", 1, 1000));
  if (auto mac = r.opt_section("mac")) {
    for (const std::string& name : mac->keys()) {
      const auto dtype = dtype_from_name(name);
      if (!dtype) mac->fail_key(name, "unknown dtype (expected one of int8, int16, int32, bf16, fp32, fp8)");
      t.mac[*dtype] = mac->req<Picojoules>(name);
    }
    mac->finish();
  }
  ConfigReader ops = r.section("vector_op");
  for (std::size_t i = 0; i < kNumVectorOps; ++i)
    t.vector_op[i] = ops.req<Picojoules>(std::string(vector_op_name(static_cast<VectorOp>(i))));
  ops.finish();
  for (ConfigReader point : r.list("sram")) {
    SramEnergyPoint p;
    p.macro = point.req<Bytes>("macro");
    point.require(p.macro.value() > 0, "macro", "expected a macro size above 0");
    p.read_per_byte = point.req<Picojoules>("read_per_byte");
    p.write_per_byte = point.req<Picojoules>("write_per_byte");
    point.require(t.sram.empty() || t.sram.back().macro < p.macro, "macro",
                  "sram points must be listed by increasing macro size");
    point.finish();
    t.sram.push_back(p);
  }
  r.require(!t.sram.empty(), "sram", "at least one sram point is required");
  t.register_per_byte = r.req<Picojoules>("register_per_byte");
  t.noc_per_bit_hop = r.req<Picojoules>("noc_per_bit_hop");
  if (auto dram = r.opt_section("dram_per_bit")) {
    for (const std::string& name : dram->keys()) t.dram_per_bit[name] = dram->req<Picojoules>(name);
    dram->finish();
  }
  r.finish();
  return t;
}

ChipSpec read_chip(ConfigReader r) {
  ChipSpec chip;
  chip.name = r.req<std::string>("name");
  r.require(!chip.name.empty(), "name", "expected a non-empty name (reports and sweeps show it)");
  r.require(std::none_of(chip.name.begin(), chip.name.end(),
                         [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }),
            "name", "expected a name without control characters (reports print it on one line)");
  chip.description = r.opt<std::string>("description", "");
  chip.clock = clock_in(r, "clock");
  chip.cores = static_cast<std::uint32_t>(r.opt_uint("cores", 1, 1, 1024));
  chip.core = read_core(r.section("core"));
  chip.memory = read_memory(r.section("memory"));
  chip.noc = read_defaulted(r, "noc", read_noc);
  chip.compiler = read_defaulted(r, "compiler", read_compiler);
  chip.energy = read_energy(r.section("energy"));
  r.finish();
  return chip;
}

}  // namespace

EnergyTable load_energy_table(const std::string& path) {
  const ConfigNode root = load_config_file(path);
  return read_energy_table(ConfigReader(root, "", nullptr));
}

ChipConfig load_chip_config(const std::string& path, const std::vector<std::string>& overrides) {
  ChipConfig config;
  config.path = path;
  ConfigNode root = load_config_file(path);
  for (const std::string& assignment : overrides) apply_override(root, assignment);
  config.resolved = ConfigNode::map({});
  config.spec = read_chip(ConfigReader(root, "", &config.resolved));
  try {
    validate_chip(config.spec);
  } catch (const SpecError& e) {
    // Point at the key the rule names, or at its nearest written ancestor.
    std::string key = e.key_path();
    const ConfigNode* node = find_path(root, key);
    while (!node && key.find('.') != std::string::npos) {
      key = key.substr(0, key.rfind('.'));
      node = find_path(root, key);
    }
    throw ConfigError(node ? node->where() : root.where(), e.key_path(), e.message());
  }
  return config;
}

}  // namespace tpusim::config
