#pragma once
// Typed errors thrown by library code. Only sim/main.cpp maps them to exit codes (STYLE rule 19):
// InputError and its children mean the user gave us something wrong (exit 2); SimError means the
// model reached a state it cannot continue from (exit 1); NotImplemented is exit 3.

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tpusim {

// `text` for an error message, cut after `max` bytes: a value can be a 100 kB `--set` argument,
// and a message stays one readable line.
inline std::string clipped(const std::string& text, std::size_t max = 80) {
  if (text.size() <= max) return text;
  return text.substr(0, max) + "... (" + std::to_string(text.size()) + " bytes)";
}

// "text", clipped.
inline std::string quoted_excerpt(const std::string& text) { return "\"" + clipped(text) + "\""; }

// Where a piece of input came from. line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string str() const {
    if (file.empty()) return "<input>";
    if (line <= 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input of any kind. what() is the whole one-line message.
class InputError : public Error {
 public:
  using Error::Error;
};

// configs/v4i.yaml:12:5: core.mxu.rows: expected integer >= 1, got "0"
class ConfigError : public InputError {
 public:
  ConfigError(SourceLocation where, std::string key_path, std::string message)
      : InputError(where.str() + ": " + (key_path.empty() ? "" : clipped(key_path) + ": ") +
                   message),
        where_(std::move(where)),
        key_path_(std::move(key_path)),
        message_(std::move(message)) {}
  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string key_path_;
  std::string message_;
};

// A broken cross-field rule found by a Spec's validate(). It knows only the key path; the config
// binder, which knows where each key was written, turns it into a ConfigError.
class SpecError : public InputError {
 public:
  SpecError(std::string key_path, std::string message)
      : InputError(key_path + ": " + message),
        key_path_(std::move(key_path)),
        message_(std::move(message)) {}
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  std::string key_path_;
  std::string message_;
};

// Assembly text (file:line:col) or binary program (file: byte offset) that cannot be read.
class AsmError : public InputError {
 public:
  AsmError(SourceLocation where, std::string message)
      : InputError(where.str() + ": " + message), where_(std::move(where)) {}
  const SourceLocation& where() const { return where_; }

 private:
  SourceLocation where_;
};

// A workload graph that cannot be built (bad shape, unsupported operator or attribute).
class WorkloadError : public InputError {
 public:
  WorkloadError(SourceLocation where, std::string message)
      : InputError(where.str() + ": " + message) {}
};

// The model reached a state it cannot continue from (a deadlock, a broken invariant).
class SimError : public Error {
 public:
  using Error::Error;
};

// A valid input the tool cannot handle yet: a feature not built, or a limit of the tool.
class NotImplemented : public Error {
 public:
  using Error::Error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitSimError = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNotImplemented = 3;

}  // namespace tpusim
