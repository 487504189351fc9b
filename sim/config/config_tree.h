#pragma once
// A YAML document as a tree whose every node remembers the file, line and column it came from.
// yaml-cpp's own nodes lose the file name once documents are merged, and errors must name the
// file a value was written in, so configs are converted into this tree on load, merged here
// (`extends`), overridden here (`--set`), and only then bound to a Spec by ConfigReader.

#include <list>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/errors.h"

namespace tpusim::config {

class ConfigNode {
 public:
  enum class Kind { kNull, kScalar, kMap, kSeq };
  using Entry = std::pair<std::string, ConfigNode>;

  ConfigNode() = default;
  static ConfigNode scalar(std::string text, SourceLocation where, bool quoted = false);
  static ConfigNode map(SourceLocation where);
  static ConfigNode seq(SourceLocation where);
  static ConfigNode null(SourceLocation where);

  Kind kind() const { return kind_; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_seq() const { return kind_ == Kind::kSeq; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_null() const { return kind_ == Kind::kNull; }
  const SourceLocation& where() const { return where_; }
  // Where the key naming this node was written (for "unknown key" errors); else where().
  const SourceLocation& key_where() const { return key_where_.file.empty() ? where_ : key_where_; }
  void set_key_where(SourceLocation w) { key_where_ = std::move(w); }
  // Gives this node and everything below it one location (values that came from --set).
  void relocate(const SourceLocation& w);

  const std::string& text() const { return text_; }
  bool quoted() const { return quoted_; }

  // Map access, in document order. Lists, because readers keep pointers to children while
  // siblings are appended (a list never moves its elements), and an empty list allocates
  // nothing, which matters for a tree with a node per YAML value.
  const std::list<Entry>& entries() const { return entries_; }
  std::list<Entry>& entries() { return entries_; }
  const ConfigNode* find(const std::string& key) const;
  ConfigNode* find(const std::string& key);
  // Inserts or replaces, keeping the position of an existing key.
  ConfigNode& set(const std::string& key, ConfigNode value);
  // Appends a key the caller knows is new (no search).
  ConfigNode& append(const std::string& key, ConfigNode value);
  void erase(const std::string& key);

  const std::list<ConfigNode>& items() const { return items_; }
  std::list<ConfigNode>& items() { return items_; }

 private:
  Kind kind_ = Kind::kNull;
  SourceLocation where_;
  SourceLocation key_where_;
  std::string text_;
  bool quoted_ = false;
  std::list<Entry> entries_;
  std::list<ConfigNode> items_;
};

// Parses YAML text. Duplicate keys and non-scalar keys are errors. `file` names the text in errors.
ConfigNode parse_yaml(const std::string& text, const std::string& file);

// Loads a file and resolves every `extends:` in it, at any depth, relative to the file naming it.
ConfigNode load_config_file(const std::string& path);

// Merges `over` onto `base`: maps key by key, anything else replaced; a null in `over` deletes.
void merge_into(ConfigNode& base, const ConfigNode& over);

// Applies one `--set key.path=value` override; the value is parsed as YAML.
void apply_override(ConfigNode& root, const std::string& assignment);

// The node at a dotted key path, or nullptr.
const ConfigNode* find_path(const ConfigNode& root, const std::string& dotted);

// YAML text of a tree, in document order: maps in block style, or with `one_line` everything in
// flow style on one line (a value for a CSV cell or a `--set`).
std::string to_yaml(const ConfigNode& root, bool one_line = false);

}  // namespace tpusim::config
