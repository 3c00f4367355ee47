// Recurrent layers: RNN, GRU and LSTM. A sequence of static length is unrolled
// over its time steps (the graph executor runs it, each step's kernels compiled
// once). The shape of what comes out is what a fast recurrent kernel does:
//
//   - the input projection of every time step at once, one GEMM of the whole
//     sequence (T, batch, input) by W with both biases folded in;
//   - per step, one GEMM of the hidden state by R, its weights constant, so
//     they are packed at compile time, with the gate math elementwise after it
//     (fusion puts it in the GEMM's epilogue); the steps' kernels are
//     structurally equal, so each is compiled once;
//   - reverse directions read and write the steps backwards; sequence_lens
//     masks each batch row past its length (state kept, output zero) and, for
//     the reverse direction, reverses each row within its own length.
//
// A sequence of run-time length is one loop of the graph IR (While, run by the VM) over the same
// step: the projection stays one GEMM before it, each iteration takes its step's row, and the
// outputs are gathered a row per iteration. The batch may be symbolic either way.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "frontend/onnx/convert_loop.h"
#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

enum class Cell { kRnn, kGru, kLstm };

int64_t gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One activation of the `activations` attribute with its alpha and beta.
struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

bool takes_alpha(const std::string& n) {
  return n == "affine" || n == "leakyrelu" || n == "thresholdedrelu" || n == "scaledtanh" ||
         n == "hardsigmoid" || n == "elu";
}
bool takes_beta(const std::string& n) {
  return n == "affine" || n == "scaledtanh" || n == "hardsigmoid";
}

