// Proposers for the search inside a task.
// - grid: the points in order.
// - random: uniformly among the untried.
// - ga: a population of the best measured points bred by uniform crossover and mutation.
// - xgb: gradient-boosted trees (XGBoost, pairwise ranking objective) trained on the task's
//   measurements, over the loop features of each candidate's lowered kernel, rank the untried
//   points (all of them when the space is small, else a pool of random points and mutations of
//   the best); the batch is the top of the ranking plus a few random points to keep exploring.
#include "tune/search.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>

#include "anvil/support/error.h"

namespace anvil::tune {

topi::ScheduleConfig TaskState::config(int64_t point) const {
  topi::ScheduleConfig config;
  for (const topi::KnobSpace& knob : task->space.knobs) {
    const int64_t radix = int64_t(knob.values.size());
    config[knob.name] = knob.values[size_t(point % radix)];
    point /= radix;
  }
  return config;
}

int64_t TaskState::point(const topi::ScheduleConfig& knobs) const {
  if (knobs.size() != task->space.knobs.size()) return -1;
  int64_t point = 0, stride = 1;
  for (const topi::KnobSpace& knob : task->space.knobs) {
    auto it = knobs.find(knob.name);
    if (it == knobs.end()) return -1;
    auto value = std::find(knob.values.begin(), knob.values.end(), it->second);
    if (value == knob.values.end()) return -1;
    point += stride * int64_t(value - knob.values.begin());
    stride *= int64_t(knob.values.size());
  }
  return point;
}

const std::vector<float>& TaskState::features_of(int64_t point) {
  auto it = features.find(point);
  if (it != features.end()) return it->second;
  std::vector<float> row;
  const topi::ScheduleConfig knobs = config(point);
  lower::LowerGroupOptions options = lower_options;
  options.config_for = [&knobs](const ir::Function&, const lower::LowerGroupOptions&) {
    return &knobs;
  };
  try {
    tir::PrimFunc scheduled = lower::lower_primitive(task->group, "candidate", options);
    if (lower::config_declined(scheduled, task->space.strategy).empty()) {
      row = loop_features(scheduled);
      for (const auto& [knob, value] : knobs) row.push_back(float(std::log2(1.0 + double(value))));
    }
  } catch (const std::exception&) {
    row.clear();
  }
  return features.emplace(point, std::move(row)).first->second;
}

namespace {

int64_t random_untried(const TaskState& state, std::mt19937_64& rng) {
  if (int64_t(state.tried.size()) >= state.size) return -1;
  std::uniform_int_distribution<int64_t> pick(0, state.size - 1);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int64_t point = pick(rng);
    if (!state.tried.count(point)) return point;
  }
  for (int64_t point = 0; point < state.size; ++point)  // nearly exhausted: scan
    if (!state.tried.count(point)) return point;
  return -1;
}

// Up to n distinct untried points drawn at random.
std::vector<int64_t> random_points(const TaskState& state, int n, std::mt19937_64& rng,
                                   std::unordered_set<int64_t>& taken) {
  std::vector<int64_t> points;
  for (int attempt = 0; int(points.size()) < n && attempt < 4 * n + 64; ++attempt) {
    const int64_t point = random_untried(state, rng);
    if (point < 0) break;
    if (taken.insert(point).second) points.push_back(point);
  }
  return points;
}

class GridProposer : public Proposer {
 public:
  std::vector<int64_t> propose(TaskState& state, int n, std::mt19937_64&) override {
    std::vector<int64_t> points;
    for (int64_t point = 0; point < state.size && int(points.size()) < n; ++point)
      if (!state.tried.count(point)) points.push_back(point);
    return points;
  }
};

class RandomProposer : public Proposer {
 public:
  std::vector<int64_t> propose(TaskState& state, int n, std::mt19937_64& rng) override {
    std::unordered_set<int64_t> taken;
    return random_points(state, n, rng, taken);
  }
};

// The measured points, best first (errors last).
std::vector<int64_t> ranked_samples(const TaskState& state) {
  std::vector<std::pair<int64_t, double>> samples = state.samples;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<int64_t> points;
  for (const auto& [point, cost] : samples)
    if (std::isfinite(cost)) points.push_back(point);
  return points;
}

// A point one knob away from `point`: one knob set to another of its values.
int64_t mutate(const TaskState& state, int64_t point, std::mt19937_64& rng) {
  const auto& knobs = state.task->space.knobs;
  if (knobs.empty()) return point;
  std::uniform_int_distribution<size_t> which(0, knobs.size() - 1);
  const size_t k = which(rng);
  int64_t stride = 1;
  for (size_t i = 0; i < k; ++i) stride *= int64_t(knobs[i].values.size());
  const int64_t radix = int64_t(knobs[k].values.size());
  const int64_t digit = (point / stride) % radix;
  std::uniform_int_distribution<int64_t> other(0, radix - 1);
  return point + (other(rng) - digit) * stride;
}

class GeneticProposer : public Proposer {
 public:
  std::vector<int64_t> propose(TaskState& state, int n, std::mt19937_64& rng) override {
    std::vector<int64_t> parents = ranked_samples(state);
    parents.resize(std::min<size_t>(parents.size(), 8));
    std::unordered_set<int64_t> taken;
    std::vector<int64_t> points;
    if (parents.size() >= 2) {
      const auto& knobs = state.task->space.knobs;
      std::uniform_int_distribution<size_t> parent(0, parents.size() - 1);
      std::bernoulli_distribution coin(0.5), mutation(0.3);
      for (int attempt = 0; int(points.size()) < n && attempt < 16 * n; ++attempt) {
        const int64_t a = parents[parent(rng)], b = parents[parent(rng)];
        int64_t child = 0, stride = 1;
        for (const topi::KnobSpace& knob : knobs) {
          const int64_t radix = int64_t(knob.values.size());
          child += stride * (((coin(rng) ? a : b) / stride) % radix);
          stride *= radix;
        }
        if (mutation(rng)) child = mutate(state, child, rng);
        if (!state.tried.count(child) && taken.insert(child).second) points.push_back(child);
      }
    }
    for (int64_t point : random_points(state, n - int(points.size()), rng, taken))
      points.push_back(point);
    return points;
  }
};

// XGBoost's C API reports failure by return code; this turns it into an Error.
void check_xgb(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("xgboost ") + what + ": " + XGBGetLastError());
}

