// Loop features of a scheduled candidate, for the cost model: what a performance engineer
// reads off a loop nest (how many iterations run in parallel, how wide the vectors are, how
// much of the body is unrolled, how many loads and stores execute, how much scratch memory the
// kernel allocates). Counts are log2(1 + x) so that trees split on ratios.
#include <cmath>

#include "anvil/tir/functor.h"
#include "anvil/tune/tune.h"

namespace anvil::tune {
namespace {

double log_scale(double x) { return std::log2(1.0 + std::max(x, 0.0)); }

int64_t constant_extent(const tir::PrimExpr& extent) {
  const auto* imm = tir::as<tir::IntImmNode>(extent);
  return imm ? std::max<int64_t>(imm->value, 1) : 1;
}

class LoopFeatures : public tir::Visitor {
 public:
  void visit_For(const tir::ForNode* loop) override {
    const int64_t extent = constant_extent(loop->extent);
    ++loops_;
    frames_.push_back({extent, loop->for_kind});
    depth_ = std::max<int64_t>(depth_, int64_t(frames_.size()));
    if (loop->for_kind == tir::ForKind::Parallel) {
      double outer = 1;
      for (const Frame& frame : frames_)
        if (frame.kind == tir::ForKind::Parallel) outer *= double(frame.extent);
      parallel_ = std::max(parallel_, outer);
    }
    if (loop->for_kind == tir::ForKind::Vectorized) lanes_ = std::max(lanes_, double(extent));
    if (loop->for_kind == tir::ForKind::Unrolled) ++unrolled_loops_;
    tir::Visitor::visit_For(loop);
    frames_.pop_back();
  }

  void visit_BufferStore(const tir::BufferStoreNode* store) override {
    ++store_statements_;
    const Trips trips = trip_counts();
    stores_ += trips.all;
    vector_stores_ += trips.all / trips.lanes;
    unrolled_ = std::max(unrolled_, trips.unrolled);
    inner_serial_ = std::max(inner_serial_, trips.inner_serial);
    tir::Visitor::visit_BufferStore(store);
  }

  void visit_BufferLoad(const tir::BufferLoadNode* load) override {
    loads_ += trip_counts().all;
    tir::Visitor::visit_BufferLoad(load);
  }

  void visit_Allocate(const tir::AllocateNode* node) override {
    add_allocation(node->buffer);
    tir::Visitor::visit_Allocate(node);
  }

  void visit_Block(const tir::BlockNode* block) override {
    for (const tir::Buffer& buffer : block->alloc_buffers) add_allocation(buffer);
    tir::Visitor::visit_Block(block);
  }

  std::vector<float> features() const {
    return {float(log_scale(parallel_)),
            float(log_scale(lanes_)),
            float(log_scale(unrolled_)),
            float(unrolled_loops_),
            float(depth_),
            float(log_scale(stores_)),
            float(log_scale(loads_)),
            float(log_scale(vector_stores_)),
            float(log_scale(scratch_bytes_)),
            float(loops_),
            float(log_scale(inner_serial_)),
            float(store_statements_)};
  }

 private:
  struct Frame {
    int64_t extent;
    tir::ForKind kind;
  };
  struct Trips {
    double all = 1, lanes = 1, unrolled = 1, inner_serial = 1;
  };

  Trips trip_counts() const {
    Trips trips;
    bool inner = true;
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      trips.all *= double(it->extent);
      if (it->kind == tir::ForKind::Vectorized) trips.lanes *= double(it->extent);
      if (it->kind == tir::ForKind::Unrolled) trips.unrolled *= double(it->extent);
      if (inner && it->kind == tir::ForKind::Serial) {
        trips.inner_serial = double(it->extent);
        inner = false;
      }
    }
    return trips;
  }

  void add_allocation(const tir::Buffer& buffer) {
    double bytes = double(buffer->dtype.bytes());
    for (const tir::PrimExpr& dim : buffer->shape) bytes *= double(constant_extent(dim));
    scratch_bytes_ += bytes;
  }

  std::vector<Frame> frames_;
  int64_t loops_ = 0, depth_ = 0, unrolled_loops_ = 0, store_statements_ = 0;
  double parallel_ = 1, lanes_ = 1, unrolled_ = 1, inner_serial_ = 1;
  double stores_ = 0, loads_ = 0, vector_stores_ = 0, scratch_bytes_ = 0;
};

}  // namespace

std::vector<float> loop_features(const tir::PrimFunc& scheduled) {
  LoopFeatures walker;
  walker.visit(scheduled->body);
  return walker.features();
}

}  // namespace anvil::tune
