#pragma once
// The in-memory form of a tpusim program: what the assembler and the binary decoder produce,
// what the lowering emits, what the checker validates and what the SystemC sequencer executes.
// isa/README.md gives the semantics of every instruction and field; this header states the
// representation and its invariants.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/base/dtype.h"
#include "sim/base/errors.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::isa {

// Memory spaces. Addresses are byte addresses inside one space, starting at 0.
enum class Space : std::uint8_t { kHbm, kVmem, kAccmem, kCmem };
inline constexpr std::size_t kNumSpaces = 4;
std::string_view space_name(Space s);
std::optional<Space> space_from_name(std::string_view name);

struct Address {
  Space space = Space::kHbm;
  std::uint64_t addr = 0;  // bytes from the start of `space`
  friend bool operator==(const Address& a, const Address& b) {
    return a.space == b.space && a.addr == b.addr;
  }
};

// The units that own an in-order instruction queue in each core. kSeq is the sequencer itself:
// a wait placed there stops dispatch of everything after it on that core.
enum class UnitKind : std::uint8_t { kSeq, kDma, kMxu, kVpu };
struct Unit {
  UnitKind kind = UnitKind::kSeq;
  std::uint8_t index = 0;  // DMA engine or MXU number; always 0 for kSeq and kVpu
  friend bool operator==(const Unit& a, const Unit& b) {
    return a.kind == b.kind && a.index == b.index;
  }
  friend bool operator!=(const Unit& a, const Unit& b) { return !(a == b); }
};
std::string unit_name(Unit u);  // "seq", "vpu", "dma0", "mxu3"
std::optional<Unit> unit_from_name(std::string_view name);

inline constexpr std::size_t kMaxDmaDims = 4;

// load: toward the core (hbm -> cmem -> vmem/accmem); store: away from it. See README.
struct DmaInstr {
  bool store = false;
  std::uint8_t engine = 0;
  Address src;
  Address dst;
  std::uint32_t elem_bytes = 0;  // innermost contiguous run, copied as one piece
  std::uint8_t dims = 1;         // 1..kMaxDmaDims entries of count/strides are used
  // Outermost dimension first; entries at index >= dims are 0.
  std::array<std::uint32_t, kMaxDmaDims> count{};
  std::array<std::uint32_t, kMaxDmaDims> src_stride{};  // bytes
  std::array<std::uint32_t, kMaxDmaDims> dst_stride{};  // bytes
  std::uint64_t total_bytes() const;                    // elem_bytes * prod(count)
};

// mxu.lw: a K x N weight tile from vmem into the MXU (its shadow buffer when double-buffered).
struct MxuLoadWeights {
  std::uint8_t mxu = 0;
  DType dtype = DType::kBf16;
  std::uint32_t k = 0;           // rows of the tile = reduction depth, <= MXU rows
  std::uint32_t n = 0;           // columns of the tile = outputs, <= MXU cols
  Address src;                   // vmem
  std::uint32_t src_stride = 0;  // bytes between rows in memory (of W, or of W^T if transpose)
  bool transpose = false;        // memory holds W^T (N rows of K elements)
};

// mxu.mm: stream M rows of K elements through the MXU's active weights into accmem.
struct MxuMatmul {
  std::uint8_t mxu = 0;
  DType dtype = DType::kBf16;  // input dtype; output is accumulator_dtype(dtype)
  std::uint32_t m = 0;
  std::uint32_t k = 0;
  std::uint32_t n = 0;
  Address src;  // vmem
  std::uint32_t src_stride = 0;
  Address dst;  // accmem
  std::uint32_t dst_stride = 0;
  bool accumulate = false;  // add into dst instead of overwriting it
  // Use the tile already in the array: a tile staged by a later mxu.lw stays staged for the
  // next matmul without `keep` (so weights load while earlier rows still stream).
  bool keep = false;
};

struct VectorOperand {
  Address addr;
  std::uint32_t stride = 0;  // bytes between rows; 0 on a source repeats its first row
  friend bool operator==(const VectorOperand& a, const VectorOperand& b) {
    return a.addr == b.addr && a.stride == b.stride;
  }
};

// Which operands a vector op reads, and whether it converts types (README "VPU").
enum class VectorArity : std::uint8_t { kUnary, kBinary };
VectorArity vector_arity(VectorOp op);
bool vector_op_converts(VectorOp op);  // cast, requantize, reduce_sum take from= (src_dtype)
std::optional<VectorOp> vector_op_from_name(std::string_view name);

