#include "sim/report/writers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/base/errors.h"
#include "sim/base/output_file.h"

namespace tpusim::sim {
namespace {

using nlohmann::json;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A fraction to `digits` significant digits: a small utilization keeps its precision, where a
// fixed count of decimals left 0.000490 of 0.000490089 (and 0.000000 below 5e-7).
std::string significant(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// 1234567 -> "1.23 M", 0.0000123 -> "12.30 u"
std::string scaled(double v, const char* unit) {
  const char* prefixes[] = {"p", "n", "u", "m", "", "k", "M", "G", "T", "P"};
  int i = 4;
  while (std::abs(v) >= 1000 && i < 9) {
    v /= 1000;
    ++i;
  }
  while (v != 0 && std::abs(v) < 1 && i > 0) {
    v *= 1000;
    --i;
  }
  return fixed(v, i == 4 && v == std::floor(v) ? 0 : 2) + " " + prefixes[i] + unit;
}

std::string bytes_text(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (b >= 1024 && i < 4) {
    b /= 1024;
    ++i;
  }
  return fixed(b, i == 0 ? 0 : 2) + " " + units[i];
}

std::string percent(double f) { return fixed(100 * f, 1) + "%"; }

json config_json(const config::ConfigNode& node) {
  switch (node.kind()) {
    case config::ConfigNode::Kind::kNull:
      return nullptr;
    case config::ConfigNode::Kind::kScalar:
      return node.text();
    case config::ConfigNode::Kind::kSeq: {
      json a = json::array();
      for (const auto& item : node.items()) a.push_back(config_json(item));
      return a;
    }
    case config::ConfigNode::Kind::kMap: {
      json o = json::object();
      for (const auto& [key, value] : node.entries()) o[key] = config_json(value);
      return o;
    }
  }
  return nullptr;
}

json energy_json(const EnergyBreakdown& e, bool with_static) {
  json j = {{"total", with_static ? e.total() : e.dynamic()},
            {"mxu", e.mxu},
            {"vpu", e.vpu},
            {"sram", e.sram},
            {"hbm", e.hbm},
            {"noc", e.noc}};
  if (with_static) j["static"] = e.static_energy;
  return j;
}

// The memory system in two lines: DRAM channels (model hbm) and the busiest NoC link.
std::string memory_system_lines(const Report& r) {
  std::string out;
  if (!r.channels.empty()) {
    double bw = 0, latency = 0, p99 = 0, refresh = 0, bytes = 0;
    std::uint64_t hits = 0, misses = 0, conflicts = 0;
    for (const ChannelReport& c : r.channels) {
      bw += c.bandwidth;
      // Each channel's mean over its bursts, weighted by its bursts (bus bytes, whole bursts).
      latency += c.avg_latency_s * double(c.read_bytes + c.write_bytes);
      bytes += double(c.read_bytes + c.write_bytes);
      p99 = std::max(p99, c.p99_latency_s);
      refresh = std::max(refresh, c.refresh_s);
      hits += c.row_hits;
      misses += c.row_misses;
      conflicts += c.row_conflicts;
    }
    const double bursts = double(hits + misses + conflicts);
    out += "  DRAM         " + std::to_string(r.channels.size()) + " channels, " +
           scaled(bw, "B/s") + "; rows hit " + percent(bursts > 0 ? hits / bursts : 0) + ", miss " +
           percent(bursts > 0 ? misses / bursts : 0) + ", conflict " +
           percent(bursts > 0 ? conflicts / bursts : 0) + "; burst latency avg " +
           scaled(bytes > 0 ? latency / bytes : 0, "s") + ", p99 (worst channel) " +
           scaled(p99, "s") + "; refresh " + percent(r.seconds > 0 ? refresh / r.seconds : 0) +
           "\n";
  }
  if (!r.links.empty()) {
    const LinkReport* busiest = &r.links.front();
    for (const LinkReport& l : r.links)
      if (l.utilization > busiest->utilization) busiest = &l;
    out += "  NoC          " + std::to_string(r.links.size()) + " links used; busiest " +
           busiest->path + " " + percent(busiest->utilization) + " busy\n";
  }
  return out;
}

}  // namespace

void write_file(const std::filesystem::path& path,
                const std::function<void(std::ostream&)>& render) {
  commit_file(stage_file(path, render));
}

StagedStream::StagedStream(const std::filesystem::path& path) : path_(path) {
  const OutputTarget where = output_target(path);
  file_ = {where.temp, where.target};
  out_.open(where.temp.empty() ? where.target : where.temp, std::ios::binary);
  if (!out_) throw InputError(path.string() + ": cannot write file");
}

StagedStream::~StagedStream() {
  if (committed_ || file_.temp.empty()) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(file_.temp, ec);
}

void StagedStream::commit() {
  if (!out_.flush()) throw InputError(path_.string() + ": cannot write file");
  out_.close();
  committed_ = true;  // commit_file removes the temporary itself if the rename fails
  commit_file(file_);
}

int replacing_output(const std::string& output, const std::vector<std::string>& inputs,
                     const std::function<int()>& produce) {
  check_output_files({output}, inputs);
  std::error_code ec;
  try {
    return produce();
  } catch (...) {
    if (!output.empty() && std::filesystem::is_regular_file(output, ec))
      std::filesystem::remove(output, ec);
    throw;
  }
}

void check_output_files(const std::vector<std::string>& outputs,
                        const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> seen;
  for (const std::string& output : outputs) {
    if (output.empty()) continue;
    for (const std::string& input : inputs)
      if (!input.empty() && fs::equivalent(input, output, ec))
        throw InputError(output + ": is an input of this command; write the result elsewhere");
    // Outputs need not exist yet: compared by their absolute, normalised names.
    const fs::path name = fs::weakly_canonical(fs::absolute(output, ec), ec);
    for (const fs::path& other : seen)
      if (other == name) throw InputError(output + ": named as two outputs of this command");
    seen.push_back(name);
  }
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  write_file(path, [&](std::ostream& out) { out << text; });
}

std::string terminal_summary(const Report& r) {
  std::ostringstream out;
  out << "tpusim: " << r.workload << " on " << r.chip << "\n";
  out << "  cycles       " << r.cycles << "  (" << scaled(r.seconds, "s") << " at "
      << scaled(r.clock_hz, "Hz") << ")\n";
  out << "  MACs         " << scaled(double(r.macs), "MAC") << "\n";
  out << "  utilization  MXU " << percent(r.mxu_utilization) << "   VPU "
      << percent(r.vpu_utilization) << "   memory bandwidth "
      << percent(r.memory_bandwidth_utilization) << "\n";
  out << "  traffic      HBM read " << bytes_text(double(r.hbm_read_bytes)) << ", write "
      << bytes_text(double(r.hbm_write_bytes)) << "; vmem read "
      << bytes_text(double(r.vmem_read_bytes)) << ", write "
      << bytes_text(double(r.vmem_write_bytes)) << "\n";
  const double total = r.energy.total();
  const auto share = [total](double part) { return total > 0 ? percent(part / total) : "0.0%"; };
  out << "  energy       " << scaled(total * 1e-12, "J") << ": MXU " << share(r.energy.mxu)
      << ", VPU " << share(r.energy.vpu) << ", SRAM " << share(r.energy.sram) << ", HBM "
      << share(r.energy.hbm) << ", NoC " << share(r.energy.noc) << ", static "
      << share(r.energy.static_energy) << "\n";
  if (r.macs > 0 && r.seconds > 0) {
    // A preset without a static power figure (energy.static_power 0 W) gives dynamic energy
    // only, which flatters pJ/MAC and TOPS/W against a chip's measured power: say so.
    out << "               " << fixed(total / double(r.macs), 3) << " pJ/MAC, "
        << fixed(2.0 * double(r.macs) / r.seconds / (total * 1e-12 / r.seconds) / 1e12, 2)
        << " TOPS/W"
        << (r.energy.static_energy > 0 ? "" : " (dynamic only: energy.static_power is 0 W)")
        << "\n";
  }
  out << memory_system_lines(r);
  std::vector<const OpReport*> ops;
  for (const OpReport& o : r.ops) ops.push_back(&o);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpReport* a, const OpReport* b) { return a->cycles > b->cycles; });
  if (!ops.empty()) {
    out << "  top operators by cycles:\n";
    char line[256];
    std::snprintf(line, sizeof line, "    %-4s %-28s %-10s %12s %8s %10s %12s\n", "id", "name",
                  "kind", "cycles", "MXU", "MACs", "HBM bytes");
    out << line;
    for (std::size_t i = 0; i < std::min<std::size_t>(ops.size(), 10); ++i) {
      const OpReport& o = *ops[i];
      // A long name keeps its ends, where fused operators and repeats differ ("b2_0_expand+b2_0_
      // expand_relu6.3"), with ".." for what is left out.
      constexpr std::size_t kWidth = 28;
      const std::string name =
          o.name.size() <= kWidth
              ? o.name
              : o.name.substr(0, kWidth / 2 - 2) + ".." + o.name.substr(o.name.size() - kWidth / 2);
      std::snprintf(line, sizeof line, "    %-4u %-28s %-10.10s %12llu %8s %10s %12s\n", o.id,
                    name.c_str(), o.kind.c_str(), static_cast<unsigned long long>(o.cycles),
                    percent(o.mxu_utilization).c_str(), scaled(double(o.macs), "").c_str(),
                    bytes_text(double(o.hbm_read_bytes + o.hbm_write_bytes)).c_str());
      out << line;
    }
  }
  return out.str();
}

