#include "sim/sweep/sweep_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "workloads/suggest.h"

namespace tpusim::sweep {
namespace fs = std::filesystem;
using config::ConfigNode;

namespace {

// results.csv columns that are not parameters or axes; no parameter may take their names.
const char* const kFixedColumns[] = {"point",           "workload",        "status",
                                     "error",           "cycles",          "seconds",
                                     "mxu_utilization", "vpu_utilization", "memory_bw_utilization",
                                     "hbm_read_bytes",  "hbm_write_bytes", "macs",
                                     "energy_j",        "edp_js",          "report"};

[[noreturn]] void fail(const SourceLocation& where, const std::string& key,
                       const std::string& what) {
  throw ConfigError(where, key, what);
}

// One line of YAML for a node, so a list or map value fits a CSV cell and a `--set`.
std::string flow_yaml(const ConfigNode& node) { return config::to_yaml(node, true); }

bool valid_key(const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos)
    return false;
  return std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

Value value_of(const ConfigNode& node, const std::string& key) {
  if (node.is_null()) fail(node.where(), key, "a value is missing (null)");
  Value v;
  v.text = node.is_scalar() ? node.text() : flow_yaml(node);
  v.set_text = flow_yaml(node);
  v.scalar = node.is_scalar();
  v.where = node.where();
  return v;
}

// A list of values; a single scalar counts as a list of one.
std::vector<Value> values_of(const ConfigNode& node, const std::string& key) {
  std::vector<Value> values;
  if (!node.is_seq()) {
    values.push_back(value_of(node, key));
    return values;
  }
  if (node.items().empty()) fail(node.where(), key, "an empty list of values");
  std::set<std::string> seen;
  for (const ConfigNode& item : node.items()) {
    values.push_back(value_of(item, key));
    if (!seen.insert(values.back().text).second)
      fail(item.where(), key, "value '" + values.back().text + "' appears twice");
  }
  return values;
}

void check_top_level(const ConfigNode& root) {
  static const std::vector<std::string> kKeys = {"name", "description", "chip", "workloads",
                                                 "set",  "axes",        "zip",  "constraints"};
  for (const auto& [key, value] : root.entries())
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      fail(value.key_where(), key, "unknown key" + workloads::suggestion(key, kKeys));
}

void parse_workloads(const ConfigNode& node, SweepFile& sweep) {
  if (node.is_scalar()) {
    sweep.workloads.push_back({node.text(), node.where(), {}});
    return;
  }
  if (!node.is_seq() || node.items().empty())
    fail(node.where(), "workloads", "expected a workload or a list of workloads");
  bool first = true;
  for (const ConfigNode& item : node.items()) {
    WorkloadEntry entry;
    entry.where = item.where();
    if (item.is_scalar()) {
      entry.workload = item.text();
    } else if (item.is_map()) {
      const ConfigNode* name = item.find("workload");
      if (!name || !name->is_scalar() || name->text().empty())
        fail(item.where(), "workloads",
             "an entry that is a mapping needs 'workload: NAME-OR-PATH' (other keys are its "
             "parameters)");
      entry.workload = name->text();
      for (const auto& [key, value] : item.entries()) {
        if (key == "workload") continue;
        if (!valid_key(key)) fail(value.key_where(), key, "not a parameter name");
        if (value.is_map()) fail(value.where(), key, "expected a value or a list of values");
        entry.params.emplace_back(key, values_of(value, key));
      }
    } else {
      fail(item.where(), "workloads", "expected a workload name or path, or a mapping");
    }
    if (entry.workload.empty()) fail(item.where(), "workloads", "empty workload name");
    std::vector<std::string> keys;
    for (const auto& [key, values] : entry.params) keys.push_back(key);
    if (first) {
      sweep.param_keys = keys;
    } else if (keys != sweep.param_keys) {
      std::string expected;
      for (const std::string& k : sweep.param_keys) expected += (expected.empty() ? "" : ", ") + k;
      fail(item.where(), "workloads",
           "every entry needs the same parameters, in the same order, as the first (" +
               (expected.empty() ? std::string("none") : expected) + ")");
    }
    first = false;
    sweep.workloads.push_back(std::move(entry));
  }
}

// `{name}` in a workload is a parameter's value.
std::string substitute(const WorkloadEntry& entry, const std::vector<std::size_t>& choice) {
  std::string out;
  const std::string& w = entry.workload;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] != '{') {
      out += w[i];
      continue;
    }
    const std::size_t close = w.find('}', i);
    const std::string name = close == std::string::npos ? "" : w.substr(i + 1, close - i - 1);
    std::size_t p = 0;
    while (p < entry.params.size() && entry.params[p].first != name) ++p;
    if (p == entry.params.size())
      fail(entry.where, "workloads",
           "'{" + name + "}' in '" + w + "' names no parameter of this entry");
    out += entry.params[p].second[choice[p]].text;
    i = close;
  }
  return out;
}

