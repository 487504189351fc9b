#include "workloads/yaml_reader.h"

#include <charconv>
#include <optional>
#include <set>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "sim/base/input_file.h"
#include "workloads/suggest.h"

namespace tpusim::workloads {
namespace {

constexpr int kMaxDepth = 64;

SourceLocation at_mark(const YAML::Mark& m, const std::string& file) {
  if (m.is_null()) return SourceLocation{file, 0, 0};
  return SourceLocation{file, m.line + 1, m.column + 1};
}

// A first pass over the event stream that refuses what the Node API would hide from us. Problems
// are reported after the whole stream parsed, so a syntax error (which explains more) wins.
class StrictHandler : public YAML::EventHandler {
 public:
  explicit StrictHandler(const std::string& file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // Thrown at once, not deferred: yaml-cpp 0.7 can report empty documents forever after a stray
    // ',' (jbeder/yaml-cpp#1040, fixed upstream in PR #1319), so the second one ends the loop.
    if (++documents_ > 1)
      throw WorkloadError(at_mark(mark, file_), "only one YAML document per file is allowed");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { scalar(mark, anchor, "~"); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    report(mark, "YAML aliases (*name) are not supported");
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    scalar(mark, anchor, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    bool is_map = false;
    bool expecting_key = true;
    std::set<std::string> keys;
  };

  void no_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) report(mark, "YAML anchors (&name) are not supported");
  }
  // Called for every node: in a map, nodes alternate key, value.
  void node(const YAML::Mark& mark, const std::string* key_text) {
    if (frames_.empty() || !frames_.back().is_map) return;
    Frame& f = frames_.back();
    if (f.expecting_key) {
      if (!key_text)
        report(mark, "map keys must be plain names");
      else if (!f.keys.insert(*key_text).second)
        report(mark, "duplicate key '" + *key_text + "'");
    }
    f.expecting_key = !f.expecting_key;
  }
  void scalar(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& value) {
    no_anchor(mark, anchor);
    node(mark, &value);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    no_anchor(mark, anchor);
    node(mark, nullptr);
    if (frames_.size() >= kMaxDepth)
      throw WorkloadError(at_mark(mark, file_),
                          "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    frames_.push_back(Frame{is_map, true, {}});
  }
  void close() {
    if (!frames_.empty()) frames_.pop_back();
  }

  void report(const YAML::Mark& mark, const std::string& message) {
    if (!problem_) problem_ = WorkloadError(at_mark(mark, file_), message);
  }

 public:
  void throw_first_problem() const {
    if (problem_) throw *problem_;
  }

 private:
  const std::string& file_;
  std::optional<WorkloadError> problem_;
  int documents_ = 0;
  std::vector<Frame> frames_;
};

std::string type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return quoted_scalar(n);
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "?";
}

}  // namespace

YAML::Node load_single_document(std::string_view text, const std::string& file) {
  if (text.size() > kMaxYamlBytes)
    throw WorkloadError(SourceLocation{file, 0, 0},
                        "file is larger than 16 MiB (" + std::to_string(text.size()) + " bytes)");
  if (const std::size_t bad = invalid_utf8_offset(text); bad != std::string_view::npos) {
    const auto [line, column] = line_column_of(text, bad);
    throw WorkloadError(SourceLocation{file, line, column}, "not UTF-8 text");
  }
  const std::string owned(text);
  try {
    {
      std::istringstream in(owned);
      YAML::Parser parser(in);
      StrictHandler handler(file);
      while (parser.HandleNextDocument(handler)) {
      }
      handler.throw_first_problem();
    }
    YAML::Node root = YAML::Load(owned);
    if (!root.IsMap())
      throw WorkloadError(
          at_mark(root.Mark(), file),
          "expected a map with keys name, dtype, tensors, ops; got " + type_name(root));
    return root;
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp words its depth limit as "bad file".
    throw WorkloadError(at_mark(e.mark, file), "YAML syntax: nested too deeply");
  } catch (const YAML::Exception& e) {
    throw WorkloadError(at_mark(e.mark, file), "YAML syntax: " + e.msg);
  }
}

SourceLocation location(const YAML::Node& node, const std::string& file) {
  return at_mark(node.IsDefined() ? node.Mark() : YAML::Mark::null_mark(), file);
}

std::string quoted_scalar(const YAML::Node& node) {
  if (!node.IsScalar()) return type_name(node);
  std::string s = node.Scalar();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';  // keep the message on one line
  return "'" + s + "'";
}

MapReader::MapReader(const YAML::Node& map, const std::string& file, std::string context)
    : map_(map), file_(file), context_(std::move(context)) {
  if (!map.IsMap())
    throw WorkloadError(location(map, file), (context_.empty() ? "" : context_ + ": ") +
                                                 "expected a map, got " + type_name(map));
  for (auto it = map.begin(); it != map.end(); ++it)
    entries_.push_back(Entry{it->first.Scalar(), it->first, it->second});
}

const MapReader::Entry* MapReader::find(std::string_view key) const {
  for (const Entry& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

void MapReader::allow_only(const std::vector<std::string>& keys) const {
  for (const Entry& e : entries_) {
    bool known = false;
    for (const std::string& k : keys) known = known || k == e.key;
    if (!known)
      throw WorkloadError(location(e.key_node, file_), (context_.empty() ? "" : context_ + ": ") +
                                                           "unknown key '" + e.key + "'" +
                                                           suggestion(e.key, keys));
  }
}

bool MapReader::has(std::string_view key) const {
  const Entry* e = find(key);
  return e && !e->value.IsNull();
}

YAML::Node MapReader::get(std::string_view key) const {
  const Entry* e = find(key);
  return e && !e->value.IsNull() ? e->value : YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node MapReader::required(std::string_view key) const {
  const Entry* e = find(key);
  if (!e) fail(map_, key, "missing required key");
  if (e->value.IsNull()) fail(e->key_node, key, "has no value");  // a null's mark is past it
  return e->value;
}

void MapReader::fail(const YAML::Node& at, std::string_view key, const std::string& message) const {
  std::string prefix = context_.empty() ? "" : context_ + ": ";
  if (!key.empty()) prefix += std::string(key) + ": ";
  throw WorkloadError(location(at.IsDefined() ? at : map_, file_), prefix + message);
}

void MapReader::fail(std::string_view key, const std::string& message) const {
  const Entry* e = find(key);
  fail(e ? e->value : map_, key, message);
}

std::string MapReader::as_str(const YAML::Node& n, std::string_view key) const {
  if (!n.IsScalar()) fail(n, key, "expected a name, got " + type_name(n));
  return n.Scalar();
}

std::int64_t MapReader::as_integer(const YAML::Node& n, std::string_view key, std::int64_t lo,
                                   std::int64_t hi) const {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!n.IsScalar()) fail(n, key, "expected an integer in " + range + ", got " + type_name(n));
  const std::string& s = n.Scalar();
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
    fail(n, key, "expected an integer in " + range + ", got " + quoted_scalar(n));
  return v;
}

bool MapReader::as_boolean(const YAML::Node& n, std::string_view key) const {
  if (n.IsScalar() && n.Scalar() == "true") return true;
  if (n.IsScalar() && n.Scalar() == "false") return false;
  fail(n, key, "expected true or false, got " + type_name(n));
}

std::string MapReader::str(std::string_view key) const { return as_str(required(key), key); }

std::string MapReader::str_or(std::string_view key, const std::string& dflt) const {
  return has(key) ? str(key) : dflt;
}

std::int64_t MapReader::integer(std::string_view key, std::int64_t lo, std::int64_t hi) const {
  return as_integer(required(key), key, lo, hi);
}

std::int64_t MapReader::integer_or(std::string_view key, std::int64_t lo, std::int64_t hi,
                                   std::int64_t dflt) const {
  return has(key) ? integer(key, lo, hi) : dflt;
}

bool MapReader::boolean_or(std::string_view key, bool dflt) const {
  return has(key) ? as_boolean(get(key), key) : dflt;
}

double MapReader::number_or(std::string_view key, double dflt) const {
  if (!has(key)) return dflt;
  const YAML::Node n = get(key);
  if (!n.IsScalar()) fail(n, key, "expected a number, got " + type_name(n));
  const std::string& s = n.Scalar();
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    fail(n, key, "expected a number, got " + quoted_scalar(n));
  return v;
}

std::vector<std::int64_t> MapReader::int_list(std::string_view key, std::int64_t lo,
                                              std::int64_t hi) const {
  const YAML::Node n = required(key);
  if (!n.IsSequence()) fail(n, key, "expected a list of integers, got " + type_name(n));
  std::vector<std::int64_t> out;
  for (const YAML::Node& e : n) out.push_back(as_integer(e, key, lo, hi));
  return out;
}

std::vector<std::string> MapReader::str_list(std::string_view key) const {
  const YAML::Node n = required(key);
  if (!n.IsSequence()) fail(n, key, "expected a list of names, got " + type_name(n));
  std::vector<std::string> out;
  for (const YAML::Node& e : n) out.push_back(as_str(e, key));
  return out;
}

}  // namespace tpusim::workloads
