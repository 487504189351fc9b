#include "isa/lower/emitter.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace tpusim::isa::lower_detail {

std::uint64_t Transfer::bytes() const {
  std::uint64_t total = elem;
  for (std::uint64_t c : count) total *= c;
  return total;
}

Emitter::Emitter(const ChipSpec& chip) : chip_(chip) { program_.file_name = "<lowered>"; }

std::uint32_t Emitter::begin_op(const std::string& kind, const std::string& name) {
  const auto id = static_cast<std::uint32_t>(program_.ops.size());
  std::string printable;
  for (char c : name) printable += (c == '"' || c == '\\' || c < 0x20 || c > 0x7e) ? '_' : c;
  program_.ops.push_back(OpInfo{id, kind, printable});
  return id;
}

void Emitter::emit(InstrBody body) { insert(program_.instructions.size(), std::move(body)); }

void Emitter::insert(std::size_t index, InstrBody body) {
  assert(!program_.ops.empty() && index <= program_.instructions.size());
  if (program_.instructions.size() >= kMaxInstructions) throw ProgramTooLarge();
  Instruction inst;
  inst.core = core_;
  inst.op = static_cast<std::uint32_t>(program_.ops.size() - 1);
  inst.body = std::move(body);
  program_.instructions.insert(program_.instructions.begin() + static_cast<std::ptrdiff_t>(index),
                               std::move(inst));
}

void Emitter::rollback(const Mark& m) {
  program_.instructions.resize(m.instructions);
  program_.ops.resize(m.ops);
  vpu_cycles_ = m.vpu_cycles;
}

namespace {

// Unit dimensions carry nothing; a dimension whose stride equals the run on both sides is part
// of the run. Folding them keeps descriptors short and runs long.
void simplify(Transfer& t) {
  for (std::size_t i = t.count.size(); i-- > 0;) {
    if (t.count[i] == 1) {
      t.count.erase(t.count.begin() + i);
      t.src_stride.erase(t.src_stride.begin() + i);
      t.dst_stride.erase(t.dst_stride.begin() + i);
    }
  }
  while (!t.count.empty() && t.src_stride.back() == t.elem && t.dst_stride.back() == t.elem &&
         t.elem * t.count.back() <= std::numeric_limits<std::uint32_t>::max()) {
    t.elem *= t.count.back();
    t.count.pop_back();
    t.src_stride.pop_back();
    t.dst_stride.pop_back();
  }
  if (t.count.empty()) {
    t.count = {1};
    t.src_stride = {t.elem};
    t.dst_stride = {t.elem};
  }
}

}  // namespace

void Emitter::dma(std::uint8_t engine, Transfer t) {
  simplify(t);
  assert(t.count.size() <= kMaxDmaDims);
  // The instruction's fields are 32 bits: a larger run, count or stride (tensors of 4 GiB and
  // more) becomes several instructions, never a truncated one.
  constexpr std::uint64_t kField = std::numeric_limits<std::uint32_t>::max();
  if (t.elem > kField) {
    constexpr std::uint64_t kPiece = std::uint64_t{1} << 31;
    for (std::uint64_t at = 0; at < t.elem; at += kPiece) {
      Transfer piece = t;
      piece.elem = std::min(kPiece, t.elem - at);
      piece.src.addr += at;
      piece.dst.addr += at;
      dma(engine, std::move(piece));
    }
    return;
  }
  for (std::size_t i = 0; i < t.count.size(); ++i) {
    if (t.count[i] <= kField && t.src_stride[i] <= kField && t.dst_stride[i] <= kField) continue;
    // Dimension i one step at a time (a stride too large) or in runs of at most 2^31 (a count
    // too large), each piece its own transfer.
    const bool only_count = t.src_stride[i] <= kField && t.dst_stride[i] <= kField;
    const std::uint64_t step = only_count ? std::uint64_t{1} << 31 : 1;
    for (std::uint64_t j = 0; j < t.count[i]; j += step) {
      Transfer piece = t;
      piece.count[i] = std::min(step, t.count[i] - j);
      piece.src.addr += j * t.src_stride[i];
      piece.dst.addr += j * t.dst_stride[i];
      dma(engine, std::move(piece));
    }
    return;
  }
  DmaInstr d;
  d.store = t.store;
  d.engine = engine;
  d.src = t.src;
  d.dst = t.dst;
  d.elem_bytes = static_cast<std::uint32_t>(t.elem);
  d.dims = static_cast<std::uint8_t>(t.count.size());
  for (std::size_t i = 0; i < t.count.size(); ++i) {
    d.count[i] = static_cast<std::uint32_t>(t.count[i]);
    d.src_stride[i] = static_cast<std::uint32_t>(t.src_stride[i]);
    d.dst_stride[i] = static_cast<std::uint32_t>(t.dst_stride[i]);
  }
  emit(d);
}