void expand_workloads(SweepFile& sweep) {
  for (const WorkloadEntry& entry : sweep.workloads) {
    std::vector<std::size_t> choice(entry.params.size(), 0);
    while (true) {
      Workload w;
      w.name = substitute(entry, choice);
      w.where = entry.where;
      for (std::size_t p = 0; p < entry.params.size(); ++p)
        w.params.push_back(entry.params[p].second[choice[p]].text);
      sweep.expanded.push_back(std::move(w));
      // Odometer: the last parameter varies fastest.
      std::size_t p = entry.params.size();
      while (p > 0 && ++choice[p - 1] == entry.params[p - 1].second.size()) choice[--p] = 0;
      if (p == 0) break;
    }
  }
}

void add_axes(const ConfigNode& node, const std::string& section, int group, SweepFile& sweep) {
  if (!node.is_map() || node.entries().empty())
    fail(node.where(), section, "expected a mapping of chip keys to lists of values");
  std::size_t length = 0;
  for (const auto& [key, value] : node.entries()) {
    if (!valid_key(key)) fail(value.key_where(), key, "not a key path (names joined by '.')");
    Axis axis{key, value.key_where(), values_of(value, key), group};
    if (group >= 0) {
      if (length != 0 && axis.values.size() != length)
        fail(value.where(), key,
             "a zip group's axes need equal lengths: this one has " +
                 std::to_string(axis.values.size()) + " values, the first " +
                 std::to_string(length));
      length = axis.values.size();
    }
    sweep.axes.push_back(std::move(axis));
  }
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    fail(SourceLocation{path}, "", fs::exists(path, ec) ? "not a file" : "no such file");
  if (fs::file_size(path, ec) > 1024 * 1024)
    fail(SourceLocation{path}, "", "larger than 1 MiB; not a sweep file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) fail(SourceLocation{path}, "", "cannot be read");
  return text.str();
}

}  // namespace

std::vector<std::string> SweepFile::columns() const {
  std::vector<std::string> out = param_keys;
  for (const Axis& a : axes) out.push_back(a.key);
  return out;
}

