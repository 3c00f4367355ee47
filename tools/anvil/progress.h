// A one-line progress bar on stderr, drawn only when stderr is a terminal, so that logs and
// pipes stay clean.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

namespace anvil::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool wanted) : enabled_(wanted && ::isatty(STDERR_FILENO)) {}
  ~ProgressBar() { finish(); }

  // Redraws "phase [#####.....] done/total".
  void update(const std::string& phase, int done, int total) {
    if (!enabled_ || total <= 0) return;
    constexpr int kWidth = 30;
    int filled = int(int64_t(kWidth) * done / total);
    std::string bar(size_t(filled), '#');
    bar.append(size_t(kWidth - filled), '.');
    std::fprintf(stderr, "\r%-18s [%s] %d/%d", phase.c_str(), bar.c_str(), done, total);
    std::fflush(stderr);
    drawn_ = true;
  }

  // Clears the line.
  void finish() {
    if (!drawn_) return;
    std::fprintf(stderr, "\r%*s\r", 70, "");
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace anvil::cli
