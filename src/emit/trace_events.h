// What the two JSON trace emitters (Perfetto, legacy Chrome) share: event
// text appended straight into a buffer that is handed to the sink in large
// pieces, the job and step events, and the row layout of overlapping jobs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emit/emitter.h"
#include "model/model.h"

namespace jobviz {

// Jobs of one worker that overlap in time cannot share a row (the viewers
// nest slices, and partial overlaps break nesting), so each worker gets as
// many lanes as it needs; lane 0 is the worker's own row. Returns a lane per
// job (jobs sorted by start) and sets `lane_count` (at least 1).
std::vector<int> AssignLanes(const std::vector<Job>& jobs, int* lane_count);

struct TraceStats {
  size_t jobs = 0;
  size_t steps = 0;
  size_t overlap_lanes = 0;  // extra rows made for overlapping jobs
  size_t flows = 0;          // hand-off arrows (Perfetto trace only)
};

using TraceWriter = TraceStats (*)(const Timeline&, const Sink&);

// The whole document as a string (tests).
std::string TraceText(TraceWriter write, const Timeline& timeline);

// Appends events separated by ",\n" and hands full pieces to the sink.
class EventStream {
 public:
  EventStream(const Sink& sink, std::string_view header) : sink_(sink) { out_ = header; }
  // The buffer to append the next event to.
  std::string& Begin();
  // Call after each event: passes the buffer on once it is large.
  void End();
  void Finish(std::string_view trailer);

 private:
  const Sink& sink_;
  std::string out_;
  bool first_ = true;
};

// A job as a complete ("X") event on the row `pid`/`tid` (JSON values),
// with the legacy colour name when given and the job's args.
void AppendJobEvent(std::string& out, const Worker& worker, const Job& job, std::string_view pid,
                    std::string_view tid, const char* cname = nullptr);

// A step as a complete event; `step_arg` adds "args":{"step":N}.
void AppendStepEvent(std::string& out, const StepSpan& step, std::string_view pid, std::string_view tid,
                     bool step_arg);

}  // namespace jobviz