SweepFile parse_sweep_text(const std::string& text, const std::string& path) {
  const ConfigNode root = config::parse_yaml(text, path);
  if (!root.is_map())
    fail(SourceLocation{path, 1, 1}, "", "expected a mapping (chip:, workloads:, axes:, ...)");
  check_top_level(root);
  SweepFile sweep;
  sweep.path = path;

  const ConfigNode* chip = root.find("chip");
  if (!chip) fail(SourceLocation{path, 1, 1}, "chip", "missing: the base chip (preset or path)");
  if (!chip->is_scalar() || chip->text().empty())
    fail(chip->where(), "chip", "expected one preset name or path");
  sweep.chip = chip->text();
  sweep.chip_where = chip->where();

  const ConfigNode* workloads = root.find("workloads");
  if (!workloads) fail(SourceLocation{path, 1, 1}, "workloads", "missing: at least one workload");
  parse_workloads(*workloads, sweep);
  expand_workloads(sweep);

  if (const ConfigNode* set = root.find("set")) {
    if (!set->is_map()) fail(set->where(), "set", "expected a mapping of chip keys to values");
    for (const auto& [key, value] : set->entries()) {
      if (!valid_key(key)) fail(value.key_where(), key, "not a key path (names joined by '.')");
      if (value.is_seq())
        fail(value.where(), key, "set: takes one value per key (lists of values go under axes:)");
      Value v = value_of(value, key);
      v.where = value.key_where();
      sweep.settings.push_back({key, std::move(v)});
    }
  }
  if (const ConfigNode* axes = root.find("axes")) add_axes(*axes, "axes", -1, sweep);
  if (const ConfigNode* zip = root.find("zip")) {
    if (!zip->is_seq() || zip->items().empty())
      fail(zip->where(), "zip", "expected a list of groups (each a mapping of keys to lists)");
    for (const ConfigNode& group : zip->items()) add_axes(group, "zip", sweep.zip_groups++, sweep);
  }

  // Every key once: a column names one thing, and two writers of one key would race.
  std::vector<std::pair<std::string, SourceLocation>> keys;
  for (const std::string& p : sweep.param_keys) keys.emplace_back(p, sweep.workloads[0].where);
  for (const Setting& s : sweep.settings) keys.emplace_back(s.key, s.value.where);
  for (const Axis& a : sweep.axes) keys.emplace_back(a.key, a.where);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    for (const char* fixed : kFixedColumns)
      if (keys[i].first == fixed)
        fail(keys[i].second, keys[i].first, "is a results.csv column; choose another name");
    for (std::size_t j = 0; j < i; ++j)
      if (keys[i].first == keys[j].first)
        fail(keys[i].second, keys[i].first, "appears twice (also at " + keys[j].second.str() + ")");
  }

  if (const ConfigNode* constraints = root.find("constraints")) {
    std::vector<std::string> names = sweep.columns();
    names.push_back("workload");
    std::vector<const ConfigNode*> items;
    if (constraints->is_scalar()) items.push_back(constraints);
    if (constraints->is_seq())
      for (const ConfigNode& c : constraints->items()) items.push_back(&c);
    if (items.empty()) fail(constraints->where(), "constraints", "expected a list of conditions");
    for (const ConfigNode* c : items) {
      if (!c->is_scalar())
        fail(c->where(), "constraints",
             "expected a condition such as 'core.mxu.rows == core.mxu.cols' (quote it if it "
             "starts with a quote or contains ': ')");
      SourceLocation at = c->where();
      if (c->quoted()) ++at.column;
      sweep.constraints.push_back(Constraint::parse(c->text(), at, names));
    }
  }
  return sweep;
}

SweepFile parse_sweep_file(const std::string& path) {
  return parse_sweep_text(read_file(path), path);
}

std::string sweep_relative(const SweepFile& sweep, const std::string& written,
                           const std::function<std::string(const std::string&)>& resolve) {
  // Absolute: the points' commands and fingerprints must not depend on the folder the sweep is
  // started (or resumed) from.
  const auto absolute = [](const fs::path& p) {
    return fs::absolute(p).lexically_normal().generic_string();
  };
  const bool bare = written.find('/') == std::string::npos && fs::path(written).extension().empty();
  if (bare) return absolute(resolve(written));
  const fs::path p(written);
  if (p.is_absolute()) return absolute(p);
  return absolute(fs::path(sweep.path).parent_path() / p);
}

