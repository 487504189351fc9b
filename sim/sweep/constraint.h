#pragma once
// The constraint language of sweep files: comparisons of axis values and numbers joined by
// and/or/not, e.g. `core.mxu.rows == core.mxu.cols and core.mxu.rows >= 64`.
//
//   expr    := and ('or' and)*
//   and     := unary ('and' unary)*
//   unary   := 'not' unary | '(' expr ')' | operand cmp operand
//   cmp     := == | != | < | <= | > | >=
//   operand := number | 'text' | "text" | key
//
// A key is a column of the sweep (an axis key, a workload parameter, or `workload`). Two values
// that both read as numbers compare as numbers; otherwise only == and != apply, on the text.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/base/errors.h"

namespace tpusim::sweep {

class Constraint {
 public:
  struct Node;

  // Parses `text`, written at `where` (a one-line YAML scalar: columns count from there).
  // `keys` are the names an operand may use; anything else is a ConfigError naming the nearest.
  static Constraint parse(const std::string& text, const SourceLocation& where,
                          const std::vector<std::string>& keys);

  // `value_of(i)` is the value of keys[i] at the point being tested. A comparison that cannot
  // be made (ordering text) is a ConfigError at the constraint.
  bool holds(const std::function<const std::string&(std::size_t key)>& value_of) const;

  const std::string& text() const { return text_; }
  const SourceLocation& where() const { return where_; }

 private:
  std::string text_;
  SourceLocation where_;
  std::shared_ptr<const Node> root_;
};

// A value's number, when the whole text is one (what constraints compare numerically).
bool parse_number(const std::string& text, double* out);

}  // namespace tpusim::sweep
