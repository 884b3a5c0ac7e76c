// Finds the worker logs to read: DIR/workerlog.N on one machine, or
// DIR/machine*/workerlog.N with --multi_machine, machines in natural order.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace jobviz {

struct WorkerLogFile {
  int machine = 0;       // index in sorted machine order
  int worker = 0;        // N of workerlog.N
  std::string path;      // path to open, as the user would type it
};

struct LogSet {
  std::vector<std::string> machine_names;  // sorted; one entry for a single machine
  std::vector<WorkerLogFile> files;        // machine order, then worker order
  std::vector<std::string> warnings;       // e.g. a file not read because another names its worker
};

struct DiscoveryError {
  std::string message;
  std::string hint;
};

// "machine2" < "machine10": digit runs compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b);

// Parses "workerlog.N" or "workerlog.N.gz"; returns N.
std::optional<int> WorkerIndexOf(const std::string& file_name);

// `devices` empty means every workerlog found. On failure returns nullopt
// and fills `error`.
// `following` (jobviz follow, whose tree grows while it reads): with
// --multi_machine, a machine directory without logs yet is left out, and one
// that cannot be listed too, said in `warnings`; the others are found.
std::optional<LogSet> DiscoverLogs(const std::string& log_dir, bool multi_machine,
                                   const std::vector<int>& devices, DiscoveryError* error, bool following = false);

// Explicit inputs (`jobviz FILE...`, "-" for standard input): one machine,
// each file one worker. A worker's index is the N of workerlog.N[.gz] when
// every file is named so (and no N repeats), otherwise its position.
// With `missing` (jobviz follow, which waits for them), files not there
// yet are left out, each worker's index as if they were there, and listed.
std::optional<LogSet> LogSetFromFiles(const std::vector<std::string>& files, DiscoveryError* error,
                                      std::vector<std::string>* missing = nullptr);

}  // namespace jobviz
