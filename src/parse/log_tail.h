// How a worker log ends: its last line, whether the file was cut inside a
// line, and when its last glog-stamped line was written, on the jobs' clock.
// A log that went silent while the others went on is how a hung or dead
// rank shows (analyse/stop_report.h), and job lines alone cannot say when a
// log went silent: a rank blocked in a collective prints no job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

// The local time of a glog prefix ("I1020 09:15:07.265326 22317 f.cc:1] ..."):
// no year, no zone.
struct GlogStamp {
  int month = 0, day = 0;
  Nanos time_of_day = 0;
};
std::optional<GlogStamp> ParseGlogStamp(std::string_view line);

// The writer's offset from UTC, from a line stamped `stamp` that printed a
// job ending at `job_end` (epoch nanoseconds): rounded to 15 minutes, every
// zone's step, since a job line is printed within minutes of its job's end
// (at most a step later). nullopt when no zone fits (over 14 hours).
std::optional<Nanos> GlogZoneOffset(const GlogStamp& stamp, Nanos job_end);

// The stamp as epoch nanoseconds on the jobs' clock, in the year that puts
// it nearest `near` (a job time of the same file).
Nanos GlogStampTime(const GlogStamp& stamp, Nanos zone_offset, Nanos near);

// Keeps the last few KiB of a log as its blocks go by, and tells how it ends.
class LogTailKeeper {
 public:
  static constexpr size_t kKept = 8192;
  void Add(std::string_view block_text);
  // `lines`: the file's line count; `zone_offset`: GlogZoneOffset of a job
  // line of the file, when one had a prefix; `near`: its last job's end.
  LogEnd Finish(std::uint64_t lines, bool ended_without_newline, std::optional<Nanos> zone_offset, Nanos near) const;

 private:
  std::string tail_;
};

}  // namespace jobviz
