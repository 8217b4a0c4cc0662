#include "metrics.hpp"

#include "checkpoint.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <burn/error.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

namespace burn_train {
using nlohmann::json;

namespace {

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// The second field of /proc/self/statm is the resident set in pages; 0 where
// there is no procfs (the reading is informative only).
std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

json pass_to_json(const PassMetrics& p) {
  return {{"loss", p.loss},       {"acc", p.accuracy},    {"items", p.items},
          {"batches", p.batches}, {"seconds", p.seconds}, {"cpu_seconds", p.cpu_seconds}};
}

PassMetrics pass_from_json(const json& j) {
  return PassMetrics{j.at("loss").get<double>(),       j.at("acc").get<double>(),
                     j.at("items").get<std::size_t>(), j.at("batches").get<std::size_t>(),
                     j.at("seconds").get<double>(),    j.value("cpu_seconds", 0.0)};
}

json epoch_to_json(const EpochMetrics& m) {
  json j = {{"epoch", m.epoch},
            {"train", pass_to_json(m.train)},
            {"test", pass_to_json(m.test)},
            // The flat fields bench/fashion_mnist_torch.py also writes.
            {"train_s", m.train.seconds},
            {"train_cpu_s", m.train.cpu_seconds},
            {"test_s", m.test.seconds},
            {"train_loss", m.train.loss},
            {"train_acc", m.train.accuracy},
            {"test_loss", m.test.loss},
            {"test_acc", m.test.accuracy},
            {"rss_bytes", m.memory.rss_bytes}};
  if (m.memory.pool) {
    j["pool_bytes_in_use"] = m.memory.pool->bytes_in_use;
    j["pool_bytes_reserved"] = m.memory.pool->bytes_reserved;
    j["pool_allocations"] = m.memory.pool->number_allocs;
  }
  return j;
}

}  // namespace

std::uint64_t peak_resident_bytes() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

MemoryReading read_memory(const burn::Device& device) {
  MemoryReading r;
  r.pool = device.memory_pool_usage();
  r.rss_bytes = resident_bytes();
  return r;
}

std::string format_epoch_line(const EpochMetrics& m, std::size_t epochs) {
  const double speed = m.train.seconds > 0 ? static_cast<double>(m.train.items) / m.train.seconds : 0.0;
  std::string memory;
  if (m.memory.pool)
    memory = fmt::format("device memory {:.1f} MiB in use, {:.1f} MiB reserved; ", mib(m.memory.pool->bytes_in_use),
                         mib(m.memory.pool->bytes_reserved));
  if (m.memory.rss_bytes) memory += fmt::format("RSS {:.1f} MiB", mib(m.memory.rss_bytes));
  return fmt::format(
      "epoch {}/{}: train loss {:.4f} acc {:.4f} | test loss {:.4f} acc {:.4f} | train {:.2f} s ({:.0f} img/s, "
      "cpu {:.2f} s), test {:.2f} s{}{}",
      m.epoch, epochs, m.train.loss, m.train.accuracy, m.test.loss, m.test.accuracy, m.train.seconds, speed,
      m.train.cpu_seconds, m.test.seconds, memory.empty() ? "" : " | ", memory);
}

std::string history_to_json(const std::vector<EpochMetrics>& history) {
  json a = json::array();
  for (const auto& m : history) a.push_back(epoch_to_json(m));
  return a.dump();
}

std::vector<EpochMetrics> history_from_json(const std::string& text) {
  std::vector<EpochMetrics> out;
  try {
    for (const auto& j : json::parse(text)) {
      EpochMetrics m;
      m.epoch = j.at("epoch").get<std::size_t>();
      m.train = pass_from_json(j.at("train"));
      m.test = pass_from_json(j.at("test"));
      m.memory.rss_bytes = j.value("rss_bytes", std::uint64_t{0});
      out.push_back(m);
    }
  } catch (const json::exception& e) {
    throw burn::Error("checkpoint", fmt::format("the metrics history in checkpoint.json is malformed ({})", e.what()));
  }
  return out;
}

void write_summary_json(const std::filesystem::path& path, const RunInfo& info,
                        const std::vector<EpochMetrics>& history) {
  json meta = {{"framework", "burn-cpp"},       {"device", info.device}, {"threads", info.threads},
               {"batch_size", info.batch_size}, {"lr", info.lr},         {"seed", info.seed},
               {"num_params", info.num_params}};
  meta["limit_batches"] = info.limit_batches ? json(*info.limit_batches) : json(nullptr);
  meta["peak_rss_bytes"] = peak_resident_bytes();
  meta["traced"] = info.traced;
  json epochs = json::array();
  for (const auto& m : history) epochs.push_back(epoch_to_json(m));
  const json summary = {{"meta", meta},
                        {"epochs", epochs},
                        {"final_test_acc", history.empty() ? json(nullptr) : json(history.back().test.accuracy)}};
  try {
    write_text_atomically(path, summary.dump(2) + "\n");
  } catch (const burn::Error& e) {
    throw burn::Error("summary-json", e.what());
  }
}

}  // namespace burn_train