namespace {

void collect_paths(const ConfigNode& node, const std::string& prefix,
                   std::vector<std::string>& out) {
  for (const auto& [key, value] : node.entries()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    out.push_back(path);
    if (value.is_map()) collect_paths(value, path, out);
  }
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A key that names a section, given a plain value, swaps the section for the file it names.
void bind_value(const std::string& key, Value& v, const ConfigNode* base_node,
                const SweepFile& sweep, const SweepEnvironment& env) {
  if (!base_node || !base_node->is_map() || !v.scalar) return;
  // Only DRAM presets have a folder of their own; other bare names sit beside the sweep file.
  const auto beside = [&sweep](const std::string& name) {
    return (fs::path(sweep.path).parent_path() / name).lexically_normal().generic_string();
  };
  try {
    v.file = sweep_relative(sweep, v.text,
                            ends_with(key, "memory.hbm") ? env.resolve_memory_preset : beside);
  } catch (const InputError& e) {
    fail(v.where, key, e.what());
  }
  std::error_code ec;
  if (!fs::is_regular_file(v.file, ec))
    fail(v.where, key,
         "'" + v.file + "' is not a file (" + key +
             " is a section: a plain value names a file whose contents replace it" +
             (ends_with(key, "memory.hbm") ? "; presets: configs/memory/NAME.yaml)" : ")"));
  ConfigNode section;
  try {
    section = config::load_config_file(v.file);
  } catch (const InputError& e) {
    fail(v.where, key, e.what());
  }
  v.set_text = flow_yaml(section);
}

}  // namespace

std::string check_sweep(SweepFile& sweep, const SweepEnvironment& env) {
  std::string chip_path;
  ConfigNode base;
  try {
    chip_path = sweep_relative(sweep, sweep.chip, env.resolve_chip);
    base = env.load_chip(chip_path, {});
  } catch (const InputError& e) {
    fail(sweep.chip_where, "chip", e.what());
  }
  std::vector<std::string> known;
  collect_paths(base, "", known);

  const auto check_key = [&](const std::string& key, const SourceLocation& where, Value& first) {
    const ConfigNode* node = config::find_path(base, key);
    bind_value(key, first, node, sweep, env);
    if (node) return node;
    // Keys of optional sections the chip leaves out (core.cmem) are absent from its tree but
    // valid; the loader is the judge.
    try {
      env.load_chip(chip_path, {key + "=" + first.set_text});
    } catch (const InputError& e) {
      const std::string best = workloads::nearest(key, known);
      fail(where, key,
           best.empty() ? "cannot be set on chip " + sweep.chip + ": " + e.what()
                        : "not a key of chip " + sweep.chip + "; did you mean '" + best + "'?");
    }
    return node;
  };
  for (Setting& s : sweep.settings) check_key(s.key, s.value.where, s.value);
  for (Axis& a : sweep.axes) {
    const ConfigNode* node = check_key(a.key, a.where, a.values.front());
    for (std::size_t i = 1; i < a.values.size(); ++i)
      bind_value(a.key, a.values[i], node, sweep, env);
  }
  for (Workload& w : sweep.expanded) {
    try {
      w.path = sweep_relative(sweep, w.name, env.resolve_workload);
    } catch (const InputError& e) {
      fail(w.where, "workloads", e.what());
    }
    std::error_code ec;
    if (!fs::is_regular_file(w.path, ec))
      fail(w.where, "workloads",
           "workload '" + w.name + "' not found (no file " + w.path +
               "; a bare name is a sample in workloads/, a path is relative to this file)");
  }
  // The same file with the same parameters would run every point twice, and a resumed sweep
  // could not tell the two rows apart.
  std::map<std::pair<std::string, std::vector<std::string>>, const Workload*> seen;
  for (const Workload& w : sweep.expanded) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(w.path, ec);
    const auto [it, fresh] =
        seen.emplace(std::make_pair(ec ? w.path : canonical.string(), w.params), &w);
    if (!fresh)
      fail(w.where, "workloads",
           "workload '" + w.name + "' is listed twice (also '" + it->second->name + "' at " +
               it->second->where.str() + ")");
  }
  return chip_path;
}

}  // namespace tpusim::sweep
