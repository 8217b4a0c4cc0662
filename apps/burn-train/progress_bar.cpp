#include "progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace burn_train {
namespace {

constexpr std::size_t kBarWidth = 24;
// Redraws faster than this only cost time and flicker.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
// Lines style: about this many lines per pass, so logs stay short.
constexpr std::size_t kLinesPerPass = 10;

}  // namespace

ProgressStyle progress_style(const std::string& mode, std::FILE* stream) {
  if (mode == "bar") return ProgressStyle::Bar;
  if (mode == "lines") return ProgressStyle::Lines;
  if (mode == "none") return ProgressStyle::None;
  return ::isatty(::fileno(stream)) ? ProgressStyle::Bar : ProgressStyle::Lines;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

ProgressBar::ProgressBar(std::string label, std::size_t total, ProgressStyle style, std::FILE* stream)
    : label_(std::move(label)),
      total_(total),
      style_(style),
      stream_(stream),
      start_(std::chrono::steady_clock::now()),
      cpu_start_(process_cpu_seconds()) {}

double process_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double ProgressBar::cpu_elapsed() const { return process_cpu_seconds() - cpu_start_; }

double ProgressBar::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string ProgressBar::render(std::size_t done, double loss, double accuracy, std::size_t items,
                                bool for_terminal) const {
  const double secs = elapsed();
  const double speed = secs > 0 ? static_cast<double>(items) / secs : 0.0;
  const double eta =
      done > 0 ? secs / static_cast<double>(done) * static_cast<double>(total_ - std::min(done, total_)) : std::nan("");
  std::string bar;
  if (for_terminal) {
    const std::size_t filled = total_ ? kBarWidth * std::min(done, total_) / total_ : kBarWidth;
    bar = fmt::format("[{}{}] ", std::string(filled, '#'), std::string(kBarWidth - filled, '.'));
  }
  const int width = static_cast<int>(fmt::formatted_size("{}", total_));
  return fmt::format("{} {}{:>{}}/{} loss {:.4f} acc {:.4f} {:.0f} img/s elapsed {} eta {}", label_, bar, done, width,
                     total_, loss, accuracy, speed, format_duration(secs), format_duration(eta));
}

void ProgressBar::draw_bar() {
  std::string line = render(done_, loss_, accuracy_, items_, true);
  // Pad over the previous, possibly longer, line instead of relying on ANSI codes.
  const std::size_t width = line.size();
  if (line.size() < drawn_width_) line.append(drawn_width_ - line.size(), ' ');
  drawn_width_ = width;
  std::fputc('\r', stream_);
  std::fputs(line.c_str(), stream_);
  std::fflush(stream_);
}

void ProgressBar::update(std::size_t done, double loss, double accuracy, std::size_t items) {
  done_ = done;
  loss_ = loss;
  accuracy_ = accuracy;
  items_ = items;
  if (style_ == ProgressStyle::None) return;
  const auto now = std::chrono::steady_clock::now();
  if (style_ == ProgressStyle::Bar) {
    if (done < total_ && now - last_draw_ < kRedrawInterval) return;
    last_draw_ = now;
    draw_bar();
    return;
  }
  const std::size_t every = std::max<std::size_t>(1, total_ / kLinesPerPass);
  if (done % every != 0 && done != total_) return;
  last_line_done_ = done;
  std::fputs((render(done, loss, accuracy, items, false) + "\n").c_str(), stream_);
  std::fflush(stream_);
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (style_ == ProgressStyle::None) return;
  if (style_ == ProgressStyle::Bar) {
    // The last update may have been throttled: draw the final state, keep the line.
    draw_bar();
    std::fputc('\n', stream_);
    std::fflush(stream_);
    return;
  }
  if (last_line_done_ != done_) {
    std::fputs((render(done_, loss_, accuracy_, items_, false) + "\n").c_str(), stream_);
    std::fflush(stream_);
  }
}

}  // namespace burn_train
