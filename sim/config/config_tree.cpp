#include "sim/config/config_tree.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "sim/base/input_file.h"

namespace tpusim::config {
namespace fs = std::filesystem;

ConfigNode ConfigNode::scalar(std::string text, SourceLocation where, bool quoted) {
  ConfigNode n;
  n.kind_ = Kind::kScalar;
  n.text_ = std::move(text);
  n.where_ = std::move(where);
  n.quoted_ = quoted;
  return n;
}

ConfigNode ConfigNode::map(SourceLocation where) {
  ConfigNode n;
  n.kind_ = Kind::kMap;
  n.where_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::seq(SourceLocation where) {
  ConfigNode n;
  n.kind_ = Kind::kSeq;
  n.where_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::null(SourceLocation where) {
  ConfigNode n;
  n.where_ = std::move(where);
  return n;
}

void ConfigNode::relocate(const SourceLocation& w) {
  where_ = w;
  key_where_ = w;
  for (auto& entry : entries_) entry.second.relocate(w);
  for (ConfigNode& item : items_) item.relocate(w);
}

const ConfigNode* ConfigNode::find(const std::string& key) const {
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

ConfigNode* ConfigNode::find(const std::string& key) {
  for (auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

ConfigNode& ConfigNode::set(const std::string& key, ConfigNode value) {
  if (ConfigNode* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  entries_.emplace_back(key, std::move(value));
  return entries_.back().second;
}

ConfigNode& ConfigNode::append(const std::string& key, ConfigNode value) {
  entries_.emplace_back(key, std::move(value));
  return entries_.back().second;
}

void ConfigNode::erase(const std::string& key) {
  entries_.remove_if([&](const Entry& e) { return e.first == key; });
}

namespace {

SourceLocation location_of(const YAML::Mark& mark, const std::string& file) {
  if (mark.is_null()) return SourceLocation{file, 0, 0};
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

// A pass over the event stream before YAML::Load builds nodes, to stop where YAML::LoadAll
// would not: yaml-cpp 0.7 can start empty documents forever without reading on after a stray
// ',' (jbeder/yaml-cpp#1040, fixed upstream in PR #1319). A config is one document, so the
// second start ends the pass: reported as the stray character if the document starts on one
// (',', ']' or '}' cannot begin a document), else at the second document's first node (or
// where it starts, if it is empty).
class OneDocument : public YAML::EventHandler {
 public:
  OneDocument(const std::string& text, const std::string& file) : text_(text), file_(file) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ != 2) return;
    second_start_ = mark;
    const auto pos = static_cast<std::size_t>(mark.pos);
    if (mark.pos >= 0 && pos < text_.size() && std::strchr(",]}", text_[pos]) && text_[pos])
      throw ConfigError(location_of(mark, file_), "",
                        std::string("invalid YAML: unexpected '") + text_[pos] + "'");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}
  // After the whole stream: an empty second document.
  void finish() const {
    if (documents_ > 1) more_than_one(second_start_);
  }

 private:
  void node(const YAML::Mark& mark) const {
    if (documents_ > 1) more_than_one(mark);
  }
  [[noreturn]] void more_than_one(const YAML::Mark& mark) const {
    throw ConfigError(location_of(mark, file_), "",
                      "more than one YAML document ('---' starts another); a config is one "
                      "document");
  }

  const std::string& text_;
  const std::string& file_;
  int documents_ = 0;
  YAML::Mark second_start_;
};

// Aliases are expanded on conversion, so a few lines of anchors can stand for billions of nodes;
// no real config comes near these budgets (a chip preset has a few hundred values).
constexpr std::size_t kMaxNodes = 100'000;
constexpr std::uintmax_t kMaxFileBytes = 1024 * 1024;

// `inside` holds the collections enclosing `node`: an alias to one of them (`&a [*a]`) makes the
// document infinite, which yaml-cpp builds as a cycle.
ConfigNode convert(const YAML::Node& node, const std::string& file, std::size_t& budget,
                   std::vector<YAML::Node>& inside) {
  SourceLocation where = location_of(node.Mark(), file);
  if (budget-- == 0)
    throw ConfigError(
        where, "",
        "more than 100000 values (counting what aliases expand to), more than any config holds");
  if (node.IsSequence() || node.IsMap()) {
    for (const YAML::Node& outer : inside)
      if (outer.is(node))
        throw ConfigError(where, "",
                          "an alias refers to a node that contains it (an endless value)");
    inside.push_back(node);
  }
  struct Leave {
    std::vector<YAML::Node>& inside;
    bool collection;
    ~Leave() {
      if (collection) inside.pop_back();
    }
  } leave{inside, node.IsSequence() || node.IsMap()};
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return ConfigNode::null(where);
    case YAML::NodeType::Scalar:
      // yaml-cpp tags quoted scalars "!"; plain ones "?".
      return ConfigNode::scalar(node.Scalar(), where, node.Tag() == "!");
    case YAML::NodeType::Sequence: {
      ConfigNode out = ConfigNode::seq(where);
      for (const auto& item : node) out.items().push_back(convert(item, file, budget, inside));
      return out;
    }
    case YAML::NodeType::Map: {
      ConfigNode out = ConfigNode::map(where);
      std::unordered_set<std::string> seen;
      for (const auto& kv : node) {
        SourceLocation key_where = location_of(kv.first.Mark(), file);
        if (!kv.first.IsScalar())
          throw ConfigError(key_where, "", "a mapping key must be a plain name");
        const std::string key = kv.first.Scalar();
        if (key == "<<")
          throw ConfigError(key_where, key, "YAML merge keys are not supported; use extends");
        if (!seen.insert(key).second)
          throw ConfigError(key_where, key, "duplicate key (each key may appear once)");
        ConfigNode value = convert(kv.second, file, budget, inside);
        // `{int8:1}` is one plain key "int8:1" with no value: YAML splits a key from its value
        // only at ": ". Left alone, the null reads as an unset key and the entry vanishes.
        const std::size_t colon = key.find(':');
        if (value.is_null() && kv.first.Tag() != "!" && colon != std::string::npos &&
            colon + 1 < key.size())
          throw ConfigError(key_where, key,
                            "a key with no value; YAML needs a space after ':' (write '" +
                                key.substr(0, colon) + ": " + key.substr(colon + 1) + "')");
        value.set_key_where(key_where);
        out.append(key, std::move(value));
      }
      return out;
    }
  }
  return ConfigNode::null(where);
}

std::string hex_byte(char c) {
  static const char kDigits[] = "0123456789ABCDEF";
  const auto b = static_cast<unsigned char>(c);
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 15];
}

// `text` with control characters and non-ASCII bytes as \n, \t or \xNN.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b >= 0x7F) {
      out += "\\x" + hex_byte(c).substr(2);
    } else {
      out += c;
    }
  }
  return out;
}

std::string read_text(const std::string& path, const SourceLocation& referenced_from) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ConfigError(referenced_from.file.empty() ? SourceLocation{path} : referenced_from, "",
                      "'" + path + "' is a directory, not a config file");
  std::string text;
  switch (read_input_file(path, kMaxFileBytes, text)) {
    case ReadStatus::kOk:
      break;
    case ReadStatus::kTooLarge:
      throw ConfigError(referenced_from.file.empty() ? SourceLocation{path} : referenced_from, "",
                        "'" + path + "' is larger than 1 MiB, more than any config holds");
    case ReadStatus::kCannotOpen:
    case ReadStatus::kCannotRead: {
      const std::string why = fs::exists(path, ec) ? "cannot be read" : "no such file";
      if (referenced_from.file.empty()) throw ConfigError(SourceLocation{path}, "", why);
      throw ConfigError(referenced_from, "extends", "'" + path + "': " + why);
    }
  }
  return text;
}

std::string display_path(const fs::path& p) { return p.lexically_normal().generic_string(); }

ConfigNode load_resolved(const std::string& path, std::vector<std::string>& stack,
                         const SourceLocation& referenced_from);

// Replaces every `extends` in `node` (recursively) by the merge of the files it names with the
// node's own keys on top.
void resolve_extends(ConfigNode& node, const fs::path& dir, std::vector<std::string>& stack) {
  if (node.is_seq()) {
    for (ConfigNode& item : node.items()) resolve_extends(item, dir, stack);
    return;
  }
  if (!node.is_map()) return;
  for (auto& entry : node.entries())
    if (entry.first != "extends") resolve_extends(entry.second, dir, stack);

  const ConfigNode* extends = node.find("extends");
  if (!extends) return;
  std::vector<const ConfigNode*> targets;
  if (extends->is_scalar()) {
    targets.push_back(extends);
  } else if (extends->is_seq()) {
    for (const ConfigNode& item : extends->items()) targets.push_back(&item);
  }
  if (targets.empty())
    throw ConfigError(extends->where(), "extends", "expected a file path or a list of paths");

  ConfigNode result = ConfigNode::map(node.where());
  for (const ConfigNode* target : targets) {
    if (!target->is_scalar() || target->text().empty())
      throw ConfigError(target->where(), "extends", "expected a file path");
    const std::string base_path = display_path(dir / target->text());
    merge_into(result, load_resolved(base_path, stack, target->where()));
  }
  ConfigNode own = node;
  own.erase("extends");
  merge_into(result, own);
  result.set_key_where(node.key_where());
  node = std::move(result);
}

ConfigNode load_resolved(const std::string& path, std::vector<std::string>& stack,
                         const SourceLocation& referenced_from) {
  std::error_code ec;
  const std::string canonical = fs::weakly_canonical(path, ec).generic_string();
  if (std::find(stack.begin(), stack.end(), canonical) != stack.end()) {
    std::string chain;
    for (const std::string& s : stack) chain += fs::path(s).filename().string() + " -> ";
    throw ConfigError(referenced_from, "extends",
                      "cycle of extends: " + chain + fs::path(canonical).filename().string());
  }
  ConfigNode root = parse_yaml(read_text(path, referenced_from), path);
  if (!root.is_map()) {
    const std::string what = root.is_null() ? "the file is empty" : "found a scalar or list";
    throw ConfigError(SourceLocation{path, 1, 1}, "",
                      "expected a YAML mapping of keys at the top level; " + what);
  }
  stack.push_back(canonical);
  resolve_extends(root, fs::path(path).parent_path(), stack);
  stack.pop_back();
  return root;
}

void emit(YAML::Emitter& out, const ConfigNode& node, bool flow_maps) {
  switch (node.kind()) {
    case ConfigNode::Kind::kNull:
      out << YAML::Null;
      break;
    case ConfigNode::Kind::kScalar:
      if (node.quoted()) out << YAML::DoubleQuoted;
      out << node.text();
      break;
    case ConfigNode::Kind::kSeq:
      out << YAML::Flow << YAML::BeginSeq;
      for (const ConfigNode& item : node.items()) emit(out, item, flow_maps);
      out << YAML::EndSeq;
      break;
    case ConfigNode::Kind::kMap:
      if (flow_maps) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& [key, value] : node.entries()) {
        out << YAML::Key << key << YAML::Value;
        emit(out, value, flow_maps);
      }
      out << YAML::EndMap;
      break;
  }
}

