#include "isa/lower/layout.h"

#include <algorithm>
#include <cassert>

namespace tpusim::isa {

std::uint64_t TensorPlacement::storage_bytes() const {
  std::uint64_t n = dtype_bytes(dtype);
  for (std::int64_t d : storage) n *= static_cast<std::uint64_t>(d);
  return n;
}

std::vector<std::uint64_t> TensorPlacement::strides() const {
  std::vector<std::uint64_t> s(storage.size());
  std::uint64_t step = dtype_bytes(dtype);
  for (std::size_t i = storage.size(); i-- > 0;) {
    s[i] = step;
    step *= static_cast<std::uint64_t>(storage[i]);
  }
  return s;
}

std::uint64_t TensorPlacement::address_of(const std::vector<std::int64_t>& index) const {
  assert(index.size() == storage.size());
  const std::vector<std::uint64_t> s = strides();
  std::uint64_t a = base;
  for (std::size_t i = 0; i < index.size(); ++i)
    a += static_cast<std::uint64_t>(index[i] + origin[i]) * s[i];
  return a;
}

const TensorPlacement* Lowered::find(const std::string& name) const {
  for (const TensorPlacement& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace tpusim::isa

namespace tpusim::isa::lower_detail {

std::vector<RowBox> row_boxes(const RowView& view, std::uint64_t first, std::uint64_t count) {
  const std::uint64_t s1 = view.size[1], s2 = view.size[2];
  std::vector<RowBox> boxes;
  auto push = [&](std::uint64_t row, std::array<std::uint64_t, 3> n) {
    const std::uint64_t i0 = row / (s1 * s2), i1 = (row / s2) % s1, i2 = row % s2;
    boxes.push_back(
        RowBox{row, n, i0 * view.stride[0] + i1 * view.stride[1] + i2 * view.stride[2]});
  };
  const std::uint64_t end = first + count;
  std::uint64_t r = first;
  if (r % s2 != 0) {
    const std::uint64_t n = std::min(end, round_up(r, s2)) - r;
    push(r, {1, 1, n});
    r += n;
  }
  const std::uint64_t whole_end = end - end % s2;
  if (whole_end > r) {
    std::uint64_t q = r / s2;
    const std::uint64_t q_end = whole_end / s2;
    if (q % s1 != 0) {
      const std::uint64_t n = std::min(q_end, round_up(q, s1)) - q;
      push(q * s2, {1, n, s2});
      q += n;
    }
    if (q_end - q >= s1) {
      const std::uint64_t planes = (q_end - q) / s1;
      push(q * s2, {planes, s1, s2});
      q += planes * s1;
    }
    if (q < q_end) push(q * s2, {1, q_end - q, s2});
    r = whole_end;
  }
  if (r < end) push(r, {1, 1, end - r});
  return boxes;
}

std::vector<Transfer> row_transfers(bool store, const RowView& view, std::uint64_t first,
                                    std::uint64_t count, std::uint64_t col_offset,
                                    std::uint64_t col_bytes, Address tile, std::uint64_t pitch) {
  std::vector<Transfer> out;
  for (const RowBox& box : row_boxes(view, first, count)) {
    Transfer t;
    t.store = store;
    t.elem = col_bytes;
    t.count.assign(box.count.begin(), box.count.end());
    const std::vector<std::uint64_t> hbm_stride(view.stride.begin(), view.stride.end());
    const std::vector<std::uint64_t> tile_stride = {box.count[1] * box.count[2] * pitch,
                                                    box.count[2] * pitch, pitch};
    const Address hbm{view.space, view.base + box.offset + col_offset};
    const Address chip{tile.space, tile.addr + (box.first - first) * pitch};
    t.src = store ? chip : hbm;
    t.dst = store ? hbm : chip;
    t.src_stride = store ? tile_stride : hbm_stride;
    t.dst_stride = store ? hbm_stride : tile_stride;
    out.push_back(std::move(t));
  }
  return out;
}

std::int64_t product(const workloads::Shape& shape, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < to && i < shape.size(); ++i) n *= shape[i];
  return n;
}

RowView matrix_rows(const TensorPlacement& t) {
  RowView v;
  const std::size_t rank = t.shape.size();
  const std::uint64_t e = dtype_bytes(t.dtype);
  v.space = t.space;
  if (t.storage == t.shape || rank != 4) {
    v.base = t.base;
    v.size = {1, 1, static_cast<std::uint64_t>(product(t.shape, 0, rank - 1))};
    v.stride = {0, 0, last_dim(t.shape) * e};
    return v;
  }
  const std::vector<std::uint64_t> s = t.strides();
  v.base = t.address_of({0, 0, 0, 0});
  v.size = {static_cast<std::uint64_t>(t.shape[0]), static_cast<std::uint64_t>(t.shape[1]),
            static_cast<std::uint64_t>(t.shape[2])};
  v.stride = {s[0], s[1], s[2]};
  return v;
}

Address OnChip::take(std::uint64_t bytes, const std::string& what) {
  // 64-byte alignment keeps every tile on its own SRAM lines.
  const std::uint64_t at = round_up(used_, 64);
  if (at + bytes > capacity_)
    throw OnChipFull{what + " needs " + std::to_string(at + bytes) + " bytes of " +
                     std::string(space_name(space_)) + ", which holds " +
                     std::to_string(capacity_)};
  used_ = at + bytes;
  if (high_water_) *high_water_ = std::max(*high_water_, used_);
  return Address{space_, base_ + at};
}

}  // namespace tpusim::isa::lower_detail
