// The lowering driver: operand types, tensor placement (HBM layout with halos, aliases and
// constants; activations kept in vmem), epilogue fusion, and one schedule per operator
// (README "Program structure").

#include "isa/lower/lower.h"

#include <algorithm>
#include <deque>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "isa/lower/kept_activations.h"
#include "isa/lower/lower_impl.h"
#include "isa/lower/overlap.h"

namespace tpusim::isa {

using namespace lower_detail;
using workloads::Graph;
using workloads::Op;
using workloads::OpKind;
using workloads::TensorId;
using workloads::TensorRole;

namespace lower_detail {

OnChip OpContext::vmem() {
  return OnChip(Space::kVmem, chip.core.vmem.capacity.value(), base.vmem, &used.vmem);
}

OnChip OpContext::accmem() {
  return OnChip(Space::kAccmem, chip.core.accmem.capacity.value(), base.accmem, &used.accmem);
}

SemaphorePool OpContext::semaphore_pool() {
  return SemaphorePool(semaphores, base.sems, &used.sems);
}

std::uint32_t OpContext::engines() const {
  // Hand-offs take 4 semaphores per engine and 4 per MXU, plus 5 for the accumulator and
  // prologue; on a chip with few semaphores the operator uses fewer engines.
  const std::int64_t sems = semaphores;
  const std::int64_t fit = (sems - 4 * std::int64_t(chip.core.mxu.count) - 5) / 4;
  if (fit < 1) {
    // The operator fences (README "Operator overlap") hold the rest.
    const std::uint32_t fences = chip.core.sequencer.semaphores - semaphores;
    fail("core.sequencer.semaphores = " + std::to_string(chip.core.sequencer.semaphores) +
         " is too few for the double-buffered schedule (needs " +
         std::to_string(4 * chip.core.mxu.count + 9 + fences) + ")");
  }
  return static_cast<std::uint32_t>(std::min<std::int64_t>(fit, chip.core.dma.engines));
}

double OpContext::hbm_bytes_per_cycle() const { return lower_detail::hbm_bytes_per_cycle(chip); }

namespace {
// How every error about one operator starts, as the workload's own checks write it.
std::string op_label(const workloads::Op& op) {
  return "op '" + op.name + "' (" + std::string(workloads::op_kind_name(op.kind)) + ")";
}
}  // namespace

void OpContext::fail(const std::string& message) const {
  throw WorkloadError(op.where, op_label(op) + " on " + chip.name + ": " + message);
}

void OpContext::unsupported(const std::string& message) const {
  not_yet(message + " (not implemented in the lowering yet)");
}

void OpContext::not_yet(const std::string& message) const {
  throw NotImplemented(op.where.str() + ": " + op_label(op) + ": " + message);
}

}  // namespace lower_detail

namespace {

bool is_mxu_op(const Op& op) { return op.kind == OpKind::kMatmul || op.kind == OpKind::kConv2d; }

bool is_epilogue_kind(OpKind k) {
  return k == OpKind::kBias || k == OpKind::kRelu || k == OpKind::kRelu6 || k == OpKind::kGelu ||
         k == OpKind::kRequantize;
}

// The graph's MXU operand type: its first MXU operator's input's.
std::optional<DType> graph_mxu_dtype(const Graph& g) {
  for (const Op& op : g.ops)
    if (is_mxu_op(op)) return g.tensor(op.inputs[0]).dtype;
  return std::nullopt;
}

// The MXU operand type: the graph's, or the chip's best when the chip cannot run the graph's.
DType choose_mxu_dtype(const Graph& g, const ChipSpec& chip, std::string& note) {
  std::optional<DType> wanted = graph_mxu_dtype(g);
  const auto& precisions = chip.core.mxu.precisions;
  // Without an MXU operator the MXU's side follows the graph's data where the chip has that type
  // (an int8 pool on a chip with int8 and bf16 stays int8): its inputs' first, else any
  // tensor's (a requantize of an int32 input to int8 stays int8).
  if (!wanted)
    for (const bool inputs : {true, false})
      for (const workloads::Tensor& t : g.tensors)
        if (!wanted && (t.role == TensorRole::kInput) == inputs && precisions.count(t.dtype))
          wanted = t.dtype;
  if (!wanted) wanted = precisions.count(DType::kBf16) ? DType::kBf16 : precisions.begin()->first;
  if (precisions.count(*wanted)) return *wanted;
  // As XLA's DEFAULT precision on a TPU: the tensors keep their type and the array rounds them
  // (core.mxu.rounding), in timing and in functional mode alike, so no note.
  if (chip.core.mxu.rounding.count(*wanted)) return *wanted;
  for (DType t : {DType::kBf16, DType::kInt8, DType::kFp8, DType::kInt16, DType::kFp32})
    if (precisions.count(t)) {
      note = "the graph's " + std::string(dtype_name(*wanted)) + " is not an MXU precision of " +
             chip.name + "; tensors were lowered as " + std::string(dtype_name(t)) +
             " (timing only)";
      return t;
    }
  return *wanted;
}

// A tensor's type in the lowered program: the graph's MXU operand type (`graph`) becomes the
// chip's (`mxu`) when the chip cannot run it; other types cross to the MXU's side (integer or
// floating) as its operands (narrow) or its accumulators (4 bytes and more).
DType substitute(DType t, std::optional<DType> graph, DType mxu) {
  if (graph && t == *graph && *graph != mxu) return mxu;
  if (dtype_is_integer(t) == dtype_is_integer(mxu)) return t;
  return dtype_bytes(t) >= 4 ? accumulator_dtype(mxu) : mxu;
}

struct Halo {
  std::int64_t top = 0, bottom = 0, left = 0, right = 0;
  std::optional<double> fill;
};

// An operator did not fit the vmem below the activations kept while it runs: lower() starts
// again with these left in HBM.
struct EvictAndRetry {
  std::vector<TensorId> tensors;
};

// The operator's own lowering, by kind.
void lower_op(OpContext& ctx, const LowerOptions& options) {
  switch (ctx.op.kind) {
    case OpKind::kMatmul:
      lower_matmul(ctx);
      break;
    case OpKind::kConv2d:
      lower_conv2d(ctx);
      break;
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kBias:
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kGelu:
    case OpKind::kRequantize:
      lower_elementwise(ctx);
      break;
    case OpKind::kSoftmax:
      lower_softmax(ctx);
      break;
    case OpKind::kLayerNorm:
      lower_layernorm(ctx);
      break;
    case OpKind::kMaxPool:
    case OpKind::kAvgPool:
      lower_window(ctx);
      break;
    case OpKind::kGlobalAvgPool:
      lower_global_avg_pool(ctx);
      break;
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kConcat:
      lower_copy(ctx);
      break;
    case OpKind::kEmbedding: {
      auto it = options.index_values.find(ctx.graph.tensor(ctx.op.inputs[1]).name);
      lower_embedding(ctx, it == options.index_values.end() ? nullptr : &it->second);
      break;
    }
  }
}

}  // namespace

namespace {

Lowered lower_once(const Graph& graph, const ChipSpec& chip, const LowerOptions& options,
                   const std::set<TensorId>& evicted) {
  Lowered out;
  out.mxu_dtype = choose_mxu_dtype(graph, chip, out.dtype_note);
  const std::optional<DType> graph_dtype = graph_mxu_dtype(graph);

  // Who reads each tensor.
  std::vector<std::vector<std::size_t>> readers(graph.tensors.size());
  std::vector<bool> is_index(graph.tensors.size(), false);
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    for (TensorId t : graph.ops[i].inputs) readers[t].push_back(i);
    if (graph.ops[i].kind == OpKind::kEmbedding) is_index[graph.ops[i].inputs[1]] = true;
  }

