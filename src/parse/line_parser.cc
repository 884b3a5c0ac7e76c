#include "parse/line_parser.h"

#include "model/model.h"
#include "parse/hybrid_info.h"
#include "parse/job_line_matcher.h"

#include <algorithm>
#include <re2/re2.h>

#include <charconv>
#include <stdexcept>
#include <vector>

namespace jobviz {

namespace {

constexpr int kMaxGroups = 8;

RE2::Options PatternOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_encoding(RE2::Options::EncodingLatin1);  // logs may hold any bytes
  return options;
}

bool ToInt(std::string_view digits, std::int64_t* value) {
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

struct LineParser::Compiled {
  // Compiled patterns of one format: the whole record, and each field alone
  // (used only to say which field is wrong).
  struct FormatPatterns {
    std::unique_ptr<RE2> whole;
    std::vector<std::unique_ptr<RE2>> fields;
  };
  std::vector<FormatPatterns> formats;
};

LineParser::LineParser()
    : scanner_({LineFormats()[0].keyword, LineFormats()[1].keyword, LineFormats()[2].keyword,
                LineFormats()[3].keyword, LineFormats()[4].keyword, LineFormats()[5].keyword,
                LineFormats()[6].keyword}),  // kInFlight: kJob's
      compiled_(std::make_unique<Compiled>()) {
  for (const LineFormat& format : LineFormats()) {
    Compiled::FormatPatterns patterns;
    std::string whole;
    for (const FieldPattern& field : format.fields) {
      whole += field.regex;
      patterns.fields.push_back(std::make_unique<RE2>(std::string(field.regex), PatternOptions()));
    }
    patterns.whole = std::make_unique<RE2>(whole, PatternOptions());
    if (!patterns.whole->ok() || patterns.whole->NumberOfCapturingGroups() >= kMaxGroups)
      throw std::logic_error("bad pattern for " + std::string(format.name) + ": " +
                             patterns.whole->error());
    compiled_->formats.push_back(std::move(patterns));
  }
  // The samples document the formats; a pattern that stops matching them is a bug.
  std::string scratch;
  for (const LineFormat& format : LineFormats()) {
    for (std::string_view sample : format.samples) {
      if ((format.kind == LineKind::kJob && !JobMatcherAgrees(sample, sample.find(format.keyword))) ||
          (format.kind == LineKind::kNvtx && !CanonicalStepAgrees(sample, sample.find(format.keyword))))
        throw std::logic_error("a one-pass matcher and its pattern disagree on: " + std::string(sample));
      const ParsedLine parsed = ParseFirst(sample, &scratch);
      if (parsed.kind == ParsedLine::Kind::kMalformed || parsed.format != format.kind)
        throw std::logic_error("sample " + std::string(format.name) +
                               " does not parse: " + std::string(sample));
    }
  }
}

LineParser::~LineParser() = default;

void StripAnsiEscapes(std::string_view line, std::string* out, size_t* position) {
  out->clear();
  size_t mapped = *position;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      const size_t end = j < line.size() ? j + 1 : j;
      if (i < *position) mapped -= std::min(end, *position) - i;
      i = end;
      continue;
    }
    out->push_back(line[i++]);
  }
  *position = mapped;
}

ParsedLine LineParser::Parse(std::string_view line, size_t keyword_pos, int keyword,
                             std::string* scratch) const {
  // Colour escapes are rare (Python logging to a terminal); only lines that
  // hold an ESC byte pay for a copy.
  if (line.find('\x1b') == std::string_view::npos) {
    ParsedLine parsed = ParseClean(line, keyword_pos, keyword);
    parsed.resume_at = parsed.kind == ParsedLine::Kind::kMalformed ? keyword_pos + 1 : parsed.record_end;
    return parsed;
  }
  size_t mapped = keyword_pos;
  StripAnsiEscapes(line, scratch, &mapped);
  ParsedLine parsed = ParseClean(*scratch, mapped, keyword);
  // Columns refer to the stripped text; map them back roughly by the number
  // of bytes removed before the keyword, and resume after this line's record.
  const size_t shift = keyword_pos - mapped;
  parsed.error_column += shift;
  parsed.resume_at = parsed.kind == ParsedLine::Kind::kMalformed ? keyword_pos + 1
                                                                  : parsed.record_end + shift;
  if (parsed.resume_at > line.size()) parsed.resume_at = line.size();
  return parsed;
}

ParsedLine LineParser::ParseFirst(std::string_view line, std::string* scratch) const {
  const KeywordScanner::Hit hit = scanner_.FindNext(line, 0);
  if (hit.position == KeywordScanner::npos) {
    ParsedLine none;
    none.expected = "a known keyword";
    return none;
  }
  return Parse(line, hit.position, hit.keyword, scratch);
}

