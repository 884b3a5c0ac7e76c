#include "parse/workerlog_scan.h"

#include <algorithm>
#include <array>
#include <utility>

#include <cstring>

#include "parse/digit_chunks.h"
#include "parse/glog_thread.h"
#include "parse/job_line_matcher.h"
#include "parse/keyword_scanner.h"
#include "parse/log_tail.h"
#include "read/line_reader.h"

namespace jobviz {

namespace {

constexpr size_t kMaxShownLine = 240;
constexpr int kPrintedDecimals = 6;

SkipReason MalformedReason(LineKind format) {
  switch (format) {
    case LineKind::kJob: return SkipReason::kMalformedJob;
    case LineKind::kProfilerWindow: return SkipReason::kMalformedWindow;
    case LineKind::kNvtx: return SkipReason::kMalformedStepLine;
    case LineKind::kClockSync: return SkipReason::kMalformedClockSync;
    case LineKind::kStartBanner: break;  // any line with the keyword is one
    case LineKind::kHybridInfo: return SkipReason::kMalformedTopology;
    case LineKind::kProfilerHeader: break;  // its pattern matches any line with the keyword
    case LineKind::kInFlight: return SkipReason::kMalformedJob;
  }
  return SkipReason::kMalformedJob;
}

// The value of a text that is a number of up to three digits exactly as
// printed ("7"; not "07", which is another Name), else -1.
int SmallNumber(std::string_view text) {
  if (text.empty() || text.size() > 3 || (text.size() > 1 && text[0] == '0')) return -1;
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// Whether a job's times can be drawn: both timers fired, it ends no
// earlier than it starts, and lasts no longer than kLongestJob.
bool TimesDrawable(Nanos start, Nanos end) {
  return start != 0 && end != 0 && end >= start && end - start <= kLongestJob;
}

LogRecord JobRecord(std::uint64_t line, Name id, Name type, std::int64_t micro_batch,
                    Nanos start, Nanos end) {
  LogRecord record;
  record.kind = RecordKind::kJob;
  record.line = line;
  record.job_id = id;
  record.type = type;
  record.micro_batch = micro_batch;
  record.start = start;
  record.end = end;
  return record;
}

class Scanner {
 public:
  Scanner(WorkerLogScan& scan, const LineParser& parser, std::uint64_t lines_before = 0)
      : scan_(scan), parser_(parser), lines_before_(lines_before) {}

  void ScanBlock(const LineBlock& block);
  void Finish(bool ended_without_newline) { scan_.lines = lines_before_ + ended_without_newline; }
  // The writer's zone, from the first job lines with a glog prefix (LogEnd::stamped).
  std::optional<Nanos> zone_offset() const { return zone_offset_; }

 private:
  // A job line or a step's NVTX line as printed, taken in one pass; false
  // leaves it to the general way.
  bool TakeCanonicalJob(std::string_view text, size_t line_start, size_t keyword_pos, size_t* resume_at);
  bool TakeCanonicalStep(std::string_view text, size_t line_start, size_t keyword_pos, size_t* resume_at);
  void HandleRecord(std::string_view line, const ParsedLine& parsed, bool unterminated);
  // Skips (and reports) a job whose times cannot be drawn or that a Job cannot hold.
  bool JobUsable(std::string_view line, const ParsedLine& parsed);
  void Skip(SkipReason reason, std::string_view line, size_t column, std::string detail);
  void LearnZone(std::string_view line, Nanos job_end) {
    if (zone_offset_ || zone_tries_ == 0) return;
    --zone_tries_;
    if (const auto stamp = ParseGlogStamp(line)) zone_offset_ = GlogZoneOffset(*stamp, job_end);
  }

  WorkerLogScan& scan_;
  const LineParser& parser_;
  std::uint64_t lines_before_ = 0;  // complete lines before the current position
  std::uint64_t current_line_ = 0;  // 1-based number of the line being handled
  std::string scratch_;
  bool reported_overlong_ = false;
  std::optional<Nanos> zone_offset_;
  int zone_tries_ = 16;  // job lines with a prefix looked at before giving up
  // The Names of this file's job ids "0" to "127" and of its last job
  // types, kept here where they stay in cache: a job line's two Names
  // through the per-thread cache (model/name.h) cost a tenth of its parse.
  Name NameOfId(std::string_view id);
  Name NameOfType(std::string_view type);
  std::array<Name, 128> small_ids_{};
  std::array<std::pair<std::string_view, Name>, 4> recent_types_{};
  size_t next_type_ = 0;
};

void Scanner::ScanBlock(const LineBlock& block) {
  const std::string_view text = block.text;
  const KeywordScanner& keywords = parser_.scanner();
  size_t from = 0;
  for (;;) {
    // lines_before_ counts the newlines up to `from`; the scan adds those up to the hit.
    size_t last_newline = KeywordScanner::npos;  // before the hit, when the scan saw it
    const KeywordScanner::Hit hit = keywords.FindNextCountingLines(text, from, &lines_before_, &last_newline);
    if (hit.position == KeywordScanner::npos) break;
    current_line_ = lines_before_ + 1;
    if (last_newline == KeywordScanner::npos) {
      const size_t previous_newline = LastByte(text.data(), hit.position, '\n');
      if (previous_newline != SIZE_MAX) last_newline = previous_newline;
    }
    const size_t line_start = last_newline == KeywordScanner::npos ? 0 : last_newline + 1;
    if (hit.keyword == static_cast<int>(LineKind::kJob) && TakeCanonicalJob(text, line_start, hit.position, &from))
      continue;
    if (hit.keyword == static_cast<int>(LineKind::kNvtx) && TakeCanonicalStep(text, line_start, hit.position, &from))
      continue;

    const void* next_newline =
        std::memchr(text.data() + hit.position, '\n', text.size() - hit.position);
    const size_t line_end =
        next_newline ? static_cast<const char*>(next_newline) - text.data() : text.size();
    const bool unterminated = !next_newline && block.ends_without_newline;
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    const ParsedLine parsed =
        parser_.Parse(line, hit.position - line_start, hit.keyword, &scratch_);
    HandleRecord(line, parsed, unterminated);
    size_t next = line_start + parsed.resume_at;
    if (next <= hit.position) next = hit.position + 1;
    // The part of the line the scan skips holds no newline; counted all the same, to stay exact.
    lines_before_ += CountNewlines(text.substr(hit.position, next - hit.position));
    from = next;
  }
  if (block.cut_line && !reported_overlong_) {
    // The scan goes on through the rest of the line; say once that it was cut.
    reported_overlong_ = true;
    current_line_ = lines_before_ + 1;
    Skip(SkipReason::kOverlongLine, text.substr(text.size() - std::min<size_t>(text.size(), 80)), 0,
         "longer than " + std::to_string(LineReader::kMaxLine >> 20) + " MiB; records split across the cut may be missed");
  }
}

// Whether a record the one-pass parsers took (ending at `end`) is what the
// general way would give: the line ends with the record (no tail that could
// hold another, no last line cut short) and holds no colour escape before it.
bool EndsCleanLine(std::string_view text, size_t line_start, size_t keyword_pos, size_t end) {
  const bool ends_line = end < text.size() && (text[end] == '\n' || (text[end] == '\r' && end + 1 < text.size() &&
                                                                       text[end + 1] == '\n'));
  return ends_line && !ContainsByte(text.data() + line_start, keyword_pos - line_start, '\x1b');
}

// Taken only where the line ends cleanly and the times are usable;
// anything else, skipped lines included, goes the general way.
bool Scanner::TakeCanonicalJob(std::string_view text, size_t line_start, size_t keyword_pos, size_t* resume_at) {
  CanonicalJob job;
  if (!ParseCanonicalJobLine(text, keyword_pos, &job)) return false;
  const size_t end = job.record_end;
  if (!TimesDrawable(job.start.ns, job.end.ns) || !FitsAJob(job.micro_batch, current_line_) ||
      !EndsCleanLine(text, line_start, keyword_pos, end)) return false;

  LogRecord record = JobRecord(current_line_, NameOfId(job.id), NameOfType(job.type), job.micro_batch, job.start.ns,
                               job.end.ns);
  record.thread = GlogThread(text.substr(line_start, end - line_start));
  if (record.thread != 0) LearnZone(text.substr(line_start, end - line_start), job.end.ns);
  scan_.records.push_back(std::move(record));
  *resume_at = end;
  return true;
}

Name Scanner::NameOfId(std::string_view id) {
  const int value = SmallNumber(id);
  if (value < 0 || static_cast<size_t>(value) >= small_ids_.size()) return Name(id);
  Name& known = small_ids_[static_cast<size_t>(value)];
  if (known.empty()) known = Name(id);
  return known;
}

Name Scanner::NameOfType(std::string_view type) {
  for (const auto& [text, name] : recent_types_)
    if (text.size() == type.size() && SameBytes(text.data(), type.data(), type.size())) return name;
  const Name name(type);
  recent_types_[next_type_++ % recent_types_.size()] = {name.str(), name};
  return name;
}

bool Scanner::TakeCanonicalStep(std::string_view text, size_t line_start, size_t keyword_pos, size_t* resume_at) {
  CanonicalStep step;
  if (!ParseCanonicalStepLine(text, keyword_pos, &step)) return false;
  if (!EndsCleanLine(text, line_start, keyword_pos, step.record_end)) return false;
  LogRecord record;
  record.kind = step.push ? RecordKind::kStepPush : RecordKind::kStepPop;
  record.line = current_line_;
  record.step = step.step;  // 0 for a pop
  record.start = step.time.ns;
  record.thread = GlogThread(text.substr(line_start, step.record_end - line_start));
  scan_.records.push_back(record);
  *resume_at = step.record_end;
  return true;
}

void Scanner::Skip(SkipReason reason, std::string_view line, size_t column, std::string detail) {
  // Columns found in the raw line (colour escapes may split a field name, so
  // a search can miss) or mapped back from the stripped one: keep them on it.
  column = std::min(column, line.size());
  SkippedLine skipped{reason, scan_.file, current_line_, column, {}, std::move(detail)};
  // Show the part of a long line around the problem.
  size_t begin = 0;
  if (line.size() > kMaxShownLine && column > kMaxShownLine / 2) begin = column - kMaxShownLine / 2;
  skipped.text = std::string(line.substr(begin, kMaxShownLine));
  skipped.column = column - begin;
  scan_.skipped.Add(std::move(skipped));
}

bool Scanner::JobUsable(std::string_view line, const ParsedLine& parsed) {
  if (!FitsAJob(parsed.micro_batch, current_line_)) {
    Skip(SkipReason::kBeyondLimits, line, current_line_ > kMaxJobLine ? 0 : line.find("micro_batch_id"),
         current_line_ > kMaxJobLine ? "past line " + std::to_string(kMaxJobLine) + " of one log; split the log"
                                     : "micro-batch above " + std::to_string(kMaxMicroBatch));
    return false;
  }
  if (TimesDrawable(parsed.start.ns, parsed.end.ns)) return true;
  const size_t end_column = line.rfind("job_end_time");
  if (parsed.start.ns == 0 || parsed.end.ns == 0) {
    Skip(SkipReason::kTimerNeverFired, line, parsed.start.ns == 0 ? line.find("job_start_time") : end_column,
         "left out of the trace");
    return false;
  }
  if (parsed.end.ns < parsed.start.ns) {
    Skip(SkipReason::kEndBeforeStart, line, end_column,
         "end is " + FormatDuration(parsed.start.ns - parsed.end.ns) + " before start; left out of the trace");
    return false;
  }
  if (parsed.end.ns - parsed.start.ns > kLongestJob) {
    Skip(SkipReason::kImplausibleDuration, line, end_column,
         "it would last " + FormatDuration(parsed.end.ns - parsed.start.ns) + "; left out of the trace");
    return false;
  }
  return true;
}

void Scanner::HandleRecord(std::string_view line, const ParsedLine& parsed, bool unterminated) {
  // A killed job leaves a last line without '\n'; if it also lacks the
  // digits every complete line has, its numbers cannot be trusted.
  const bool cut_short =
      unterminated && line.size() <= parsed.record_end + 1 &&
      ((parsed.kind == ParsedLine::Kind::kJob && parsed.end.decimals < kPrintedDecimals) ||
       ((parsed.kind == ParsedLine::Kind::kStepPush || parsed.kind == ParsedLine::Kind::kStepPop ||
         parsed.kind == ParsedLine::Kind::kRangePush ||
         parsed.kind == ParsedLine::Kind::kClockSync) &&
        parsed.time.decimals < kPrintedDecimals));
  if (parsed.kind == ParsedLine::Kind::kMalformed || cut_short) {
    if (unterminated) {
      Skip(SkipReason::kTruncatedLastLine, line, line.size(), "the log ends inside this line");
      return;
    }
    Skip(MalformedReason(parsed.format), line, parsed.error_column,
         parsed.reason.empty() ? "expected '" + std::string(parsed.expected) + "'" : parsed.reason);
    return;
  }

  LogRecord record;
  record.line = current_line_;
  switch (parsed.kind) {
    case ParsedLine::Kind::kJob:
      if (!JobUsable(line, parsed)) return;
      record = JobRecord(current_line_, parsed.job_id, parsed.type, parsed.micro_batch, parsed.start.ns, parsed.end.ns);
      break;
    case ParsedLine::Kind::kProfilerWindow:
      record.kind = RecordKind::kProfilerWindow;
      record.step = parsed.start_step;
      record.window_end_step = parsed.end_step;
      break;
    case ParsedLine::Kind::kStepPush:
      record.kind = RecordKind::kStepPush;
      record.step = parsed.step;
      record.start = parsed.time.ns;
      break;
    case ParsedLine::Kind::kRangePush:
      record.kind = RecordKind::kRangePush;
      record.type = parsed.type;
      record.start = parsed.time.ns;
      break;
    case ParsedLine::Kind::kStepPop:
      record.kind = RecordKind::kStepPop;
      record.start = parsed.time.ns;
      break;
    case ParsedLine::Kind::kClockSync:
      record.kind = RecordKind::kClockSync;
      record.rank = parsed.rank;
      record.round = parsed.round;
      record.start = parsed.time.ns;
      break;
    case ParsedLine::Kind::kStartBanner:
      record.kind = RecordKind::kStartBanner;
      break;
    case ParsedLine::Kind::kHybridInfo:
    case ParsedLine::Kind::kShimTopology:
      record.kind = parsed.kind == ParsedLine::Kind::kHybridInfo ? RecordKind::kHybridInfo : RecordKind::kShimTopology;
      record.rank = parsed.rank;
      record.place = parsed.place;
      break;
    case ParsedLine::Kind::kProfilerHeader:
      if (parsed.rank < 0) return;  // "profiler: rank" in some other line: not libjobviz's, and not an error
      record.kind = RecordKind::kProfilerHeader;
      record.rank = parsed.rank;
      record.log_shared = parsed.log_shared;
      record.type = parsed.host;
      break;
    case ParsedLine::Kind::kInFlight:
      record = JobRecord(current_line_, parsed.job_id, parsed.type, parsed.micro_batch, parsed.start.ns,
                         SaturatingAdd(parsed.start.ns, parsed.waited));
      record.kind = RecordKind::kInFlight;
      record.started = parsed.started;
      break;
    case ParsedLine::Kind::kMalformed:
      return;
  }
  record.thread = GlogThread(line);
  if (record.kind == RecordKind::kJob && record.thread != 0) LearnZone(line, record.end);
  scan_.records.push_back(std::move(record));
}

// The end of the file's last job: the year a glog stamp belongs to.
Nanos LastJobEnd(const std::vector<LogRecord>& records) {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->kind == RecordKind::kJob) return it->end;
  return 0;
}

}  // namespace

WorkerLogScan ScanWorkerLog(const std::string& file, ByteSource& source, const LineParser& parser,
                            size_t block_size, std::atomic<std::uint64_t>* progress, ReadBuffer* buffer,
                            std::vector<LogRecord>* spare_records) {
  WorkerLogScan scan;
  scan.file = file;
  if (spare_records) {
    scan.records = std::move(*spare_records);
    scan.records.clear();
  }
  Scanner scanner(scan, parser);
  LineReader reader(source, block_size, LineReader::kMaxLine, buffer);
  LineBlock block;
  bool ended_without_newline = false;
  LogTailKeeper tail;
  while (reader.Next(&block)) {
    scanner.ScanBlock(block);
    tail.Add(block.text);
    ended_without_newline = block.ends_without_newline;
    if (progress) progress->fetch_add(block.text.size(), std::memory_order_relaxed);
  }
  scanner.Finish(ended_without_newline);
  scan.end = tail.Finish(scan.lines, ended_without_newline, scanner.zone_offset(), LastJobEnd(scan.records));
  scan.bytes = reader.bytes_read();
  if (!reader.error().empty()) scan.read_error = reader.error();
  return scan;
}

WorkerLogScan ScanAppendedLines(const std::string& file, std::string_view text, const LineParser& parser,
                                std::uint64_t lines_before) {
  WorkerLogScan scan;
  scan.file = file;
  Scanner scanner(scan, parser, lines_before);
  scanner.ScanBlock(LineBlock{text, false, false});
  scanner.Finish(false);
  LogTailKeeper tail;
  tail.Add(text.substr(text.size() - std::min(text.size(), LogTailKeeper::kKept)));
  scan.end = tail.Finish(scan.lines, false, scanner.zone_offset(), LastJobEnd(scan.records));
  scan.bytes = text.size();
  return scan;
}

WorkerLogScan ScanWorkerLogText(const std::string& file, std::string contents,
                                const LineParser& parser, size_t block_size) {
  auto source = StringByteSource(std::move(contents));
  return ScanWorkerLog(file, *source, parser, block_size);
}

}  // namespace jobviz
