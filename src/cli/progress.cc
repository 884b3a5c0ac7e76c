#include "cli/progress.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "cli/report.h"

namespace jobviz {

Progress::Progress(const LogSet& logs, bool enabled) {
  if (!enabled) return;
  for (const WorkerLogFile& file : logs.files) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file.path, ec);
    // gzip sizes say nothing about the text inside; no percentage then.
    if (ec || file.path.size() < 3 || file.path.compare(file.path.size() - 3, 3, ".gz") == 0) total_ = 0, sized_ = false;
    else if (sized_) total_ += size;
  }
  files_ = logs.files.size();
  ticker_ = std::thread([this] { Run(); });
}

Progress::~Progress() {
  if (!ticker_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_one();
  ticker_.join();
  if (shown_) std::fputs("\r\033[K", stderr);
}

ScanProgress Progress::hooks() {
  if (!ticker_.joinable()) return {};
  return {&bytes_, [this] { files_done_.fetch_add(1); }};
}

void Progress::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return done_; })) return;
  do {
    const std::uint64_t read = bytes_.load();
    std::string line = "\rjobviz: reading " + std::to_string(files_done_.load()) + " of " +
                       std::to_string(files_) + " files, " + FormatBytes(read);
    if (sized_ && total_ > 0) {
      const int percent = static_cast<int>(std::min<std::uint64_t>(100, read * 100 / total_));
      line += " of " + FormatBytes(total_) + " [" + std::string(percent / 5, '#') +
              std::string(20 - percent / 5, '.') + "] " + std::to_string(percent) + "%";
    }
    std::fputs((line + "\033[K").c_str(), stderr);
    std::fflush(stderr);
    shown_ = true;
  } while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; }));
}

}  // namespace jobviz