namespace {

// A pop, a push of a step number, or a push of a range the model named.
ParsedLine::Kind NvtxKind(std::string_view pushed, bool pop) {
  if (pop) return ParsedLine::Kind::kStepPop;
  const bool number = std::all_of(pushed.begin(), pushed.end(), [](char c) { return c >= '0' && c <= '9'; });
  return number ? ParsedLine::Kind::kStepPush : ParsedLine::Kind::kRangePush;
}

}  // namespace

namespace {

// `pattern` anchored at `position`, its groups into `groups` (0: the whole match).
bool MatchPattern(const RE2& pattern, std::string_view text, size_t position, re2::StringPiece* groups) {
  return pattern.Match(text, position, text.size(), RE2::ANCHOR_START, groups, 1 + pattern.NumberOfCapturingGroups());
}

// The groups of the record at `keyword_pos`: job lines by hand, the rest
// (and job lines the matcher refuses) by RE2.
bool MatchGroups(const RE2& pattern, std::string_view text, size_t keyword_pos, int keyword,
                 re2::StringPiece* groups) {
  JobLineMatch job;
  if (static_cast<LineKind>(keyword) == LineKind::kJob && MatchJobLine(text, keyword_pos, &job)) {
    for (const std::string_view group : job.groups()) *groups++ = re2::StringPiece(group.data(), group.size());
    return true;
  }
  return MatchPattern(pattern, text, keyword_pos, groups);
}

}  // namespace

bool LineParser::JobMatcherAgrees(std::string_view text, size_t position) const {
  re2::StringPiece groups[kMaxGroups];
  const bool re2_matches = position <= text.size() &&
                           MatchPattern(*compiled_->formats[static_cast<size_t>(LineKind::kJob)].whole, text,
                                        position, groups);
  JobLineMatch job;
  const bool matcher_matches = MatchJobLine(text, position, &job);
  if (re2_matches != matcher_matches) return false;
  if (matcher_matches) {
    const auto found = job.groups();
    for (size_t i = 0; i < found.size(); ++i)
      if (found[i].data() != groups[i].data() || found[i].size() != groups[i].size()) return false;
  }
  return CanonicalAgrees(text, position);
}

std::optional<ParsedLine> LineParser::ParseAsTaken(std::string_view text, size_t at, size_t record_end,
                                                   LineKind kind) const {
  // The scanner takes a one-pass result only for a line that ends with the
  // record and holds no colour escape: what Parse then sees.
  const std::string_view line = text.substr(0, record_end);
  if (line.find('\x1b') != std::string_view::npos) return std::nullopt;
  std::string scratch;
  return Parse(line, at, static_cast<int>(kind), &scratch);
}

bool LineParser::CanonicalAgrees(std::string_view text, size_t position) const {
  CanonicalJob canonical;
  if (!ParseCanonicalJobLine(text, position, &canonical)) return true;  // the general path decides alone
  const std::optional<ParsedLine> parsed = ParseAsTaken(text, position, canonical.record_end, LineKind::kJob);
  return !parsed || (parsed->kind == ParsedLine::Kind::kJob && parsed->job_id.data() == canonical.id.data() &&
         parsed->job_id.size() == canonical.id.size() && parsed->type.data() == canonical.type.data() &&
         parsed->type.size() == canonical.type.size() && parsed->micro_batch == canonical.micro_batch &&
         parsed->start.ns == canonical.start.ns && parsed->start.decimals == canonical.start.decimals &&
         parsed->end.ns == canonical.end.ns && parsed->end.decimals == canonical.end.decimals &&
         parsed->record_end == canonical.record_end);
}

bool LineParser::CanonicalStepAgrees(std::string_view text, size_t position) const {
  CanonicalStep step;
  if (!ParseCanonicalStepLine(text, position, &step)) return true;  // the general path decides alone
  const std::optional<ParsedLine> parsed = ParseAsTaken(text, position, step.record_end, LineKind::kNvtx);
  return !parsed || (parsed->kind == (step.push ? ParsedLine::Kind::kStepPush : ParsedLine::Kind::kStepPop) &&
         parsed->step == step.step && parsed->time.ns == step.time.ns &&
         parsed->time.decimals == step.time.decimals && parsed->record_end == step.record_end);
}

