#include "cli/output_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "read/log_discovery.h"
#include "write/atomic_file.h"

namespace jobviz {

namespace {

std::string InodeKey(const struct stat& st) {
  return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

bool IsCharacterDevice(const std::string& path) {
  struct stat st {};
  const int fd = DescriptorOf(path);
  return (fd >= 0 ? fstat(fd, &st) : stat(path.c_str(), &st)) == 0 && S_ISCHR(st.st_mode);
}

// How the user named it, for messages.
std::string Named(const OutputRequest& output) { return output.flag + " " + output.path; }

}  // namespace

std::string FileIdentity(const std::string& path) {
  struct stat st {};
  // A descriptor of ours ("-", /dev/stdout, a link to /proc/self/fd/1):
  // what it is open on, which a path to the same file shares.
  if (const int fd = DescriptorOf(path); fd >= 0 && fstat(fd, &st) == 0) return InodeKey(st);
  if (stat(path.c_str(), &st) == 0) return InodeKey(st);
  // Not there yet: its links and ".." resolved as far as the path exists
  // (nodir/../a.json is a.json: the writer makes nodir and climbs out).
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) p = std::filesystem::absolute(path).lexically_normal();
  if (stat(p.parent_path().c_str(), &st) == 0) return InodeKey(st) + "/" + p.filename().string();
  return "path " + p.string();
}

std::string OutputClash(const std::vector<OutputRequest>& outputs) {
  // What each output is, looked up once (each costs a few stat calls).
  struct Target {
    bool to_stdout = false, device = false;
    std::string identity;
  };
  std::vector<Target> targets(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].to_stderr)
      targets[i] = {DescriptorOf(outputs[i].path) == STDOUT_FILENO, IsCharacterDevice(outputs[i].path),
                    FileIdentity(outputs[i].path)};
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].to_stderr) continue;
    for (size_t j = 0; j < i; ++j) {
      if (outputs[j].to_stderr) continue;
      if (targets[i].to_stdout && targets[j].to_stdout)
        return Named(outputs[j]) + " and " + Named(outputs[i]) + " both want standard output";
      // Two writes into one device (-o /dev/null --html /dev/null) do no harm.
      if (targets[i].device && targets[j].device) continue;
      if (targets[i].identity == targets[j].identity)
        return Named(outputs[j]) + " and " + Named(outputs[i]) + " are the same file";
    }
  }
  return "";
}

std::string OutputOverwritesInput(const std::vector<OutputRequest>& outputs, const std::vector<std::string>& inputs) {
  // Each output's identity once, not once per input: 2,048 logs were 4,096 stat calls.
  std::vector<std::pair<std::string, const OutputRequest*>> written;
  for (const OutputRequest& output : outputs)
    if (!output.to_stderr && output.path != "-") written.emplace_back(FileIdentity(output.path), &output);
  if (written.empty()) return "";
  for (const std::string& input : inputs) {
    if (input == "-") continue;
    struct stat st {};
    if (stat(input.c_str(), &st) != 0) continue;  // reading it will say why
    const std::string key = InodeKey(st);
    for (const auto& [identity, output] : written)
      if (identity == key) return Named(*output) + " would overwrite the input " + input;
  }
  return "";
}

bool IsStandardOutput(const std::string& path) {
  if (DescriptorOf(path) == STDOUT_FILENO) return true;
  struct stat out {};
  return fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode) && FileIdentity(path) == InodeKey(out);
}

namespace {

std::filesystem::path Resolved(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? std::filesystem::absolute(path).lexically_normal() : p;
}

}  // namespace

std::string FollowedOutputClash(const std::vector<OutputRequest>& outputs, const std::string& log_dir,
                                const std::vector<std::string>& files) {
  std::vector<std::string> inputs = files;
  if (!log_dir.empty()) {
    DiscoveryError ignored;  // a tree with no log yet: follow waits for them
    for (const bool multi : {false, true})
      if (const auto found = DiscoverLogs(log_dir, multi, {}, &ignored))
        for (const WorkerLogFile& file : found->files) inputs.push_back(file.path);
  }
  if (std::string clash = OutputOverwritesInput(outputs, inputs); !clash.empty()) return clash;
  const std::filesystem::path root = log_dir.empty() ? std::filesystem::path() : Resolved(log_dir);
  for (const OutputRequest& output : outputs) {
    if (output.to_stderr || output.path == "-" || DescriptorOf(output.path) >= 0) continue;
    const std::string identity = FileIdentity(output.path);
    for (const std::string& file : files)  // one not there yet, followed once it comes
      if (file != "-" && FileIdentity(file) == identity) return Named(output) + " would overwrite the input " + file;
    if (root.empty() || !WorkerIndexOf(std::filesystem::path(output.path).filename().string())) continue;
    const std::filesystem::path dir = Resolved(output.path).parent_path();
    if (dir == root || dir.parent_path() == root)
      return Named(output) + " lies in the followed tree " + log_dir + ": it would be read as a worker's log";
  }
  return "";
}

}  // namespace jobviz
