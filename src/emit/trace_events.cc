#include "emit/trace_events.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <limits>
#include <condition_variable>
#include <map>
#include <mutex>
#include <tuple>

#include "analyse/analysis.h"
#include "emit/event_buffer.h"
#include "write/json_text.h"
#include "model/time_value.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {
constexpr size_t kFlushBytes = 1 << 20;
}  // namespace

std::string TraceText(TraceWriter write, const Timeline& timeline) {
  std::string text;
  write(timeline, [&](std::string_view piece) { text += piece; });
  return text;
}

std::string& EventStream::Begin() {
  if (!first_) out_ += ",\n";
  first_ = false;
  return out_;
}

void EventStream::End() {
  if (out_.size() >= kFlushBytes) {
    sink_(out_);
    out_.clear();
  }
}

void EventStream::Flush() {
  sink_(out_);
  out_.clear();
}

void WriteInOrder(size_t count, int threads, const std::function<void(size_t, std::string&)>& make,
                  const Sink& sink, size_t ahead) {
  std::vector<std::string> done(count);
  std::vector<bool> finished(count);
  std::mutex order;
  std::condition_variable written;
  size_t next_to_write = 0;
  bool writing = false;  // one thread at a time writes, outside the lock
  // At most this many pieces ahead of the one to write next are made, so
  // pieces waiting for a slow write do not pile up in memory. Items are
  // handed out in order, so the piece to write next is never the one waiting.
  if (ahead == 0) ahead = 2 * static_cast<size_t>(ThreadCount(threads));
  // Pieces written are kept for their room (a piece of a large trace is
  // MBs, grown by doubling each time otherwise); no more are kept than
  // can be in flight.
  std::vector<std::string> spare;
  ParallelFor(count, threads, [&](size_t i) {
    std::string piece;
    {
      std::unique_lock lock(order);
      written.wait(lock, [&] { return i < next_to_write + ahead; });
      if (!spare.empty()) {
        piece = std::move(spare.back());
        spare.pop_back();
      }
    }
    make(i, piece);
    std::unique_lock lock(order);
    done[i] = std::move(piece);
    finished[i] = true;
    if (writing) return;  // the writer looks again before it stops, and takes this one
    writing = true;
    while (next_to_write < count && finished[next_to_write]) {
      std::string ready = std::move(done[next_to_write++]);
      lock.unlock();
      sink(ready);
      ready.clear();
      lock.lock();
      spare.push_back(std::move(ready));
      written.notify_all();
    }
    writing = false;
  });
}

void EventStream::Finish(std::string_view trailer) {
  out_ += trailer;
  sink_(out_);
  out_.clear();
}

Nanos TraceOrigin(const Timeline& timeline) {
  const Nanos earliest = RunStart(timeline);
  if (earliest == 0) return 0;
  constexpr Nanos kSecond = 1'000'000'000;
  const Nanos floor = earliest / kSecond * kSecond;  // rounds towards zero
  return floor > earliest ? floor - kSecond : floor;
}


std::string SourceRoot(const Timeline& timeline) {
  const std::string* first = nullptr;
  size_t common = 0;  // length of the prefix all paths share
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      if (!first) {
        first = &worker.file;
        common = first->size();
        continue;
      }
      const auto [a, b] = std::mismatch(first->begin(), first->begin() + static_cast<std::ptrdiff_t>(common),
                                        worker.file.begin(), worker.file.end());
      common = static_cast<size_t>(a - first->begin());
    }
  if (!first) return "";
  const size_t slash = first->rfind('/', common == 0 ? 0 : common - 1);
  return slash == std::string::npos || common == 0 ? "" : first->substr(0, slash + 1);
}

std::string SourcePrefix(const Worker& worker, std::string_view root) {
  std::string prefix(std::string_view(worker.file).substr(root.size()));
  prefix += ':';
  return prefix;
}

std::string JobSource(const Worker& worker, const Job& job, std::string_view root) {
  std::string source = SourcePrefix(worker, root);
  AppendInt(source, static_cast<std::int64_t>(job.line));
  return source;
}

