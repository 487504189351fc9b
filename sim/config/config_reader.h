#pragma once
// Reads one mapping of a ConfigNode tree into Spec fields (STYLE rule 7). Every read records the
// key as known, so finish() can reject the keys nobody asked for and suggest the nearest known
// one. Every read also writes the value it settled on (given or default) into a `resolved` tree,
// which is what `tpusim config` prints and report.json embeds.

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/base/errors.h"
#include "sim/base/units.h"
#include "sim/config/config_tree.h"

namespace tpusim::config {

template <typename E>
using Choices = std::vector<std::pair<std::string_view, E>>;

class ConfigReader {
 public:
  // `resolved` may be null when nobody needs the resolved tree.
  ConfigReader(const ConfigNode& node, std::string path, ConfigNode* resolved);

  const std::string& path() const { return path_; }
  const ConfigNode& node() const { return node_; }
  std::string path_of(const std::string& key) const;
  // Where `key` was written, or where this section was when the key is absent.
  SourceLocation where_of(const std::string& key) const;
  bool has(const std::string& key);

  // Values. T is one of: bool, std::string, Hertz, Bytes, Bandwidth, Duration, Picojoules, Watts.
  template <typename T>
  T req(const std::string& key);
  template <typename T>
  T opt(const std::string& key, const T& fallback);

  std::uint64_t req_uint(const std::string& key, std::uint64_t lo = 0,
                         std::uint64_t hi = std::numeric_limits<std::uint32_t>::max());
  std::uint64_t opt_uint(const std::string& key, std::uint64_t fallback, std::uint64_t lo = 0,
                         std::uint64_t hi = std::numeric_limits<std::uint32_t>::max());
  double req_number(const std::string& key, double lo, double hi);
  double opt_number(const std::string& key, double fallback, double lo, double hi);

  template <typename E>
  E req_choice(const std::string& key, const Choices<E>& choices) {
    return choice_at(key, choices, required(key));
  }
  template <typename E>
  E opt_choice(const std::string& key, E fallback, const Choices<E>& choices) {
    const ConfigNode* n = optional(key);
    if (!n) {
      record(key, name_of(choices, fallback));
      return fallback;
    }
    return choice_at(key, choices, *n);
  }

  // Sub-mappings. A missing optional section yields nullopt (and nothing is recorded).
  ConfigReader section(const std::string& key);
  std::optional<ConfigReader> opt_section(const std::string& key);
  // A list of mappings, each read by its own reader.
  std::vector<ConfigReader> list(const std::string& key);
  // Every key of this mapping, for free-form tables (dtype -> rate). Marks them known.
  std::vector<std::string> keys();
  // Records a default value for the resolved tree where a whole section was absent.
  void record(const std::string& key, const std::string& text);
  ConfigNode* resolved_section(const std::string& key);

  // Marks keys as known before they are read, so a missing required key is not taken for a
  // misspelling of one of them.
  void expect(const std::vector<std::string>& keys) { known_.insert(keys.begin(), keys.end()); }
  // Rejects keys that no read asked for, naming the nearest known key.
  void finish() const;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // For errors about the key itself (an unknown name in a free-form table), not its value.
  [[noreturn]] void fail_key(const std::string& key, const std::string& message) const;
  void require(bool ok, const std::string& key, const std::string& message) const {
    if (!ok) fail(key, message);
  }

 private:
  const ConfigNode& required(const std::string& key);
  const ConfigNode* optional(const std::string& key);
  const ConfigNode& scalar_at(const std::string& key, const ConfigNode& n) const;
  std::uint64_t uint_at(const std::string& key, const ConfigNode& n, std::uint64_t lo,
                        std::uint64_t hi);
  double number_at(const std::string& key, const ConfigNode& n, double lo, double hi);
  template <typename T>
  T value_at(const std::string& key, const ConfigNode& n);

  template <typename E>
  static std::string name_of(const Choices<E>& choices, E value) {
    for (const auto& [name, v] : choices)
      if (v == value) return std::string(name);
    return "?";
  }
  template <typename E>
  E choice_at(const std::string& key, const Choices<E>& choices, const ConfigNode& n) {
    const std::string& text = scalar_at(key, n).text();
    std::string names;
    for (const auto& [name, value] : choices) {
      if (name == text) {
        record(key, text);
        return value;
      }
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    fail_at(n.where(), key, "expected one of " + names + ", got \"" + text + "\"");
  }
  [[noreturn]] void fail_at(const SourceLocation& where, const std::string& key,
                            const std::string& message) const;

  const ConfigNode& node_;
  std::string path_;
  ConfigNode* resolved_;
  std::set<std::string> known_;
};

}  // namespace tpusim::config
