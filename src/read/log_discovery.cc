#include "read/log_discovery.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

namespace jobviz {

namespace fs = std::filesystem;

namespace {

bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }

// The better of two files that name one worker: the plain file over its
// .gz twin, workerlog.0 over workerlog.00 (the shorter name, then the first
// in natural order).
bool Preferred(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : NaturalLess(a, b);
}

// Worker logs of one directory by index. Files that name a worker already
// named are listed in `dropped` (with the one kept), not silently lost; an
// unreadable directory sets `error`.
std::map<int, std::string> ListWorkerLogs(const fs::path& dir, std::vector<std::string>* dropped = nullptr,
                                          std::error_code* error = nullptr) {
  std::map<int, std::string> logs;
  std::map<int, std::vector<std::string>> others;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    std::string name = it->path().filename().string();
    const auto index = WorkerIndexOf(name);
    if (!index) continue;
    auto [kept, inserted] = logs.emplace(*index, name);
    if (inserted) continue;
    if (Preferred(name, kept->second)) std::swap(kept->second, name);  // `name` is now the one dropped
    others[*index].push_back(name);
  }
  if (error) *error = ec;
  if (dropped)
    for (const auto& [index, names] : others)
      for (const std::string& name : names)
        dropped->push_back((dir / name).lexically_normal().string() + " is worker " + std::to_string(index) +
                           " too; reading " + (dir / logs[index]).lexically_normal().string() + " only");
  return logs;
}

std::string JoinNames(const std::map<int, std::string>& logs) {
  std::string out;
  for (const auto& [index, name] : logs) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "no workerlog files" : out;
}

std::string Display(const fs::path& path) { return path.lexically_normal().string(); }

std::string DirectoryName(const fs::path& dir) {
  fs::path clean = dir.lexically_normal();
  if (!clean.has_filename()) clean = clean.parent_path();
  if (clean.filename().empty() || clean.filename() == "." || clean.filename() == "..") {
    std::error_code ec;
    const fs::path absolute = fs::weakly_canonical(dir, ec);
    if (!ec && !absolute.filename().empty()) return absolute.filename().string();
  }
  return clean.filename().string();
}

}  // namespace

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigitChar(a[i]) && IsDigitChar(b[j])) {
      size_t i_end = i, j_end = j;
      while (i_end < a.size() && IsDigitChar(a[i_end])) ++i_end;
      while (j_end < b.size() && IsDigitChar(b[j_end])) ++j_end;
      // Compare as numbers without overflow: skip leading zeros, then length, then digits.
      size_t i_nz = i, j_nz = j;
      while (i_nz + 1 < i_end && a[i_nz] == '0') ++i_nz;
      while (j_nz + 1 < j_end && b[j_nz] == '0') ++j_nz;
      if (i_end - i_nz != j_end - j_nz) return i_end - i_nz < j_end - j_nz;
      const int cmp = a.compare(i_nz, i_end - i_nz, b, j_nz, j_end - j_nz);
      if (cmp != 0) return cmp < 0;
      if (i_end - i != j_end - j) return i_end - i < j_end - j;  // "01" after "1"
      i = i_end;
      j = j_end;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::optional<int> WorkerIndexOf(const std::string& file_name) {
  constexpr std::string_view kPrefix = "workerlog.";
  if (file_name.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string_view digits = std::string_view(file_name).substr(kPrefix.size());
  if (digits.size() > 3 && digits.substr(digits.size() - 3) == ".gz") digits.remove_suffix(3);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), IsDigitChar)) return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<LogSet> DiscoverLogs(const std::string& log_dir, bool multi_machine,
                                   const std::vector<int>& devices, DiscoveryError* error, bool following) {
  const fs::path root(log_dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    error->message = log_dir + ": " + (fs::exists(root, ec) ? "not a directory" : "no such directory");
    error->hint = "--log_dir names the directory that holds the workerlog.N files";
    return std::nullopt;
  }

  std::vector<std::pair<std::string, fs::path>> machines;  // name, directory
  if (multi_machine) {
    for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
      std::error_code type_ec;
      const std::string name = entry.path().filename().string();
      if (entry.is_directory(type_ec) && name.rfind("machine", 0) == 0)
        machines.emplace_back(name, entry.path());
    }
    if (machines.empty()) {
      error->message = log_dir + ": no machine* directories";
      error->hint = ListWorkerLogs(root).empty()
                        ? "--multi_machine reads DIR/machine0/workerlog.0, DIR/machine1/..."
                        : "this directory holds workerlog files: drop --multi_machine";
      return std::nullopt;
    }
    std::sort(machines.begin(), machines.end(),
              [](const auto& a, const auto& b) { return NaturalLess(a.first, b.first); });
  } else {
    machines.emplace_back(DirectoryName(root), root);
  }

  LogSet set;
  for (size_t m = 0; m < machines.size(); ++m) {
    const auto& [name, dir] = machines[m];
    std::error_code list_error;
    const std::map<int, std::string> found = ListWorkerLogs(dir, &set.warnings, &list_error);
    const bool skipped = following && multi_machine && (list_error || found.empty());
    if (skipped) {
      if (list_error)
        set.warnings.push_back(Display(dir) + ": cannot list the directory: " + list_error.message() +
                               "; its logs are left out until it can be read");
      continue;
    }
    if (list_error) {
      error->message = Display(dir) + ": cannot list the directory: " + list_error.message();
      error->hint = "jobviz needs to read the directory and its workerlog.N files";
      return std::nullopt;
    }
    const int machine = static_cast<int>(set.machine_names.size());
    set.machine_names.push_back(name);
    if (devices.empty()) {
      if (found.empty()) {
        error->message = Display(dir) + ": no workerlog.N files";
        bool has_machines = false;
        for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
          has_machines |= entry.path().filename().string().rfind("machine", 0) == 0;
        error->hint = !multi_machine && has_machines
                          ? "it holds machine* directories: add --multi_machine"
                          : "jobviz reads the files the launcher writes with --log_dir";
        return std::nullopt;
      }
      for (const auto& [index, file] : found)
        set.files.push_back({machine, index, Display(dir / file)});
      continue;
    }
    for (int device : devices) {
      const auto it = found.find(device);
      if (it == found.end()) {
        const fs::path wanted = dir / ("workerlog." + std::to_string(device));
        std::error_code type_ec;
        error->message = Display(wanted) + (fs::is_directory(wanted, type_ec) ? ": is a directory, not a log" : ": no such file") +
                         " (" + Display(dir) + " has " + JoinNames(found) + ")";
        error->hint = "--devices lists worker indices, the N of workerlog.N";
        return std::nullopt;
      }
      set.files.push_back({machine, device, Display(dir / it->second)});
    }
  }
  if (set.files.empty()) {
    error->message = log_dir + ": no workerlog.N files in its machine* directories yet";
    error->hint = "--multi_machine reads DIR/machine0/workerlog.0, DIR/machine1/...";
    return std::nullopt;
  }
  return set;
}

