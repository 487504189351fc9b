#include "workloads/yaml_graph.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "workloads/suggest.h"
#include "workloads/yaml_reader.h"

namespace tpusim::workloads {
namespace {

// Bounds on what a repeat block may expand to: far above any real network (GPT-3 is 96 layers of
// about 30 operators), low enough that a mistyped count fails in well under a second.
constexpr std::int64_t kMaxRepeat = 10000;
constexpr std::size_t kMaxOps = 100000;
// An op adds at most three tensors (its output, a declared weight and bias); a block that declares
// many tensors per op must not run away either.
constexpr std::size_t kMaxTensors = 3 * kMaxOps;

const std::vector<std::string> kGraphKeys = {"name", "description", "dtype", "tensors", "ops"};
const std::vector<std::string> kTensorKeys = {"name", "shape", "dtype", "role"};
const std::vector<std::string> kRepeatKeys = {"count", "input", "output", "tensors", "ops"};
const std::vector<std::string> kCommonOpKeys = {"name", "op", "inputs", "output"};

// Keys each operator kind accepts besides the common ones.
std::vector<std::string> op_keys(std::string_view kind) {
  std::vector<std::string> keys = kCommonOpKeys;
  auto add = [&](std::initializer_list<const char*> more) {
    keys.insert(keys.end(), more.begin(), more.end());
  };
  if (kind == "conv2d")
    add({"filters", "kernel", "stride", "padding", "dilation", "groups", "bias"});
  if (kind == "linear") add({"features", "transpose_b", "bias"});
  if (kind == "matmul") add({"transpose_a", "transpose_b", "bias"});
  if (kind == "softmax") add({"causal"});
  if (kind == "layernorm") add({"epsilon"});
  if (kind == "requantize") add({"scale", "to"});
  if (kind == "max_pool" || kind == "avg_pool") add({"kernel", "stride", "padding"});
  if (kind == "reshape") add({"shape"});
  if (kind == "transpose") add({"perm"});
  if (kind == "concat") add({"axis"});
  return keys;
}

std::vector<std::string> op_kind_names() {
  std::vector<std::string> names;
  for (OpKind k : kAllOpKinds) names.emplace_back(op_kind_name(k));
  names.emplace_back("linear");
  return names;
}

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
          c == '/'))
      return false;
  return true;
}

// How names written in the file become graph tensor names. Outside repeat blocks a name is
// itself. Iteration i of a block appends ".i" to everything the block declares or produces, reads
// the block input under its written name, and gives the last iteration's result the block's output
// name in the enclosing scope.
struct Scope {
  Scope* parent = nullptr;
  std::string suffix;
  std::map<std::string, std::string, std::less<>> local;
  std::string block_output;
  bool last = false;
};

class Builder {
 public:
  explicit Builder(std::string file) : file_(std::move(file)) {}
  Graph build(const YAML::Node& root);

 private:
  std::string resolve(const Scope& scope, const std::string& name) const;
  std::string produce_name(Scope& scope, const std::string& local);
  TensorId lookup(const Scope& scope, const MapReader& r, const YAML::Node& at,
                  std::string_view key, const std::string& name) const;
  TensorId add_tensor(Tensor t);
  std::string name_of(const MapReader& r, std::string_view key) const;

  void read_tensors(const YAML::Node& seq, Scope& scope);
  void read_ops(const YAML::Node& seq, Scope& scope);
  void read_op(const YAML::Node& node, Scope& scope);
  void read_repeat(const YAML::Node& node, Scope& scope);
  void read_window(const MapReader& r, OpAttrs& a, bool conv) const;
  void add_bias(const MapReader& r, const Scope& scope, Op& op, std::int64_t features);
  std::optional<TensorId> implicit_bias_;  // "bias: true" of the op being read
  void bind_output(const MapReader& r, Scope& scope, Op& op, const std::string& local);

  std::string file_;
  Graph g_;
  DType default_dtype_ = DType::kBf16;
  std::unordered_map<std::string, TensorId> ids_;
  std::vector<bool> written_;
  std::vector<bool> shape_declared_;
  std::vector<bool> dtype_declared_;
  std::unordered_map<std::string, SourceLocation> op_names_;
  // Every name an op (or a repeat block) of the file produces, as written: a read of one before
  // its op is out of order, not an unknown tensor.
  std::unordered_set<std::string> produced_anywhere_;
  void collect_produced(const YAML::Node& ops);
};