  // Epilogue fusion: an MXU (or depthwise) operator absorbs the bias and activations that
  // directly follow it and are the only readers of its result.
  std::vector<std::vector<OpKind>> epilogue(graph.ops.size());
  std::vector<std::optional<TensorId>> epilogue_bias(graph.ops.size());
  std::vector<float> epilogue_scale(graph.ops.size(), 1.0f);
  std::vector<TensorId> result(graph.ops.size());
  std::vector<bool> fused(graph.ops.size(), false);
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    result[i] = op.output;
    if (op.kind != OpKind::kConv2d && op.kind != OpKind::kMatmul) continue;
    if (op.inputs.size() > 2) epilogue_bias[i] = op.inputs[2];
    for (std::size_t j = i + 1; options.fuse_epilogues && j < graph.ops.size(); ++j) {
      const Op& next = graph.ops[j];
      const TensorId cur = result[i];
      if (!is_epilogue_kind(next.kind) || next.inputs[0] != cur || readers[cur].size() != 1 ||
          graph.tensor(cur).role == TensorRole::kOutput)
        break;
      if (next.kind == OpKind::kBias && (epilogue_bias[i] || !epilogue[i].empty())) break;
      if (next.kind == OpKind::kBias)
        epilogue_bias[i] = next.inputs[1];
      else
        epilogue[i].push_back(next.kind);
      fused[j] = true;
      result[i] = next.output;
      // The read-out ends in the narrow type: what follows runs on its own.
      if (next.kind == OpKind::kRequantize) {
        epilogue_scale[i] = static_cast<float>(next.attrs.scale);
        break;
      }
    }
  }

