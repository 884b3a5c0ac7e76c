#include "parse/event_file.h"
#include "parse/event_fast.h"
#include "parse/event_json.h"

#include <nlohmann/json.hpp>

#include "write/atomic_file.h"
#include "write/json_text.h"
#include "read/byte_source.h"
#include "read/line_reader.h"

namespace jobviz {

namespace event_json {

using nlohmann::json;

// 2: the last line is {"end":"jobviz-events","records":N}, so a file cut
// short at a line boundary is refused instead of merged with jobs missing.
constexpr int kVersion = 2;

const char* KindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kJob: return "job";
    case RecordKind::kProfilerWindow: return "window";
    case RecordKind::kStepPush: return "push";
    case RecordKind::kStepPop: return "pop";
    case RecordKind::kRangePush: return "range";
    case RecordKind::kClockSync: return "sync";
    case RecordKind::kStartBanner: return "start";
    case RecordKind::kHybridInfo: return "hybrid";
    case RecordKind::kShimTopology: return "topology";
    case RecordKind::kInFlight: return "inflight";
    case RecordKind::kProfilerHeader: return "header";
  }
  return "?";
}

json RecordJson(int worker, const LogRecord& r) {
  json j = {{"w", worker}, {"k", KindName(r.kind)}, {"l", r.line}};
  switch (r.kind) {
    case RecordKind::kJob:
      j.update({{"s", r.start}, {"e", r.end}, {"mb", r.micro_batch}, {"t", ValidUtf8(r.type)}, {"id", ValidUtf8(r.job_id)}});
      break;
    case RecordKind::kProfilerWindow: j.update({{"step", r.step}, {"end", r.window_end_step}}); break;
    case RecordKind::kStepPush: j.update({{"s", r.start}, {"step", r.step}}); break;
    case RecordKind::kStepPop: j["s"] = r.start; break;
    case RecordKind::kRangePush: j.update({{"s", r.start}, {"name", ValidUtf8(r.type)}}); break;
    case RecordKind::kClockSync: j.update({{"s", r.start}, {"rank", r.rank}, {"round", r.round}}); break;
    case RecordKind::kStartBanner: break;
    case RecordKind::kProfilerHeader:
      j["rank"] = r.rank;
      if (r.log_shared) j["shared"] = true;
      if (!r.type.empty()) j["host"] = ValidUtf8(r.type);
      break;
    case RecordKind::kInFlight:
      j.update({{"s", r.start}, {"e", r.end}, {"mb", r.micro_batch}, {"t", ValidUtf8(r.type)}, {"id", ValidUtf8(r.job_id)},
                {"started", r.started}});
      break;
    case RecordKind::kHybridInfo:
    case RecordKind::kShimTopology:
      j.update({{"rank", r.rank}, {"at", r.place.index}, {"of", r.place.degree}});
      break;
  }
  if (r.thread != 0) j["th"] = r.thread;  // for restart detection in merge
  return j;
}

// A member that must be an integer that fits in 64 bits (a double, or an
// unsigned number past INT64_MAX, would be undefined behaviour to convert).
std::int64_t Int64At(const json& j, const char* key) {
  const json& value = j.at(key);
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    throw BadRecord(SkipReason::kMalformedJob, std::string("'") + key + "' does not fit in 64 bits");
  if (!value.is_number_integer())
    throw BadRecord(SkipReason::kMalformedJob, std::string("'") + key + "' is not an integer");
  return value.get<std::int64_t>();
}

// The same ranges a log line's values have (line_parser.cc): times are not
// negative (ms since the epoch), steps and micro-batches below the run
// stride, ranks and rounds not negative.
std::int64_t TimeAt(const json& j, const char* key, SkipReason reason) {
  const std::int64_t value = Int64At(j, key);
  if (value < 0) throw BadRecord(reason, std::string("'") + key + "' is a negative time");
  return value;
}

std::int64_t StepAt(const json& j, const char* key, SkipReason reason, std::int64_t lowest = 0) {
  const std::int64_t value = Int64At(j, key);
  if (value < lowest || value >= kRunStride)
    throw BadRecord(reason, std::string("'") + key + "' is out of range (0 to 999999999999, as a log line holds)");
  return value;
}

// A count or size: a non-negative integer that fits in 64 bits.
std::uint64_t CountAt(const json& j, const char* key) {
  const json& value = j.at(key);
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(value.get<std::int64_t>());
  throw std::runtime_error(std::string("'") + key + "' is not a count");
}

