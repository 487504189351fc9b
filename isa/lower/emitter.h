#pragma once
// Instruction emission for the lowering: the program under construction, DMA descriptors shaped
// and split over engines, and the semaphore hand-offs that order units (isa/lower/README.md).

#include <cstdint>
#include <string>
#include <vector>

#include "isa/program.h"
#include "sim/base/spec/chip_spec.h"

namespace tpusim::isa::lower_detail {

// One DMA transfer before it is assigned to an engine: a box of up to four dimensions.
struct Transfer {
  bool store = false;
  Address src;
  Address dst;
  std::uint64_t elem = 0;
  std::vector<std::uint64_t> count;       // outermost first
  std::vector<std::uint64_t> src_stride;  // bytes
  std::vector<std::uint64_t> dst_stride;
  std::uint64_t bytes() const;
  // bytes() when one side is HBM, else 0 (an activation kept in vmem moves on chip).
  std::uint64_t hbm_bytes() const {
    return src.space == Space::kHbm || dst.space == Space::kHbm ? bytes() : 0;
  }
};

// Thrown when a program would exceed Emitter::kMaxInstructions (the operator lowering names
// the operator).
struct ProgramTooLarge {};

class Emitter {
 public:
  // About 3.5 times the largest sample's program (resnet50-b8 on gemmini-16x16: 4.5 M
  // instructions, 2 GB while compiling); a graph beyond it is refused before it exhausts memory.
  static constexpr std::size_t kMaxInstructions = 16'000'000;

  explicit Emitter(const ChipSpec& chip);

  const ChipSpec& chip() const { return chip_; }
  std::uint32_t begin_op(const std::string& kind, const std::string& name);
  void set_core(std::uint16_t core) { core_ = core; }
  std::uint16_t core() const { return core_; }

  void emit(InstrBody body);
  // Emits a transfer on one engine, after dropping unit dimensions and folding dense inner
  // dimensions into the contiguous run (fewer runs: faster DMA and faster simulation).
  void dma(std::uint8_t engine, Transfer t);
  void vector(VectorOp op, DType dtype, DType src_dtype, std::uint32_t rows, std::uint32_t cols,
              VectorOperand dst, VectorOperand a, VectorOperand b = {}, float scale = 0.0f);
  void signal(Unit unit, std::uint16_t sem, bool reads = false) {
    emit(SemSignal{unit, sem, reads});
  }
  void wait(Unit unit, std::uint16_t sem, std::uint32_t count) { emit(SemWait{unit, sem, count}); }
  void barrier() { emit(Barrier{}); }
  // Puts an instruction of the current operator before instruction `index`.
  void insert(std::size_t index, InstrBody body);

  // A point to return to: the program, operator table and estimates as they are now.
  struct Mark {
    std::size_t instructions = 0, ops = 0;
    double vpu_cycles = 0;
  };
  Mark mark() const { return {program_.instructions.size(), program_.ops.size(), vpu_cycles_}; }
  void rollback(const Mark& m);

  // Issue-bound vector-unit cycles of everything emitted so far (all cores), for estimates.
  double vpu_cycles() const { return vpu_cycles_; }

  Program take() { return std::move(program_); }
  const Program& program() const { return program_; }

 private:
  const ChipSpec& chip_;
  Program program_;
  std::uint16_t core_ = 0;
  double vpu_cycles_ = 0;
};

// Spreads a group of transfers over DMA engines first_engine .. first_engine+engines-1: each
// transfer larger than `split_bytes`, or issuing more chunks than that many bytes would, is cut
// along its outermost dimension, then pieces go to the least-loaded engine, by chunk issues or
// bytes at the engine's share of the memory bandwidth, whichever takes longer.
void distribute(Emitter& e, std::vector<Transfer> transfers, std::uint64_t split_bytes,
                std::uint32_t engines, std::uint32_t first_engine = 0);

// Off-chip bytes per core cycle one core can plan with: its memory model's peak, capped by the
// interconnect links into the core and by its DMA engines' chunks in flight (infinite for ideal
// memory).
double hbm_bytes_per_cycle(const ChipSpec& chip);
// Core cycles from a DMA chunk's read request to its data, unloaded: the memory's access latency
// (tRCD + tCL for the bank model) and a hop each way. The chunk holds one of its engine's
// max_outstanding slots at least that long.
double read_round_trip_cycles(const ChipSpec& chip);
// Chunks the DMA engines issue for `t`: every contiguous run is one at least.
std::uint64_t dma_chunks(Transfer t, std::uint64_t chunk);
// The least time `engines` DMA engines on each core take for `chunks` spread over the cores: each
// issues one a cycle and keeps max_outstanding in flight, each for a read's round trip at least
// (Little's law), so a load of short runs is bound by its chunks rather than its bytes.
double dma_chunk_cycles(const ChipSpec& chip, std::uint32_t engines, std::uint64_t chunks);

// A one-way notification from every unit in `from` to every unit in `to`, on one core: each
// consumer owns one semaphore; every producer signals it once, the consumer takes |from|.
struct Handoff {
  std::vector<Unit> from;
  std::vector<Unit> to;
  std::vector<std::uint16_t> sems;  // one per consumer
  // The producers hand back a buffer they only read: they signal once their reads are done.
  bool reads = false;
  void post(Emitter& e) const;
  // The signals of the producers in [first, last) of `from` only (the rest post theirs later).
  void post(Emitter& e, std::size_t first, std::size_t last) const;
  void take(Emitter& e) const;
};

// Hands out semaphores base, base+1, ... of one core for one operator; the schedule guarantees
// every signal is taken before the operator ends, so a later operator may reuse them.
// `high_water` (optional) records how many were handed out.
class SemaphorePool {
 public:
  explicit SemaphorePool(std::uint32_t count, std::uint32_t base = 0,
                         std::uint32_t* high_water = nullptr)
      : count_(count), base_(base), high_water_(high_water) {}
  Handoff handoff(std::vector<Unit> from, std::vector<Unit> to);

 private:
  std::uint32_t count_;
  std::uint32_t base_;
  std::uint32_t* high_water_;
  std::uint32_t next_ = 0;
};

std::vector<Unit> dma_units(const ChipSpec& chip);
std::vector<Unit> mxu_units(const ChipSpec& chip);
inline Unit vpu_unit() { return Unit{UnitKind::kVpu, 0}; }

inline Address offset(Address a, std::uint64_t bytes) { return Address{a.space, a.addr + bytes}; }
inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
inline std::uint64_t round_up(std::uint64_t a, std::uint64_t b) { return ceil_div(a, b) * b; }

}  // namespace tpusim::isa::lower_detail
