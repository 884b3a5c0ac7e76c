#include "parse/tree_follower.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <set>

#include "read/parallel_for.h"

namespace jobviz {

namespace fs = std::filesystem;

TreeFollower::TreeFollower(std::string log_dir, bool multi_machine, std::vector<int> devices,
                           std::vector<std::string> files, int threads)
    : log_dir_(std::move(log_dir)),
      multi_machine_(multi_machine),
      devices_(std::move(devices)),
      files_(std::move(files)),
      threads_(threads) {}

namespace {

// "waiting for 2 named logs not there yet: a/workerlog.4, a/workerlog.5".
std::string MissingText(const std::vector<std::string>& missing) {
  if (missing.empty()) return "";
  std::string text = "waiting for " + std::to_string(missing.size()) + " named log" + (missing.size() == 1 ? "" : "s") +
                     " not there yet: ";
  for (size_t i = 0; i < missing.size() && i < 5; ++i) text += (i ? ", " : "") + missing[i];
  return text + (missing.size() > 5 ? ", ..." : "") + "; the others are followed now";
}

// Which of the logs may stay open: the `budget` that grew most lately.
std::vector<bool> LatestGrown(const std::vector<std::unique_ptr<FollowedLog>>& logs, size_t budget) {
  std::vector<bool> keep(logs.size(), logs.size() <= budget);
  if (logs.size() <= budget) return keep;
  std::vector<size_t> order(logs.size());
  std::iota(order.begin(), order.end(), 0);
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(budget), order.end(),
                   [&](size_t a, size_t b) { return logs[a]->grew() > logs[b]->grew(); });
  for (size_t k = 0; k < budget; ++k) keep[order[k]] = true;
  return keep;
}

}  // namespace

size_t TreeFollower::MaxOpenLogs() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1024;
  return std::clamp<size_t>(static_cast<size_t>(limit.rlim_cur / 2), 16, 1024);
}

void TreeFollower::Discover(std::vector<std::string>* notes) {
  found_new_ = false;
  DiscoveryError error;
  // Named files not there yet are waited for; the others are followed now.
  std::vector<std::string> missing;
  auto found = files_.empty() ? DiscoverLogs(log_dir_, multi_machine_, devices_, &error, true)
                              : LogSetFromFiles(files_, &error, &missing);
  // A machine directory that cannot be listed: said once, the rest found.
  if (found && found->warnings != warnings_) {
    for (const std::string& warning : found->warnings)
      if (warning.find(": cannot list the directory") != std::string::npos &&
          std::find(warnings_.begin(), warnings_.end(), warning) == warnings_.end())
        notes->push_back(warning);
    warnings_ = found->warnings;
  }
  if (found && found->files.empty()) {
    error.message = missing.front() + ": no such file";
    found.reset();
  }
  if (std::string text = MissingText(missing); text != missing_) {
    if (found && !text.empty()) notes->push_back(text);
    missing_ = text;
  }
  if (!found) {
    // No logs yet (the job is starting): said once, looked for again.
    if (error.message != waiting_ && logs_.files.empty()) notes->push_back("waiting: " + error.message);
    waiting_ = error.message;
    return;
  }
  waiting_.clear();
  found_new_ = Adopt(*found, notes);
}

