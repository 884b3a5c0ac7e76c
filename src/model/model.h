// What jobviz knows about a training run once the logs are parsed: records
// in file order, grouped into runs, workers, machines and steps.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/name.h"
#include "model/time_value.h"
#include "model/topology.h"

namespace jobviz {

inline constexpr std::int64_t kNoStep = -1;

// A step's key in the model (Job::step, StepSpan::step): the training
// program's step number; under --run all with several runs drawn, run x
// kRunStride + number (run from 1), so that two runs that both start at step
// 2 stay apart and sort in run order. Step numbers in logs stay below it.
inline constexpr std::int64_t kRunStride = 1'000'000'000'000;
inline std::int64_t StepKey(int run, std::int64_t number) { return run > 0 ? run * kRunStride + number : number; }
inline std::int64_t StepNumber(std::int64_t key) { return key >= kRunStride ? key % kRunStride : key; }
inline int StepRun(std::int64_t key) { return key >= kRunStride ? static_cast<int>(key / kRunStride) : 0; }
// "step2", or "run2 step2" for a step of the second of several runs.
std::string StepName(std::int64_t key);

// No pipeline job lasts a day; one that seems to is a broken timer or clock.
inline constexpr std::int64_t kLongestJob = 86'400'000'000'000;

// kRangePush: an NVTX range the model named (not a step); it shares the
// push/pop stack with the step ranges.
// kStartBanner: a line a training process prints once, when it starts (a
// second one in a file means the job was restarted: model/run_splitter.h).
// kHybridInfo, kShimTopology: where the rank sits in a hybrid-parallel job
// (Paddle's HybridParallelInfo line, libjobviz's topology line).
enum class RecordKind : std::uint8_t {
  kJob, kProfilerWindow, kStepPush, kStepPop, kClockSync, kRangePush, kStartBanner, kHybridInfo, kShimTopology,
  kInFlight,  // libjobviz's watchdog: a job begun (or enqueued) and not ended; `end`: when it was seen
  kProfilerHeader  // libjobviz's first line in a process ("jobviz profiler: rank = R"): `rank`, and `type` its host
};

// One recognised line of a worker log. Fields that a kind does not use stay 0.
struct LogRecord {
  RecordKind kind = RecordKind::kJob;
  bool started = true;       // kInFlight: false when the job was enqueued and never began
  bool log_shared = false;   // kProfilerHeader: libjobviz found the log held by another live profiler
  // kProfilerWindow: put there by `jobviz follow`'s cursor (parse/followed_records.h):
  // `step` numbers this file's records after it, whatever the run's other files say.
  bool cursor = false;
  std::uint32_t thread = 0;  // the glog prefix's thread id; 0 when the line has none
  std::uint64_t line = 0;  // 1-based line number in its file
  Nanos start = 0;         // job start; time of a step marker or clock-sync point
  Nanos end = 0;           // job end
  std::int64_t micro_batch = 0;
  std::int64_t step = 0;             // pushed step number; profiler window start step
  std::int64_t window_end_step = -1; // profiler window end step, -1 when not printed
  std::int64_t rank = 0, round = 0;  // clock sync; rank also of topology and profiler header lines
  Name job_id, type;                 // jobs; type also the name of a pushed range
  ParallelPlace place;               // topology lines only
};

// A line that says where the rank sits (either form of HybridParallelInfo).
inline bool IsTopologyRecord(const LogRecord& r) {
  return r.kind == RecordKind::kHybridInfo || r.kind == RecordKind::kShimTopology;
}

enum class SkipReason : std::uint8_t {
  kMalformedJob,
  kMalformedWindow,
  kMalformedStepLine,
  kMalformedClockSync,
  kEndBeforeStart,
  kTimerNeverFired,
  kTruncatedLastLine,
  kOverlongLine,
  kUnmatchedStepPop,
  kImplausibleDuration,  // a job longer than kLongestJob: clock garbage, not a job
  kMalformedTopology,    // a HybridParallelInfo or jobviz topology line that places no rank
  kMalformedHeader,      // a libjobviz start line that names no rank (only an events file can hold one)
  kBeyondLimits,         // a job whose micro-batch or line number is past what a Job holds (kMaxMicroBatch, kMaxJobLine)
  kCount  // new reasons go last: events files write a reason's number
};

const char* SkipReasonText(SkipReason reason);

struct SkippedLine {
  SkipReason reason;
  std::string file;  // as shown to the user
  std::uint64_t line = 0;
  size_t column = 0;   // 0-based byte offset in `text` where the problem is
  std::string text;    // the line, without its line end, cut to a sane length
  std::string detail;  // e.g. "expected ', type = <word>'"
};

// Counts every skipped line by reason and keeps the first few of each.
class SkipTally {
 public:
  static constexpr size_t kExamplesPerReason = 3;
  void Add(SkippedLine skipped);
  void AddCount(SkipReason reason, std::uint64_t count) { counts_[static_cast<size_t>(reason)] += count; }
  void Merge(const SkipTally& other);
  std::uint64_t count(SkipReason reason) const { return counts_[static_cast<size_t>(reason)]; }
  std::uint64_t total() const;
  const std::vector<SkippedLine>& examples() const { return examples_; }