class XgbProposer : public Proposer {
 public:
  XgbProposer() { XGBSetGlobalConfig("{\"verbosity\": 0}"); }

  std::vector<int64_t> propose(TaskState& state, int n, std::mt19937_64& rng) override {
    std::unordered_set<int64_t> taken;
    // Too few measurements to learn from: explore at random.
    int finite = 0;
    for (const auto& sample : state.samples) finite += std::isfinite(sample.second);
    if (finite < 4) return random_points(state, n, rng, taken);

    std::vector<int64_t> pool;
    const int64_t untried = state.size - int64_t(state.tried.size());
    if (untried <= 768) {
      for (int64_t point = 0; point < state.size; ++point)
        if (!state.tried.count(point)) pool.push_back(point);
    } else {
      std::unordered_set<int64_t> seen;
      for (int64_t point : random_points(state, 256, rng, seen)) pool.push_back(point);
      std::vector<int64_t> best = ranked_samples(state);
      best.resize(std::min<size_t>(best.size(), 16));
      for (int64_t parent : best)
        for (int m = 0; m < 16; ++m) {
          const int64_t child = mutate(state, parent, rng);
          if (!state.tried.count(child) && seen.insert(child).second) pool.push_back(child);
        }
    }
    std::vector<float> scores;
    try {
      scores = score(state, pool);
    } catch (const std::exception&) {
      return random_points(state, n, rng, taken);  // the model failed: fall back, go on
    }
    std::vector<size_t> order(pool.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    // The top of the ranking, and one point in eight at random.
    const int explore = std::max(1, n / 8);
    std::vector<int64_t> points;
    for (size_t i = 0; i < order.size() && int(points.size()) < n - explore; ++i)
      if (taken.insert(pool[order[i]]).second) points.push_back(pool[order[i]]);
    for (int64_t point : random_points(state, n - int(points.size()), rng, taken))
      points.push_back(point);
    return points;
  }

 private:
  // Predicted rank scores of the pool's points (higher: faster); points the strategy declines
  // score lowest.
  static std::vector<float> score(TaskState& state, const std::vector<int64_t>& pool) {
    size_t width = 0;
    std::vector<float> train, labels;
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [point, cost] : state.samples) best = std::min(best, cost);
    for (const auto& [point, cost] : state.samples) {
      const std::vector<float>& row = state.features_of(point);
      if (row.empty()) continue;
      width = row.size();
      train.insert(train.end(), row.begin(), row.end());
      labels.push_back(std::isfinite(cost) ? float(best / cost) : 0.0f);
    }
    if (labels.size() < 4) throw Error("too few samples");
    DMatrixHandle dtrain = nullptr;
    BoosterHandle booster = nullptr;
    std::vector<float> scores(pool.size(), -1e30f);
    try {
      check_xgb(XGDMatrixCreateFromMat(train.data(), labels.size(), width, NAN, &dtrain), "data");
      check_xgb(XGDMatrixSetFloatInfo(dtrain, "label", labels.data(), labels.size()), "labels");
      check_xgb(XGBoosterCreate(&dtrain, 1, &booster), "booster");
      const std::pair<const char*, const char*> params[] = {{"objective", "rank:pairwise"},
                                                            {"max_depth", "6"},
                                                            {"eta", "0.3"},
                                                            {"min_child_weight", "1"},
                                                            {"gamma", "0.0001"},
                                                            {"nthread", "1"},
                                                            {"seed", "1"}};
      for (const auto& [name, value] : params)
        check_xgb(XGBoosterSetParam(booster, name, value), "parameters");
      for (int round = 0; round < 40; ++round)
        check_xgb(XGBoosterUpdateOneIter(booster, round, dtrain), "training");

      std::vector<float> rows;
      std::vector<size_t> which;
      for (size_t i = 0; i < pool.size(); ++i) {
        const std::vector<float>& row = state.features_of(pool[i]);
        if (row.size() != width) continue;
        rows.insert(rows.end(), row.begin(), row.end());
        which.push_back(i);
      }
      if (!which.empty()) {
        DMatrixHandle dtest = nullptr;
        check_xgb(XGDMatrixCreateFromMat(rows.data(), which.size(), width, NAN, &dtest), "data");
        bst_ulong length = 0;
        const float* out = nullptr;
        const int rc = XGBoosterPredict(booster, dtest, 0, 0, 0, &length, &out);
        if (rc == 0)
          for (size_t i = 0; i < which.size() && i < length; ++i) scores[which[i]] = out[i];
        XGDMatrixFree(dtest);
        check_xgb(rc, "prediction");
      }
    } catch (...) {
      if (booster) XGBoosterFree(booster);
      if (dtrain) XGDMatrixFree(dtrain);
      throw;
    }
    XGBoosterFree(booster);
    XGDMatrixFree(dtrain);
    return scores;
  }
};

}  // namespace

std::unique_ptr<Proposer> make_proposer(const std::string& tuner) {
  if (tuner == "grid") return std::make_unique<GridProposer>();
  if (tuner == "random") return std::make_unique<RandomProposer>();
  if (tuner == "ga") return std::make_unique<GeneticProposer>();
  if (tuner == "xgb") return std::make_unique<XgbProposer>();
  throw Error("unknown tuner '" + tuner + "' (known: xgb, ga, random, grid)");
}

}  // namespace anvil::tune
