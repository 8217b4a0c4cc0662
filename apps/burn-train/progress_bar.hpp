// A one-line progress display for a pass over batches: count, loss,
// accuracy, speed and ETA. On a terminal it redraws one line in place; when
// the output is a file or pipe it prints plain lines at intervals instead
// (no carriage returns in logs).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace burn_train {

enum class ProgressStyle { Bar, Lines, None };

/// "auto" resolves to Bar when `stream` is a terminal, Lines otherwise.
ProgressStyle progress_style(const std::string& mode, std::FILE* stream);

class ProgressBar {
 public:
  /// `label` prefixes every line ("epoch 2/5 train"); `total` batches are expected.
  ProgressBar(std::string label, std::size_t total, ProgressStyle style, std::FILE* stream = stdout);

  /// After each batch: batches done so far, the running mean loss and
  /// accuracy of the pass, and the items seen (for the speed).
  void update(std::size_t done, double loss, double accuracy, std::size_t items);
  /// Ends the display (the bar's line is kept; a final line in Lines style).
  void finish();

  /// Seconds since construction.
  double elapsed() const;
  /// Process CPU seconds (all threads) since construction.
  double cpu_elapsed() const;

 private:
  void draw_bar();
  std::string render(std::size_t done, double loss, double accuracy, std::size_t items, bool for_terminal) const;

  std::string label_;
  std::size_t total_;
  ProgressStyle style_;
  std::FILE* stream_;
  std::chrono::steady_clock::time_point start_;
  double cpu_start_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::size_t last_line_done_ = 0;
  std::size_t done_ = 0;
  double loss_ = 0, accuracy_ = 0;
  std::size_t items_ = 0;
  std::size_t drawn_width_ = 0;
  bool finished_ = false;
};

/// "1:05" / "1:02:03" for a number of seconds.
std::string format_duration(double seconds);

/// CPU time of the whole process so far, in seconds.
double process_cpu_seconds();

}  // namespace burn_train
