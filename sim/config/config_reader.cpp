#include "sim/config/config_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "sim/base/edit_distance.h"
#include "sim/config/units_parse.h"

namespace tpusim::config {

ConfigReader::ConfigReader(const ConfigNode& node, std::string path, ConfigNode* resolved)
    : node_(node), path_(std::move(path)), resolved_(resolved) {}

std::string ConfigReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

SourceLocation ConfigReader::where_of(const std::string& key) const {
  if (const ConfigNode* n = node_.find(key)) return n->where();
  return node_.where();
}

bool ConfigReader::has(const std::string& key) {
  known_.insert(key);
  const ConfigNode* n = node_.find(key);
  return n && !n->is_null();
}

void ConfigReader::fail_at(const SourceLocation& where, const std::string& key,
                           const std::string& message) const {
  throw ConfigError(where, path_of(key), message);
}

void ConfigReader::fail(const std::string& key, const std::string& message) const {
  fail_at(where_of(key), key, message);
}

void ConfigReader::fail_key(const std::string& key, const std::string& message) const {
  const ConfigNode* n = node_.find(key);
  fail_at(n ? n->key_where() : node_.where(), key, message);
}

const ConfigNode& ConfigReader::required(const std::string& key) {
  known_.insert(key);
  const ConfigNode* n = node_.find(key);
  if (n && n->is_null()) fail_at(n->key_where(), key, "a required key: null removes it");
  if (!n) {
    // A required key is read before finish() can flag leftovers, so a misspelt required key
    // would read as merely missing: point at the likely misspelling instead.
    for (const auto& [other, value] : node_.entries()) {
      if (known_.count(other) || edit_distance(other, key) > std::max<std::size_t>(2, key.size() / 3))
        continue;
      fail_at(value.key_where(), key, "missing required key; is '" + other + "' a misspelling of it?");
    }
    fail_at(node_.key_where(), key, "missing required key");
  }
  return *n;
}

const ConfigNode* ConfigReader::optional(const std::string& key) {
  known_.insert(key);
  const ConfigNode* n = node_.find(key);
  return (n && !n->is_null()) ? n : nullptr;
}

const ConfigNode& ConfigReader::scalar_at(const std::string& key, const ConfigNode& n) const {
  if (!n.is_scalar())
    fail_at(n.where(), key,
            std::string("expected a value, got ") + (n.is_map() ? "a section of keys" : "a list"));
  return n;
}

void ConfigReader::record(const std::string& key, const std::string& text) {
  if (resolved_) resolved_->set(key, ConfigNode::scalar(text, {}));
}

ConfigNode* ConfigReader::resolved_section(const std::string& key) {
  if (!resolved_) return nullptr;
  return &resolved_->set(key, ConfigNode::map({}));
}

namespace {

std::string range_text(std::uint64_t lo, std::uint64_t hi) {
  if (hi == std::numeric_limits<std::uint32_t>::max() || hi == std::numeric_limits<std::uint64_t>::max())
    return "an integer >= " + std::to_string(lo);
  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

std::string number_range_text(double lo, double hi) {
  auto text = [](double v) {
    // A bound such as 1/1024 is written as the fraction: to_string would round it.
    const double inverse = v > 0 && v < 1 ? 1 / v : 0;
    if (inverse >= 2 && inverse == std::floor(inverse) && inverse < 1e9)
      return "1/" + std::to_string(static_cast<std::uint64_t>(inverse));
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  };
  return "a number from " + text(lo) + " to " + text(hi);
}

template <typename T>
struct ValueTraits;

template <>
struct ValueTraits<bool> {
  static bool parse(const std::string& s) {
    if (s == "true") return true;
    if (s == "false") return false;
    throw UnitError("expected true or false, got " + quoted_excerpt(s));
  }
  static std::string format(bool v) { return v ? "true" : "false"; }
};
template <>
struct ValueTraits<std::string> {
  static std::string parse(const std::string& s) { return s; }
  static std::string format(const std::string& v) { return v; }
};
template <>
struct ValueTraits<Hertz> {
  static Hertz parse(const std::string& s) { return parse_frequency(s); }
  static std::string format(Hertz v) { return format_frequency(v); }
};
template <>
struct ValueTraits<Bytes> {
  static Bytes parse(const std::string& s) { return parse_size(s); }
  static std::string format(Bytes v) { return format_size(v); }
};
template <>
struct ValueTraits<Bandwidth> {
  static Bandwidth parse(const std::string& s) { return parse_bandwidth(s); }
  static std::string format(const Bandwidth& v) { return format_bandwidth(v); }
};
template <>
struct ValueTraits<Duration> {
  static Duration parse(const std::string& s) { return parse_duration(s); }
  static std::string format(const Duration& v) { return format_duration(v); }
};
template <>
struct ValueTraits<Picojoules> {
  static Picojoules parse(const std::string& s) { return parse_energy(s); }
  static std::string format(Picojoules v) { return format_energy(v); }
};
template <>
struct ValueTraits<Watts> {
  static Watts parse(const std::string& s) { return parse_power(s); }
  static std::string format(Watts v) { return format_power(v); }
};

}  // namespace

template <typename T>
T ConfigReader::value_at(const std::string& key, const ConfigNode& n) {
  const std::string& text = scalar_at(key, n).text();
  try {
    T value = ValueTraits<T>::parse(text);
    if (resolved_) resolved_->set(key, ConfigNode::scalar(text, {}, n.quoted()));
    return value;
  } catch (const UnitError& e) {
    fail_at(n.where(), key, e.what());
  }
}

template <typename T>
T ConfigReader::req(const std::string& key) {
  return value_at<T>(key, required(key));
}

template <typename T>
T ConfigReader::opt(const std::string& key, const T& fallback) {
  const ConfigNode* n = optional(key);
  if (!n) {
    record(key, ValueTraits<T>::format(fallback));
    return fallback;
  }
  return value_at<T>(key, *n);
}

#define TPUSIM_INSTANTIATE(T)                                        \
  template T ConfigReader::req<T>(const std::string&);               \
  template T ConfigReader::opt<T>(const std::string&, const T&);
TPUSIM_INSTANTIATE(bool)
TPUSIM_INSTANTIATE(std::string)
TPUSIM_INSTANTIATE(Hertz)
TPUSIM_INSTANTIATE(Bytes)
TPUSIM_INSTANTIATE(Bandwidth)
TPUSIM_INSTANTIATE(Duration)
TPUSIM_INSTANTIATE(Picojoules)
TPUSIM_INSTANTIATE(Watts)
#undef TPUSIM_INSTANTIATE

std::uint64_t ConfigReader::uint_at(const std::string& key, const ConfigNode& n, std::uint64_t lo,
                                    std::uint64_t hi) {
  const std::string& text = scalar_at(key, n).text();
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isdigit(c);
  });
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE || v < lo || v > hi)
    fail_at(n.where(), key, "expected " + range_text(lo, hi) + ", got " + quoted_excerpt(text));
  record(key, text);
  return v;
}

