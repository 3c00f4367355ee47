// The tuner's side of measurement: starts the worker process (measure_worker.cpp), hands it
// tasks and batches, and turns a worker that dies or goes silent into an error record for the
// candidate it was on. A crash while the batch compiled cannot be pinned on one candidate, so
// the candidates still uncompiled are then compiled again one per batch.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "anvil/ir/printer.h"
#include "anvil/support/error.h"
#include "anvil/tune/tune.h"

extern char** environ;

namespace anvil::tune {

using nlohmann::json;

double MeasureResult::mean_ms() const {
  if (costs_ms.empty()) return 0;
  return std::accumulate(costs_ms.begin(), costs_ms.end(), 0.0) / double(costs_ms.size());
}

namespace {

using clock_type = std::chrono::steady_clock;

// A worker process with pipes to its stdin and from its stdout.
class WorkerProcess {
 public:
  explicit WorkerProcess(const std::vector<std::string>& command) {
    if (command.empty()) throw Error("no measurement worker command");
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0)
      throw Error(std::string("cannot create pipes for the measurement worker: ") +
                  std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    // The worker's own complaints (a crash report, LLVM's) would interleave with progress.
    if (!std::getenv("ANVIL_TUNE_WORKER_STDERR"))
      posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv;
    for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    if (rc != 0) {
      close_all();
      throw Error("cannot start the measurement worker '" + command[0] + "': " + std::strerror(rc));
    }
  }
  ~WorkerProcess() { kill(); }