// The fields a job and an in-flight job share: times, micro-batch, type, id.
void JobFieldsFrom(const json& j, LogRecord* r) {
  r->start = TimeAt(j, "s", SkipReason::kMalformedJob);
  r->end = TimeAt(j, "e", SkipReason::kMalformedJob);
  r->micro_batch = StepAt(j, "mb", SkipReason::kMalformedJob);
  r->type = j.at("t").get<std::string>();
  r->job_id = j.at("id").get<std::string>();
}

// One record line; throws BadRecord for a record that does not make sense
// (an unknown kind too), json's exceptions for a field of the wrong type.
LogRecord RecordFrom(const json& j) {
  LogRecord r;
  const std::string kind = j.contains("k") && j["k"].is_string() ? j["k"].get<std::string>() : "";
  if (kind == "job") {
    r.kind = RecordKind::kJob;
    JobFieldsFrom(j, &r);
    if (r.start == 0 || r.end == 0) throw BadRecord(SkipReason::kTimerNeverFired, "a job time is 0: its timer never fired");
    if (r.end < r.start) throw BadRecord(SkipReason::kEndBeforeStart, "the job ends before it starts");
    if (r.end - r.start > kLongestJob) throw BadRecord(SkipReason::kImplausibleDuration, "the job lasts longer than a day");
  } else if (kind == "window") {
    r.kind = RecordKind::kProfilerWindow;
    r.step = StepAt(j, "step", SkipReason::kMalformedWindow);
    r.window_end_step = StepAt(j, "end", SkipReason::kMalformedWindow, -1);
  } else if (kind == "push") {
    r.kind = RecordKind::kStepPush;
    r.start = TimeAt(j, "s", SkipReason::kMalformedStepLine);
    r.step = StepAt(j, "step", SkipReason::kMalformedStepLine);
  } else if (kind == "range") {
    r.kind = RecordKind::kRangePush;
    r.start = TimeAt(j, "s", SkipReason::kMalformedStepLine);
    r.type = j.at("name").get<std::string>();
  } else if (kind == "pop") {
    r.kind = RecordKind::kStepPop;
    r.start = TimeAt(j, "s", SkipReason::kMalformedStepLine);
  } else if (kind == "sync") {
    r.kind = RecordKind::kClockSync;
    r.start = TimeAt(j, "s", SkipReason::kMalformedClockSync);
    r.rank = Int64At(j, "rank");
    r.round = Int64At(j, "round");
    if (r.rank < 0 || r.round < 0) throw BadRecord(SkipReason::kMalformedClockSync, "a negative rank or round");
  } else if (kind == "start") {
    r.kind = RecordKind::kStartBanner;
  } else if (kind == "header") {
    r.kind = RecordKind::kProfilerHeader;
    r.rank = Int64At(j, "rank");
    if (r.rank < 0) throw BadRecord(SkipReason::kMalformedHeader, "a negative rank");
    r.log_shared = j.value("shared", false);
    if (j.contains("host")) r.type = j.at("host").get<std::string>();
  } else if (kind == "inflight") {
    r.kind = RecordKind::kInFlight;
    JobFieldsFrom(j, &r);
    r.started = j.at("started").get<bool>();
    if (r.end < r.start) throw BadRecord(SkipReason::kEndBeforeStart, "seen in flight before it began");
  } else if (kind == "hybrid" || kind == "topology") {
    r.kind = kind == "hybrid" ? RecordKind::kHybridInfo : RecordKind::kShimTopology;
    r.rank = Int64At(j, "rank");
    const json& at = j.at("at");
    const json& of = j.at("of");
    if (r.rank < 0 || r.rank >= kRunStride || !at.is_array() || !of.is_array() || at.size() != kAxes || of.size() != kAxes)
      throw BadRecord(SkipReason::kMalformedTopology, "'rank', 'at' or 'of' is not a topology");
    for (size_t a = 0; a < kAxes; ++a) {
      const std::int64_t index = at[a].is_number_integer() ? at[a].get<std::int64_t>() : -1;
      const std::int64_t degree = of[a].is_number_integer() ? of[a].get<std::int64_t>() : -1;
      if (index < 0 || index >= 1'000'000 || degree < 0 || degree > 1'000'000 || (degree > 0 && index >= degree))
        throw BadRecord(SkipReason::kMalformedTopology, "a coordinate or degree out of range");
      r.place.index[a] = static_cast<std::int32_t>(index);
      r.place.degree[a] = static_cast<std::int32_t>(degree);
    }
    if (r.rank >= kMaxRanks || RanksNeeded(r.place) > kMaxRanks)
      throw BadRecord(SkipReason::kMalformedTopology, "more ranks than the 10,000,000 a job can have");
  } else {  // a kind a newer extract writes: that record is left out, the rest read
    throw BadRecord(SkipReason::kMalformedJob, "unknown record kind '" + kind + "' (from a newer jobviz extract?)");
  }
  const std::int64_t line = Int64At(j, "l");
  if (line < 1) throw BadRecord(SkipReason::kMalformedJob, "'l' is not a line number");
  r.line = static_cast<std::uint64_t>(line);
  if (r.kind == RecordKind::kJob && !FitsAJob(r.micro_batch, r.line))
    throw BadRecord(SkipReason::kBeyondLimits, r.line > kMaxJobLine ? "'l' is past line " + std::to_string(kMaxJobLine)
                                                                    : "'mb' is above " + std::to_string(kMaxMicroBatch));
  if (j.contains("th")) {
    const std::int64_t thread = Int64At(j, "th");
    if (thread < 0 || thread > static_cast<std::int64_t>(UINT32_MAX)) throw BadRecord(SkipReason::kMalformedJob, "'th' is not a thread id");
    r.thread = static_cast<std::uint32_t>(thread);
  }
  return r;
}

}  // namespace event_json

