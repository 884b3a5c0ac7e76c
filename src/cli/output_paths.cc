#include "cli/output_paths.h"

#include <sys/stat.h>

#include <filesystem>

namespace jobviz {

namespace {

std::string InodeKey(const struct stat& st) {
  return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// How the user named it, for messages.
std::string Named(const OutputRequest& output) { return output.flag + " " + output.path; }

}  // namespace

std::string FileIdentity(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return InodeKey(st);
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  if (stat(dir.c_str(), &st) == 0) return InodeKey(st) + "/" + p.filename().string();
  return "path " + std::filesystem::absolute(p).lexically_normal().string();
}

std::string OutputClash(const std::vector<OutputRequest>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].to_stderr) continue;
    for (size_t j = 0; j < i; ++j) {
      if (outputs[j].to_stderr) continue;
      const bool both_stdout = outputs[i].path == "-" && outputs[j].path == "-";
      if (both_stdout) return Named(outputs[j]) + " and " + Named(outputs[i]) + " both want standard output";
      if (outputs[i].path == "-" || outputs[j].path == "-") continue;
      if (FileIdentity(outputs[i].path) == FileIdentity(outputs[j].path))
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

}  // namespace jobviz