std::string report_json(const Report& r) {
  json ops = json::array();
  for (const OpReport& o : r.ops) {
    ops.push_back({{"id", o.id},
                   {"name", o.name},
                   {"kind", o.kind},
                   {"start_cycle", o.start_cycle},
                   {"end_cycle", o.end_cycle},
                   {"cycles", o.cycles},
                   {"mxu_cycles", o.mxu_cycles},
                   {"mxu_stream_cycles", o.mxu_stream_cycles},
                   {"macs", o.macs},
                   {"hbm_read_bytes", o.hbm_read_bytes},
                   {"hbm_write_bytes", o.hbm_write_bytes},
                   {"energy_pj", o.energy_pj},
                   {"energy_breakdown_pj", energy_json(o.energy, false)},
                   {"mxu_utilization", o.mxu_utilization}});
  }
  json units = json::array();
  for (const UnitStats& u : r.units) {
    json fields = json::object();
    for (const StatField& f : u.total) fields[f.name] = f.value;
    units.push_back({{"path", u.path}, {"kind", u.kind}, {"stats", fields}});
  }
  json channels = json::array();
  for (const ChannelReport& c : r.channels)
    channels.push_back({{"path", c.path},
                        {"read_bytes", c.read_bytes},
                        {"write_bytes", c.write_bytes},
                        {"row_hits", c.row_hits},
                        {"row_misses", c.row_misses},
                        {"row_conflicts", c.row_conflicts},
                        {"activates", c.activates},
                        {"bandwidth_bytes_per_s", c.bandwidth},
                        {"bus_utilization", c.bus_utilization},
                        {"avg_latency_s", c.avg_latency_s},
                        {"p99_latency_s", c.p99_latency_s},
                        {"refresh_s", c.refresh_s}});
  json peak_macs = json::object();
  for (const auto& [dtype, rate] : r.peak_macs_per_second) peak_macs[dtype] = rate;
  json links = json::array();
  for (const LinkReport& l : r.links)
    links.push_back({{"path", l.path}, {"bytes", l.bytes}, {"utilization", l.utilization}});
  json j = {
      {"schema", "tpusim.report/1"},
      {"chip", r.chip},
      {"workload", r.workload},
      {"cycles", r.cycles},
      {"seconds", r.seconds},
      {"clock_hz", r.clock_hz},
      {"macs", r.macs},
      {"utilization",
       {{"mxu", r.mxu_utilization},
        {"vpu", r.vpu_utilization},
        {"memory_bandwidth", r.memory_bandwidth_utilization}}},
      {"traffic_bytes",
       {{"hbm_read", r.hbm_read_bytes},
        {"hbm_write", r.hbm_write_bytes},
        {"vmem_read", r.vmem_read_bytes},
        {"vmem_write", r.vmem_write_bytes},
        {"noc", r.noc_bytes}}},
      {"energy_pj", energy_json(r.energy, true)},
      {"peak",
       {{"macs_per_s", peak_macs}, {"memory_bandwidth_bytes_per_s", r.peak_memory_bandwidth}}},
      {"ops", ops},
      {"memory_channels", channels},
      {"noc_links", links},
      {"units", units},
      {"sim", {{"wall_seconds", r.wall_seconds}, {"peak_rss_bytes", r.peak_rss_bytes}}},
      {"config", config_json(r.config)}};
  return j.dump(2) + "\n";
}

