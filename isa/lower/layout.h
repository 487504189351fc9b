#pragma once
// HBM placement of tensors and the row views through which the lowering moves tiles of them.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/lower/emitter.h"
#include "isa/lower/lower.h"

namespace tpusim::isa::lower_detail {

// The rows of a two-dimensional operand in HBM (or, kept on chip, in vmem): row r is found by
// splitting r over up to three nested dimensions (outermost first) and summing index x stride. A
// dense matrix is {1, 1, R}; the output positions of an NHWC image stored with a halo are {N, H,
// W}.
struct RowView {
  Space space = Space::kHbm;
  std::uint64_t base = 0;
  std::array<std::uint64_t, 3> size{1, 1, 1};
  std::array<std::uint64_t, 3> stride{0, 0, 0};
  std::uint64_t rows() const { return size[0] * size[1] * size[2]; }
};

// A rectangular piece of a row range: `count` rows per dimension starting at row `first`.
struct RowBox {
  std::uint64_t first = 0;
  std::array<std::uint64_t, 3> count{1, 1, 1};
  std::uint64_t offset = 0;  // bytes from RowView::base to row `first`
};

// Cuts rows [first, first + count) into at most five boxes, each one DMA descriptor.
std::vector<RowBox> row_boxes(const RowView& view, std::uint64_t first, std::uint64_t count);

// Transfers between rows [first, first + count) of `view` (bytes [col_offset, col_offset +
// col_bytes) of each row) and a dense on-chip tile whose rows are `pitch` bytes apart.
std::vector<Transfer> row_transfers(bool store, const RowView& view, std::uint64_t first,
                                    std::uint64_t count, std::uint64_t col_offset,
                                    std::uint64_t col_bytes, Address tile, std::uint64_t pitch);

// A tensor as a matrix of its last dimension: rows are all leading dimensions (through the halo
// when the tensor has one).
RowView matrix_rows(const TensorPlacement& t);

// The last dimension of a shape: a scalar ([]) is one element wide.
inline std::uint64_t last_dim(const workloads::Shape& shape) {
  return shape.empty() ? 1 : static_cast<std::uint64_t>(shape.back());
}

// Element count of dimensions [from, to) of a shape.
std::int64_t product(const workloads::Shape& shape, std::size_t from, std::size_t to);

// Thrown by OnChip::take; the operator's lowering turns it into an error that names the operator.
struct OnChipFull {
  std::string message;
};

// Byte allocator for an on-chip memory, reset per operator. Offsets are checked against the
// capacity the planners see; `base` then moves the whole operator within the memory (its window
// beside a predecessor still running, README "Operator overlap"), so the plan never depends on
// where the window sits. `high_water` (optional) records the bytes used from base.
class OnChip {
 public:
  OnChip(Space space, std::uint64_t capacity, std::uint64_t base = 0,
         std::uint64_t* high_water = nullptr)
      : space_(space), capacity_(capacity), base_(base), high_water_(high_water) {}
  // Returns the address, or throws OnChipFull naming `what` when the memory is full.
  Address take(std::uint64_t bytes, const std::string& what);
  std::uint64_t used() const { return used_; }
  std::uint64_t free() const { return capacity_ - used_; }

 private:
  Space space_;
  std::uint64_t capacity_;
  std::uint64_t base_;
  std::uint64_t* high_water_;
  std::uint64_t used_ = 0;
};

}  // namespace tpusim::isa::lower_detail