std::uint64_t ConfigReader::req_uint(const std::string& key, std::uint64_t lo, std::uint64_t hi) {
  return uint_at(key, required(key), lo, hi);
}

std::uint64_t ConfigReader::opt_uint(const std::string& key, std::uint64_t fallback,
                                     std::uint64_t lo, std::uint64_t hi) {
  const ConfigNode* n = optional(key);
  if (!n) {
    record(key, std::to_string(fallback));
    return fallback;
  }
  return uint_at(key, *n, lo, hi);
}

double ConfigReader::number_at(const std::string& key, const ConfigNode& n, double lo, double hi) {
  const std::string& text = scalar_at(key, n).text();
  char* end = nullptr;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  const bool ok = !text.empty() && end && *end == '\0' && std::isfinite(v) &&
                  text.find_first_of("xXnN") == std::string::npos;
  if (!ok || v < lo || v > hi)
    fail_at(n.where(), key,
            "expected " + number_range_text(lo, hi) + ", got " + quoted_excerpt(text));
  record(key, text);
  return v;
}

double ConfigReader::req_number(const std::string& key, double lo, double hi) {
  return number_at(key, required(key), lo, hi);
}

double ConfigReader::opt_number(const std::string& key, double fallback, double lo, double hi) {
  const ConfigNode* n = optional(key);
  if (!n) {
    record(key, format_number(fallback));
    return fallback;
  }
  return number_at(key, *n, lo, hi);
}

ConfigReader ConfigReader::section(const std::string& key) {
  const ConfigNode& n = required(key);
  if (!n.is_map()) fail_at(n.where(), key, "expected a section of keys, got a value");
  return ConfigReader(n, path_of(key), resolved_section(key));
}

std::optional<ConfigReader> ConfigReader::opt_section(const std::string& key) {
  const ConfigNode* n = optional(key);
  if (!n) return std::nullopt;
  if (!n->is_map()) fail_at(n->where(), key, "expected a section of keys, got a value");
  return ConfigReader(*n, path_of(key), resolved_section(key));
}

std::vector<ConfigReader> ConfigReader::list(const std::string& key) {
  const ConfigNode& n = required(key);
  if (!n.is_seq()) fail_at(n.where(), key, "expected a list");
  ConfigNode* out = nullptr;
  if (resolved_) out = &resolved_->set(key, ConfigNode::seq({}));
  std::vector<ConfigReader> readers;
  std::size_t i = 0;
  for (const ConfigNode& item : n.items()) {
    const std::string item_path = path_of(key) + "[" + std::to_string(i) + "]";
    if (!item.is_map()) throw ConfigError(item.where(), item_path, "expected a section of keys");
    ConfigNode* item_out = nullptr;
    if (out) {
      out->items().push_back(ConfigNode::map({}));
      item_out = &out->items().back();
    }
    readers.emplace_back(item, item_path, item_out);
    ++i;
  }
  return readers;
}

std::vector<std::string> ConfigReader::keys() {
  std::vector<std::string> out;
  for (const auto& entry : node_.entries()) {
    known_.insert(entry.first);
    if (!entry.second.is_null()) out.push_back(entry.first);
  }
  return out;
}

void ConfigReader::finish() const {
  for (const auto& [key, value] : node_.entries()) {
    if (known_.count(key)) continue;
    std::string best;
    std::size_t best_distance = std::string::npos;
    for (const std::string& candidate : known_) {
      const std::size_t d = edit_distance(key, candidate);
      if (d < best_distance) {
        best_distance = d;
        best = candidate;
      }
    }
    const std::size_t tolerance = std::max<std::size_t>(2, key.size() / 3);
    std::string message = "unknown key";
    if (!best.empty() && best_distance <= tolerance) {
      message += "; did you mean '" + best + "'?";
    } else if (!known_.empty()) {
      std::string all;
      for (const std::string& k : known_) all += (all.empty() ? "" : ", ") + k;
      message += " (valid keys here: " + all + ")";
    }
    throw ConfigError(value.key_where(), path_of(key), message);
  }
}

}  // namespace tpusim::config
