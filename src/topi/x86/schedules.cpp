// The x86 strategies attached to their ops (layouts, and hand-written schedules of anchor
// ops), and the epilogue placement the schedules share. The blocked convolution's compute is
// registered here too: it exists for the x86 layout pass and is shaped for its schedule.
#include <algorithm>

#include "topi/families.h"
#include "topi/x86/x86_util.h"

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
  try_step(sch, [&](tir::Schedule& s) {
    s.reorder({loops[5], loops[4]});
    if (s.loop_extent(loops[4]).value_or(0) <= lanes) s.vectorize(loops[4]);
  });
  try_step(sch, [&](tir::Schedule& s) { s.parallel(s.fuse({loops[0], loops[1], loops[2]})); });
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
    if (!try_step(sch, [&](tir::Schedule& s) { s.reverse_compute_at(block, loop); })) {
      // Left at the root: a plain parallel loop nest over the whole output.
      try_step(sch, [&](tir::Schedule& s) { s.parallel(s.get_loops(block).front()); });
      try_step(sch, [&](tir::Schedule& s) {
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
    bool vectorized = try_step(sch, [&](tir::Schedule& s) {
      if (s.loop_extent(loops.back()) != lanes) throw_error("not a full vector");
      s.vectorize(loops.back());
    });
    if (vectorized && loops.size() >= first_new + 2)
      try_step(sch, [&](tir::Schedule& s) { s.unroll(loops[loops.size() - 2]); });
  }
}

}  // namespace x86

void register_x86_schedules() {
  x86::register_conv2d_layout();
  x86::register_dense_layout();
  x86::register_conv2d_nchwc_compute();
  x86::register_conv2d_int8_layout();
  x86::register_conv2d_int8();
  register_schedule("nn.contrib_conv2d_NCHWc", "x86.conv2d_nchwc", x86::schedule_conv2d_nchwc,
                    x86::conv2d_nchwc_knob_space);
  x86::register_conv2d_winograd_compute();
  register_schedule("nn.contrib_conv2d_winograd_NCHWc", "x86.conv2d_winograd",
                    x86::schedule_conv2d_winograd, x86::winograd_knob_space);
  register_schedule("nn.matmul", "x86.dense", x86::schedule_dense, x86::dense_knob_space);
  register_schedule("matmul", "x86.dense", x86::schedule_dense, x86::dense_knob_space);
  register_schedule("nn.contrib_dense_pack", "x86.dense_pack", x86::schedule_dense,
                    x86::dense_knob_space);
  for (const char* pool :
       {"nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d"})
    register_schedule(pool, "x86.pool_nchwc", x86::schedule_pool, x86::pool_knob_space);
}

}  // namespace anvil::topi