std::string ops_csv(const Report& r) {
  std::ostringstream out;
  out << "id,name,kind,start_cycle,end_cycle,cycles,mxu_cycles,mxu_stream_cycles,macs,hbm_read_"
         "bytes,"
         "hbm_write_bytes,energy_pj,mxu_utilization\n";
  for (const OpReport& o : r.ops) {
    // Names may hold commas; quote them as RFC 4180 does (names never contain quotes).
    out << o.id << ",\"" << o.name << "\"," << o.kind << "," << o.start_cycle << "," << o.end_cycle
        << "," << o.cycles << "," << o.mxu_cycles << "," << o.mxu_stream_cycles << "," << o.macs
        << "," << o.hbm_read_bytes << "," << o.hbm_write_bytes << "," << fixed(o.energy_pj, 3)
        << "," << significant(o.mxu_utilization, 9) << "\n";
  }
  return out.str();
}

namespace {
// A unit overlaps consecutive instructions (a DMA engine keeps chunks of several descriptors in
// flight; an MXU streams the next matmul while the last drains), but events on one trace thread
// must nest. Each track's events are dealt into lanes, each event to the lowest lane free at its
// start, so no two events of a lane overlap. Returns each event's lane and each track's lane count.
struct Lanes {
  std::vector<std::uint32_t> of_event;
  std::vector<std::uint32_t> per_track;
};
Lanes assign_lanes(const models::TraceRecorder& trace) {
  const std::vector<models::TraceEvent>& events = trace.events();
  Lanes lanes;
  lanes.of_event.assign(events.size(), 0);
  lanes.per_track.assign(trace.tracks().size(), 1);
  std::vector<std::size_t> order(events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return events[a].track != events[b].track ? events[a].track < events[b].track
                                              : events[a].start_ps < events[b].start_ps;
  });
  std::vector<std::uint64_t> lane_end;  // of the track being dealt
  for (std::size_t k = 0; k < order.size(); ++k) {
    const models::TraceEvent& e = events[order[k]];
    if (k == 0 || events[order[k - 1]].track != e.track) lane_end.clear();
    std::uint32_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > e.start_ps) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(0);
    lane_end[lane] = e.end_ps;
    lanes.of_event[order[k]] = lane;
    lanes.per_track[e.track] =
        std::max(lanes.per_track[e.track], static_cast<std::uint32_t>(lane_end.size()));
  }
  return lanes;
}
}  // namespace