ParsedLine LineParser::ParseClean(std::string_view text, size_t keyword_pos, int keyword) const {
  re2::StringPiece groups[kMaxGroups];
  if (!MatchGroups(*compiled_->formats[keyword].whole, text, keyword_pos, keyword, groups)) {
    // Not a finished job: perhaps the watchdog's line for one in flight.
    constexpr int kInFlight = static_cast<int>(LineKind::kInFlight);
    if (keyword != static_cast<int>(LineKind::kJob) ||
        !MatchPattern(*compiled_->formats[kInFlight].whole, text, keyword_pos, groups))
      return Diagnose(text, keyword_pos, keyword);
    keyword = kInFlight;
  }

  auto group = [&](int i) -> std::string_view { return groups[i]; };
  ParsedLine parsed;
  parsed.format = static_cast<LineKind>(keyword);
  parsed.record_end = static_cast<size_t>(groups[0].data() + groups[0].size() - text.data());
  bool numbers_ok = true;
  auto millis = [&](int i) {
    const auto value = ParseMillis(group(i));
    numbers_ok &= value.has_value();
    return value.value_or(ParsedMillis{});
  };
  auto integer = [&](int i) {
    std::int64_t value = 0;
    numbers_ok &= ToInt(group(i), &value);
    return value;
  };
  bool steps_ok = true;
  auto step = [&](int i) {  // step numbers leave room for the run in a step key (model.h)
    const std::int64_t value = integer(i);
    steps_ok &= value < kRunStride;
    return value;
  };

  switch (parsed.format) {
    case LineKind::kJob:
      parsed.kind = ParsedLine::Kind::kJob;
      parsed.job_id = group(1);
      parsed.type = group(2);
      parsed.micro_batch = integer(3);
      parsed.start = millis(4);
      parsed.end = millis(5);
      break;
    case LineKind::kProfilerWindow:
      parsed.kind = ParsedLine::Kind::kProfilerWindow;
      parsed.start_step = step(1);
      if (!group(2).empty()) parsed.end_step = step(2);
      break;
    case LineKind::kNvtx:
      parsed.kind = NvtxKind(group(1), !group(2).empty());
      if (parsed.kind == ParsedLine::Kind::kStepPush) parsed.step = step(1);
      if (parsed.kind == ParsedLine::Kind::kRangePush) parsed.type = group(1);  // the range's name
      parsed.time = millis(3);
      break;
    case LineKind::kStartBanner:
      parsed.kind = ParsedLine::Kind::kStartBanner;
      break;
    case LineKind::kClockSync:
      parsed.kind = ParsedLine::Kind::kClockSync;
      parsed.rank = integer(1);
      parsed.round = integer(2);
      parsed.time = millis(3);
      break;
    case LineKind::kProfilerHeader:
      parsed.kind = ParsedLine::Kind::kProfilerHeader;
      parsed.rank = group(1).empty() || !text.substr(0, keyword_pos).ends_with("jobviz profile") ? -1 : integer(1);
      parsed.host = group(2);
      parsed.log_shared = !group(3).empty();
      break;
    case LineKind::kInFlight: {
      parsed.kind = ParsedLine::Kind::kInFlight;
      parsed.job_id = group(1);
      parsed.started = group(2) == "still running";
      parsed.type = group(3);
      parsed.micro_batch = integer(4);
      parsed.start = millis(5);
      const ParsedMillis waited = millis(6);  // seconds, read as if milliseconds: x1000
      numbers_ok &= waited.ns <= kLongestJob / 1000;
      parsed.waited = waited.ns * 1000;
      break;
    }
    case LineKind::kHybridInfo: {
      parsed.kind = ParsedLine::Kind::kHybridInfo;
      parsed.rank = integer(1);
      std::string why;
      bool by_coordinates = false;
      if (numbers_ok && parsed.rank >= kMaxRanks) {
        ParsedLine bad;
        bad.format = parsed.format;
        bad.error_column = static_cast<size_t>(groups[1].data() - text.data());
        bad.reason = "rank_id " + std::to_string(parsed.rank) + " is past the most ranks a job can have (10,000,000)";
        return bad;
      }
      if (numbers_ok && !ParseHybridFields(group(2), parsed.rank, &parsed.place, &by_coordinates, &why)) {
        ParsedLine bad;
        bad.format = parsed.format;
        bad.error_column = static_cast<size_t>(groups[2].data() - text.data());
        bad.expected = "fields that place the rank (e.g. pp_group holding rank_id)";
        bad.reason = why;
        return bad;
      }
      if (by_coordinates) parsed.kind = ParsedLine::Kind::kShimTopology;
      break;
    }
  }
  if (!numbers_ok || !steps_ok) {
    ParsedLine bad;
    bad.format = parsed.format;
    bad.error_column = keyword_pos;
    bad.expected = numbers_ok ? "a step number below 1000000000000" : "numbers that fit in 64 bits";
    return bad;
  }
  return parsed;
}

ParsedLine LineParser::Diagnose(std::string_view text, size_t keyword_pos, int keyword) const {
  const Compiled::FormatPatterns& patterns = compiled_->formats[keyword];
  const LineFormat& format = LineFormats()[keyword];
  ParsedLine bad;
  bad.kind = ParsedLine::Kind::kMalformed;
  bad.format = format.kind;
  size_t position = keyword_pos;
  for (size_t f = 0; f < patterns.fields.size(); ++f) {
    re2::StringPiece matched;
    if (!patterns.fields[f]->Match(text, position, text.size(), RE2::ANCHOR_START, &matched, 1)) {
      bad.error_column = position;
      bad.expected = format.fields[f].expected;
      return bad;
    }
    position = static_cast<size_t>(matched.data() + matched.size() - text.data());
  }
  // Every field matched alone, so the whole pattern would have matched too.
  bad.error_column = keyword_pos;
  bad.expected = "a record matching the whole pattern";
  return bad;
}

}  // namespace jobviz
