#pragma once
// Strict reading of YAML maps for the graph loader: every value is checked for its type, every
// key must be known, and every error is one WorkloadError line at the node's file:line:col.
// Internal to workloads/ (the public entry points are in yaml_graph.h).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/base/errors.h"

namespace tpusim::workloads {

// Files larger than this are refused before parsing: no real graph comes near it, and it bounds
// the time and memory a mistaken path (a dataset, a binary) can cost.
inline constexpr std::size_t kMaxYamlBytes = std::size_t{16} << 20;

// Parses `text` as exactly one YAML document. Refuses anchors and aliases (they would let a small
// file expand into a huge graph), duplicate keys (yaml-cpp would keep one silently), non-scalar
// keys and nesting deeper than 64 levels.
YAML::Node load_single_document(std::string_view text, const std::string& file);

SourceLocation location(const YAML::Node& node, const std::string& file);

// A YAML scalar's text quoted for an error message, shortened if long.
std::string quoted_scalar(const YAML::Node& node);

// One YAML map. `context` prefixes every message ("op 'conv1' (conv2d)"); keys not in the allowed
// list are rejected with the nearest allowed key suggested.
class MapReader {
 public:
  MapReader(const YAML::Node& map, const std::string& file, std::string context);

  void allow_only(const std::vector<std::string>& keys) const;

  bool has(std::string_view key) const;
  // The value node, or an invalid node when absent.
  YAML::Node get(std::string_view key) const;
  YAML::Node required(std::string_view key) const;

  std::string str(std::string_view key) const;
  std::string str_or(std::string_view key, const std::string& dflt) const;
  std::int64_t integer(std::string_view key, std::int64_t lo, std::int64_t hi) const;
  std::int64_t integer_or(std::string_view key, std::int64_t lo, std::int64_t hi,
                          std::int64_t dflt) const;
  bool boolean_or(std::string_view key, bool dflt) const;
  double number_or(std::string_view key, double dflt) const;
  // A sequence of integers, each in [lo, hi] (a scalar is not a sequence here).
  std::vector<std::int64_t> int_list(std::string_view key, std::int64_t lo, std::int64_t hi) const;
  std::vector<std::string> str_list(std::string_view key) const;

  // Converters usable on any node of this map (also for nested values).
  std::int64_t as_integer(const YAML::Node& n, std::string_view key, std::int64_t lo,
                          std::int64_t hi) const;
  bool as_boolean(const YAML::Node& n, std::string_view key) const;
  std::string as_str(const YAML::Node& n, std::string_view key) const;

  [[noreturn]] void fail(const YAML::Node& at, std::string_view key,
                         const std::string& message) const;
  // At the key's value when present, else at the map itself.
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

  const YAML::Node& node() const { return map_; }
  const std::string& file() const { return file_; }
  const std::string& context() const { return context_; }
  void set_context(std::string context) { context_ = std::move(context); }

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };
  const Entry* find(std::string_view key) const;

  YAML::Node map_;
  std::string file_;
  std::string context_;
  std::vector<Entry> entries_;
};

}  // namespace tpusim::workloads
