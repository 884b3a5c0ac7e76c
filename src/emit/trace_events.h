// What the trace emitters share: event text appended straight into a buffer
// that is handed to the sink in large pieces (both JSON traces), the job and
// step events and the row layout of overlapping jobs (the Perfetto traces).
#pragma once

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emit/busy_counter.h"
#include "emit/emitter.h"
#include "emit/trace_rows.h"
#include "emit/flow_chains.h"
#include "analyse/bottleneck.h"
#include "model/model.h"

namespace jobviz {

struct TraceStats {
  size_t jobs = 0;
  size_t steps = 0;
  size_t overlap_lanes = 0;  // extra rows made for overlapping jobs
  size_t flows = 0;          // hand-off arrows (Perfetto trace only)
};

using TraceWriter = TraceStats (*)(const Timeline&, const Sink&);

// The whole document as a string (tests).
std::string TraceText(TraceWriter write, const Timeline& timeline);

// The most jobs a JSON trace's piece holds (WriteInOrder below): a piece's
// text stays a few hundred KB. The pieces in flight (two a thread, and as
// many spares) are the JSON trace's own memory: at 8,192 jobs a piece they
// were 14 MB of a 29 MB heap on tools/bench's logs; smaller pieces cost no
// time on the dense ones (docs/benchmarks.md, sixth round).
inline constexpr size_t kPieceJobs = 1024;

// Makes pieces [0, count) on up to `threads` threads (0: one per core) and
// hands each to `sink` in order, as soon as those before it are written: the
// pieces done but waiting are all the extra memory it takes. At most `ahead`
// pieces past the next one to write are made (0: two per thread); a caller
// whose first piece takes long and whose pieces are small lets the others
// run further ahead.
void WriteInOrder(size_t count, int threads, const std::function<void(size_t, std::string&)>& make,
                  const Sink& sink, size_t ahead = 0);

// Appends events separated by ",\n" and hands full pieces to the sink.
class EventStream {
 public:
  EventStream(const Sink& sink, std::string_view header) : sink_(sink) { out_ = header; }
  // Hands over what is buffered, so that others can write to the sink
  // directly (WriteInOrder); the events after go on with a separator.
  void Flush();
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

// The critical paths (analyse/bottleneck.h) as both Perfetto traces draw
// them: a "critical_path" arg on every job on a path (each peer's), and a
// "Critical path" row in the Steps process holding each path's jobs and the
// waits between them ("hand-off 1→2", "stall", "step start"). Empty when the
// run was not analysed.
class CriticalPathView {
 public:
  CriticalPathView(const Timeline& timeline, const Bottleneck* bottleneck);
  struct Slice {
    Nanos start = 0, end = 0;
    std::string name;
    std::int64_t step = kNoStep;  // its step's key (an arg "step", and "run" when there are several)
  };
  bool empty() const { return slices_.empty(); }
  // The jobs of `worker` (on machine `machine`) on a path, as indices into
  // its jobs, ascending: the writers go through a worker's jobs in order and
  // keep a cursor into them (a search a job was 6% of writing the JSON).
  std::span<const std::uint32_t> JobsOn(size_t machine, const Worker& worker) const;
  const std::vector<Slice>& slices() const { return slices_; }

 private:
  const Timeline& timeline_;
  const Bottleneck* bottleneck_;
  std::vector<size_t> first_worker_;  // per machine: its first worker's index in machine-then-worker order
  std::vector<Slice> slices_;
};
// What the trace writers add to a worker's jobs, asked in job order from
// `first_job` on: each job's flow mark and whether it is on a critical
// path. The worker is looked up once, the path's jobs walked with a cursor.
class WorkerJobMarks {
 public:
  WorkerJobMarks() = default;  // none: a what-if's copy of a worker
  // `flows` null: no flow marks (the JSON trace writes its arrows apart).
  WorkerJobMarks(const FlowChains* flows, const CriticalPathView& critical, size_t machine, const Worker& worker,
                 size_t first_job = 0)
      : flows_(flows ? flows->MarksOf(worker) : std::span<const FlowMark>()), on_path_(critical.JobsOn(machine, worker)),
        next_(std::lower_bound(on_path_.begin(), on_path_.end(), first_job)) {}
  FlowMark Flow(size_t job) const { return flows_.empty() ? FlowMark{} : flows_[job]; }
  // Jobs asked in ascending order.
  bool OnCriticalPath(size_t job) {
    const bool on = next_ != on_path_.end() && *next_ == job;
    next_ += on;
    return on;
  }

 private:
  std::span<const FlowMark> flows_;
  std::span<const std::uint32_t> on_path_;
  std::span<const std::uint32_t>::iterator next_ = on_path_.end();
};
inline constexpr const char* kCriticalPathRow = "Critical path";
// The row id (JSON tid) of the critical-path row: the one after every worker row.
int CriticalPathTid(const std::vector<RowGroup>& groups);

// The Perfetto JSON importer reads "ts" and "dur" as a double of
// microseconds and rounds ts * 1000 to whole nanoseconds. Epoch microseconds
// (~1.8e15) have a resolution of 0.25 us as a double, so times are written
// relative to this origin: the whole second at or before the earliest time
// in the trace. Relative times stay exact to the nanosecond for ~100 days.
Nanos TraceOrigin(const Timeline& timeline);



// The directory that all workers' logs lie in, as the paths are shown,
// with its trailing '/': "/data/run7/" for /data/run7/machine0/workerlog.0
// and /data/run7/machine1/workerlog.0; "" when they share none. Both
// Perfetto traces give each job's source relative to it, and name it once,
// so that a long log directory is not repeated in every event.
std::string SourceRoot(const Timeline& timeline);
// A job's "source" arg: its file below `root` and its line, "machine0/workerlog.3:40".
std::string JobSource(const Worker& worker, const Job& job, std::string_view root);
// What every job source of `worker` starts with: its file below `root` and ':'.
std::string SourcePrefix(const Worker& worker, std::string_view root);

// Writes one worker's jobs as complete ("X") events of the Perfetto JSON,
// with the job's args (`args`). What all of them share (the process, the
// args' machine and worker, the escaped source file below `source_root`) is
// formatted once; the rest is appended straight to `out`, with no
// allocation per job.
class JobEventWriter {
 public:
  JobEventWriter(const Worker& worker, int pid, Nanos origin, std::string_view source_root, JsonArgs args);
  // The job on the row `tid`.
  void Append(std::string& out, const Job& job, int tid, bool critical = false) const;

 private:
  Nanos origin_;
  bool full_;
  std::string pid_;     // ,"ph":"X","pid":P,"tid":
  std::string worker_;  // "machine":M,"worker":W,"type":   (full args)
  std::string source_;  // ,"source":"FILE:
};

// A step as a complete event; `step_arg` adds "args":{"step":N}.
void AppendStepEvent(std::string& out, const StepSpan& step, std::string_view pid, std::string_view tid,
                     bool step_arg, Nanos origin = 0);

}  // namespace jobviz
