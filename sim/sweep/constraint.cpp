#include "sim/sweep/constraint.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "workloads/suggest.h"

namespace tpusim::sweep {

bool parse_number(const std::string& text, double* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // strtod also reads "inf", "nan" and hex; a sweep value like "nan" is text, not a number.
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return false;
  for (char c : text)
    if (std::isalpha(static_cast<unsigned char>(c)) && c != 'e' && c != 'E') return false;
  *out = v;
  return true;
}

struct Constraint::Node {
  enum class Kind { kOr, kAnd, kNot, kCompare };
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };
  struct Operand {
    bool is_key = false;
    std::size_t key = 0;  // index into the keys given to parse()
    std::string literal;  // number or text as written
    int column = 0;       // 0-based offset in the expression, for errors
  };
  Kind kind = Kind::kCompare;
  std::vector<std::unique_ptr<Node>> children;
  Op op = Op::kEq;
  std::string op_text;
  Operand lhs, rhs;
};

namespace {

using Node = Constraint::Node;

struct Token {
  enum class Kind { kEnd, kWord, kNumber, kString, kOp, kOpen, kClose };
  Kind kind = Kind::kEnd;
  std::string text;
  int column = 0;
};

class Parser {
 public:
  Parser(const std::string& text, const SourceLocation& where, const std::vector<std::string>& keys)
      : text_(text), where_(where), keys_(keys) {
    tokenize();
  }

  std::unique_ptr<Node> parse() {
    if (tokens_.size() == 1) fail(0, "empty constraint");
    auto root = parse_or();
    if (peek().kind != Token::Kind::kEnd)
      fail(peek().column, "unexpected '" + peek().text + "' (expected and, or, or the end)");
    return root;
  }

 private:
  [[noreturn]] void fail(int column, const std::string& message) const {
    SourceLocation at = where_;
    if (at.line > 0) at.column += column;
    // The column points into the constraint; a long one is quoted by its start only.
    const std::string quoted = text_.size() <= 80 ? text_ : text_.substr(0, 77) + "...";
    throw ConfigError(at, "constraints", message + " in '" + quoted + "'");
  }

  void tokenize() {
    std::size_t i = 0;
    const auto is_word_start = [](char c) {
      return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
    };
    const auto is_word = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    };
    while (i < text_.size()) {
      const char c = text_[i];
      const int column = static_cast<int>(i);
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '(' || c == ')') {
        tokens_.push_back({c == '(' ? Token::Kind::kOpen : Token::Kind::kClose, {c}, column});
        ++i;
      } else if (c == '\'' || c == '"') {
        const std::size_t end = text_.find(c, i + 1);
        if (end == std::string::npos) fail(column, "unterminated string");
        tokens_.push_back({Token::Kind::kString, text_.substr(i + 1, end - i - 1), column});
        i = end + 1;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
        std::size_t end = i + 1;
        while (end < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '.' ||
                ((text_[end] == '-' || text_[end] == '+') &&
                 (text_[end - 1] == 'e' || text_[end - 1] == 'E'))))
          ++end;
        const std::string number = text_.substr(i, end - i);
        double ignored = 0;
        if (!parse_number(number, &ignored)) fail(column, "'" + number + "' is not a number");
        tokens_.push_back({Token::Kind::kNumber, number, column});
        i = end;
      } else if (is_word_start(c)) {
        std::size_t end = i + 1;
        while (end < text_.size() && is_word(text_[end])) ++end;
        tokens_.push_back({Token::Kind::kWord, text_.substr(i, end - i), column});
        i = end;
      } else if (c == '=' || c == '!' || c == '<' || c == '>') {
        std::string op(1, c);
        if (i + 1 < text_.size() && text_[i + 1] == '=') op += '=';
        if (op == "=" || op == "!")
          fail(column, "unknown operator '" + op + "' (comparisons: == != < <= > >=)");
        tokens_.push_back({Token::Kind::kOp, op, column});
        i += op.size();
      } else {
        fail(column, std::string("unexpected character '") + c + "'");
      }
    }
    tokens_.push_back({Token::Kind::kEnd, "end", static_cast<int>(text_.size())});
  }

  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool at_word(const char* word) const {
    return peek().kind == Token::Kind::kWord && peek().text == word;
  }

  std::unique_ptr<Node> join(Node::Kind kind, std::unique_ptr<Node> first,
                             std::unique_ptr<Node> (Parser::*part)(), const char* word) {
    if (!at_word(word)) return first;
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->children.push_back(std::move(first));
    while (at_word(word)) {
      next();
      node->children.push_back((this->*part)());
    }
    return node;
  }

  std::unique_ptr<Node> parse_or() {
    return join(Node::Kind::kOr, parse_and(), &Parser::parse_and, "or");
  }
  std::unique_ptr<Node> parse_and() {
    return join(Node::Kind::kAnd, parse_unary(), &Parser::parse_unary, "and");
  }

  std::unique_ptr<Node> parse_unary() {
    if (at_word("not") || peek().kind == Token::Kind::kOpen) {
      // Bounded, so a deeply nested constraint cannot exhaust the stack.
      if (++nesting_ > kMaxNesting)
        fail(peek().column, "constraint nested too deeply (more than " +
                                std::to_string(kMaxNesting) + " 'not' and parentheses)");
      std::unique_ptr<Node> node;
      if (at_word("not")) {
        next();
        node = std::make_unique<Node>();
        node->kind = Node::Kind::kNot;
        node->children.push_back(parse_unary());
      } else {
        next();
        node = parse_or();
        if (peek().kind != Token::Kind::kClose)
          fail(peek().column, "expected ')', found '" + peek().text + "'");
        next();
      }
      --nesting_;
      return node;
    }
    auto node = std::make_unique<Node>();
    node->lhs = operand();
    if (peek().kind != Token::Kind::kOp)
      fail(peek().column, "expected a comparison (== != < <= > >=) after '" +
                              text_.substr(node->lhs.column, peek().column - node->lhs.column) +
                              "', found '" + peek().text + "'");
    const Token& op = next();
    static const std::pair<const char*, Node::Op> kOps[] = {
        {"==", Node::Op::kEq}, {"!=", Node::Op::kNe}, {"<", Node::Op::kLt},
        {"<=", Node::Op::kLe}, {">", Node::Op::kGt},  {">=", Node::Op::kGe}};
    for (const auto& [name, value] : kOps)
      if (op.text == name) node->op = value;
    node->op_text = op.text;
    node->rhs = operand();
    if (peek().kind == Token::Kind::kOp)
      fail(peek().column, "comparisons do not chain; write 'a < b and b < c'");
    return node;
  }

  Node::Operand operand() {
    const Token& t = next();
    Node::Operand o;
    o.column = t.column;
    switch (t.kind) {
      case Token::Kind::kNumber:
      case Token::Kind::kString:
        o.literal = t.text;
        return o;
      case Token::Kind::kWord:
        if (t.text == "and" || t.text == "or" || t.text == "not") break;
        for (std::size_t i = 0; i < keys_.size(); ++i)
          if (keys_[i] == t.text) {
            o.is_key = true;
            o.key = i;
            return o;
          }
        fail(t.column, "unknown key '" + t.text + "'" + nearest(t.text) +
                           " (a constraint compares axis keys, workload parameters, numbers and "
                           "quoted text)");
      default:
        break;
    }
    fail(t.column, "expected a key, a number or quoted text, found '" + t.text + "'");
  }

  std::string nearest(const std::string& word) const {
    const std::string best = workloads::nearest(word, keys_);
    return best.empty() ? "" : "; did you mean '" + best + "'?";
  }

  const std::string& text_;
  const SourceLocation& where_;
  const std::vector<std::string>& keys_;
  std::vector<Token> tokens_;
  static constexpr int kMaxNesting = 200;
  int nesting_ = 0;
  std::size_t pos_ = 0;
};

}  // namespace