  // Halos: image tensors read by padded windows are stored padded, so no gather needs bounds.
  std::vector<Halo> halo(graph.tensors.size());
  for (const Op& op : graph.ops) {
    const bool window =
        op.kind == OpKind::kConv2d || op.kind == OpKind::kMaxPool || op.kind == OpKind::kAvgPool;
    const auto& a = op.attrs;
    if (!window || (a.pad_top | a.pad_bottom | a.pad_left | a.pad_right) == 0) continue;
    Halo& h = halo[op.inputs[0]];
    const double fill = op.kind == OpKind::kMaxPool ? -3.0e38 : 0.0;
    // A valid graph the lowering cannot place yet (exit 3, not a workload error).
    if (h.fill && *h.fill != fill)
      throw NotImplemented(op.where.str() + ": op '" + op.name + "': tensor '" +
                           graph.tensor(op.inputs[0]).name +
                           "' is padded both by a max pool (with -inf) and by a convolution or "
                           "average pool (with 0); the lowering stores one padding value per "
                           "tensor (not implemented yet)");
    h.fill = fill;
    h.top = std::max(h.top, a.pad_top);
    h.bottom = std::max(h.bottom, a.pad_bottom);
    h.left = std::max(h.left, a.pad_left);
    h.right = std::max(h.right, a.pad_right);
  }

