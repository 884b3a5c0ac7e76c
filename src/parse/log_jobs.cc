#include "parse/log_jobs.h"

#include <memory>

#include "parse/workerlog_scan.h"

namespace jobviz::log_jobs {

LogJobs ReadLogJobs(const std::string& path) {
  LogJobs out;
  std::unique_ptr<ByteSource> source = OpenByteSource(path, &out.error);
  if (!source) return out;
  const LineParser parser;
  const WorkerLogScan scan = ScanWorkerLog(path, *source, parser);
  out.error = scan.read_error;
  out.lines = scan.lines;
  out.skipped = scan.skipped.total();
  for (const LogRecord& r : scan.records) {
    if (r.kind != RecordKind::kJob && r.kind != RecordKind::kInFlight) continue;
    JobLine job;
    job.id = r.job_id.str();
    job.type = r.type.str();
    job.micro_batch = r.micro_batch;
    job.start = r.start;
    job.end = r.end;
    job.line = r.line;
    job.in_flight = r.kind == RecordKind::kInFlight;
    job.started = r.started;
    out.jobs.push_back(std::move(job));
  }
  return out;
}

const JobLine* FindJob(const LogJobs& log, const std::string& id, const std::string& type, bool in_flight) {
  for (const JobLine& job : log.jobs)
    if (job.id == id && job.type == type && job.in_flight == in_flight) return &job;
  return nullptr;
}

}  // namespace jobviz::log_jobs