using namespace event_json;

bool WriteEventFile(const std::string& path, const MachineEvents& events, std::string* error) {
  AtomicFile out;
  if (!out.Open(path, /*gzip=*/true)) {
    *error = out.error();
    return false;
  }
  json files = json::array();
  for (size_t i = 0; i < events.files.size(); ++i) {
    const WorkerLogScan& scan = events.scans[i];
    files.push_back({{"worker", events.files[i].worker}, {"file", ValidUtf8(scan.file)}, {"bytes", scan.bytes},
                     {"lines", scan.lines}, {"skipped", SkipsJson(scan.skipped)},
                     // How the log ends (parse/log_tail.h): what the stop report reads.
                     {"end", EndJson(scan.end)}});
  }
  auto write_line = [&](const json& j) { out.Write(j.dump() + "\n"); };
  write_line({{"format", "jobviz-events"}, {"version", kVersion}, {"machine", ValidUtf8(events.machine)}, {"files", files}});
  std::uint64_t records = 0;
  for (size_t i = 0; i < events.files.size(); ++i)
    for (const LogRecord& r : events.scans[i].records) {
      write_line(RecordJson(events.files[i].worker, r));
      ++records;
    }
  write_line({{"end", "jobviz-events"}, {"records", records}});
  if (!out.Commit()) {
    *error = out.error();
    return false;
  }
  return true;
}

namespace {

// What reading one events file has seen so far.
struct EventReader {
  const std::string& path;
  MachineEvents* events;
  std::map<std::int64_t, size_t> by_worker;
  std::uint64_t records = 0;
  bool header = false, ended = false;
  bool stream = false;  // written by extract --follow: files, totals and restarts come as lines

  void Header(const json& j) {
    const bool version_ok = j.contains("version") && j["version"].is_number_integer() &&
                            j["version"].get<std::int64_t>() == kVersion;
    if (!j.is_object() || j.value("format", "") != "jobviz-events" || !version_ok)
      throw std::runtime_error("not a jobviz events file of version " + std::to_string(kVersion) +
                               " (files of an older jobviz: run extract again)");
    events->machine = j.at("machine");
    stream = j.value("stream", false);
    for (const json& f : j.at("files")) {
      WorkerLogScan scan;
      scan.file = f.at("file");
      scan.bytes = CountAt(f, "bytes");
      scan.lines = CountAt(f, "lines");
      scan.skipped = SkipsFrom(f.at("skipped"), scan.lines);
      // optional: files of a jobviz before the stop report have none
      if (f.contains("end")) scan.end = EndFrom(f.at("end"), scan.lines);
      const std::int64_t worker = Int64At(f, "worker");
      if (worker < 0 || worker > INT32_MAX || by_worker.count(worker))
        throw std::runtime_error("worker " + std::to_string(worker) + " is invalid or listed twice");
      by_worker[worker] = events->files.size();
      events->files.push_back({0, static_cast<int>(worker), scan.file});
      events->scans.push_back(std::move(scan));
    }
    header = true;
  }