void Builder::collect_produced(const YAML::Node& ops) {
  if (!ops || !ops.IsSequence()) return;  // a missing key is an invalid node: test it first
  for (const YAML::Node& op : ops) {
    if (!op.IsMap()) continue;
    if (const YAML::Node block = op["repeat"]; block && block.IsMap()) {
      if (block["output"] && block["output"].IsScalar())
        produced_anywhere_.insert(block["output"].Scalar());
      collect_produced(block["ops"]);
      continue;
    }
    const YAML::Node named = op["output"] ? op["output"] : op["name"];
    if (named && named.IsScalar()) produced_anywhere_.insert(named.Scalar());
  }
}

std::string Builder::resolve(const Scope& scope, const std::string& name) const {
  for (const Scope* s = &scope; s; s = s->parent) {
    auto it = s->local.find(name);
    if (it != s->local.end()) return it->second;
  }
  return name;
}

std::string Builder::produce_name(Scope& scope, const std::string& local) {
  if (!scope.parent) return local;
  const std::string actual = (scope.last && local == scope.block_output)
                                 ? produce_name(*scope.parent, local)
                                 : local + scope.suffix;
  scope.local[local] = actual;
  return actual;
}

TensorId Builder::lookup(const Scope& scope, const MapReader& r, const YAML::Node& at,
                         std::string_view key, const std::string& name) const {
  const std::string actual = resolve(scope, name);
  auto it = ids_.find(actual);
  if (it == ids_.end()) {
    std::vector<std::string> candidates;
    for (const Scope* s = &scope; s; s = s->parent)
      for (const auto& entry : s->local) candidates.push_back(entry.first);
    for (const Tensor& t : g_.tensors) candidates.push_back(t.name);
    if (produced_anywhere_.count(name))
      r.fail(at, key,
             "tensor '" + name +
                 "' is read before the op that produces it (ops run in the order "
                 "written)");
    const std::string hint = nearest(name, candidates);
    r.fail(
        at, key,
        "unknown tensor '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  const Tensor& t = g_.tensors[it->second];
  const bool external = t.role == TensorRole::kInput || t.role == TensorRole::kWeight;
  if (!external && !written_[it->second])
    r.fail(at, key, "tensor '" + actual + "' is read before any op produces it");
  return it->second;
}

TensorId Builder::add_tensor(Tensor t) {
  if (g_.tensors.size() >= kMaxTensors)
    throw WorkloadError(
        t.where, "the graph expands to more than " + std::to_string(kMaxTensors) + " tensors");
  auto [it, fresh] = ids_.emplace(t.name, static_cast<TensorId>(g_.tensors.size()));
  if (!fresh) {
    const Tensor& old = g_.tensors[it->second];
    throw WorkloadError(t.where, "duplicate tensor name '" + t.name + "' (first defined at " +
                                     old.where.str() + ")");
  }
  g_.tensors.push_back(std::move(t));
  written_.push_back(false);
  shape_declared_.push_back(true);
  dtype_declared_.push_back(true);
  return it->second;
}

std::string Builder::name_of(const MapReader& r, std::string_view key) const {
  const std::string s = r.str(key);
  if (!valid_name(s))
    r.fail(key, "'" + s.substr(0, 40) +
                    "' is not a valid name (letters, digits, '_', '.', '-', '/'; starting with a "
                    "letter or '_'; at most 200 characters)");
  return s;
}

void Builder::read_tensors(const YAML::Node& seq, Scope& scope) {
  if (!seq.IsSequence())
    throw WorkloadError(location(seq, file_), "tensors: expected a list of tensors");
  for (const YAML::Node& n : seq) {
    MapReader r(n, file_, "tensor");
    r.allow_only(kTensorKeys);
    const std::string local = name_of(r, "name");
    Tensor t;
    t.name = scope.parent ? local + scope.suffix : local;
    t.where = location(n, file_);
    r.set_context("tensor '" + t.name + "'");
    const std::string role = r.str("role");
    const auto parsed_role = role_from_name(role);
    if (!parsed_role)
      r.fail("role", "unknown role '" + role + "'" +
                         suggestion(role, {"input", "weight", "output", "activation"}));
    t.role = *parsed_role;
    const bool external = t.role == TensorRole::kInput || t.role == TensorRole::kWeight;
    if (external || r.has("shape")) {
      t.shape = r.int_list("shape", 1, kMaxDim - 1);
      if (shape_elements(t.shape) > kMaxElements)
        r.fail("shape", shape_str(t.shape) + " has more than 2^48 elements");
    }
    if (r.has("dtype")) {
      const std::string d = r.str("dtype");
      const auto dt = dtype_from_name(d);
      if (!dt)
        r.fail("dtype", "unknown dtype '" + d + "'" +
                            suggestion(d, {"int8", "int16", "int32", "bf16", "fp32", "fp8"}));
      t.dtype = *dt;
    } else {
      t.dtype = default_dtype_;
    }
    const bool has_shape = external || r.has("shape");
    const bool has_dtype = r.has("dtype");
    const TensorId id = add_tensor(t);
    shape_declared_[id] = has_shape;
    dtype_declared_[id] = has_dtype;
    if (scope.parent) scope.local[local] = t.name;
  }
}

void Builder::read_ops(const YAML::Node& seq, Scope& scope) {
  if (!seq.IsSequence() || seq.size() == 0)
    throw WorkloadError(location(seq, file_), "ops: expected a non-empty list of operators");
  for (const YAML::Node& n : seq) read_op(n, scope);
}

void Builder::read_repeat(const YAML::Node& node, Scope& scope) {
  MapReader r(node, file_, "repeat");
  r.allow_only(kRepeatKeys);
  const std::int64_t count = r.integer("count", 1, kMaxRepeat);
  const std::string input = name_of(r, "input");
  const std::string output = name_of(r, "output");
  if (input == output)
    r.fail("output", "must differ from input '" + input +
                         "': after the block it names the last iteration's result");
  std::string carried = g_.tensors[lookup(scope, r, r.get("input"), "input", input)].name;
  const YAML::Node ops = r.required("ops");
  for (std::int64_t i = 0; i < count; ++i) {
    Scope it;
    it.parent = &scope;
    it.suffix = scope.suffix + "." + std::to_string(i);
    it.block_output = output;
    it.last = i + 1 == count;
    it.local[input] = carried;
    if (r.has("tensors")) read_tensors(r.get("tensors"), it);
    read_ops(ops, it);
    auto produced = it.local.find(output);
    if (produced == it.local.end())
      r.fail("output", "no op in the block produces '" + output + "'");
    carried = produced->second;
  }
}

// kernel/stride/dilation: n or [h, w]; padding: n, [h, w] or [top, bottom, left, right].
void Builder::read_window(const MapReader& r, OpAttrs& a, bool conv) const {
  auto pair = [&](std::string_view key, std::int64_t lo, std::int64_t& h, std::int64_t& w) {
    if (!r.has(key)) return;
    const YAML::Node n = r.get(key);
    if (n.IsSequence()) {
      if (n.size() != 2)
        r.fail(key, "expected n or [h, w], got a list of " + std::to_string(n.size()));
      h = r.as_integer(n[0], key, lo, kMaxDim - 1);
      w = r.as_integer(n[1], key, lo, kMaxDim - 1);
    } else {
      h = w = r.as_integer(n, key, lo, kMaxDim - 1);
    }
  };
  if (!conv) {
    if (!r.has("kernel")) r.fail("kernel", "missing required key");
    pair("kernel", 1, a.kernel_h, a.kernel_w);
  }
  pair("stride", 1, a.stride_h, a.stride_w);
  if (conv) pair("dilation", 1, a.dilation_h, a.dilation_w);
  if (r.has("padding")) {
    const YAML::Node n = r.get("padding");
    if (n.IsSequence() && n.size() == 4) {
      a.pad_top = r.as_integer(n[0], "padding", 0, kMaxDim - 1);
      a.pad_bottom = r.as_integer(n[1], "padding", 0, kMaxDim - 1);
      a.pad_left = r.as_integer(n[2], "padding", 0, kMaxDim - 1);
      a.pad_right = r.as_integer(n[3], "padding", 0, kMaxDim - 1);
    } else if (n.IsSequence() && n.size() != 2) {
      r.fail("padding", "expected n, [h, w] or [top, bottom, left, right]");
    } else {
      pair("padding", 0, a.pad_top, a.pad_left);
      a.pad_bottom = a.pad_top;
      a.pad_right = a.pad_left;
    }
  }
}

// `bias: true` declares the weight "<op>.bias"; `bias: name` reads a declared tensor.
void Builder::add_bias(const MapReader& r, const Scope& scope, Op& op, std::int64_t features) {
  if (!r.has("bias")) return;
  const YAML::Node n = r.get("bias");
  if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) {
    if (n.Scalar() == "false") return;
    Tensor b{op.name + ".bias",
             {features},
             infer_output_dtype(g_, op),
             TensorRole::kWeight,
             location(n, file_)};
    op.inputs.push_back(add_tensor(std::move(b)));
    implicit_bias_ = op.inputs.back();  // takes the output's dtype once it is bound
    return;
  }
  if (op.inputs.size() == 3) r.fail("bias", "given twice: as a third input and as bias");
  op.inputs.push_back(lookup(scope, r, n, "bias", r.as_str(n, "bias")));
}

void Builder::bind_output(const MapReader& r, Scope& scope, Op& op, const std::string& local) {
  const Shape shape = infer_output_shape(g_, op);
  const DType dtype = infer_output_dtype(g_, op);
  const std::string actual = produce_name(scope, local);
  auto it = ids_.find(actual);
  if (it == ids_.end()) {
    op.output = add_tensor(Tensor{actual, shape, dtype, TensorRole::kActivation, op.where});
  } else {
    const TensorId id = it->second;
    Tensor& t = g_.tensors[id];
    const YAML::Node at = r.has("output") ? r.get("output") : r.get("name");
    if (t.role == TensorRole::kInput || t.role == TensorRole::kWeight || written_[id])
      r.fail(at, "output", "tensor '" + actual + "' is already defined (at " + t.where.str() + ")");
    if (!shape_declared_[id]) t.shape = shape;
    if (!dtype_declared_[id]) t.dtype = dtype;
    if (t.shape != shape)
      r.fail(at, "output",
             "'" + actual + "' is declared " + shape_str(t.shape) + " (at " + t.where.str() +
                 ") but the op produces " + shape_str(shape));
    op.output = id;
  }
  written_[op.output] = true;
  // An output declared wider than inferred (a bf16 matmul into fp32): its bias is declared so too.
  if (implicit_bias_) g_.tensors[*implicit_bias_].dtype = g_.tensors[op.output].dtype;
  implicit_bias_.reset();
}

void Builder::read_op(const YAML::Node& node, Scope& scope) {
  if (g_.ops.size() >= kMaxOps)
    throw WorkloadError(location(node, file_),
                        "the graph expands to more than " + std::to_string(kMaxOps) + " operators");
  MapReader r(node, file_, "op");
  if (r.has("repeat")) {
    r.allow_only({"repeat"});
    read_repeat(r.get("repeat"), scope);
    return;
  }
  const std::string local = name_of(r, "name");
  Op op;
  op.name = local + scope.suffix;
  op.where = location(node, file_);
  r.set_context("op '" + op.name + "'");
  if (auto [it, fresh] = op_names_.emplace(op.name, op.where); !fresh)
    r.fail("name", "duplicate op name (first defined at " + it->second.str() + ")");
  const std::string kind = r.str("op");
  const bool linear = kind == "linear";
  const auto parsed = linear ? std::optional<OpKind>(OpKind::kMatmul) : op_kind_from_name(kind);
  if (!parsed) r.fail("op", "unknown operator '" + kind + "'" + suggestion(kind, op_kind_names()));
  op.kind = *parsed;
  r.set_context("op '" + op.name + "' (" + kind + ")");
  r.allow_only(op_keys(kind));
  const YAML::Node inputs = r.required("inputs");
  for (const std::string& in : r.str_list("inputs"))
    op.inputs.push_back(lookup(scope, r, inputs, "inputs", in));
  if (op.inputs.empty()) r.fail("inputs", "needs at least one input");
  auto only_with = [&](std::size_t n_inputs, std::string_view key, const char* why) {
    if (op.inputs.size() == n_inputs && !r.has(key)) r.fail(key, std::string("missing: ") + why);
    if (op.inputs.size() != n_inputs && r.has(key)) r.fail(key, std::string("not allowed: ") + why);
  };
  auto implicit_weight = [&](const char* suffix, Shape shape) {
    Tensor w{op.name + "." + suffix, std::move(shape), g_.tensor(op.inputs[0]).dtype,
             TensorRole::kWeight, op.where};
    if (shape_elements(w.shape) > kMaxElements) r.fail("", "implicit weight is too large");
    op.inputs.push_back(add_tensor(std::move(w)));
  };
  const Shape x = g_.tensor(op.inputs.at(0)).shape;  // a copy: implicit weights grow g_.tensors
  OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::kConv2d: {
      read_window(r, a, true);
      a.groups = r.integer_or("groups", 1, kMaxDim - 1, 1);
      const char* why = "with one input the op declares its weight from filters and kernel";
      only_with(1, "filters", why);
      only_with(1, "kernel", why);
      if (op.inputs.size() == 1) {
        if (x.size() != 4) r.fail("inputs", "x " + shape_str(x) + " must be NHWC [N,H,W,C]");
        std::int64_t kh = 1, kw = 1;
        const YAML::Node k = r.get("kernel");
        if (k.IsSequence() && k.size() != 2)
          r.fail("kernel", "expected n or [h, w], got a list of " + std::to_string(k.size()));
        if (k.IsSequence()) {
          kh = r.as_integer(k[0], "kernel", 1, kMaxDim - 1);
          kw = r.as_integer(k[1], "kernel", 1, kMaxDim - 1);
        } else {
          kh = kw = r.as_integer(k, "kernel", 1, kMaxDim - 1);
        }
        implicit_weight("weight", {kh, kw, std::max<std::int64_t>(1, x[3] / a.groups),
                                   r.integer("filters", 1, kMaxDim - 1)});
      }
      const Shape w = g_.tensor(op.inputs.at(1)).shape;
      add_bias(r, scope, op, w.size() == 4 ? w[3] : 1);
      break;
    }
    case OpKind::kMatmul: {
      a.transpose_a = r.boolean_or("transpose_a", false);
      a.transpose_b = r.boolean_or("transpose_b", false);
      if (linear) {
        only_with(1, "features", "with one input, linear declares its weight [K, features]");
        if (op.inputs.size() == 1) {
          if (a.transpose_b) r.fail("transpose_b", "needs an explicit weight as second input");
          if (x.empty()) r.fail("inputs", "x must have rank >= 1");
          implicit_weight("weight", {x.back(), r.integer("features", 1, kMaxDim - 1)});
        }
      }
      if (op.inputs.size() < 2) r.fail("inputs", "matmul needs two inputs [a, b]");
      const Shape out = infer_output_shape(g_, op);
      add_bias(r, scope, op, out.back());
      break;
    }
    case OpKind::kRequantize: {
      if (!r.has("scale")) r.fail("scale", "missing: requantize multiplies by it before rounding");
      a.scale = r.number_or("scale", a.scale);
      if (r.has("to")) {
        const std::string to = r.str("to");
        const auto dtype = dtype_from_name(to);
        if (!dtype || (*dtype != DType::kInt8 && *dtype != DType::kInt16))
          r.fail("to", "expected int8 or int16, got '" + to + "'");
        a.to = *dtype;
      }
      break;
    }
    case OpKind::kLayerNorm:
      a.epsilon = r.number_or("epsilon", a.epsilon);
      if (op.inputs.size() == 1) {
        if (x.empty()) r.fail("inputs", "x must have rank >= 1 (it normalises its last dimension)");
        implicit_weight("gamma", {x.back()});
        implicit_weight("beta", {x.back()});
      }
      break;
    case OpKind::kMaxPool:
    case OpKind::kAvgPool:
      read_window(r, a, false);
      break;
    case OpKind::kSoftmax:
      a.causal = r.boolean_or("causal", false);
      break;
    case OpKind::kReshape: {
      a.shape = r.int_list("shape", -1, kMaxDim - 1);
      break;
    }
    case OpKind::kTranspose:
      a.perm = r.int_list("perm", 0, 64);
      break;
    case OpKind::kConcat:
      a.axis = r.integer_or("axis", -64, 64, 0);
      break;
    default:
      break;
  }
  bind_output(r, scope, op, r.has("output") ? name_of(r, "output") : local);
  g_.ops.push_back(std::move(op));
}

