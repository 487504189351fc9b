#pragma once
// The .tbin binary form: little-endian, versioned. Layout in isa/README.md ("Binary form").
//
// decode() accepts exactly the byte strings encode() can produce: every enum in range, every
// reserved byte and unused field zero, structural rules (structural_error) met, operator ids in
// the table. So decode(b) succeeding implies encode(decode(b)) == b, and the disassembly of any
// decodable binary assembles back to the same bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/program.h"

namespace tpusim::isa {

inline constexpr char kBinaryMagic[4] = {'T', 'B', 'I', 'N'};
inline constexpr std::uint16_t kBinaryVersion = 1;
inline constexpr std::size_t kFileHeaderBytes = 24;
inline constexpr std::size_t kInstrHeaderBytes = 8;  // opcode, flags, core, op

// Encoded size of one instruction with this opcode (header included); 0 for an unknown opcode.
std::size_t encoded_size(Opcode op);

// Throws AsmError when the program cannot be encoded (a name too long for its length field).
std::vector<std::uint8_t> encode(const Program& program);

// Throws AsmError "file_name: byte 0x1c: ..." naming the offset of the first bad byte. Never
// reads outside `bytes`.
Program decode(const std::vector<std::uint8_t>& bytes, const std::string& file_name);

}  // namespace tpusim::isa