// The activations of every direction: the attribute's (per direction, in order), or the
// cell's defaults. activation_alpha and activation_beta are consumed in order by the
// activations that take them; the others get the defaults of the ONNX op of that name.
std::vector<Activation> activations(const ConvertContext& ctx, Cell cell, int64_t directions) {
  std::vector<std::string> defaults = cell == Cell::kRnn ? std::vector<std::string>{"tanh"}
                                      : cell == Cell::kGru
                                          ? std::vector<std::string>{"sigmoid", "tanh"}
                                          : std::vector<std::string>{"sigmoid", "tanh", "tanh"};
  std::vector<std::string> names = ctx.attr_strings("activations");
  const size_t per_direction = defaults.size();
  if (names.empty()) {
    for (int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_direction && directions == 2) {
    names.insert(names.end(), names.begin(), names.end());  // one set for both directions
  } else if (names.size() != per_direction * size_t(directions)) {
    ctx.fail("activations lists ", names.size(), " functions; ", per_direction * directions,
             " are needed (", per_direction, " per direction)");
  }
  std::vector<double> alphas = ctx.attr_floats("activation_alpha");
  std::vector<double> betas = ctx.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> result;
  for (const std::string& raw : names) {
    Activation a{lower(raw)};
    const std::string& n = a.name;
    if (n == "leakyrelu") a.alpha = 0.01;
    if (n == "thresholdedrelu" || n == "elu" || n == "affine" || n == "scaledtanh") a.alpha = 1.0;
    if (n == "scaledtanh") a.beta = 1.0;
    if (n == "hardsigmoid") a.alpha = 0.2, a.beta = 0.5;
    if (takes_alpha(n) && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (takes_beta(n) && next_beta < betas.size()) a.beta = betas[next_beta++];
    static const char* const kKnown[] = {
        "relu",       "tanh",        "sigmoid", "affine",   "leakyrelu", "thresholdedrelu",
        "scaledtanh", "hardsigmoid", "elu",     "softsign", "softplus"};
    if (std::none_of(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return n == k; }))
      ctx.fail("activation '", raw, "' is not one ONNX defines for recurrent layers");
    result.push_back(a);
  }
  return result;
}

class RecurrentBuilder {
 public:
  RecurrentBuilder(ConvertContext& ctx, Cell cell)
      : ctx_(ctx), cell_(cell), gates_(gate_count(cell)) {}

  std::vector<Expr> convert() {
    const std::string direction = ctx_.attr_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      ctx_.fail("direction '", direction, "' is not forward, reverse or bidirectional");
    const int64_t directions = direction == "bidirectional" ? 2 : 1;
    directions_ = directions;
    layout_ = ctx_.attr_int("layout", 0);
    if (layout_ != 0 && layout_ != 1) ctx_.fail("layout must be 0 or 1, got ", layout_);
    if (ctx_.has_attr("clip")) {
      double clip = ctx_.attr_float("clip", 0);
      if (!(clip > 0)) ctx_.fail("clip must be positive, got ", clip);
      clip_ = clip;
    }
    input_forget_ = cell_ == Cell::kLstm && ctx_.attr_int("input_forget", 0) != 0;
    linear_before_reset_ = cell_ == Cell::kGru && ctx_.attr_int("linear_before_reset", 0) != 0;
    activations_ = activations(ctx_, cell_, directions);

    const ir::TensorTypeNode& x_type = ctx_.input_tensor(0);
    if (x_type.shape->size() != 3) ctx_.fail("X must be 3-D, got rank ", x_type.shape->size());
    dtype_ = x_type.dtype;
    if (!dtype_.is_float()) ctx_.fail("X must be a float tensor, got ", dtype_.to_string());
    x_ = ctx_.input(0);
    if (layout_ == 1) x_ = ctx_.op("transpose", {x_}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
    std::optional<int64_t> steps = (*x_type.shape)[size_t(layout_)].as_int();
    steps_ = steps.value_or(0);
    if (steps && steps_ < 1) ctx_.fail("the sequence is empty");
    hidden_ = hidden_size(directions);
    if (ctx_.has_input(4)) {
      lengths_ = ctx_.op("cast", {ctx_.input(4)}, {{"dtype", DataType::int64()}});
    }

    std::vector<Expr> ys, hs, cs;
    for (int64_t d = 0; d < directions; ++d) {
      bool reverse = direction == "reverse" || d == 1;
      State s = run_direction(d, reverse);
      ys.push_back(expand(s.y, 1));  // (T, 1, B, H)
      hs.push_back(s.h);             // (1, B, H)
      cs.push_back(s.c);
    }
    Expr y = concat(ys, 1), y_h = concat(hs, 0);
    Expr y_c = cell_ == Cell::kLstm ? concat(cs, 0) : Expr();
    if (layout_ == 1) {
      y = ctx_.op("transpose", {y}, {{"axes", std::vector<int64_t>{2, 0, 1, 3}}});
      y_h = ctx_.op("transpose", {y_h}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
      if (y_c) y_c = ctx_.op("transpose", {y_c}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
    }
    std::vector<Expr> outputs{y, y_h};
    if (cell_ == Cell::kLstm) outputs.push_back(y_c);
    return outputs;
  }

 private:
  struct State {
    Expr y, h, c;
  };

  int64_t hidden_size(int64_t directions) {
    const ir::TensorTypeNode& w = ctx_.input_tensor(1);
    const ir::TensorTypeNode& r = ctx_.input_tensor(2);
    if (w.shape->size() != 3 || r.shape->size() != 3)
      ctx_.fail("W and R must be 3-D (directions, gates x hidden, features)");
    std::optional<int64_t> rows = (*r.shape)[1].as_int(), cols = (*r.shape)[2].as_int();
    std::optional<int64_t> dirs = (*w.shape)[0].as_int();
    if (!rows || !cols || !dirs) ctx_.fail("W and R must have static shapes");
    int64_t hidden = ctx_.attr_int("hidden_size", *cols);
    if (*cols != hidden || *rows != gates_ * hidden)
      ctx_.fail("R of shape (", *dirs, ", ", *rows, ", ", *cols, ") does not match hidden_size ",
                hidden, " with ", gates_, " gates");
    if (*dirs != directions)
      ctx_.fail("W holds ", *dirs, " directions, the direction attribute says ", directions);
    return hidden;
  }

  Expr slice(const Expr& e, int64_t axis, int64_t begin, int64_t end) {
    return ctx_.op("strided_slice", {e},
                   {{"begin", std::vector<int64_t>{begin}},
                    {"end", std::vector<int64_t>{end}},
                    {"axes", std::vector<int64_t>{axis}}});
  }
  Expr squeeze(const Expr& e, int64_t axis) {
    return ctx_.op("squeeze", {e}, {{"axis", std::vector<int64_t>{axis}}});
  }
  Expr expand(const Expr& e, int64_t axis) { return ctx_.op("expand_dims", {e}, {{"axis", axis}}); }
  Expr concat(const std::vector<Expr>& parts, int64_t axis) {
    if (parts.size() == 1) return parts[0];
    return ctx_.op("concatenate", {ctx_.typed(ir::TupleNode::make(parts))}, {{"axis", axis}});
  }
  // A long sequence is split and joined in chunks of kStepChunk steps: one split or concatenate
  // of hundreds of tensors is one kernel of hundreds of tiny loops, which LLVM unrolls into a
  // basic block it schedules in quadratic time (minutes at 512 steps); the chunks' kernels are
  // alike, so each is compiled once.
  static constexpr int64_t kStepChunk = 16;

  // The (1, ...) slices of x along axis 0, one per step.
  std::vector<Expr> split_steps(const Expr& x) {
    if (steps_ == 1) return {x};
    auto split = [&](const Expr& e, int64_t count) {
      std::vector<Expr> parts;
      Expr tuple = ctx_.op("split", {e}, {{"sections", count}, {"axis", int64_t(0)}});
      for (int64_t i = 0; i < count; ++i) parts.push_back(tensor::tuple_item(ctx_, tuple, int(i)));
      return parts;
    };
    if (steps_ <= kStepChunk) return split(x, steps_);
    std::vector<int64_t> cuts;
    for (int64_t t = kStepChunk; t < steps_; t += kStepChunk) cuts.push_back(t);
    Expr chunks = ctx_.op("split", {x}, {{"indices", cuts}, {"axis", int64_t(0)}});
    std::vector<Expr> steps;
    for (size_t c = 0; c <= cuts.size(); ++c) {
      const int64_t begin = c == 0 ? 0 : cuts[c - 1];
      const int64_t end = c == cuts.size() ? steps_ : cuts[c];
      Expr chunk = tensor::tuple_item(ctx_, chunks, int(c));
      if (end - begin == 1) {
        steps.push_back(chunk);
        continue;
      }
      for (const Expr& step : split(chunk, end - begin)) steps.push_back(step);
    }
    return steps;
  }

  // The steps' (1, ...) outputs joined along axis 0.
  Expr concat_steps(const std::vector<Expr>& steps) {
    if (int64_t(steps.size()) <= kStepChunk) return concat(steps, 0);
    std::vector<Expr> chunks;
    for (size_t t = 0; t < steps.size(); t += size_t(kStepChunk)) {
      const size_t end = std::min(steps.size(), t + size_t(kStepChunk));
      chunks.push_back(concat({steps.begin() + long(t), steps.begin() + long(end)}, 0));
    }
    return concat(chunks, 0);
  }

  // Direction d of a per-direction input (W, R, B, P along axis 0; the initial states along
  // axis 0, or 1 in layout 1), that axis dropped.
  Expr direction_of(size_t input, int64_t d) {
    int64_t axis = (input == 5 || input == 6) && layout_ == 1 ? 1 : 0;
    return squeeze(slice(ctx_.input(input), axis, d, d + 1), axis);
  }
  Expr scalar(double v) { return scalar_constant(ctx_, v, dtype_); }
  Expr add(const Expr& a, const Expr& b) { return ctx_.op("add", {a, b}); }
  Expr mul(const Expr& a, const Expr& b) { return ctx_.op("multiply", {a, b}); }
  Expr sub(const Expr& a, const Expr& b) { return ctx_.op("subtract", {a, b}); }
  Expr dense(const Expr& a, const Expr& w) { return ctx_.op("nn.dense", {a, w}); }

  // A gate's activation, its input bounded to [-clip, clip] when the node clips (the cell
  // state before an LSTM's output activation is not clipped, as in ONNX Runtime).
  Expr activate(const Activation& a, Expr x, bool clipped = true) {
    if (clip_ && clipped) x = ctx_.op("clip", {x}, {{"a_min", -*clip_}, {"a_max", *clip_}});
    const std::string& n = a.name;
    if (n == "relu") return ctx_.op("nn.relu", {x});
    if (n == "tanh") return ctx_.op("tanh", {x});
    if (n == "sigmoid") return ctx_.op("sigmoid", {x});
    if (n == "affine") return add(mul(x, scalar(a.alpha)), scalar(a.beta));
    if (n == "leakyrelu") return ctx_.op("nn.leaky_relu", {x}, {{"alpha", a.alpha}});
    if (n == "thresholdedrelu")
      return ctx_.op("where", {ctx_.op("greater", {x, scalar(a.alpha)}), x, scalar(0)});
    if (n == "scaledtanh") return mul(scalar(a.alpha), ctx_.op("tanh", {mul(x, scalar(a.beta))}));
    if (n == "hardsigmoid")
      return ctx_.op("nn.hard_sigmoid", {x}, {{"alpha", a.alpha}, {"beta", a.beta}});
    if (n == "elu") return ctx_.op("nn.elu", {x}, {{"alpha", a.alpha}});
    if (n == "softsign") return ctx_.op("divide", {x, add(scalar(1), ctx_.op("abs", {x}))});
    return ctx_.op("nn.softplus", {x});
  }

  // Columns [gate * H, (gate + count) * H) of a (1, batch, gates x H) value.
  Expr gates(const Expr& e, int64_t gate, int64_t count = 1) {
    return slice(e, 2, gate * hidden_, (gate + count) * hidden_);
  }

  // What a direction needs at every step.
  struct DirectionWeights {
    const Activation* act = nullptr;
    Expr r, r_zr, r_h, recurrent_h_bias, peep_i, peep_o, peep_f;
  };

  // One step: the step's projection `in` (1, B, G * H) and the state (h, c) give the step's
  // output and the next state. `t` is the step's time index, an int64 scalar.
  State cell_step(const DirectionWeights& w, const Expr& in, const Expr& h, const Expr& c,
                  const Expr& t) {
    const Activation* act = w.act;
    Expr h_next, c_next;
    if (cell_ == Cell::kRnn) {
      h_next = activate(act[0], add(in, dense(h, w.r)));
    } else if (cell_ == Cell::kGru) {
      Expr zr = activate(act[0], add(gates(in, 0, 2), dense(h, w.r_zr)));
      Expr z = gates(zr, 0), reset = gates(zr, 1);
      Expr candidate_in;
      if (linear_before_reset_) {
        Expr linear = dense(h, w.r_h);
        if (w.recurrent_h_bias) linear = add(linear, w.recurrent_h_bias);
        candidate_in = add(gates(in, 2), mul(reset, linear));
      } else {
        candidate_in = add(gates(in, 2), dense(mul(reset, h), w.r_h));
      }
      Expr candidate = activate(act[1], candidate_in);
      h_next = add(candidate, mul(z, sub(h, candidate)));  // (1 - z) * candidate + z * h
    } else {
      Expr a = add(in, dense(h, w.r));
      Expr ai = gates(a, 0), ao = gates(a, 1), af = gates(a, 2), ac = gates(a, 3);
      if (w.peep_i) ai = add(ai, mul(w.peep_i, c)), af = add(af, mul(w.peep_f, c));
      Expr i = activate(act[0], ai);
      Expr f = input_forget_ ? sub(scalar(1), i) : activate(act[0], af);
      c_next = add(mul(f, c), mul(i, activate(act[1], ac)));
      if (w.peep_o) ao = add(ao, mul(w.peep_o, c_next));
      h_next = mul(activate(act[0], ao), activate(act[2], c_next, false));
    }
    if (!lengths_) return State{h_next, h_next, c_next};
    // Rows whose sequence has ended keep their state and output zeros.
    Expr live = expand(expand(ctx_.op("less", {t, lengths_}), 1), 0);
    Expr output = ctx_.op("where", {live, h_next, scalar(0)});
    h_next = ctx_.op("where", {live, h_next, h});
    if (c_next) c_next = ctx_.op("where", {live, c_next, c});
    return State{output, h_next, c_next};
  }

  State run_direction(int64_t d, bool reverse) {
    DirectionWeights w;
    // The activations list one set per direction.
    w.act = &activations_[size_t(d) * (activations_.size() / size_t(directions_))];
    Expr wx = direction_of(1, d);
    w.r = direction_of(2, d);
    // Both biases in the projection, except the GRU candidate's recurrent bias when the
    // reset gate applies after the linear map: r * (H R_h + Rb_h) keeps it inside.
    Expr bias;
    if (ctx_.has_input(3)) {
      Expr b = direction_of(3, d);
      Expr wb = slice(b, 0, 0, gates_ * hidden_),
           rb = slice(b, 0, gates_ * hidden_, 2 * gates_ * hidden_);
      if (linear_before_reset_) {
        w.recurrent_h_bias = slice(rb, 0, 2 * hidden_, 3 * hidden_);
        rb = ctx_.op(
            "concatenate",
            {ctx_.typed(ir::TupleNode::make(
                {slice(rb, 0, 0, 2 * hidden_), ctx_.op("zeros_like", {w.recurrent_h_bias})}))},
            {{"axis", int64_t(0)}});
      }
      bias = add(wb, rb);
    }
    Expr x = x_;
    // With lengths, the reverse direction reads each row backwards within its own length:
    // reversed once before and once after, the steps themselves run forwards.
    bool reverse_rows = reverse && lengths_;
    if (reverse_rows)
      x = ctx_.op("reverse_sequence", {x, lengths_},
                  {{"seq_axis", int64_t(0)}, {"batch_axis", int64_t(1)}});
    Expr projection = dense(x, wx);  // (T, B, G * H)
    if (bias) projection = add(projection, bias);
    if (cell_ == Cell::kLstm && ctx_.has_input(7)) {
      Expr p = direction_of(7, d);
      w.peep_i = slice(p, 0, 0, hidden_), w.peep_o = slice(p, 0, hidden_, 2 * hidden_),
      w.peep_f = slice(p, 0, 2 * hidden_, 3 * hidden_);
    }
    // GRU: R split into the update/reset rows and the candidate's.
    if (cell_ == Cell::kGru)
      w.r_zr = slice(w.r, 0, 0, 2 * hidden_), w.r_h = slice(w.r, 0, 2 * hidden_, 3 * hidden_);
    auto initial = [&](size_t input, const Expr& like) {
      return ctx_.has_input(input) ? expand(direction_of(input, d), 0)
                                   : ctx_.op("zeros_like", {like});
    };
    const bool backwards = reverse && !reverse_rows;
    Expr y, h, c;
    if (steps_ > 0) {
      // The steps' slices of the projection, (1, B, G * H) each; the state is (1, B, H)
      // throughout, so no step needs a kernel of its own to drop the leading axis.
      const std::vector<Expr> inputs = split_steps(projection);
      h = initial(5, gates(inputs[0], 0));
      if (cell_ == Cell::kLstm) c = initial(6, h);
      std::vector<Expr> outputs(static_cast<size_t>(steps_));
      for (int64_t k = 0; k < steps_; ++k) {
        int64_t t = backwards ? steps_ - 1 - k : k;
        State next = cell_step(w, inputs[size_t(t)], h, c, tensor::int64_scalar(ctx_, t));
        outputs[size_t(t)] = next.y;
        h = next.h;
        if (next.c) c = next.c;
      }
      y = concat_steps(outputs);  // (T, B, H)
    } else {
      std::tie(y, h, c) = loop_direction(w, projection, initial, backwards);
    }
    if (reverse_rows)
      y = ctx_.op("reverse_sequence", {y, lengths_},
                  {{"seq_axis", int64_t(0)}, {"batch_axis", int64_t(1)}});
    return State{y, h, c};
  }

  // The steps of a sequence of run-time length as one While: the count t, the state, and the
  // outputs gathered a row per iteration, (t, 1, B, H), squeezed to (T, B, H) after it (and
  // reversed for a backwards direction, which runs t = T - 1 down to 0).
  template <typename Initial>
  std::tuple<Expr, Expr, Expr> loop_direction(const DirectionWeights& w, const Expr& projection,
                                              Initial&& initial, bool backwards) {
    Expr length =
        ctx_.op("take", {ctx_.op("shape_of", {projection}), tensor::int64_scalar(ctx_, 0)},
                {{"axis", int64_t(0)}});
    auto step_input = [&](const Expr& t) {
      return expand(ctx_.op("take", {projection, t}, {{"axis", int64_t(0)}}), 0);
    };
    LoopBuilder loop;
    Expr h0 = initial(5, gates(step_input(tensor::int64_scalar(ctx_, 0)), 0));
    loop.init = {h0};
    loop.names = {"hidden"};
    if (cell_ == Cell::kLstm) {
      loop.init.push_back(initial(6, h0));
      loop.names.push_back("cell");
    }
    loop.scans = 1;
    loop.scan_init = {slice(expand(h0, 0), 0, 0, 0)};  // (0, 1, B, H)
    loop.step = [&](const std::vector<Expr>& vars) {
      Expr t = backwards ? sub(sub(length, tensor::int64_scalar(ctx_, 1)), vars[0]) : vars[0];
      State next = cell_step(w, step_input(t), vars[1], cell_ == Cell::kLstm ? vars[2] : Expr(), t);
      std::vector<Expr> values = {next.h};
      if (next.c) values.push_back(next.c);
      return std::make_pair(values, std::vector<Expr>{next.y});
    };
    loop.cond = [&](const std::vector<Expr>& vars) { return ctx_.op("less", {vars[0], length}); };
    std::vector<Expr> results = build_while(ctx_, loop);
    Expr y = squeeze(results.back(), 1);
    if (backwards) y = ctx_.op("reverse", {y}, {{"axis", int64_t(0)}});
    return {y, results[0], cell_ == Cell::kLstm ? results[1] : Expr()};
  }

  ConvertContext& ctx_;
  Cell cell_;
  int64_t gates_;
  int64_t directions_ = 1, layout_ = 0, steps_ = 0, hidden_ = 0;
  std::optional<double> clip_;
  bool input_forget_ = false, linear_before_reset_ = false;
  std::vector<Activation> activations_;
  DataType dtype_;
  Expr x_, lengths_;
};

ConverterFn recurrent(Cell cell) {
  return [cell](ConvertContext& ctx) { return RecurrentBuilder(ctx, cell).convert(); };
}

}  // namespace

void register_rnn_converters(ConverterTable& table) {
  // Versions 1 and 7 differ in attributes anvil does not need (output_sequence, the
  // broadcast of old opsets); 14 adds layout.
  for (int since : {1, 7, 14}) {
    table.add("RNN", since, recurrent(Cell::kRnn));
    table.add("GRU", since, recurrent(Cell::kGru));
    table.add("LSTM", since, recurrent(Cell::kLstm));
  }
  table.add("GRU", 3, recurrent(Cell::kGru));
}

}  // namespace anvil::frontend::onnx_import
