// Fuzz target: any bytes as the worker logs of two machines (split at 0xff
// bytes into up to four files), through the whole pipeline and every emitter.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_pipeline.h"
#include "parse/workerlog_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace jobviz;
  static const LineParser parser;
  if (size == 0) return 0;
  const std::uint8_t choices = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  LogSet logs{{"machine0", "machine1"}, {}, {}};
  std::vector<WorkerLogScan> scans;
  for (int file = 0; file < 4 && !(file > 0 && rest.empty()); ++file) {
    const size_t cut = std::min(rest.find('\xff'), rest.size());
    logs.files.push_back({file / 2, file % 2, "machine" + std::to_string(file / 2) + "/workerlog." + std::to_string(file % 2)});
    scans.push_back(ScanWorkerLogText(logs.files.back().path, std::string(rest.substr(0, cut)), parser, 64 + choices));
    rest.remove_prefix(std::min(cut + 1, rest.size()));
  }
  fuzz::RunPipeline(logs, scans, choices);
  return 0;
}