std::optional<LogSet> LogSetFromFiles(const std::vector<std::string>& files, DiscoveryError* error,
                                      std::vector<std::string>* missing) {
  LogSet set;
  std::vector<int> indices;
  std::set<std::string> absent;
  bool named = true;
  int stdin_count = 0;
  for (const std::string& file : files) {
    std::error_code ec;
    if (file == "-") {
      ++stdin_count;
    } else if (missing && !fs::exists(file, ec)) {
      absent.insert(file);
      missing->push_back(file);
    } else if (!fs::is_regular_file(file, ec)) {
      error->message = file + ": " + (fs::is_directory(file, ec) ? "is a directory, not a log (give --log_dir DIR for a directory)"
                                      : fs::exists(file, ec)   ? "not a regular file"
                                                               : "no such file");
      error->hint = "each FILE is one worker's log; '-' reads standard input";
      return std::nullopt;
    }
    const auto index = file == "-" ? std::nullopt : WorkerIndexOf(fs::path(file).filename().string());
    named &= index.has_value();
    indices.push_back(index.value_or(0));
  }
  if (stdin_count > 1) {
    error->message = "'-' (standard input) given more than once";
    error->hint = "standard input can hold one worker's log";
    return std::nullopt;
  }
  std::vector<int> sorted = indices;
  std::sort(sorted.begin(), sorted.end());
  named &= std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  // The machine is named after the files' directory when they share one.
  std::string machine = files.size() == 1 && files[0] == "-" ? "stdin" : "";
  for (const std::string& file : files) {
    if (file == "-") continue;
    const std::string dir = DirectoryName(fs::path(file).parent_path().empty() ? fs::path(".") : fs::path(file).parent_path());
    if (machine.empty()) machine = dir;
    else if (machine != dir) machine = "input";
  }
  set.machine_names.push_back(machine);
  for (size_t i = 0; i < files.size(); ++i)
    if (!absent.count(files[i])) set.files.push_back({0, named ? indices[i] : static_cast<int>(i), files[i]});
  std::stable_sort(set.files.begin(), set.files.end(),
                   [](const WorkerLogFile& a, const WorkerLogFile& b) { return a.worker < b.worker; });
  return set;
}

}  // namespace jobviz