void Emitter::vector(VectorOp op, DType dtype, DType src_dtype, std::uint32_t rows,
                     std::uint32_t cols, VectorOperand dst, VectorOperand a, VectorOperand b,
                     float scale) {
  VectorInstr v;
  v.op = op;
  v.dtype = dtype;
  v.src_dtype = vector_op_converts(op) ? src_dtype : dtype;
  v.rows = rows;
  v.cols = cols;
  v.dst = dst;
  v.a = a;
  if (vector_arity(op) == VectorArity::kBinary) v.b = b;
  if (op == VectorOp::kRequantize) v.scale = scale;
  const auto& vpu = chip_.core.vpu;
  vpu_cycles_ +=
      std::ceil(double(rows) * cols /
                (double(vpu.lanes) * vpu.sublanes * vpu.ops[std::size_t(op)].throughput));
  emit(v);
}

namespace {

// Chunks an engine issues for `t` (simplified), one a cycle: every contiguous run is at least one.
std::uint64_t issue_chunks(const Transfer& t, std::uint64_t chunk) {
  std::uint64_t runs = 1;
  for (const std::uint64_t c : t.count) runs *= c;
  return runs * std::max<std::uint64_t>(1, (t.elem + chunk - 1) / chunk);
}

}  // namespace

std::uint64_t dma_chunks(Transfer t, std::uint64_t chunk) {
  if (t.bytes() == 0) return 0;
  simplify(t);
  return issue_chunks(t, std::max<std::uint64_t>(1, chunk));
}

