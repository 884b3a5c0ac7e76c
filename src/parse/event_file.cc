#include "parse/event_file.h"

#include <nlohmann/json.hpp>

#include <charconv>

#include "emit/atomic_file.h"
#include "emit/json_text.h"
#include "read/byte_source.h"
#include "read/line_reader.h"

namespace jobviz {

namespace {

using nlohmann::json;

constexpr int kVersion = 1;

const char* KindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kJob: return "job";
    case RecordKind::kProfilerWindow: return "window";
    case RecordKind::kStepPush: return "push";
    case RecordKind::kStepPop: return "pop";
    case RecordKind::kClockSync: return "sync";
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
    case RecordKind::kClockSync: j.update({{"s", r.start}, {"rank", r.rank}, {"round", r.round}}); break;
  }
  return j;
}

LogRecord RecordFrom(const json& j) {
  LogRecord r;
  const std::string kind = j.at("k");
  r.line = j.at("l");
  if (kind == "job") {
    r.kind = RecordKind::kJob;
    r.start = j.at("s");
    r.end = j.at("e");
    r.micro_batch = j.at("mb");
    r.type = j.at("t");
    r.job_id = j.at("id");
  } else if (kind == "window") {
    r.kind = RecordKind::kProfilerWindow;
    r.step = j.at("step");
    r.window_end_step = j.at("end");
  } else if (kind == "push") {
    r.kind = RecordKind::kStepPush;
    r.start = j.at("s");
    r.step = j.at("step");
  } else if (kind == "pop") {
    r.kind = RecordKind::kStepPop;
    r.start = j.at("s");
  } else if (kind == "sync") {
    r.kind = RecordKind::kClockSync;
    r.start = j.at("s");
    r.rank = j.at("rank");
    r.round = j.at("round");
  } else {
    throw std::runtime_error("unknown record kind '" + kind + "'");
  }
  return r;
}

json SkipsJson(const SkipTally& tally) {
  json counts = json::object(), examples = json::array();
  for (size_t r = 0; r < static_cast<size_t>(SkipReason::kCount); ++r)
    if (tally.count(static_cast<SkipReason>(r))) counts[std::to_string(r)] = tally.count(static_cast<SkipReason>(r));
  for (const SkippedLine& s : tally.examples())
    examples.push_back({{"reason", static_cast<int>(s.reason)}, {"file", ValidUtf8(s.file)}, {"line", s.line},
                        {"column", s.column}, {"text", ValidUtf8(s.text)}, {"detail", ValidUtf8(s.detail)}});
  return {{"counts", counts}, {"examples", examples}};
}

size_t SkipReasonFrom(const std::string& text) {
  size_t reason = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), reason);
  if (ec != std::errc() || end != text.data() + text.size() || reason >= static_cast<size_t>(SkipReason::kCount))
    throw std::runtime_error("unknown skip reason '" + text + "'");
  return reason;
}

SkipTally SkipsFrom(const json& j) {
  // Examples first (they are the first of each reason), then the remaining counts.
  SkipTally tally;
  std::map<size_t, std::uint64_t> remaining;
  for (const auto& [reason, count] : j.at("counts").items()) remaining[SkipReasonFrom(reason)] = count;
  for (const json& e : j.at("examples")) {
    const size_t reason = SkipReasonFrom(std::to_string(e.at("reason").get<std::int64_t>()));
    if (remaining[reason] == 0) throw std::runtime_error("more skip examples than skipped lines");
    tally.Add({static_cast<SkipReason>(reason), e.at("file"), e.at("line"), e.at("column"), e.at("text"),
               e.at("detail")});
    --remaining[reason];
  }
  for (const auto& [reason, count] : remaining) tally.AddCount(static_cast<SkipReason>(reason), count);
  return tally;
}

}  // namespace

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
                     {"lines", scan.lines}, {"skipped", SkipsJson(scan.skipped)}});
  }
  auto write_line = [&](const json& j) { out.Write(j.dump() + "\n"); };
  write_line({{"format", "jobviz-events"}, {"version", kVersion}, {"machine", ValidUtf8(events.machine)}, {"files", files}});
  for (size_t i = 0; i < events.files.size(); ++i)
    for (const LogRecord& r : events.scans[i].records) write_line(RecordJson(events.files[i].worker, r));
  if (!out.Commit()) {
    *error = out.error();
    return false;
  }
  return true;
}

bool ReadEventFile(const std::string& path, MachineEvents* events, std::string* error) {
  std::string open_error;
  auto source = OpenByteSource(path, &open_error);
  if (!source) {
    *error = path + ": " + open_error;
    return false;
  }
  LineReader reader(*source);
  LineBlock block;
  std::uint64_t line_number = 0;
  std::map<int, size_t> by_worker;
  try {
    while (reader.Next(&block)) {
      std::string_view text = block.text;
      while (!text.empty()) {
        const size_t end = std::min(text.find('\n'), text.size());
        const std::string_view line = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        ++line_number;
        if (line.empty()) continue;
        const json j = json::parse(line);
        if (line_number == 1) {
          if (j.value("format", "") != "jobviz-events" || j.value("version", 0) != kVersion)
            throw std::runtime_error("not a jobviz events file (version " + std::to_string(kVersion) + ")");
          events->machine = j.at("machine");
          for (const json& f : j.at("files")) {
            WorkerLogScan scan;
            scan.file = f.at("file");
            scan.bytes = f.at("bytes");
            scan.lines = f.at("lines");
            scan.skipped = SkipsFrom(f.at("skipped"));
            by_worker[f.at("worker")] = events->files.size();
            events->files.push_back({0, f.at("worker"), scan.file});
            events->scans.push_back(std::move(scan));
          }
          continue;
        }
        const auto it = by_worker.find(j.at("w"));
        if (it == by_worker.end()) throw std::runtime_error("record of a worker not in the header");
        events->scans[it->second].records.push_back(RecordFrom(j));
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
  return true;
}

}  // namespace jobviz
