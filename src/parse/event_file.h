// The events file of `jobviz extract` / `jobviz merge`: one machine's parsed
// records, so logs need not be copied to one place. gzip-compressed JSON
// lines (docs/extract-merge.md):
//   {"format":"jobviz-events","version":1,"machine":"machine3","files":[...]}
//   {"w":0,"k":"job","l":120,"s":<ns>,"e":<ns>,"mb":2,"t":"forward","id":"3"}
//   {"w":0,"k":"push","l":118,"s":<ns>,"step":5}   ("pop", "window", "sync" alike)
#pragma once

#include <string>
#include <vector>

#include "read/log_discovery.h"
#include "parse/workerlog_scan.h"
#include "read/byte_source.h"

namespace jobviz {

struct MachineEvents {
  std::string machine;
  std::vector<WorkerLogFile> files;  // machine index 0; worker indices as read
  std::vector<WorkerLogScan> scans;  // same order
};

// Writes atomically (temporary file, then rename). Returns false with `error`.
bool WriteEventFile(const std::string& path, const MachineEvents& events, std::string* error);

// Reads one events file; errors name the file and line.
bool ReadEventFile(const std::string& path, MachineEvents* events, std::string* error);

// The same from any bytes (tests, fuzzing); `path` names them in messages.
bool ReadEvents(const std::string& path, ByteSource& source, MachineEvents* events, std::string* error);

}  // namespace jobviz