bool valid_key_segment(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

}  // namespace

ConfigNode parse_yaml(const std::string& text, const std::string& file) {
  if (const std::size_t bad = invalid_utf8_offset(text); bad != std::string::npos) {
    const auto [line, column] = line_column_of(text, bad);
    throw ConfigError(SourceLocation{file, line, column}, "",
                      "not UTF-8 text (byte " + hex_byte(text[bad]) + ")");
  }
  if (text.find('\0') != std::string::npos)
    throw ConfigError(SourceLocation{file, 1, 1}, "", "not a YAML text file (contains NUL bytes)");
  YAML::Node doc;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    OneDocument one(text, file);
    while (parser.HandleNextDocument(one)) {
    }
    one.finish();
    doc = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp words its depth limit as "bad file".
    throw ConfigError(location_of(e.mark, file), "", "invalid YAML: nested too deeply");
  } catch (const YAML::Exception& e) {
    throw ConfigError(location_of(e.mark, file), "", "invalid YAML: " + e.msg);
  }
  std::size_t budget = kMaxNodes;
  std::vector<YAML::Node> inside;
  return convert(doc, file, budget, inside);
}

ConfigNode load_config_file(const std::string& path) {
  std::vector<std::string> stack;
  return load_resolved(path, stack, SourceLocation{});
}