namespace {

// Transfers of one shape whose addresses step by the same amount on both sides (a tile's batch
// items, a band's rows, one small load per item) are one transfer with an outer dimension: one
// instruction instead of one per item, as a compiler writes a strided descriptor. A group's
// transfers all complete before its hand-off and distribute() reorders them anyway, so transfers
// of a shape merge across others of another shape in between; the order within a shape is kept.
// Items of the split size or more (`large`) merge as well; distribute() keeps such a run whole
// only when cutting it over the engines is as balanced as cutting each item.
struct Coalesced {
  Transfer t;
  std::vector<Transfer> large_items;  // a run of large items: each, as given
};

std::vector<Coalesced> coalesce(std::vector<Transfer> transfers, std::uint64_t max_bytes,
                                std::uint64_t max_chunks, std::uint64_t chunk) {
  constexpr std::uint64_t kField = std::numeric_limits<std::uint32_t>::max();
  const auto same_shape = [](const Transfer& a, const Transfer& b) {
    return a.store == b.store && a.src.space == b.src.space && a.dst.space == b.dst.space &&
           a.elem == b.elem && a.count == b.count && a.src_stride == b.src_stride &&
           a.dst_stride == b.dst_stride;
  };
  struct Run {
    Transfer first;
    std::uint64_t n = 1, src_step = 0, dst_step = 0;
    bool large = false;
    std::vector<Transfer> items;  // kept for large items only
    // Whether `t` continues the run: the next address on both sides, a forward step that fits
    // an instruction's stride field, and room for one more dimension.
    bool extends(const Transfer& t) const {
      if (t.src.addr < first.src.addr || t.dst.addr <= first.dst.addr) return false;
      const std::uint64_t ds = t.src.addr - first.src.addr, dd = t.dst.addr - first.dst.addr;
      if (n == 1) return first.count.size() < kMaxDmaDims && ds <= kField && dd <= kField;
      return ds == n * src_step && dd == n * dst_step;
    }
  };
  std::vector<Run> runs;
  std::vector<std::size_t> open;  // per shape seen, its latest run
  for (Transfer& t : transfers) {
    if (t.bytes() == 0) continue;
    simplify(t);
    std::size_t* latest = nullptr;
    for (std::size_t& r : open)
      if (same_shape(runs[r].first, t)) latest = &r;
    if (latest && runs[*latest].extends(t)) {
      Run& r = runs[*latest];
      if (r.n == 1) {
        r.src_step = t.src.addr - r.first.src.addr;
        r.dst_step = t.dst.addr - r.first.dst.addr;
      }
      ++r.n;
      if (r.large) r.items.push_back(std::move(t));
      continue;
    }
    Run run;
    run.first = t;
    run.large = t.bytes() >= max_bytes || issue_chunks(t, chunk) >= max_chunks;
    if (run.large) run.items.push_back(std::move(t));
    runs.push_back(std::move(run));
    if (latest)
      *latest = runs.size() - 1;
    else
      open.push_back(runs.size() - 1);
  }
  std::vector<Coalesced> merged;
  merged.reserve(runs.size());
  for (Run& r : runs) {
    if (r.n > 1) {
      r.first.count.insert(r.first.count.begin(), r.n);
      r.first.src_stride.insert(r.first.src_stride.begin(), r.src_step);
      r.first.dst_stride.insert(r.first.dst_stride.begin(), r.dst_step);
      simplify(r.first);
    } else {
      r.items.clear();
    }
    merged.push_back(Coalesced{std::move(r.first), std::move(r.items)});
  }
  return merged;
}

// Pieces by cost onto `engines`, costliest first onto the least-loaded engine: a balanced split
// without reordering effects, since all pieces of one group complete before the group's hand-off
// fires. `order` lists (piece, engine) in placement order.
struct Placement {
  std::vector<std::pair<std::size_t, std::uint32_t>> order;
  double busiest = 0;  // the busiest engine's load
};
Placement place(const std::vector<double>& costs, std::uint32_t engines) {
  std::vector<std::size_t> by_cost(costs.size());
  for (std::size_t i = 0; i < costs.size(); ++i) by_cost[i] = i;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(std::max<std::uint32_t>(1, engines), 0);
  Placement p;
  for (const std::size_t i : by_cost) {
    const auto engine =
        static_cast<std::uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[engine] += costs[i];
    p.order.emplace_back(i, engine);
  }
  p.busiest = *std::max_element(load.begin(), load.end());
  return p;
}

}  // namespace

