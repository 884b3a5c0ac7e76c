// The pieces of the events format (parse/event_file.h) that both the file
// and the open stream of `jobviz extract --follow` (parse/event_streams.h)
// are made of: a record, a file's skipped lines, how a log ends.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "parse/workerlog_scan.h"

namespace jobviz::event_json {

// A record that makes no sense, and the skip reason it is counted under.
struct BadRecord : std::logic_error {
  BadRecord(SkipReason why, const std::string& detail) : std::logic_error(detail), reason(why) {}
  SkipReason reason;
};

nlohmann::json RecordJson(int worker, const LogRecord& r);
// Throws BadRecord for a record that does not make sense (an unknown kind,
// written by a newer extract, too), json's exceptions for a field of the
// wrong type.
LogRecord RecordFrom(const nlohmann::json& j);

nlohmann::json SkipsJson(const SkipTally& tally);
SkipTally SkipsFrom(const nlohmann::json& j, std::uint64_t lines);

nlohmann::json EndJson(const LogEnd& end);
LogEnd EndFrom(const nlohmann::json& end, std::uint64_t lines);

// An open stream's totals line: a log's figures so far (bytes, lines, lines
// skipped and why, how it ends). Both readers of a stream take it apart here.
struct LogTotals {
  std::uint64_t bytes = 0, lines = 0;
  SkipTally skipped;
  LogEnd end;
};
nlohmann::json TotalsJson(int worker, const WorkerLogScan& scan);
LogTotals TotalsFrom(const nlohmann::json& j);

// A member that must be an integer (of 64 bits; a count: not negative).
std::int64_t Int64At(const nlohmann::json& j, const char* key);
std::uint64_t CountAt(const nlohmann::json& j, const char* key);

}  // namespace jobviz::event_json