Constraint Constraint::parse(const std::string& text, const SourceLocation& where,
                             const std::vector<std::string>& keys) {
  Constraint c;
  c.text_ = text;
  c.where_ = where;
  c.root_ = Parser(text, where, keys).parse();
  return c;
}

namespace {

bool evaluate(const Node& node, const Constraint& c,
              const std::function<const std::string&(std::size_t)>& value_of) {
  switch (node.kind) {
    case Node::Kind::kOr:
      for (const auto& child : node.children)
        if (evaluate(*child, c, value_of)) return true;
      return false;
    case Node::Kind::kAnd:
      for (const auto& child : node.children)
        if (!evaluate(*child, c, value_of)) return false;
      return true;
    case Node::Kind::kNot:
      return !evaluate(*node.children.front(), c, value_of);
    case Node::Kind::kCompare:
      break;
  }
  const std::string& a = node.lhs.is_key ? value_of(node.lhs.key) : node.lhs.literal;
  const std::string& b = node.rhs.is_key ? value_of(node.rhs.key) : node.rhs.literal;
  double x = 0, y = 0;
  if (parse_number(a, &x) && parse_number(b, &y)) {
    switch (node.op) {
      case Node::Op::kEq:
        return x == y;
      case Node::Op::kNe:
        return x != y;
      case Node::Op::kLt:
        return x < y;
      case Node::Op::kLe:
        return x <= y;
      case Node::Op::kGt:
        return x > y;
      case Node::Op::kGe:
        return x >= y;
    }
  }
  if (node.op == Node::Op::kEq) return a == b;
  if (node.op == Node::Op::kNe) return a != b;
  SourceLocation at = c.where();
  if (at.line > 0) at.column += node.lhs.column;
  throw ConfigError(at, "constraints",
                    "cannot order '" + a + "' " + node.op_text + " '" + b +
                        "': only numbers are ordered (text compares with == and !=) in '" +
                        c.text() + "'");
}

}  // namespace

bool Constraint::holds(const std::function<const std::string&(std::size_t key)>& value_of) const {
  return evaluate(*root_, *this, value_of);
}

}  // namespace tpusim::sweep