  // The lines only an open stream has (docs/extract-merge.md, "A stream"):
  // a log found, its figures so far, its restart. False for a record.
  bool StreamLine(const json& j) {
    const std::string kind = j.value("k", "");
    if (kind != "file" && kind != "totals" && kind != "restart") return false;
    const std::int64_t worker = Int64At(j, "w");
    if (kind == "file") {
      if (worker < 0 || worker > INT32_MAX || by_worker.count(worker))
        throw std::runtime_error("worker " + std::to_string(worker) + " is invalid or found twice");
      by_worker[worker] = events->files.size();
      events->files.push_back({0, static_cast<int>(worker), j.at("file").get<std::string>()});
      events->scans.emplace_back().file = j.at("file").get<std::string>();
      return true;
    }
    const auto it = by_worker.find(worker);
    if (it == by_worker.end()) throw std::runtime_error("a line of a worker not found before it");
    WorkerLogScan& scan = events->scans[it->second];
    if (kind == "restart") {
      scan.records.clear();
      return true;
    }
    LogTotals totals = TotalsFrom(j);
    scan.bytes = totals.bytes;
    scan.lines = totals.lines;
    scan.skipped = std::move(totals.skipped);
    scan.end = std::move(totals.end);
    return true;
  }

  // A job (nearly every line), window or topology record in the form
  // extract writes, read without the JSON parser; false leaves the line to it.
  bool CanonicalJob(std::string_view line) {
    std::int64_t worker = 0;
    LogRecord r;
    if (!header || ended || stream || !ReadCanonicalRecord(line, &worker, &r)) return false;
    const auto it = by_worker.find(worker);
    if (it == by_worker.end() || r.line > events->scans[it->second].lines) return false;
    ++records;
    events->scans[it->second].records.push_back(std::move(r));
    return true;
  }

  // A record that makes no sense is skipped and reported like a bad log line.
  void Record(const json& j, std::string_view line, std::uint64_t line_number) {
    if (!j.contains("k") && j.contains("end")) {  // {"end":"jobviz-events","records":N}
      if (Int64At(j, "records") != static_cast<std::int64_t>(records))
        throw std::runtime_error("the end line counts " + j.at("records").dump() + " records, the file holds " +
                                 std::to_string(records));
      ended = true;
      return;
    }
    if (ended) throw std::runtime_error("a record after the end line");
    if (stream && StreamLine(j)) return;
    const auto it = by_worker.find(Int64At(j, "w"));
    if (it == by_worker.end()) throw std::runtime_error("record of a worker not in the header");
    ++records;
    WorkerLogScan& scan = events->scans[it->second];
    try {
      scan.records.push_back(RecordFrom(j));
      if (!stream && scan.records.back().line > scan.lines) {
        scan.records.pop_back();
        throw BadRecord(SkipReason::kMalformedJob, "'l' is past the file's " + std::to_string(scan.lines) + " lines");
      }
    } catch (const BadRecord& bad) {
      scan.skipped.Add({bad.reason, path, line_number, 0, std::string(line.substr(0, 240)), bad.what()});
    }
  }
};

}  // namespace

bool ReadEventFile(const std::string& path, MachineEvents* events, std::string* error) {
  std::string open_error;
  auto source = OpenByteSource(path, &open_error);
  if (!source) {
    *error = path + ": " + open_error;
    return false;
  }
  return ReadEvents(path, *source, events, error);
}

bool ReadEvents(const std::string& path, ByteSource& source, MachineEvents* events, std::string* error) {
  LineReader reader(source);
  LineBlock block;
  std::uint64_t line_number = 0;
  EventReader state{path, events, {}, 0, false, false};
  try {
    while (reader.Next(&block)) {
      std::string_view text = block.text;
      while (!text.empty()) {
        const size_t end = std::min(text.find('\n'), text.size());
        const std::string_view line = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        ++line_number;
        if (line.empty() || state.CanonicalJob(line)) continue;
        const json j = json::parse(line);
        if (!state.header) state.Header(j);
        else state.Record(j, line, line_number);
      }
    }
  } catch (const std::exception& e) {
    *error = path + ":" + std::to_string(line_number) + ": " + e.what();
    return false;
  }
  if (!reader.error().empty()) {
    *error = path + ": " + reader.error();
    return false;
  }
  if (line_number == 0) {
    *error = path + ": empty events file";
    return false;
  }
  if (!state.ended) {
    *error = path + ": the events file is cut short (no end line after " + std::to_string(line_number) +
             " lines): was extract interrupted, or the copy incomplete?";
    return false;
  }
  return true;
}

}  // namespace jobviz
