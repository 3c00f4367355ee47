// Pieces the x86 schedules share: padding copies, knob configs, divisors, epilogue placement.
#include "topi/x86/x86_util.h"

#include <algorithm>

#include "anvil/ir/builder.h"

namespace anvil::topi {
namespace x86 {

void schedule_padding(tir::Schedule& sch, int64_t lanes) {
  bool found = false;
  for (const tir::BlockRV& b : sch.get_child_blocks(sch.get_block("root")))
    found |= b.name == "pad_temp";
  if (!found) return;
  tir::BlockRV pad = sch.get_block("pad_temp");
  std::vector<tir::LoopRV> loops = sch.get_loops(pad);  // n, c_chunk, h, w, c_block, unit
  if (loops.size() != 6) return;
  sch.try_apply("vectorize pad_temp", [&](tir::Schedule& s) {
    s.reorder({loops[5], loops[4]});
    if (s.loop_extent(loops[4]).value_or(0) <= lanes) s.vectorize(loops[4]);
  });
  sch.try_apply("parallel pad_temp", [&](tir::Schedule& s) {
    s.parallel(s.fuse({loops[0], loops[1], loops[2]}));
  });
}

void apply_config(const ScheduleArgs& args, const std::function<std::vector<KnobSpace>()>& space,
                  const std::string& strategy,
                  const std::vector<std::pair<std::string, int64_t*>>& knobs) {
  if (!args.config) return;
  std::string mismatch = config_mismatch(space(), *args.config, strategy);
  if (!mismatch.empty()) throw Error(mismatch);
  for (const auto& [name, value] : *args.config) {
    auto field = std::find_if(knobs.begin(), knobs.end(),
                              [&](const auto& entry) { return entry.first == name; });
    ANVIL_ICHECK(field != knobs.end(), strategy, " declares knob '", name, "' but reads none");
    *field->second = value;
  }
}

std::vector<int64_t> divisors_up_to(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

void place_epilogue(tir::Schedule& sch, const std::vector<std::string>& epilogue_blocks,
                    const tir::LoopRV& loop, int64_t lanes) {
  for (const std::string& name : epilogue_blocks) {
    tir::BlockRV block = sch.get_block(name);
    if (!sch.try_apply("place " + name + " in the tile",
                       [&](tir::Schedule& s) { s.reverse_compute_at(block, loop); })) {
      // Left at the root: a plain parallel loop nest over the whole output.
      sch.try_apply("parallel " + name,
                    [&](tir::Schedule& s) { s.parallel(s.get_loops(block).front()); });
      sch.try_apply("vectorize " + name, [&](tir::Schedule& s) {
        std::vector<tir::LoopRV> loops = s.get_loops(block);
        if (loops.size() >= 2 && s.loop_extent(loops.back()) == lanes) s.vectorize(loops.back());
      });
      continue;
    }
    // The loops the move created sit below `loop`; only those are touched.
    std::vector<tir::LoopRV> loops = sch.get_loops(block);
    size_t first_new = 0;
    for (size_t i = 0; i < loops.size(); ++i)
      if (loops[i].var.get() == loop.var.get()) first_new = i + 1;
    if (first_new >= loops.size()) continue;
    bool vectorized = sch.try_apply("vectorize " + name, [&](tir::Schedule& s) {
      if (s.loop_extent(loops.back()) != lanes) throw_error("not a full vector");
      s.vectorize(loops.back());
    });
    if (vectorized && loops.size() >= first_new + 2)
      sch.try_apply("unroll " + name, [&](tir::Schedule& s) { s.unroll(loops[loops.size() - 2]); });
  }
}

int64_t channel_block(int64_t channels, int64_t lanes) {
  for (int64_t b = lanes; b > 1; b /= 2)
    if (channels % b == 0) return b;
  return 1;
}

const Tensor& constant_weight(const LayoutArgs& args) {
  const Tensor* weight = ir::constant_data(args.arg(1));
  if (!weight || !weight->is_contiguous())
    throw_error("the weight is not a constant (bind the params to pack it)");
  return *weight;
}

}  // namespace x86
}  // namespace anvil::topi
