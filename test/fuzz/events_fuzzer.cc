// Fuzz target: any bytes as an events file of `jobviz extract`, read as merge
// reads it and, when accepted, drawn through the whole pipeline.
#include <cstdint>
#include <string>

#include "fuzz_pipeline.h"
#include "parse/event_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace jobviz;
  auto source = StringByteSource(std::string(reinterpret_cast<const char*>(data), size));
  MachineEvents events;
  std::string error;
  if (!ReadEvents("fuzz.jsonl", *source, &events, &error)) {
    fuzz::Require(error.rfind("fuzz.jsonl", 0) == 0, "errors name the file");
    return 0;
  }
  fuzz::Require(events.files.size() == events.scans.size(), "one scan per file");
  LogSet logs{{events.machine}, events.files, {}};
  fuzz::RunPipeline(logs, events.scans, size > 0 ? data[size - 1] : 0);
  return 0;
}
