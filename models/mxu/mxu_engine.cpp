#include "models/mxu/mxu_engine.h"

#include <cstring>
#include <string>

#include "models/common/elements.h"
#include "models/mxu/mxu_datapath.h"
#include "sim/base/errors.h"

namespace tpusim::models {
namespace {

class FastEngine : public MxuEngine {
 public:
  FastEngine(const MxuSpec& spec, Hertz clock, std::uint64_t port)
      : timing_(spec, clock, port), datapath_(spec.rounding) {}
  MxuLoadTiming load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now,
                             const std::uint8_t*) override {
    return timing_.load_weights(lw, now);
  }
  MxuMatmulTiming matmul(const isa::MxuMatmul& mm, std::uint64_t now,
                         const std::uint8_t*) override {
    return timing_.matmul(mm, now);
  }
  void start_load(const isa::MxuLoadWeights& lw, const std::uint8_t* vmem) override {
    datapath_.load_weights(lw, vmem);
  }
  void start_matmul(const isa::MxuMatmul& mm, const std::uint8_t* vmem,
                    std::uint8_t* accmem) override {
    datapath_.matmul(mm, vmem, accmem);
  }
  std::uint64_t input_free_at() const override { return timing_.input_free_at(); }
  std::uint64_t load_ready_at() const override { return timing_.load_ready_at(); }
  std::uint64_t matmul_ready_at(bool keep) const override { return timing_.matmul_ready_at(keep); }

 private:
  MxuTiming timing_;
  MxuDatapath datapath_;
};

// Operands are read when the instruction is issued, not when it starts: the run-ahead needs
// them to know the results. The ISA already requires a semaphore between whoever writes an
// MXU operand and the MXU instruction that reads it, so both moments see the same bytes.
class CycleEngine : public MxuEngine {
 public:
  CycleEngine(const MxuSpec& spec, Hertz clock, std::uint64_t port, ArrayObserver* observer)
      : cycle_(spec, clock, port) {
    cycle_.set_observer(observer);
  }
  MxuLoadTiming load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now,
                             const std::uint8_t* vmem) override {
    require_integer(lw.dtype);
    std::vector<std::int32_t> w(std::size_t{lw.k} * lw.n, 0);
    if (vmem) {
      MxuDatapath parse;  // the one reader of mxu.lw's layouts (strides, transpose)
      parse.load_weights(lw, vmem);
      for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<std::int32_t>(parse.staged()[i]);
    }
    return cycle_.load_weights(lw, now, w);
  }
  MxuMatmulTiming matmul(const isa::MxuMatmul& mm, std::uint64_t now,
                         const std::uint8_t* vmem) override {
    require_integer(mm.dtype);
    std::vector<std::int32_t> x(std::size_t{mm.m} * mm.k, 0);
    if (vmem) {
      const std::uint64_t size = dtype_bytes(mm.dtype);
      for (std::uint32_t m = 0; m < mm.m; ++m)
        for (std::uint32_t k = 0; k < mm.k; ++k)
          x[std::size_t{m} * mm.k + k] = static_cast<std::int32_t>(load_element(
              vmem + mm.src.addr + std::uint64_t{m} * mm.src_stride + k * size, mm.dtype));
    }
    last_ = cycle_.matmul(mm, now, x);
    return last_.timing;
  }
  void start_load(const isa::MxuLoadWeights&, const std::uint8_t*) override {}
  void start_matmul(const isa::MxuMatmul& mm, const std::uint8_t*, std::uint8_t* accmem) override {
    for (std::uint32_t m = 0; m < mm.m; ++m)
      for (std::uint32_t n = 0; n < mm.n; ++n) {
        std::uint8_t* cell = accmem + mm.dst.addr + std::uint64_t{m} * mm.dst_stride + n * 4;
        std::uint32_t acc = static_cast<std::uint32_t>(last_.y[std::size_t{m} * mm.n + n]);
        if (mm.accumulate) acc += static_cast<std::uint32_t>(load_integer(cell, DType::kInt32));
        std::memcpy(cell, &acc, 4);
      }
  }
  std::uint64_t input_free_at() const override { return cycle_.input_free_at(); }
  std::uint64_t load_ready_at() const override { return cycle_.load_ready_at(); }
  std::uint64_t matmul_ready_at(bool keep) const override { return cycle_.matmul_ready_at(keep); }
  void finish() override { cycle_.finish(); }

 private:
  static void require_integer(DType t) {
    // The config refuses other precisions for model: cycle; a program may still name one.
    if (!dtype_is_integer(t))
      throw NotImplemented("mxu.model: cycle carries integer operands only, not " +
                           std::string(dtype_name(t)));
  }
  CycleMxu cycle_;
  CycleMatmulResult last_;
};

}  // namespace

std::unique_ptr<MxuEngine> make_mxu_engine(const MxuSpec& spec, Hertz clock,
                                           std::uint64_t vmem_port_bytes_per_cycle,
                                           ArrayObserver* observer) {
  switch (spec.model) {
    case MxuModel::kFast:
      return std::make_unique<FastEngine>(spec, clock, vmem_port_bytes_per_cycle);
    case MxuModel::kCycle:
      return std::make_unique<CycleEngine>(spec, clock, vmem_port_bytes_per_cycle, observer);
  }
  return nullptr;
}

}  // namespace tpusim::models
