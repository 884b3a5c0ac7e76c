// The C API over the C++ profiler: opaque handles, status codes, no
// exceptions across the boundary.
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>
#include <new>

#include "jobviz/clock_sync.h"
#include "jobviz/jobviz.h"
#include "jobviz/profiler.h"
#include "jobviz/version.h"

#ifdef JOBVIZ_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

struct jobviz_profiler {
  std::unique_ptr<jobviz::Profiler> profiler;
};

struct jobviz_stream {
  std::unique_ptr<jobviz::Stream> stream;
  jobviz::CpuStream* cpu = nullptr;     // set for CPU streams
  jobviz::CudaStream* cuda = nullptr;   // set for wrapped CUDA streams
};

struct jobviz_communicator {
  std::unique_ptr<jobviz::Communicator> communicator;
};

extern "C" {

jobviz_status jobviz_profiler_create_emulated(int global_rank, int local_worker, int world_size,
                                              const char* output_path, int64_t profile_start, int64_t profile_end,
                                              int64_t clock_offset_ns, double clock_drift_ppm, jobviz_profiler** out) {
  if (!out || global_rank < 0 || local_worker < 0 || world_size < 1) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  *out = nullptr;
  jobviz::ProfilerConfig config;
  config.global_rank = global_rank;
  config.local_worker = local_worker;
  config.world_size = world_size;
  config.output_path = output_path ? output_path : "";
  config.profile_start = profile_start;
  config.profile_end = profile_end;
  config.emulated_clock_offset_ns = clock_offset_ns;
  config.emulated_clock_drift_ppm = clock_drift_ppm;
  try {
    *out = new jobviz_profiler{std::make_unique<jobviz::Profiler>(config)};
  } catch (const std::runtime_error&) {
    return JOBVIZ_ERROR_IO;
  } catch (...) {
    return JOBVIZ_ERROR_INTERNAL;
  }
  return JOBVIZ_OK;
}

jobviz_status jobviz_profiler_create(int global_rank, int local_worker, int world_size, const char* output_path,
                                     int64_t profile_start, int64_t profile_end, jobviz_profiler** out) {
  return jobviz_profiler_create_emulated(global_rank, local_worker, world_size, output_path, profile_start,
                                         profile_end, 0, 0.0, out);
}

void jobviz_profiler_destroy(jobviz_profiler* profiler) { delete profiler; }

jobviz_status jobviz_job_begin(jobviz_profiler* profiler, jobviz_stream* stream, const char* type, int64_t job_id,
                               int64_t micro_batch, jobviz_job* out) {
  if (!profiler || !stream || !type || !out) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  *out = JOBVIZ_NO_JOB;
  const std::uint64_t refused_before = profiler->profiler->stats().calls_refused;
  *out = profiler->profiler->BeginJob(*stream->stream, type, job_id, micro_batch).index;
  // Not one word, or a micro-batch out of range: refused (and counted), not merely unrecorded.
  if (*out == JOBVIZ_NO_JOB && profiler->profiler->stats().calls_refused != refused_before)
    return JOBVIZ_ERROR_INVALID_ARGUMENT;
  return JOBVIZ_OK;
}

jobviz_status jobviz_job_end(jobviz_profiler* profiler, jobviz_stream* stream, jobviz_job job) {
  if (!profiler || !stream) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  return profiler->profiler->EndJob(*stream->stream, jobviz::JobToken{job}) ? JOBVIZ_OK : JOBVIZ_ERROR_INVALID_ARGUMENT;
}

jobviz_status jobviz_profiler_shutdown(jobviz_profiler* profiler, int timeout_ms, int warn_on_stderr) {
  if (!profiler || timeout_ms < 0) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  profiler->profiler->Shutdown(timeout_ms, warn_on_stderr != 0);
  return JOBVIZ_OK;
}

jobviz_status jobviz_get_stats(const jobviz_profiler* profiler, jobviz_stats* out) {
  if (!profiler || !out) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  const jobviz::ProfilerStats s = profiler->profiler->stats();
  *out = {s.jobs_recorded, s.records_lost, s.lines_written, s.calls_refused, s.jobs_never_ended};
  return JOBVIZ_OK;
}

jobviz_status jobviz_never_ended_job(const jobviz_profiler* profiler, uint64_t index, jobviz_job_info* out) {
  if (!profiler || !out) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  const std::vector<jobviz::NeverEndedJob> jobs = profiler->profiler->never_ended_jobs();
  if (index >= jobs.size()) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  static_assert(sizeof out->type == sizeof jobs[0].type);
  std::memcpy(out->type, jobs[index].type, sizeof out->type);
  out->job_id = jobs[index].job_id;
  out->micro_batch = jobs[index].micro_batch;
  out->start_ns = jobs[index].start_ns;
  return JOBVIZ_OK;
}

jobviz_status jobviz_set_topology(jobviz_profiler* profiler, int pp_rank, int dp_rank, int tp_rank) {
  if (!profiler || !profiler->profiler->SetTopology(pp_rank, dp_rank, tp_rank)) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  return JOBVIZ_OK;
}

jobviz_status jobviz_set_stall_after(jobviz_profiler* profiler, double seconds) {
  if (!profiler || !(seconds >= 0) || !std::isfinite(seconds)) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  profiler->profiler->SetStallAfter(seconds);
  return JOBVIZ_OK;
}

jobviz_status jobviz_step_begin(jobviz_profiler* profiler, int64_t step) {
  if (!profiler) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  profiler->profiler->BeginStep(step);
  return JOBVIZ_OK;
}

jobviz_status jobviz_step_end(jobviz_profiler* profiler) {
  if (!profiler) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  profiler->profiler->EndStep();
  return JOBVIZ_OK;
}

jobviz_status jobviz_set_profile_window(jobviz_profiler* profiler, int64_t start, int64_t end) {
  if (!profiler || (start >= 0 && end >= 0 && end < start)) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  profiler->profiler->SetProfileWindow(start, end);
  return JOBVIZ_OK;
}

uint64_t jobviz_records_lost(const jobviz_profiler* profiler) {
  return profiler ? profiler->profiler->stats().records_lost : 0;
}

jobviz_status jobviz_stream_wrap_cuda(void* cuda_stream, jobviz_stream** out) {
  if (!out) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  *out = nullptr;
  if (!jobviz::IsCudaAvailable()) return JOBVIZ_ERROR_NO_CUDA;
  auto* handle = new (std::nothrow) jobviz_stream;
  if (!handle) return JOBVIZ_ERROR_INTERNAL;
  auto stream = std::make_unique<jobviz::CudaStream>(cuda_stream);
  handle->cuda = stream.get();
  handle->stream = std::move(stream);
  *out = handle;
  return JOBVIZ_OK;
}

jobviz_status jobviz_stream_create_cpu(jobviz_stream** out) {
  if (!out) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  try {
    auto* handle = new jobviz_stream;
    auto stream = std::make_unique<jobviz::CpuStream>();
    handle->cpu = stream.get();
    handle->stream = std::move(stream);
    *out = handle;
  } catch (...) {
    return JOBVIZ_ERROR_INTERNAL;
  }
  return JOBVIZ_OK;
}

jobviz_status jobviz_cpu_stream_sleep(jobviz_stream* stream, int64_t microseconds) {
  if (!stream || !stream->cpu || microseconds < 0) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  stream->cpu->EnqueueSleep(std::chrono::microseconds(microseconds));
  return JOBVIZ_OK;
}

jobviz_status jobviz_stream_synchronize(jobviz_stream* stream) {
  if (!stream) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  if (stream->cpu) {
    stream->cpu->Synchronize();
    return JOBVIZ_OK;
  }
#ifdef JOBVIZ_WITH_CUDA
  return cudaStreamSynchronize(static_cast<cudaStream_t>(stream->cuda->handle())) == cudaSuccess
             ? JOBVIZ_OK
             : JOBVIZ_ERROR_LAUNCH;
#else
  return JOBVIZ_ERROR_NO_CUDA;
#endif
}

void jobviz_stream_destroy(jobviz_stream* stream) { delete stream; }

jobviz_status jobviz_communicator_wrap_nccl(void* nccl_comm, jobviz_communicator** out) {
  if (!out || !nccl_comm) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  *out = nullptr;
  auto communicator = jobviz::NcclCommunicator::Wrap(nccl_comm);
  if (!communicator) return jobviz::IsCudaAvailable() ? JOBVIZ_ERROR_LAUNCH : JOBVIZ_ERROR_NO_CUDA;
  *out = new jobviz_communicator{std::move(communicator)};
  return JOBVIZ_OK;
}

jobviz_status jobviz_nccl_unique_id(void* unique_id_out) {
  if (!unique_id_out) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  if (jobviz::NcclCommunicator::CreateUniqueId(unique_id_out)) return JOBVIZ_OK;
  return jobviz::IsCudaAvailable() ? JOBVIZ_ERROR_LAUNCH : JOBVIZ_ERROR_NO_CUDA;
}

jobviz_status jobviz_communicator_create_nccl(const void* unique_id, int rank, int size,
                                              jobviz_communicator** out) {
  if (!out || !unique_id || rank < 0 || size < 1 || rank >= size) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  *out = nullptr;
  auto communicator = jobviz::NcclCommunicator::Create(unique_id, rank, size);
  if (!communicator) return jobviz::IsCudaAvailable() ? JOBVIZ_ERROR_LAUNCH : JOBVIZ_ERROR_NO_CUDA;
  *out = new jobviz_communicator{std::move(communicator)};
  return JOBVIZ_OK;
}

jobviz_status jobviz_communicator_create_barrier(jobviz_barrier_fn barrier, void* user_data, int rank, int size,
                                                 jobviz_communicator** out) {
  if (!out || !barrier || size < 1 || rank < 0 || rank >= size) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  auto call = [barrier, user_data] { return barrier(user_data) == 0; };
  *out = new jobviz_communicator{std::make_unique<jobviz::BarrierCommunicator>(call, rank, size)};
  return JOBVIZ_OK;
}

jobviz_status jobviz_communicator_create_cpu_group(int size, jobviz_communicator** out) {
  if (!out || size < 1) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  auto group = jobviz::CpuCommunicator::CreateGroup(size);
  for (int r = 0; r < size; ++r) out[r] = new jobviz_communicator{std::move(group[r])};
  return JOBVIZ_OK;
}

void jobviz_communicator_destroy(jobviz_communicator* communicator) { delete communicator; }

jobviz_status jobviz_sync_clocks(jobviz_profiler* profiler, jobviz_communicator* communicator,
                                 jobviz_stream* stream, int rounds) {
  if (!profiler || !communicator) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  if (auto* barrier = dynamic_cast<jobviz::BarrierCommunicator*>(communicator->communicator.get())) {
    profiler->profiler->SyncClocks(*barrier, rounds);
    return JOBVIZ_OK;
  }
  if (!stream) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  profiler->profiler->SyncClocks(*communicator->communicator, *stream->stream, rounds);
  return JOBVIZ_OK;
}

jobviz_status jobviz_attach_clock_sync(jobviz_profiler* profiler, jobviz_communicator* communicator,
                                       jobviz_stream* stream) {
  if (!profiler) return JOBVIZ_ERROR_INVALID_ARGUMENT;
  profiler->profiler->AttachClockSync(communicator ? communicator->communicator.get() : nullptr,
                                      stream ? stream->stream.get() : nullptr);
  return JOBVIZ_OK;
}

const char* jobviz_status_string(jobviz_status status) {
  switch (status) {
    case JOBVIZ_OK: return "ok";
    case JOBVIZ_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case JOBVIZ_ERROR_NO_CUDA: return "libjobviz was built without CUDA";
    case JOBVIZ_ERROR_IO: return "cannot open the output";
    case JOBVIZ_ERROR_LAUNCH: return "the stream refused the host callback";
    case JOBVIZ_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* jobviz_version(void) { return JOBVIZ_VERSION; }

}  // extern "C"
