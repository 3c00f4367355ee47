#include "runtime/vm_liveness.h"

#include <cstdint>

namespace anvil::vm {

namespace {

bool reads_destinations(const Instruction& in) { return in.op == Opcode::InvokeKernel; }

}  // namespace

RegisterDeaths register_deaths(const Function& fn) {
  const size_t n = fn.instructions.size();
  RegisterDeaths deaths;
  deaths.after.resize(n);
  deaths.on_true.resize(n);
  deaths.on_false.resize(n);
  // Registers are taken 64 at a time, one bit each: one word per instruction of memory however
  // many registers the function has.
  std::vector<uint64_t> live_in(n);
  for (int32_t base = 0; base < fn.num_registers; base += 64) {
    auto bit = [base](RegIndex r) -> uint64_t {
      return r >= base && r - base < 64 ? uint64_t(1) << (r - base) : 0;
    };
    auto live_at = [&](int64_t pc) -> uint64_t {
      return pc >= 0 && size_t(pc) < n ? live_in[size_t(pc)] : 0;
    };
    auto live_out = [&](size_t pc) -> uint64_t {
      const Instruction& in = fn.instructions[pc];
      switch (in.op) {
        case Opcode::Ret:
          return 0;
        case Opcode::Goto:
          return live_at(in.true_target);
        case Opcode::If:
          return live_at(in.true_target) | live_at(in.false_target);
        default:
          return live_at(int64_t(pc) + 1);
      }
    };
    auto reads = [&](const Instruction& in) {
      uint64_t mask = 0;
      for (RegIndex r : in.args) mask |= bit(r);
      if (reads_destinations(in))
        for (RegIndex r : in.dsts) mask |= bit(r);
      return mask;
    };
    auto writes = [&](const Instruction& in) {
      uint64_t mask = 0;
      if (!reads_destinations(in))
        for (RegIndex r : in.dsts) mask |= bit(r);
      return mask;
    };
    // Where every jump goes forward one backward pass is the fixed point; a loop's back edge
    // asks for more passes, until nothing changes.
    std::fill(live_in.begin(), live_in.end(), 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t pc = n; pc-- > 0;) {
        const Instruction& in = fn.instructions[pc];
        uint64_t value = reads(in) | (live_out(pc) & ~writes(in));
        if (value != live_in[pc]) {
          live_in[pc] = value;
          changed = true;
        }
      }
    }
    auto append = [base](std::vector<RegIndex>& list, uint64_t dead) {
      for (int b = 0; b < 64; ++b)
        if (dead >> b & 1) list.push_back(RegIndex(base + b));
    };
    for (size_t pc = 0; pc < n; ++pc) {
      const Instruction& in = fn.instructions[pc];
      const uint64_t touched = reads(in) | writes(in);
      switch (in.op) {
        case Opcode::Ret:
          break;
        case Opcode::Goto:
          append(deaths.on_true[pc], (touched | live_out(pc)) & ~live_at(in.true_target));
          break;
        case Opcode::If:
          append(deaths.on_true[pc], (touched | live_out(pc)) & ~live_at(in.true_target));
          append(deaths.on_false[pc], (touched | live_out(pc)) & ~live_at(in.false_target));
          break;
        default:
          append(deaths.after[pc], touched & ~live_out(pc));
          break;
      }
    }
  }
  return deaths;
}

}  // namespace anvil::vm