struct VectorInstr {
  VectorOp op = VectorOp::kAdd;
  DType dtype = DType::kFp32;      // element type of dst (and of sources unless converting)
  DType src_dtype = DType::kFp32;  // element type of a (and b); equals dtype unless converting
  // Iteration shape [rows, cols]: that of dst and every source, except that reductions write dst
  // as [rows, 1] and broadcast reads a as [rows, 1].
  std::uint32_t rows = 0;
  std::uint32_t cols = 0;
  VectorOperand dst;
  VectorOperand a;
  VectorOperand b;                 // binary ops only; all zero otherwise
  float scale = 0.0f;              // requantize only; 0 otherwise
  std::int32_t zero_point = 0;     // requantize only; 0 otherwise
  std::uint32_t dst_cols() const;  // 1 for reductions, else cols
  std::uint32_t a_cols() const;    // 1 for broadcast, else cols
};

struct SemSignal {
  Unit unit;
  std::uint16_t sem = 0;
  // Fires once every earlier instruction of the unit has read its sources, not once it has
  // completed: what a consumer that only reads a buffer signals to hand it back for refilling.
  bool reads = false;
};

struct SemWait {
  Unit unit;
  std::uint16_t sem = 0;
  std::uint32_t count = 1;  // blocks until the semaphore holds >= count, then subtracts count
};

struct Barrier {};
struct Halt {};

using InstrBody = std::variant<DmaInstr, MxuLoadWeights, MxuMatmul, VectorInstr, SemSignal, SemWait,
                               Barrier, Halt>;

// Binary opcodes (first byte of an encoded instruction).
enum class Opcode : std::uint8_t {
  kLoad = 0x01,
  kStore = 0x02,
  kMxuLoadWeights = 0x10,
  kMxuMatmul = 0x11,
  kVector = 0x20,
  kSemSignal = 0x30,
  kSemWait = 0x31,
  kBarrier = 0x38,
  kHalt = 0x3f,
};

struct Instruction {
  std::uint16_t core = 0;  // which core's sequencer runs it
  std::uint32_t op = 0;    // index into Program::ops, for per-operator statistics
  InstrBody body;
  // Where the instruction was written (text programs); 0 for decoded or generated programs.
  // Not part of the encoding.
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  Opcode opcode() const;
  std::string mnemonic() const;  // "load", "mxu.mm", "vpu.add", "sem.wait", ...
  // The in-order queue that executes it: dma<engine>, mxu<i>, vpu, or the named unit of a
  // semaphore op; barrier and halt run on the sequencer.
  Unit unit() const;
};

// One entry of the operator table; ids are dense: ops[i].id == i.
struct OpInfo {
  std::uint32_t id = 0;
  std::string kind;  // identifier, e.g. "matmul", "conv2d", "softmax"
  std::string name;  // workload operator name, printable ASCII without '"' or '\'
};

// A named memory range, kept so the disassembler can print symbolic addresses.
struct Region {
  std::string name;  // identifier, unique, not a reserved word
  Space space = Space::kHbm;
  std::uint64_t base = 0;
  std::uint64_t size = 0;  // >= 1, base + size <= 2^64
  std::uint32_t line = 0;  // where declared (text programs); not encoded
};

struct Program {
  std::string file_name;  // for error messages
  std::vector<OpInfo> ops;
  std::vector<Region> regions;
  std::vector<Instruction> instructions;
};

// Rules on a single instruction that hold for every chip and that the binary format can
// express but must not contain (operand spaces, load/store direction, unused fields zero,
// conversions only on converting ops). Returns "" when fine, else the reason. The assembler and
// the decoder both apply it, so every decodable binary disassembles to assemblable text.
std::string structural_error(const Instruction& inst);

// Each `sem.wait`'s place among its core's waits on the same semaphore, in program order (0 for
// the first), indexed by instruction; 0 for other instructions. Waits on one semaphore complete
// in that order (isa/README.md, "Sync"), in the simulator and in the checker's abstract run.
std::vector<std::uint32_t> wait_turns(const Program& p);

// Identifier rules shared by the assembler and the decoder.
bool is_identifier(std::string_view s);
bool is_reserved_name(std::string_view s);  // spaces, units, semaphores (s0, s1, ...)
bool is_valid_op_name(std::string_view s);  // printable ASCII, no '"' or '\'

// The error for a rule broken by instruction `index`: "file:line:col: mxu.mm: why" for text
// programs, "file: instruction #index (mxu.mm): why" for decoded or generated ones.
AsmError instruction_error(const Program& p, std::size_t index, const std::string& why);

}  // namespace tpusim::isa