void distribute(Emitter& e, std::vector<Transfer> transfers, std::uint64_t split_bytes,
                std::uint32_t engines, std::uint32_t first_engine) {
  const ChipSpec& chip = e.chip();
  const std::uint64_t chunk = std::max<std::uint64_t>(1, chip.core.dma.chunk.value());
  // An engine's time for a transfer, in cycles: its chunk issues, or its bytes at the engine's
  // share of the memory's bandwidth if that is longer. Bytes alone would send a thousand
  // two-byte runs (a ragged last K block of A) to one engine as if they were 2 KiB.
  const double share =
      hbm_bytes_per_cycle(chip) / std::max<std::uint32_t>(1, chip.core.dma.engines);
  const auto cost = [&](const Transfer& t) {
    return std::max(double(issue_chunks(t, chunk)), double(t.bytes()) / share);
  };
  const std::uint64_t split_chunks = std::max<std::uint64_t>(1, split_bytes / chunk);
  // Cuts a transfer larger than the split size, or issuing more chunks than that many bytes
  // would, along its outermost dimension (a single run: the run itself) into at most `engines`
  // pieces.
  const auto cut = [&](Transfer t, std::vector<Transfer>& out) {
    if (t.count.size() == 1 && t.count.front() == 1) {
      const std::uint64_t run_parts = std::min<std::uint64_t>(
          engines, std::max<std::uint64_t>(1, t.elem / std::max<std::uint64_t>(1, split_bytes)));
      std::uint64_t done = 0;
      for (std::uint64_t p = 0; p < run_parts; ++p) {
        const std::uint64_t n = t.elem / run_parts + (p < t.elem % run_parts ? 1 : 0);
        Transfer piece = t;
        piece.elem = n;
        piece.src_stride = {n};
        piece.dst_stride = {n};
        piece.src.addr += done;
        piece.dst.addr += done;
        out.push_back(std::move(piece));
        done += n;
      }
      return;
    }
    const std::uint64_t outer = t.count.front();
    const std::uint64_t parts = std::min<std::uint64_t>(
        {outer, engines,
         std::max<std::uint64_t>({1, t.bytes() / std::max<std::uint64_t>(1, split_bytes),
                                  issue_chunks(t, chunk) / split_chunks})});
    if (parts <= 1) {
      out.push_back(std::move(t));
      return;
    }
    std::uint64_t first = 0;
    for (std::uint64_t p = 0; p < parts; ++p) {
      const std::uint64_t n = outer / parts + (p < outer % parts ? 1 : 0);
      Transfer piece = t;
      piece.count.front() = n;
      piece.src.addr += first * t.src_stride.front();
      piece.dst.addr += first * t.dst_stride.front();
      out.push_back(std::move(piece));
      first += n;
    }
  };
  const auto placed = [&](const std::vector<Transfer>& ts) {
    std::vector<double> costs;
    for (const Transfer& t : ts) costs.push_back(cost(t));
    return place(costs, engines);
  };
  std::vector<Transfer> pieces;
  for (Coalesced& c : coalesce(std::move(transfers), std::max<std::uint64_t>(1, split_bytes),
                               split_chunks, chunk)) {
    if (c.large_items.empty()) {
      cut(std::move(c.t), pieces);
      continue;
    }
    // Large items: each cut on its own, or the run cut whole, whichever leaves the busiest
    // engine no busier (a tie keeps the run: fewer instructions in the engines' queues).
    std::vector<Transfer> whole, apart;
    cut(std::move(c.t), whole);
    for (Transfer& item : c.large_items) cut(std::move(item), apart);
    std::vector<Transfer>& chosen =
        placed(whole).busiest <= placed(apart).busiest * (1 + 1e-9) ? whole : apart;
    for (Transfer& t : chosen) pieces.push_back(std::move(t));
  }
  for (const auto& [i, engine] : placed(pieces).order)
    e.dma(static_cast<std::uint8_t>(first_engine + engine), std::move(pieces[i]));
}

namespace {

// The interconnect links a core's data can arrive over: its one link out of the crossbar's
// switch, or on a mesh one from each grid neighbour of core 0, which sits in the grid's first
// corner (nodes are placed row-major, cores first): east if there are two columns, south if
// there are two rows.
std::uint32_t core_links(const ChipSpec& chip) {
  if (chip.noc.topology != NocTopology::kMesh) return 1;
  const std::uint32_t nodes =
      chip.cores + (chip.memory.model == MemoryModel::kHbm ? chip.memory.hbm.total_channels()
                                                           : chip.memory.channels);
  const std::uint32_t columns = std::max<std::uint32_t>(1, chip.noc.mesh_columns);
  return (columns > 1) + (nodes > columns);
}

}  // namespace