  // Placement: graph tensors in order (a deque keeps pointers valid as constants are added).
  std::deque<TensorPlacement> placed;
  std::uint64_t next = 0;
  auto allocate = [&](TensorPlacement& t) {
    t.base = round_up(next, 4096);
    next = t.base + std::max<std::uint64_t>(1, t.storage_bytes());
  };
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    const auto& t = graph.tensors[i];
    TensorPlacement p;
    p.name = t.name;
    p.dtype = is_index[i] ? t.dtype : substitute(t.dtype, graph_dtype, out.mxu_dtype);
    // A graph without an MXU operator gets no note from choose_mxu_dtype(); its tensors may
    // still cross to the MXU's side (a bf16 relu on an int8 chip), which computes other values.
    if (p.dtype != t.dtype && out.dtype_note.empty())
      out.dtype_note = "the graph's " + std::string(dtype_name(t.dtype)) + " is not a type of " +
                       chip.name + "'s MXU side; tensors were lowered as " +
                       std::string(dtype_name(p.dtype)) + " (timing only)";
    p.shape = t.shape;
    p.role = t.role;
    p.init = (t.role == TensorRole::kInput || t.role == TensorRole::kWeight) ? TensorInit::kData
                                                                             : TensorInit::kNone;
    p.storage = t.shape;
    p.origin.assign(t.shape.size(), 0);
    const Halo& h = halo[i];
    if (h.fill) {
      if (t.shape.size() != 4)
        throw WorkloadError(
            {}, "tensor '" + t.name + "' is padded by a window operator but is not NHWC");
      p.storage[1] += h.top + h.bottom;
      p.storage[2] += h.left + h.right;
      p.origin[1] = h.top;
      p.origin[2] = h.left;
      p.fill = *h.fill;
      // A max pool's border must lose every comparison: -3e38 in a float, the least value in an
      // integer type (it would not fit and read as 0, winning over negative values).
      if (p.fill < 0 && dtype_is_integer(p.dtype))
        p.fill = p.dtype == DType::kInt8    ? -128.0
                 : p.dtype == DType::kInt16 ? -32768.0
                                            : -2147483648.0;
    }
    placed.push_back(p);
  }
  // A transpose that only moves axes of size 1 keeps every element where it was ([1,12,64] to
  // [12,1,64] in a decode step): it is a reshape.
  auto order_preserving = [&](const Op& op) {
    const workloads::Shape& in = graph.tensor(op.inputs[0]).shape;
    std::int64_t last = -1;
    for (std::int64_t axis : op.attrs.perm) {
      if (in[static_cast<std::size_t>(axis)] == 1) continue;
      if (axis < last) return false;
      last = axis;
    }
    return true;
  };
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    // A reshape of a dense tensor into a dense tensor is a new name for the same bytes.
    const Op& op = graph.ops[i];
    if (op.kind == OpKind::kReshape || (op.kind == OpKind::kTranspose && order_preserving(op))) {
      TensorPlacement& src = placed[op.inputs[0]];
      TensorPlacement& dst = placed[op.output];
      if (src.storage == src.shape && dst.storage == dst.shape && dst.role != TensorRole::kInput)
        dst.alias_of = src.alias_of.empty() ? src.name : src.alias_of;
    }
  }
  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < placed.size(); ++i) index_of[placed[i].name] = i;
  // Each operator plans its buffers in the vmem below the activations kept there while it runs.
  KeptActivations kept;
  kept.above.assign(graph.ops.size(), 0);
  if (chip.compiler.activations == ActivationHome::kVmem) {
    kept = keep_activations_in_vmem(graph, result, fused, readers, evicted, placed,
                                    chip.core.vmem.capacity.value());
    out.vmem_activation_bytes = *std::max_element(kept.above.begin(), kept.above.end());
  }
  const std::vector<std::uint64_t>& kept_above = kept.above;
  for (TensorPlacement& p : placed)
    if (p.alias_of.empty() && p.space == Space::kHbm) allocate(p);
  for (TensorPlacement& p : placed)
    if (!p.alias_of.empty()) p.base = placed[index_of[p.alias_of]].base;
  // Checked before any instruction is emitted (a graph of terabytes would otherwise first build
  // an enormous program) and again once the constants are placed.
  const auto check_hbm_fits = [&](std::uint64_t bytes) {
    if (bytes > chip.memory.capacity.value())
      throw WorkloadError(graph.where, "graph '" + graph.name + "' needs " + std::to_string(bytes) +
                                           " bytes of HBM; " + chip.name + " has " +
                                           std::to_string(chip.memory.capacity.value()) +
                                           " (memory.capacity)");
  };
  check_hbm_fits(next);

  Emitter e(chip);
  // Operator overlap (README "Operator overlap") needs one core: cores only meet at barriers.
  const bool overlap = options.overlap_operators && chip.cores == 1 &&
                       chip.core.sequencer.semaphores > kOperatorFences;
  const std::uint32_t op_semaphores =
      chip.core.sequencer.semaphores - (overlap ? kOperatorFences : 0);
  std::vector<Unit> units = dma_units(chip);
  for (Unit u : mxu_units(chip)) units.push_back(u);
  units.push_back(vpu_unit());
  const auto all = static_cast<std::uint32_t>(units.size());
  const Unit sequencer{UnitKind::kSeq, 0};
  // The operator emitted last, which may still run when the next one starts: its window, what it
  // moves off chip, and the fence every unit signals once it is done with it.
  struct Running {
    OpContext::Window base, used;
    SharedSpans spans;
    std::uint16_t fence = 0;
  };
  std::optional<Running> running;
  int unfenced = -1;  // the fence before running's when not yet waited (a semaphore)
  std::uint16_t parity = 0;
  std::uint32_t next_mxu = 0;
  std::map<std::string, const TensorPlacement*> constants;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (fused[i]) continue;
    if ((op.kind == OpKind::kReshape || op.kind == OpKind::kTranspose) &&
        !placed[op.output].alias_of.empty()) {
      OpPlan plan;
      plan.name = op.name;
      plan.kind = std::string(workloads::op_kind_name(op.kind));
      plan.tile = "-";
      plan.notes = "alias of '" + placed[op.output].alias_of + "': no data moves";
      out.plans.push_back(plan);
      continue;
    }
    OpPlan plan;
    plan.name = op.name;
    plan.kind = std::string(workloads::op_kind_name(op.kind));
    plan.macs = static_cast<std::uint64_t>(workloads::op_macs(graph, op));
    std::string kind = plan.kind;
    std::string name = op.name;
    for (std::size_t j = i + 1; j < graph.ops.size() && fused[j]; ++j) {
      name += "+" + graph.ops[j].name;
      kind += "+" + std::string(workloads::op_kind_name(graph.ops[j].kind));
    }
    if (name != op.name) plan.notes = "fused: " + name;
    const OpPlan unplanned = plan;
    ChipSpec planned = chip;
    planned.core.vmem.capacity = Bytes(chip.core.vmem.capacity.value() - kept_above[i]);
    const WindowLimits limits{planned.core.vmem.capacity.value(), chip.core.accmem.capacity.value(),
                              op_semaphores};
    OpContext ctx{e,           planned, graph,         op,   {}, &placed[result[i]],
                  epilogue[i], nullptr, out.mxu_dtype, plan, {}};
    ctx.semaphores = op_semaphores;
    ctx.first_mxu = next_mxu;
    ctx.next_mxu = next_mxu;
    for (TensorId t : op.inputs) ctx.inputs.push_back(&placed[t]);
    if (epilogue_bias[i]) ctx.epilogue_bias = &placed[*epilogue_bias[i]];
    ctx.epilogue_scale = epilogue_scale[i];
    // Lowering again at another window asks for the same constants: they are made once.
    ctx.constant = [&](const std::string& cname, workloads::Shape shape, TensorInit init,
                       double value) {
      if (auto it = constants.find(cname); it != constants.end()) return it->second;
      TensorPlacement c;
      c.name = cname;
      c.dtype = DType::kFp32;
      c.shape = shape;
      c.storage = shape;
      c.origin.assign(shape.size(), 0);
      c.role = TensorRole::kWeight;
      c.init = init;
      c.fill = value;
      allocate(c);
      placed.push_back(c);
      return constants[cname] = &placed.back();
    };
    const Emitter::Mark mark = e.mark();
    const auto lower_at = [&](OpContext::Window base) {
      plan = unplanned;
      ctx.base = base;
      ctx.used = {};
      ctx.row_pipelines = 0;
      e.begin_op(plan.kind, name);
      try {
        lower_op(ctx, options);
      } catch (const OnChipFull& full) {
        ctx.fail(full.message);
      } catch (const ProgramTooLarge&) {
        ctx.not_yet("the program would exceed " + std::to_string(Emitter::kMaxInstructions) +
                    " instructions, the lowering's limit; the workload is too large");
      }
    };
    try {
      lower_at({});
    } catch (const WorkloadError&) {
      // Perhaps for want of the vmem the kept activations hold: try again without them.
      if (kept_above[i] == 0) throw;
      EvictAndRetry retry;
      for (const KeptActivations::Range& r : kept.ranges)
        if (r.first_op <= i && i <= r.last_op) retry.tensors.push_back(r.tensor);
      throw retry;
    }
    if (!overlap) {
      // Every core waits for every other before the next operator reads what this one wrote.
      for (std::uint16_t c = 0; c < chip.cores; ++c) {
        e.set_core(c);
        e.barrier();
      }
    } else {
      // Beside the running operator, this one starts at once and waits for it only before its
      // first instruction that touches what it writes; else it waits before anything.
      const std::size_t first = mark.instructions;
      std::optional<std::size_t> wait_at;
      if (running) {
        const auto beside = window_beside(running->base, running->used, ctx.used, limits);
        if (beside && !(*beside == OpContext::Window{})) {
          e.rollback(mark);
          lower_at(*beside);
        }
        wait_at = beside ? first_dependent(e.program(), first, e.program().instructions.size(),
                                           running->spans)
                         : first;
      }
      // The operator before the running one held this one's window and semaphores.
      std::size_t inserted = 0;
      if (unfenced >= 0) {
        e.insert(first, SemWait{sequencer, static_cast<std::uint16_t>(unfenced), all});
        unfenced = -1;
        inserted = 1;
      }
      if (running) {
        if (wait_at)
          e.insert(*wait_at + inserted, SemWait{sequencer, running->fence, all});
        else
          unfenced = running->fence;
      }
      next_mxu = ctx.next_mxu;
      const auto fence = static_cast<std::uint16_t>(op_semaphores + parity);
      parity ^= 1;
      for (Unit u : units) e.signal(u, fence);
      running = Running{ctx.base, ctx.used,
                        shared_spans(e.program(), first, e.program().instructions.size()), fence};
    }
    plan.kind = kind;
    out.plans.push_back(plan);
  }
  if (running) {
    // Every fence is taken before the program ends.
    if (unfenced >= 0) e.wait(sequencer, static_cast<std::uint16_t>(unfenced), all);
    e.wait(sequencer, running->fence, all);
  }
  check_hbm_fits(next);
  out.program = e.take();
  out.program.file_name = graph.name + " (lowered for " + chip.name + ")";
  out.tensors.assign(placed.begin(), placed.end());
  out.hbm_bytes = next;
  return out;
}

}  // namespace

