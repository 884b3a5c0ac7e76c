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
  // Every record accepted holds what a log line could (event_file.cc, as line_parser.cc).
  for (const WorkerLogScan& scan : events.scans)
    for (const LogRecord& r : scan.records) {
      fuzz::Require(r.line >= 1 && r.line <= scan.lines, "a record's line is in its file");
      fuzz::Require(r.start >= 0 && r.end >= 0, "times are not negative");
      if (r.kind == RecordKind::kJob) {
        fuzz::Require(r.start > 0 && r.end >= r.start && r.end - r.start <= kLongestJob, "a job's times can be drawn");
        fuzz::Require(r.micro_batch >= 0 && r.micro_batch < kRunStride, "micro-batches are in range");
      }
      if (r.kind == RecordKind::kProfilerWindow || r.kind == RecordKind::kStepPush)
        fuzz::Require(r.step >= 0 && r.step < kRunStride, "steps are below the run stride");
      if (r.kind == RecordKind::kProfilerWindow)
        fuzz::Require(r.window_end_step >= -1 && r.window_end_step < kRunStride, "window ends are in range");
      if (r.kind == RecordKind::kClockSync) fuzz::Require(r.rank >= 0 && r.round >= 0, "ranks and rounds are not negative");
    }
  LogSet logs{{events.machine}, events.files, {}};
  fuzz::RunPipeline(logs, events.scans, size > 0 ? data[size - 1] : 0);
  return 0;
}
