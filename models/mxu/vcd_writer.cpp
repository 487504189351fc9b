#include "models/mxu/vcd_writer.h"

#include <cassert>

namespace tpusim::models {

VcdWriter::VcdWriter(std::ostream& out, const std::string& timescale) : out_(out) {
  out_ << "$version tpusim $end\n$timescale " << timescale << " $end\n";
}

std::string VcdWriter::make_id(std::size_t index) {
  // Identifiers are strings of printable ASCII '!'..'~' (94 symbols), shortest first.
  std::string id;
  do {
    id += static_cast<char>('!' + index % 94);
    index /= 94;
  } while (index > 0);
  return id;
}

void VcdWriter::push_scope(const std::string& name) {
  assert(defining_);
  out_ << "$scope module " << name << " $end\n";
}

void VcdWriter::pop_scope() {
  assert(defining_);
  out_ << "$upscope $end\n";
}

std::size_t VcdWriter::add(const std::string& name, std::uint32_t width) {
  assert(defining_ && width >= 1 && width <= 64);
  const std::size_t index = signals_.size();
  signals_.push_back(Signal{make_id(index), width, 0, false});
  out_ << "$var wire " << width << ' ' << signals_.back().id << ' ' << name;
  if (width > 1) out_ << " [" << width - 1 << ":0]";
  out_ << " $end\n";
  return index;
}

void VcdWriter::end_definitions() {
  out_ << "$enddefinitions $end\n";
  defining_ = false;
}

void VcdWriter::time(std::uint64_t t) {
  assert(!defining_ && (!time_written_ || t >= time_));
  if (time_written_ && t == time_) return;
  time_ = t;
  time_written_ = false;  // written lazily, with the first change at this time
}

void VcdWriter::change(std::size_t signal, std::uint64_t value) {
  Signal& s = signals_[signal];
  if (s.width < 64) value &= (std::uint64_t{1} << s.width) - 1;
  if (s.written && s.value == value) return;
  if (!time_written_) {
    out_ << '#' << time_ << '\n';
    time_written_ = true;
  }
  s.value = value;
  s.written = true;
  if (s.width == 1) {
    out_ << (value ? '1' : '0') << s.id << '\n';
    return;
  }
  std::string bits;
  for (std::uint64_t v = value; v != 0; v >>= 1) bits.insert(bits.begin(), (v & 1) ? '1' : '0');
  if (bits.empty()) bits = "0";
  out_ << 'b' << bits << ' ' << s.id << '\n';
}

void VcdWriter::close(std::uint64_t t) {
  if (!time_written_ || t > time_) out_ << '#' << t << '\n';
  out_.flush();
}

}  // namespace tpusim::models