void write_trace_json(std::ostream& stream, const models::TraceRecorder& trace,
                      const isa::Program& program) {
  // Streamed rather than built as a JSON document (a DOM of the events costs an order of
  // magnitude more memory than the simulation itself), through a buffer of about 1 MiB.
  // One process per core (and one for the chip-level memory), one thread per unit track and
  // lane: a unit's extra lanes carry its name too, and sort right below its first.
  constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  std::string out;
  out.reserve(kFlushBytes + 4096);
  const auto quoted = [](const std::string& s) { return json(s).dump(); };
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  const auto begin_event = [&] {
    if (out.size() >= kFlushBytes) {
      stream.write(out.data(), static_cast<std::streamsize>(out.size()));
      out.clear();
    }
    if (!first) out += ",\n";
    first = false;
  };
  const Lanes lanes = assign_lanes(trace);
  // Thread ids: lane 0 of track t is t, as before lanes; further lanes are numbered after the
  // last track.
  std::vector<std::uint32_t> extra_tid(trace.tracks().size());
  std::uint32_t next_tid = static_cast<std::uint32_t>(trace.tracks().size());
  for (std::size_t t = 0; t < extra_tid.size(); ++t) {
    extra_tid[t] = next_tid - 1;  // lane l > 0: extra_tid + l
    next_tid += lanes.per_track[t] - 1;
  }
  const auto tid_of = [&](std::uint32_t track, std::uint32_t lane) {
    return lane == 0 ? track : extra_tid[track] + lane;
  };
  std::vector<int> pid_of(trace.tracks().size());
  for (std::size_t t = 0; t < trace.tracks().size(); ++t) {
    const std::string& path = trace.tracks()[t];
    const std::size_t at = path.find(".core");
    int pid = 1000;
    std::string process = "chip";
    if (at != std::string::npos) {
      pid = std::atoi(path.c_str() + at + 5);
      process = path.substr(at + 1, path.find('.', at + 1) - at - 1);
    }
    pid_of[t] = pid;
    begin_event();
    out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":0,\"args\":{\"name\":" + quoted(process) + "}}";
    for (std::uint32_t lane = 0; lane < lanes.per_track[t]; ++lane) {
      const std::string thread = ",\"pid\":" + std::to_string(pid) +
                                 ",\"tid\":" + std::to_string(tid_of(std::uint32_t(t), lane));
      begin_event();
      out += "{\"ph\":\"M\",\"name\":\"thread_name\"" + thread +
             ",\"args\":{\"name\":" + quoted(path) + "}}";
      begin_event();
      out += "{\"ph\":\"M\",\"name\":\"thread_sort_index\"" + thread +
             ",\"args\":{\"sort_index\":" + std::to_string(t * 64 + std::min(lane, 63u)) + "}}";
    }
  }
  std::vector<std::string> op_names;
  for (const isa::OpInfo& op : program.ops) op_names.push_back(quoted(op.name));
  char number[64];
  for (std::size_t i = 0; i < trace.events().size(); ++i) {
    const models::TraceEvent& e = trace.events()[i];
    begin_event();
    const bool has_instruction = e.instruction != models::kNoInstruction;
    out += "{\"ph\":\"X\",\"name\":";
    out += has_instruction ? quoted(program.instructions[e.instruction].mnemonic()) : "\"memory\"";
    out += ",\"pid\":" + std::to_string(pid_of[e.track]) +
           ",\"tid\":" + std::to_string(tid_of(e.track, lanes.of_event[i]));
    // Microseconds with picosecond precision.
    std::snprintf(number, sizeof number, ",\"ts\":%.6f,\"dur\":%.6f", double(e.start_ps) * 1e-6,
                  double(e.end_ps - e.start_ps) * 1e-6);
    out += number;
    out += ",\"args\":{\"op\":";
    out += e.op < op_names.size() ? op_names[e.op] : std::to_string(e.op);
    if (has_instruction) out += ",\"instruction\":" + std::to_string(e.instruction);
    out += "}}";
  }
  out += "\n]}\n";
  stream.write(out.data(), static_cast<std::streamsize>(out.size()));
}