// Files found for the first time join the run; machines and workers are put
// in order again, as a batch run over the tree as it is now would.
bool TreeFollower::Adopt(const LogSet& found, std::vector<std::string>* notes) {
  std::set<std::string> known(skipped_.begin(), skipped_.end());
  for (const WorkerLogFile& file : logs_.files) known.insert(file.path);
  const bool any_new = std::any_of(found.files.begin(), found.files.end(),
                                   [&](const WorkerLogFile& file) { return !known.count(file.path); });
  if (!any_new) return false;
  struct Entry {
    std::string machine;
    WorkerLogFile file;
    std::unique_ptr<FollowedLog> log;
  };
  std::vector<Entry> entries;
  for (size_t i = 0; i < logs_.files.size(); ++i)
    entries.push_back({logs_.machine_names[static_cast<size_t>(logs_.files[i].machine)], logs_.files[i],
                       std::move(followed_[i])});
  size_t added = 0;
  for (const WorkerLogFile& file : found.files) {
    if (known.count(file.path)) continue;
    if (file.path.ends_with(".gz")) {  // a finished, rotated log: read whole by a batch run
      skipped_.push_back(file.path);
      notes->push_back(file.path + ": a gzip log is not followed (read it with jobviz)");
      continue;
    }
    entries.push_back({found.machine_names[static_cast<size_t>(file.machine)], file,
                       std::make_unique<FollowedLog>(file.path, fs::path(file.path).lexically_normal().string())});
    ++added;
  }
  if (added == 0) {  // only logs not followed: put the followed ones back as they were
    for (size_t i = 0; i < entries.size(); ++i) followed_[i] = std::move(entries[i].log);
    return false;
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.machine != b.machine ? NaturalLess(a.machine, b.machine) : a.file.worker < b.file.worker;
  });
  LogSet logs;
  logs.warnings = found.warnings;
  followed_.clear();
  for (Entry& entry : entries) {
    if (logs.machine_names.empty() || logs.machine_names.back() != entry.machine) logs.machine_names.push_back(entry.machine);
    entry.file.machine = static_cast<int>(logs.machine_names.size() - 1);
    logs.files.push_back(entry.file);
    followed_.push_back(std::move(entry.log));
  }
  const bool first = logs_.files.empty();
  ++generation_;
  std::string first_new;
  for (const WorkerLogFile& file : logs.files)
    if (!known.count(file.path)) {
      first_new = file.path;
      break;
    }
  logs_ = std::move(logs);
  if (first) {
    const size_t machines = logs_.machine_names.size();
    notes->push_back("following " + std::to_string(logs_.files.size()) + " logs of " + std::to_string(machines) +
                     (machines == 1 ? " machine" : " machines"));
  } else {
    notes->push_back(std::to_string(added) + (added == 1 ? " new log: " : " new logs, the first: ") + first_new);
  }
  return true;
}

FollowedSource::Poll TreeFollower::PollAll(const LineParser& parser) {
  Poll poll;
  // New files are looked for once a second: listing a tree of 256 machine
  // directories every turn cost more than reading what the logs appended.
  const auto now = std::chrono::steady_clock::now();
  if (logs_.files.empty() || found_new_ || now - discovered_ >= kDiscoverEvery) {
    Discover(&poll.notes);
    discovered_ = now;
  }
  std::vector<FollowedLog::Update> updates(followed_.size());
  const size_t per_file = std::clamp(kTurnBytes / std::max<size_t>(1, followed_.size()), kFileBytes, FileFollower::kMaxRead);
  const std::vector<bool> keep_open = LatestGrown(followed_, MaxOpenLogs());
  ParallelFor(followed_.size(), threads_, [&](size_t i) {
    updates[i] = followed_[i]->Poll(parser, per_file);
    if (!keep_open[i] && !updates[i].more) followed_[i]->Release();
  });
  for (size_t i = 0; i < updates.size(); ++i) {
    const FollowedLog::Update& update = updates[i];
    const std::string& path = logs_.files[i].path;
    poll.records += update.records;
    poll.jobs += update.jobs;
    poll.more |= update.more;
    poll.restarted += update.restarted;
    if (update.rotated)
      poll.notes.push_back(path + ": truncated or replaced (rotated, or the job restarted); its first job line will tell");
    if (update.restarted) poll.notes.push_back(path + ": the job restarted: a new run, read from its start");
    if (update.gone) {
      poll.notes.push_back(path + ": deleted (or its file system went away); what it held stays in the run, "
                                  "and steps are printed without waiting for it");
      gone_.insert(followed_[i]->scan().file);
    }
    if (update.rotated || update.records > 0) gone_.erase(followed_[i]->scan().file);
    // Said once, and again only when the reason changes (or after it read again).
    if (update.error.empty()) {
      if (update.records > 0 || update.rotated) unreadable_.erase(path);
    } else if (auto& said = unreadable_[path]; said != update.error) {
      said = update.error;
      poll.notes.push_back(path + ": cannot read: " + update.error);
    }
  }
  return poll;
}

std::vector<std::string> TreeFollower::Directories() const {
  std::set<std::string> dirs;
  if (files_.empty()) {
    dirs.insert(log_dir_);
    if (multi_machine_) {
      std::error_code ec;
      for (fs::directory_iterator it(log_dir_, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec)) dirs.insert(it->path().string());
    }
  } else {
    for (const std::string& file : files_) dirs.insert(fs::path(file).parent_path().empty() ? "." : fs::path(file).parent_path().string());
  }
  return {dirs.begin(), dirs.end()};
}

}  // namespace jobviz