  bool send(const json& message) {
    const std::string line = message.dump() + "\n";
    for (size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(in_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += size_t(n);
    }
    return true;
  }

  enum class Read { kLine, kTimeout, kClosed };
  // The next line, waiting until deadline.
  Read read_line(clock_type::time_point deadline, json& message) {
    for (;;) {
      const size_t end = buffer_.find('\n');
      if (end != std::string::npos) {
        const std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        try {
          message = json::parse(line);
          return Read::kLine;
        } catch (const std::exception&) {
          return Read::kClosed;  // not the worker's protocol: treat as dead
        }
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now())
              .count();
      if (left <= 0) return Read::kTimeout;
      pollfd fd{out_, POLLIN, 0};
      const int ready = ::poll(&fd, 1, int(std::min<int64_t>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return Read::kTimeout;
      char chunk[65536];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Read::kClosed;
      buffer_.append(chunk, size_t(n));
    }
  }

  // How the worker ended, after a kill: "killed by signal 11" / "exited with status 2".
  std::string kill() {
    if (pid_ <= 0) return "";
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    close_all();
    if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
      return std::string("the worker died of ") + strsignal(WTERMSIG(status));
    if (WIFEXITED(status))
      return "the worker exited with status " + std::to_string(WEXITSTATUS(status));
    return "";
  }

 private:
  void close_all() {
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
    in_ = out_ = -1;
  }
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
};

}  // namespace

struct Measurer::Impl {
  std::vector<TuneTask> tasks;
  MeasureOptions options;
  std::unique_ptr<WorkerProcess> worker;
  std::set<size_t> registered;                 // tasks the current worker knows
  std::map<size_t, std::string> broken_tasks;  // whose default schedule does not run
  int started = 0;

  void restart_worker() {
    worker.reset();
    registered.clear();
  }

  WorkerProcess& live_worker() {
    if (!worker) {
      worker = std::make_unique<WorkerProcess>(options.worker_command);
      ++started;
    }
    return *worker;
  }

  clock_type::time_point deadline(double seconds) const {
    return clock_type::now() + std::chrono::milliseconds(int64_t(std::max(seconds, 0.05) * 1000.0));
  }

  // Sends the task to the worker unless it has it; false when the task cannot be measured
  // (broken_tasks says why).
  bool register_task(size_t index) {
    if (broken_tasks.count(index)) return false;
    if (registered.count(index)) return true;
    WorkerProcess& w = live_worker();
    const TuneTask& task = tasks.at(index);
    json request = {{"op", "task"},
                    {"id", index},
                    {"group", ir::print_expr(task.group)},
                    {"strategy", task.space.strategy},
                    {"target", options.target}};
    json reply;
    WorkerProcess::Read read = w.send(request) ? w.read_line(deadline(options.timeout_s * 4), reply)
                                               : WorkerProcess::Read::kClosed;
    if (read != WorkerProcess::Read::kLine) {
      const std::string how = worker->kill();
      restart_worker();
      broken_tasks[index] =
          "the default schedule " +
          std::string(read == WorkerProcess::Read::kTimeout ? "ran past the time limit"
                                                            : "crashed the worker") +
          (how.empty() ? "" : " (" + how + ")");
      return false;
    }
    if (reply.value("error", 0) != 0) {
      broken_tasks[index] = reply.value("message", std::string("the default schedule failed"));
      return false;
    }
    registered.insert(index);
    return true;
  }

  // Measures `batch` (indices into inputs) in one request; fills results; returns the
  // candidates the failure of a compile could not be pinned on (to retry one by one).
  std::vector<size_t> run_batch(const std::vector<MeasureInput>& inputs,
                                const std::vector<size_t>& batch,
                                std::vector<std::optional<MeasureResult>>& results) {
    std::vector<size_t> ready;
    for (size_t i : batch) {
      if (register_task(inputs[i].task)) {
        ready.push_back(i);
      } else {
        results[i] = MeasureResult{driver::kRecordRuntimeError, {}, broken_tasks[inputs[i].task]};
      }
    }
    if (ready.empty()) return {};
    json candidates = json::array();
    for (size_t i : ready)
      candidates.push_back({{"task", inputs[i].task},
                            {"knobs", inputs[i].knobs ? json(*inputs[i].knobs) : json(nullptr)},
                            {"fault", inputs[i].fault}});
    json request = {{"op", "measure"},
                    {"repeat", options.repeat},
                    {"number", options.number},
                    {"min_repeat_ms", options.min_repeat_ms},
                    {"threads", options.threads},
                    {"flush_cache", options.flush_cache},
                    {"candidates", candidates}};
    WorkerProcess& w = live_worker();
    std::vector<bool> compiled(ready.size(), false);
    int running = -1;  // the candidate between "start" and "result"
    bool sent = w.send(request);
    // Compiling gets a time limit per candidate; each run gets its own.
    auto until = deadline(options.timeout_s * double(ready.size()));
    while (sent) {
      json event;
      const WorkerProcess::Read read = w.read_line(until, event);
      if (read != WorkerProcess::Read::kLine) {
        const bool hung = read == WorkerProcess::Read::kTimeout;
        std::string how = worker->kill();
        restart_worker();
        if (running >= 0) {
          results[ready[running]] = MeasureResult{
              hung ? driver::kRecordTimeout : driver::kRecordRuntimeError,
              {},
              hung ? "ran past the time limit of " + std::to_string(options.timeout_s) + " s"
                   : "crashed" + (how.empty() ? std::string() : " (" + how + ")")};
          return {};
        }
        std::vector<size_t> suspects;
        for (size_t k = 0; k < ready.size(); ++k)
          if (!compiled[k] && !results[ready[k]]) suspects.push_back(ready[k]);
        if (suspects.size() == 1) {
          results[suspects[0]] = MeasureResult{
              hung ? driver::kRecordTimeout : driver::kRecordCompileError,
              {},
              hung ? "compiling ran past the time limit"
                   : "the compiler crashed" + (how.empty() ? std::string() : " (" + how + ")")};
          return {};
        }
        return suspects;
      }
      const std::string kind = event.value("event", "");
      if (kind == "done") break;
      const size_t k = event.value("index", size_t(0));
      if (k >= ready.size()) continue;
      if (kind == "compiled") {
        compiled[k] = true;
        if (event.value("error", 0) != 0)
          results[ready[k]] =
              MeasureResult{event.value("error", 1), {}, event.value("message", std::string())};
      } else if (kind == "start") {
        running = int(k);
        until = deadline(options.timeout_s);
      } else if (kind == "result") {
        running = -1;
        MeasureResult result;
        result.error = event.value("error", 0);
        result.message = event.value("message", std::string());
        if (result.error == 0) result.costs_ms = event.at("costs_ms").get<std::vector<double>>();
        results[ready[k]] = std::move(result);
        until = deadline(options.timeout_s);
      }
    }
    if (!sent) {
      const std::string how = worker->kill();
      restart_worker();
      if (ready.size() == 1) {
        results[ready[0]] =
            MeasureResult{driver::kRecordRuntimeError,
                          {},
                          "the worker went away" + (how.empty() ? "" : " (" + how + ")")};
        return {};
      }
      std::vector<size_t> left;
      for (size_t i : ready)
        if (!results[i]) left.push_back(i);
      return left;
    }
    return {};
  }
};

Measurer::Measurer(std::vector<TuneTask> tasks, MeasureOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->tasks = std::move(tasks);
  impl_->options = std::move(options);
  // A worker that dies while we write to it must not take the tuner with it.
  ::signal(SIGPIPE, SIG_IGN);
}

Measurer::~Measurer() = default;

int Measurer::workers_started() const { return impl_->started; }

std::vector<MeasureResult> Measurer::measure(const std::vector<MeasureInput>& batch) {
  std::vector<std::optional<MeasureResult>> results(batch.size());
  for (const MeasureInput& input : batch)
    if (input.task >= impl_->tasks.size()) throw Error("no task " + std::to_string(input.task));
  std::vector<size_t> all(batch.size());
  std::iota(all.begin(), all.end(), size_t(0));
  std::vector<std::vector<size_t>> queue = {all};
  while (!queue.empty()) {
    std::vector<size_t> next = queue.back();
    queue.pop_back();
    std::vector<size_t> left;
    for (size_t i : next)
      if (!results[i]) left.push_back(i);
    if (left.empty()) continue;
    std::vector<size_t> suspects = impl_->run_batch(batch, left, results);
    // What the batch left unmeasured goes again; suspects of a compile crash one at a time.
    std::vector<size_t> rest;
    for (size_t i : left)
      if (!results[i] && std::find(suspects.begin(), suspects.end(), i) == suspects.end())
        rest.push_back(i);
    if (!rest.empty()) queue.push_back(rest);
    for (size_t i : suspects) queue.push_back({i});
  }
  std::vector<MeasureResult> out;
  for (auto& result : results) out.push_back(std::move(*result));
  return out;
}

}  // namespace anvil::tune