 private:
  std::array<std::uint64_t, static_cast<size_t>(SkipReason::kCount)> counts_{};
  std::vector<SkippedLine> examples_;
};

// A job as drawn: a record of one worker, with the step it belongs to.
// Its micro-batch and line are kept in 32 bits (a job is 40 bytes, not 48:
// at a million jobs, 8 MB of the run's peak memory); the parsers refuse a
// job line beyond them (SkipReason::kBeyondLimits), so every Job made from a
// record holds what the record said.
inline constexpr std::int64_t kMaxMicroBatch = 2'147'483'647;
inline constexpr std::uint64_t kMaxJobLine = 4'294'967'295;
// Whether a Job holds a record's micro-batch and line number: what every
// parser checks before it keeps a job line.
inline bool FitsAJob(std::int64_t micro_batch, std::uint64_t line) {
  return micro_batch <= kMaxMicroBatch && line <= kMaxJobLine;
}
struct Job {
  Job() = default;
  // The fields in the order a brace list names them (micro-batch, start,
  // end, line, step), not the order they are stored in.
  Job(Name id_, Name type_, std::int64_t micro_batch_, Nanos start_, Nanos end_, std::uint64_t line_,
      std::int64_t step_ = kNoStep)
      : id(id_), type(type_), micro_batch(static_cast<std::int32_t>(micro_batch_)),
        line(static_cast<std::uint32_t>(line_)), start(start_), end(end_), step(step_) {}
  Name id, type;  // interned
  std::int32_t micro_batch = 0;  // 0 to kMaxMicroBatch
  std::uint32_t line = 0;        // 1 to kMaxJobLine
  Nanos start = 0, end = 0;
  std::int64_t step = kNoStep;
};
static_assert(sizeof(Job) == 40);

// "forward_3": a job's name in the traces.
inline std::string JobName(const Job& job) { return job.type.str() + "_" + job.id.str(); }
// A job's slice name in the Perfetto traces and the HTML report: its type
// and micro-batch ("forward 3", "backward_b1 0"), what people look for; the
// legacy trace keeps JobName, and the job id stays in the args.
inline std::string SliceName(const Job& job) { return job.type.str() + " " + std::to_string(job.micro_batch); }

// The order of Worker::jobs: by start, then by line (jobs that start
// together keep their file order).
inline bool StartsBefore(const Job& a, const Job& b) { return a.start != b.start ? a.start < b.start : a.line < b.line; }

struct StepSpan {
  std::int64_t step = 0;  // the step's number as the training program counts it
  Nanos start = 0, end = 0;
  // The run stopped in or before it: some workers never finished their part
  // (model/unfinished_steps.h). Drawn, marked, and left out of the analysis.
  bool unfinished = false;
};
// Widens the span of `step` among `spans` (sorted by step from index
// `first` on) to take in [start, end], adding it in step order when it is
// new. A worker's jobs of one step come together and its steps mostly in
// order, so `last`, the span touched before, is tried first, and a new one
// mostly goes at the end (a map per worker was a quarter of a million
// allocations at 131,072 workers). For StepSpan and the analysis's StepWindow.
template <typename Span>
void WidenStepSpan(std::vector<Span>& spans, size_t first, size_t& last, std::int64_t step, Nanos start, Nanos end) {
  if (last >= spans.size() || spans[last].step != step) {
    const auto it = std::lower_bound(spans.begin() + static_cast<std::ptrdiff_t>(first), spans.end(), step,
                                     [](const Span& span, std::int64_t s) { return span.step < s; });
    last = static_cast<size_t>(it - spans.begin());
    if (it == spans.end() || it->step != step) spans.insert(it, Span{step, start, end});
  }
  spans[last].start = std::min(spans[last].start, start);
  spans[last].end = std::max(spans[last].end, end);
}

// A step as the traces and the HTML report name its slice: "step2", or
// "step2 (unfinished: the run stopped here)".
std::string StepSliceName(const StepSpan& span);

// How a worker's log ends (parse/log_tail.h): what the stop report reads to
// tell a log that went silent while the others went on.
struct LogEnd {
  std::uint64_t lines = 0;     // lines in the file
  std::string last_line;       // its last line, cut to a sane length
  bool cut_mid_line = false;   // the file ends inside a line (a crash mid-write)
  // When its last line with a glog prefix was written, on the jobs' clock
  // (the prefix's local time, put on the job clock by a job line's own
  // prefix); 0: not known.
  Nanos stamped = 0;
  std::uint64_t stamped_line = 0;
  // The writer's offset from UTC, from its job lines' glog prefixes: the
  // stop report gives a time as the log's own stamps show it.
  std::optional<Nanos> zone_offset;
  // Lines in its last few KiB that say the process or the run ended, after
  // every job line there (0: none): libjobviz's closing "Profiler Stats:"
  // line, and a trainer's "Training completed." (PaddleNLP, Hugging Face).
  // A stall after a finished step is between steps unless the logs say the
  // run ended (LogsSayRunEnded).
  std::uint64_t closed_line = 0, training_completed_line = 0;
};

// A job that had begun, or was enqueued, and had not ended when libjobviz's
// watchdog looked: its "still running" or "not started" line
// (docs/workerlog-format.md). A later job line for it supersedes it.
struct InFlightJob {
  Name id, type;
  std::int64_t micro_batch = 0;
  Nanos start = 0;        // when it began; for one that never started, when it was enqueued
  Nanos seen = 0;         // when the watchdog wrote the line (start + waited)
  std::uint64_t line = 0;
  bool started = true;    // false: enqueued, its start never came (its stream blocked)
};

// The records of one worker log that belong to the chosen run.
struct Worker {
  int machine = 0;            // index of the machine in sorted order
  int index = 0;              // N of workerlog.N
  std::string file;           // path as shown to the user
  std::vector<Job> jobs;      // sorted by start, then line
  std::vector<LogRecord> markers;  // step pushes/pops, profiler windows, clock syncs
  std::vector<StepSpan> steps;     // this worker's own step spans
  // --run all with several runs in the file: the first line of each run
  // (the first is 0), to tell which run a job or marker belongs to.
  std::vector<std::uint64_t> run_starts;
  // Its stage, tensor-parallel peer index and replica (model/topology_resolver.h);
  // unknown until the topology is resolved, and when nothing says it.
  WorkerRole role;
  // How the file ends; left empty when the drawn run is not the file's last.
  LogEnd end;
  // Jobs begun and never ended, as the shim's watchdog saw them (the latest
  // line per job; none that a job line later ended).
  std::vector<InFlightJob> in_flight;
};

struct Machine {
  std::string name;  // directory name, e.g. "machine3"
  std::vector<Worker> workers;  // sorted by worker index
  // How this machine's clock was put on the reference clock (clock_align).
  std::string clock_method;  // "" when no alignment ran
  Nanos clock_offset = 0;    // its clock minus the reference, at the first job
  double clock_drift_ppm = 0;