void merge_into(ConfigNode& base, const ConfigNode& over) {
  if (!base.is_map() || !over.is_map()) {
    base = over;
    return;
  }
  // Indexed, so merging a large mapping stays linear.
  std::unordered_map<std::string, ConfigNode*> index;
  for (auto& [key, value] : base.entries()) index.emplace(key, &value);
  for (const auto& [key, value] : over.entries()) {
    const auto it = index.find(key);
    if (value.is_null()) {
      // The null stays where the key was, and reads as absent: an error about the key it
      // removed (a required key) then names the line that removed it, as for --set.
      if (it != index.end()) *it->second = value;
      continue;
    }
    if (it == index.end()) {
      index.emplace(key, &base.append(key, value));
    } else if (it->second->is_map() && value.is_map()) {
      merge_into(*it->second, value);
      it->second->set_key_where(value.key_where());
    } else {
      *it->second = value;
    }
  }
}

void apply_override(ConfigNode& root, const std::string& assignment) {
  // Errors quote the assignment on one line: control characters and bytes that are not UTF-8
  // are escaped, and a value that is not UTF-8 is refused.
  const SourceLocation where{"--set " + printable(clipped(assignment))};
  if (invalid_utf8_offset(assignment) != std::string::npos)
    throw ConfigError(where, "", "not UTF-8 text");
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos) throw ConfigError(where, "", "expected key.path=value");
  const std::string path = assignment.substr(0, eq);
  const std::string value_text = assignment.substr(eq + 1);

  std::vector<std::string> keys;
  std::stringstream split(path);
  for (std::string key; std::getline(split, key, '.');) keys.push_back(key);
  if (keys.empty() || path.back() == '.' ||
      !std::all_of(keys.begin(), keys.end(), valid_key_segment))
    throw ConfigError(where, path, "not a key path (expected names joined by '.')");
  if (value_text.empty())
    throw ConfigError(where, path, "missing value after '=' (write null to remove the key)");
  if (keys.back() == "extends") {
    // The section's merged keys are all its own now and would override whatever the file sets:
    // the file's values would never show. Name the section's replacement instead.
    if (keys.size() == 1)
      throw ConfigError(where, path, "a chip's own extends belongs in its file, not in --set");
    const std::string section = path.substr(0, path.rfind('.'));
    throw ConfigError(where, path,
                      "give extends inside a mapping that replaces the section, e.g. --set '" +
                          section + "={extends: " + value_text + ", ...}'");
  }
  ConfigNode value;
  try {
    value = parse_yaml(value_text, where.file);
  } catch (const ConfigError& e) {
    // The value is not a file: its position is told within it, after the assignment it is in.
    const SourceLocation& at = e.where();
    std::string head, message = e.message();
    if (message.rfind("invalid YAML: ", 0) == 0) {
      head = "invalid YAML";
      message = message.substr(14);
    }
    if (at.column > 0)
      head += std::string(head.empty() ? "" : " ") + "at " +
              (at.line > 1 ? "line " + std::to_string(at.line) + " column " : "column ") +
              std::to_string(at.column) + " of the value";
    if (!e.key_path().empty()) head += (head.empty() ? "key '" : ", key '") + e.key_path() + "'";
    throw ConfigError(where, path, head.empty() ? message : head + ": " + message);
  }
  ConfigNode* node = &root;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    ConfigNode* child = node->find(keys[i]);
    // A section an earlier --set removed (null) is made again.
    if (!child || child->is_null()) child = &node->set(keys[i], ConfigNode::map(where));
    if (!child->is_map())
      throw ConfigError(where, path, "'" + keys[i] + "' holds a value, not a section of keys");
    node = child;
  }
  // A null stays in the tree, where it reads as absent: an error about the key it removed
  // (a required key) then names this --set, not the file that had the key.
  value.relocate(where);
  // A file named in the value is relative to the working directory, as on any command line.
  std::vector<std::string> stack;
  resolve_extends(value, fs::path(), stack);
  node->set(keys.back(), std::move(value));
}

const ConfigNode* find_path(const ConfigNode& root, const std::string& dotted) {
  const ConfigNode* node = &root;
  std::stringstream split(dotted);
  for (std::string key; std::getline(split, key, '.');) {
    if (!node->is_map()) return nullptr;
    node = node->find(key);
    if (!node) return nullptr;
  }
  return node;
}

std::string to_yaml(const ConfigNode& root, bool one_line) {
  YAML::Emitter out;
  if (one_line) {
    emit(out, root, true);
    return out.c_str();
  }
  out.SetIndent(2);
  emit(out, root, false);
  return std::string(out.c_str()) + "\n";
}

}  // namespace tpusim::config
