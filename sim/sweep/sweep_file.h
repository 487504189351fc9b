#pragma once
// A sweep file (configs/sweeps/README.md is the format): a base chip, workloads, fixed
// overrides, axes (cartesian and zipped) and constraints. Parsing is plain C++ (no SystemC,
// no processes), so enumeration is unit-testable; the chip itself is consulted only by
// check_sweep(), through the loader it is given.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/base/errors.h"
#include "sim/config/config_tree.h"
#include "sim/sweep/constraint.h"

namespace tpusim::sweep {

// One value of an axis, a workload parameter or a `set:` entry.
struct Value {
  std::string text;      // as written (lists and maps in flow YAML): the results.csv cell
  std::string set_text;  // what `--set key=` gets: text, or a swapped section's whole YAML
  std::string file;      // a section swap: the file read (resolved path); else empty
  bool scalar = true;    // written as one plain or quoted value, not a list or map
  SourceLocation where;
};

struct Axis {
  std::string key;  // dotted chip key, as written; also the results.csv column
  SourceLocation where;
  std::vector<Value> values;
  int zip_group = -1;  // -1: a cartesian axis; else its group in `zip:`
};

// `set:` entries apply to every point.
struct Setting {
  std::string key;
  Value value;
};

// One entry of `workloads:`. A parameter with a list of values expands the entry (cartesian, in
// the order written); `{name}` in the workload is replaced by the parameter's value.
struct WorkloadEntry {
  std::string workload;
  SourceLocation where;
  std::vector<std::pair<std::string, std::vector<Value>>> params;
};

// A workload after expansion: one per combination of its entry's parameter values.
struct Workload {
  std::string name;                 // as written, parameters substituted: the results.csv cell
  std::string path;                 // the file run (filled by check_sweep)
  std::vector<std::string> params;  // values, in SweepFile::param_keys order
  SourceLocation where;
};

struct SweepFile {
  std::string path;
  std::string chip;  // as written
  SourceLocation chip_where;
  std::vector<WorkloadEntry> workloads;
  std::vector<std::string> param_keys;  // every entry has each, in this order
  std::vector<Workload> expanded;       // the entries expanded, in order
  std::vector<Setting> settings;
  std::vector<Axis> axes;  // cartesian axes in file order, then each zip group's axes
  int zip_groups = 0;
  std::vector<Constraint> constraints;

  // The results.csv columns between `workload` and `status`: parameters, then axes.
  std::vector<std::string> columns() const;
};

// Reads and checks the file's shape: keys, lists, zip lengths, duplicate keys, constraint
// syntax. Throws ConfigError naming file:line:col (exit 2).
SweepFile parse_sweep_file(const std::string& path);
SweepFile parse_sweep_text(const std::string& text, const std::string& path);

// What check_sweep needs from outside: name resolution (the CLI's preset and sample lookup) and
// the base chip's resolved tree. A resolver returns a path; `exists` says whether it is a file.
struct SweepEnvironment {
  std::function<std::string(const std::string& name)> resolve_chip;
  std::function<std::string(const std::string& name)> resolve_workload;
  std::function<std::string(const std::string& name)> resolve_memory_preset;
  // Loads the chip with overrides and returns its resolved tree; throws InputError.
  std::function<config::ConfigNode(const std::string& chip_path,
                                   const std::vector<std::string>& overrides)>
      load_chip;
};

// The sweep checked against its chip and files: every key is a chip key (else the nearest
// is named), every file exists; section swaps are read. Returns the resolved base chip path.
std::string check_sweep(SweepFile& sweep, const SweepEnvironment& env);

// A path as written in the sweep file, made absolute: bare names are left to `resolve`,
// relative paths are relative to the sweep file's folder.
std::string sweep_relative(const SweepFile& sweep, const std::string& written,
                           const std::function<std::string(const std::string&)>& resolve);

}  // namespace tpusim::sweep