double hbm_bytes_per_cycle(const ChipSpec& chip) {
  const double cores = std::max<std::uint32_t>(1, chip.cores);
  // Each engine issues one chunk a cycle: with memory that answers at once (ideal), that is the
  // only limit left, and plans sized to an infinite rate ran slower than with real memory.
  const double issue = cores * chip.core.dma.engines * double(chip.core.dma.chunk.value());
  if (chip.memory.model == MemoryModel::kIdeal) return issue;
  const double clock = chip.clock.value();
  const bool dram = chip.memory.model == MemoryModel::kHbm;
  const double memory = dram ? chip.memory.hbm.peak_bandwidth().value() / clock
                             : chip.memory.bandwidth.bytes_per_cycle(chip.clock);
  // More bandwidth than the cores can take in is not there to plan with: the links each
  // receives over, and (Little's law) the chunks its engines keep in flight over a read's
  // unloaded round trip, cap it. A plan sized to the memory alone became slower as the memory
  // got faster (a bandwidth sweep past the link width). An operator's work is spread over the
  // cores, so their links and engines add up.
  const double links =
      cores * double(chip.noc.link_width.value()) * std::max<std::uint32_t>(1, core_links(chip));
  const double in_flight = cores * chip.core.dma.engines * chip.core.dma.max_outstanding *
                           double(chip.core.dma.chunk.value());
  return std::min({memory, links, in_flight / read_round_trip_cycles(chip)});
}

double dma_chunk_cycles(const ChipSpec& chip, std::uint32_t engines, std::uint64_t chunks) {
  const double all =
      double(std::max<std::uint32_t>(1, engines)) * std::max<std::uint32_t>(1, chip.cores);
  const double issue = double(chunks) / all;
  if (chip.memory.model == MemoryModel::kIdeal) return issue;
  const double slots = all * std::max<std::uint32_t>(1, chip.core.dma.max_outstanding);
  return std::max(issue, double(chunks) * read_round_trip_cycles(chip) / slots);
}

double read_round_trip_cycles(const ChipSpec& chip) {
  const double clock = chip.clock.value();
  const DramTiming& t = chip.memory.hbm.timing;
  const double read_s = chip.memory.model == MemoryModel::kHbm
                            ? (t.tRCD.seconds(chip.memory.hbm.clock).value() +
                               t.tCL.seconds(chip.memory.hbm.clock).value())
                            : chip.memory.latency.seconds(chip.clock).value();
  return std::max(1.0,
                  read_s * clock + 2.0 * chip.noc.hop_latency.seconds(chip.clock).value() * clock);
}

void Handoff::post(Emitter& e) const { post(e, 0, from.size()); }

void Handoff::post(Emitter& e, std::size_t first, std::size_t last) const {
  for (std::size_t i = first; i < last; ++i)
    for (std::uint16_t sem : sems) e.signal(from[i], sem, reads);
}

void Handoff::take(Emitter& e) const {
  for (std::size_t i = 0; i < to.size(); ++i)
    e.wait(to[i], sems[i], static_cast<std::uint32_t>(from.size()));
}

Handoff SemaphorePool::handoff(std::vector<Unit> from, std::vector<Unit> to) {
  Handoff h;
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (next_ >= count_)
      throw WorkloadError({}, "the lowering needs more than " + std::to_string(count_) +
                                  " semaphores per core (core.sequencer.semaphores)");
    h.sems.push_back(static_cast<std::uint16_t>(base_ + next_++));
  }
  if (high_water_) *high_water_ = std::max(*high_water_, next_);
  h.from = std::move(from);
  h.to = std::move(to);
  return h;
}

std::vector<Unit> dma_units(const ChipSpec& chip) {
  std::vector<Unit> units;
  for (std::uint32_t i = 0; i < chip.core.dma.engines; ++i)
    units.push_back(Unit{UnitKind::kDma, static_cast<std::uint8_t>(i)});
  return units;
}

std::vector<Unit> mxu_units(const ChipSpec& chip) {
  std::vector<Unit> units;
  for (std::uint32_t i = 0; i < chip.core.mxu.count; ++i)
    units.push_back(Unit{UnitKind::kMxu, static_cast<std::uint8_t>(i)});
  return units;
}

}  // namespace tpusim::isa::lower_detail