JobEventWriter::JobEventWriter(const Worker& worker, int pid, Nanos origin, std::string_view source_root,
                               JsonArgs args)
    : origin_(origin),
      full_(args == JsonArgs::kFull),
      pid_(",\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":"),
      worker_("\"machine\":" + std::to_string(worker.machine) + ",\"worker\":" + std::to_string(worker.index) +
              ",\"type\":"),
      source_(",\"source\":") {
  AppendJsonString(source_, SourcePrefix(worker, source_root));
  source_.pop_back();  // the closing quote comes after the line number
}

CriticalPathView::CriticalPathView(const Timeline& timeline, const Bottleneck* bottleneck)
    : timeline_(timeline), bottleneck_(bottleneck && bottleneck->ran ? bottleneck : nullptr) {
  size_t first = 0;
  for (const Machine& machine : timeline.machines) {
    first_worker_.push_back(first);
    first += machine.workers.size();
  }
  if (!bottleneck_) return;
  const bool replicas = timeline.topology.hybrid() && timeline.topology.replicas() > 1;
  for (const CriticalPathStep& step : bottleneck_->critical_paths) {
    Nanos at = step.start;
    if (step.step_start > 0) {
      slices_.push_back({at, at + step.step_start, "step start", step.step});
      at += step.step_start;
    }
    for (const CriticalJob& job : step.jobs) {
      if (job.hand_off > 0) {
        slices_.push_back({at, at + job.hand_off, "hand-off " + std::to_string(job.from_stage) + "\u2192" + std::to_string(job.stage), step.step});
        at += job.hand_off;
      }
      if (job.all_reduce > 0) {
        slices_.push_back({at, at + job.all_reduce, "all-reduce wait (after stage " + std::to_string(job.from_stage) + ")", step.step});
        at += job.all_reduce;
      }
      if (job.stall > 0) {
        slices_.push_back({at, at + job.stall, "stall", step.step});
        at += job.stall;
      }
      // A job that starts before the one before it ended (overlapping jobs) is drawn from that end.
      const Nanos start = std::max(at, job.start);
      std::string name = "stage " + std::to_string(job.stage) + " " + job.type.str() + " mb " + std::to_string(job.micro_batch);
      if (replicas) name += " (replica " + std::to_string(job.replica) + ")";
      slices_.push_back({start, std::max(start, job.end), std::move(name), step.step});
      at = std::max(start, job.end);
    }
  }
}

std::span<const std::uint32_t> CriticalPathView::JobsOn(size_t machine, const Worker& worker) const {
  if (!bottleneck_) return {};
  const size_t index = first_worker_[machine] + static_cast<size_t>(&worker - timeline_.machines[machine].workers.data());
  if (index >= bottleneck_->marks.size()) return {};
  return bottleneck_->marks[index];
}

int CriticalPathTid(const std::vector<RowGroup>& groups) { return NextRowTid(groups); }

void JobEventWriter::Append(std::string& out, const Job& job, int tid, bool critical) const {
  const std::string& type = job.type.str();
  EventBuffer w(out);
  w.Lit("{\"name\":");
  if (IsPlainJson(type)) {
    w.Char('"');
    w.Put(type);
    w.Char(' ');
    w.Int(job.micro_batch);
    w.Char('"');
  } else {
    w.JsonString(SliceName(job));
  }
  if (full_) {
    w.Lit(",\"cat\":");
    w.JsonString(type);
  }
  w.Put(pid_);
  w.Int(tid);
  w.Lit(",\"ts\":");
  w.Micros(job.start - origin_);
  w.Lit(",\"dur\":");
  w.Micros(job.end - job.start);
  w.Lit(",\"args\":{");
  if (full_) {
    w.Put(worker_);
    w.JsonString(type);
    w.Char(',');
  }
  w.Lit("\"job_id\":");  // the name is type and micro-batch; the log's Job (N) is here
  w.JsonString(job.id.str());
  if (critical) w.Lit(",\"critical_path\":1");
  if (full_) {  // compact: the name says the micro-batch, the Steps row the step
    w.Lit(",\"micro_batch\":");
    w.Int(job.micro_batch);
    w.Lit(",\"step\":");
    w.Int(StepNumber(job.step));
  }
  if (StepRun(job.step) > 0) {
    w.Lit(",\"run\":");
    w.Int(StepRun(job.step));
  }
  w.Put(source_);
  w.Int(static_cast<std::int64_t>(job.line));
  w.Lit("\"}}");
}

void AppendStepEvent(std::string& out, const StepSpan& step, std::string_view pid, std::string_view tid,
                     bool step_arg, Nanos origin) {
  JsonMembers event(out);
  event.String("name", StepSliceName(step)).Raw("cat", "\"step\"").Raw("ph", "\"X\"");
  event.Raw("pid", pid).Raw("tid", tid).Micros("ts", step.start - origin).Micros("dur", step.end - step.start);
  if (step_arg) {
    JsonMembers args(event.Object("args"));
    args.Int("step", StepNumber(step.step));
    if (StepRun(step.step) > 0) args.Int("run", StepRun(step.step));
    args.Close();
  }
  event.Close();
}

}  // namespace jobviz