Graph Builder::build(const YAML::Node& root) {
  MapReader r(root, file_, "");
  r.allow_only(kGraphKeys);
  g_.where = SourceLocation{file_, 0, 0};
  g_.name = r.str_or("name", std::filesystem::path(file_).stem().string());
  if (r.has("description")) r.str("description");
  if (r.has("dtype")) {
    const std::string d = r.str("dtype");
    const auto dt = dtype_from_name(d);
    if (!dt)
      r.fail("dtype", "unknown dtype '" + d + "'" +
                          suggestion(d, {"int8", "int16", "int32", "bf16", "fp32", "fp8"}));
    default_dtype_ = *dt;
  }
  Scope top;
  if (r.has("ops")) collect_produced(r.get("ops"));
  if (r.has("tensors")) read_tensors(r.get("tensors"), top);
  read_ops(r.required("ops"), top);
  validate(g_);
  return std::move(g_);
}

}  // namespace

Graph parse_graph_yaml(std::string_view text, std::string file_name) {
  const YAML::Node root = load_single_document(text, file_name);
  return Builder(std::move(file_name)).build(root);
}

Graph load_graph_yaml(const std::string& path) {
  const SourceLocation where{path, 0, 0};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw WorkloadError(where, "cannot read: not a regular file (or does not exist)");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw WorkloadError(where, "cannot read: " + ec.message());
  if (size > kMaxYamlBytes)
    throw WorkloadError(where, "file is larger than 16 MiB (" + std::to_string(size) + " bytes)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw WorkloadError(where, "cannot read the file");
  return parse_graph_yaml(text.str(), path);
}

}  // namespace tpusim::workloads