  explicit Machine(std::string machine_name = "") : name(std::move(machine_name)) {}
};

enum class StepSource { kNone, kNvtx, kHeuristic };

struct Timeline {
  std::vector<Machine> machines;
  // Pipeline stage order as (machine index, worker index N); empty means
  // global rank order (machine, then worker). --stage_order sets it.
  std::vector<std::pair<int, int>> stage_order;
  // Where the workers' roles came from; kNone: every worker its own stage,
  // in the order above.
  Topology topology;
  // --rows stage: the traces and the HTML report group rows by pipeline
  // stage instead of by machine (emit/trace_events.h, LayOutRows).
  bool rows_by_stage = false;
  std::vector<StepSpan> steps;  // merged across workers, sorted by start
  StepSource step_source = StepSource::kNone;
  std::vector<std::string> step_warnings;
};

// All jobs of all workers.
size_t CountJobs(const Timeline& timeline);

// The latest end of the worker's jobs (0: none). Jobs are sorted by start,
// so the last one need not end last.
Nanos LastJobEnd(const Worker& worker);

// Every worker of the timeline, in machine then worker order.
std::vector<Worker*> AllWorkers(Timeline* timeline);
std::vector<const Worker*> AllWorkers(const Timeline& timeline);

// The run start: its earliest step or job start (0 without any). Every time
// a person reads (HTML ruler, tooltip and details, the Steps tables of the
// terminal, Markdown and HTML summaries, the stop report) counts from it,
// the same zero the Perfetto UI shows; the reports print it once in UTC
// (FormatUtcNanos).
Nanos RunStart(const Timeline& timeline);

// "machine0 worker 1": a worker as every report and table names it.
// Whether the logs say the run ended with step `last`: a profiling window
// whose last profiled step it is (the launcher exits before step end-1:
// docs/workerlog-format.md), a trainer's "Training completed." after the
// jobs of any log, or libjobviz's closing line after the jobs of every log
// that has jobs (one process that closed may have died). Otherwise a stall
// after a finished step is one between steps. Says which ("the profiling
// window's last"), "" when nothing does.
std::string RunEndedBecause(const Timeline& timeline, std::int64_t last);
inline bool LogsSayRunEnded(const Timeline& timeline, std::int64_t last) {
  return !RunEndedBecause(timeline, last).empty();
}

// The host libjobviz's start line names for the worker's process ("" when
// its log has none): the stop report gives it beside the machine directory.
std::string_view WorkerHost(const Worker& worker);

std::string WorkerName(const Machine& machine, const Worker& worker);
inline std::string WorkerName(const Timeline& timeline, const Worker& worker) {
  return WorkerName(timeline.machines[static_cast<size_t>(worker.machine)], worker);
}

}  // namespace jobviz