Lowered lower(const Graph& graph, const ChipSpec& chip, const LowerOptions& options) {
  std::set<TensorId> evicted;
  for (;;) {
    try {
      return lower_once(graph, chip, options, evicted);
    } catch (const EvictAndRetry& retry) {
      evicted.insert(retry.tensors.begin(), retry.tensors.end());
    }
  }
}

std::string explain(const Lowered& lowered, const ChipSpec& chip) {
  std::ostringstream os;
  os << "Lowering for " << chip.name << ": MXU operands " << dtype_name(lowered.mxu_dtype);
  if (const auto r = chip.core.mxu.rounding.find(lowered.mxu_dtype);
      r != chip.core.mxu.rounding.end())
    os << " (rounded to " << dtype_name(r->second) << " by the array)";
  os << ", " << lowered.program.instructions.size() << " instructions, " << lowered.hbm_bytes
     << " bytes of HBM\n";
  if (!lowered.dtype_note.empty()) os << "note: " << lowered.dtype_note << "\n";
  if (lowered.vmem_activation_bytes > 0)
    os << "activations kept in vmem (compiler.activations): " << lowered.vmem_activation_bytes
       << " bytes at its top\n";
  for (const OpPlan& p : lowered.plans) {
    os << "\n" << p.name << " (" << p.kind << ")\n";
    if (!p.notes.empty()) os << "  " << p.notes << "\n";
    if (p.tile == "-") continue;
    os << "  tile       " << p.tile << "\n"
       << "  loop order " << p.loop_order << "\n"
       << "  placement  " << p.placement << "\n"
       << "  on chip    vmem " << p.vmem_bytes << " B, accmem " << p.accmem_bytes << " B\n"
       << "  HBM        " << p.hbm_bytes << " B";
    if (p.macs)
      os << ", " << p.macs << " MACs (" << std::fixed << std::setprecision(1)
         << double(p.macs) / std::max<std::uint64_t>(1, p.hbm_bytes) << " MACs/B)";
    os << "\n"
       << std::fixed << std::setprecision(0) << "  bound      " << p.bound()
       << " (compute >= " << p.compute_cycles << " cycles, memory >= " << p.memory_cycles
       << " cycles)\n";
    os.unsetf(std::ios::fixed);
  }
  return os.str();
}

}  // namespace tpusim::isa