void write_outputs(const std::string& dir, const Report& report, const models::TraceRecorder& trace,
                   const isa::Program& program) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir + ": cannot create output directory (" + ec.message() + ")");
  const std::filesystem::path d(dir);
  // The small files are rendered first; the trace is streamed into its temporary file.
  const std::string json_text = report_json(report);
  const std::string csv_text = ops_csv(report);
  // All three are written under temporary names and renamed into place only once every one is
  // whole, report.json last (it marks a complete run): a failure, or a signal that stops the
  // process part-way, leaves only .partial files, never a result that could pass for a run's.
  static_assert(std::string_view(kReportFiles[0]) == "ops.csv" &&
                    std::string_view(kReportFiles[1]) == "trace.json" &&
                    std::string_view(kReportFiles[2]) == "report.json",
                "the renders below follow kReportFiles' order");
  const std::filesystem::path files[] = {d / kReportFiles[0], d / kReportFiles[1],
                                         d / kReportFiles[2]};
  std::vector<StagedFile> staged;
  std::size_t renamed = 0;
  try {
    staged.push_back(stage_file(files[0], [&](std::ostream& out) { out << csv_text; }));
    staged.push_back(
        stage_file(files[1], [&](std::ostream& out) { write_trace_json(out, trace, program); }));
    staged.push_back(stage_file(files[2], [&](std::ostream& out) { out << json_text; }));
    for (; renamed < staged.size(); ++renamed) commit_file(staged[renamed]);
  } catch (...) {
    // Only what this call wrote: a directory squatting on a report's name stays, as it was, and
    // so does a device written in place.
    for (std::size_t i = 0; i < staged.size(); ++i)
      if (!staged[i].temp.empty())
        std::filesystem::remove(i < renamed ? staged[i].target : staged[i].temp, ec);
    throw;
  }
}

}  // namespace tpusim::sim
