/* libjobviz C API: opaque handles and error codes, for any language
 * (Python ctypes example in docs/runtime-shim.md). */
#ifndef JOBVIZ_JOBVIZ_H
#define JOBVIZ_JOBVIZ_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jobviz_profiler jobviz_profiler;
typedef struct jobviz_stream jobviz_stream;

typedef enum {
  JOBVIZ_OK = 0,
  JOBVIZ_ERROR_INVALID_ARGUMENT = 1, /* null handle, bad rank or window */
  JOBVIZ_ERROR_NO_CUDA = 2,          /* libjobviz was built without CUDA */
  JOBVIZ_ERROR_IO = 3,               /* the output file cannot be opened */
  JOBVIZ_ERROR_LAUNCH = 4,           /* the stream refused the host callback */
  JOBVIZ_ERROR_INTERNAL = 5
} jobviz_status;

/* A job token; JOBVIZ_NO_JOB when the job is not recorded. */
typedef uint64_t jobviz_job;
#define JOBVIZ_NO_JOB UINT64_MAX

/* output_path NULL or "" = stderr. profile_start/end -1 = unset (the
 * JOBVIZ_PROFILE_START/END environment variables apply). */
jobviz_status jobviz_profiler_create(int global_rank, int local_worker, int world_size,
                                     const char* output_path, int64_t profile_start,
                                     int64_t profile_end, jobviz_profiler** out);
/* The same, with this process's clock emulated as off by clock_offset_ns
 * plus clock_drift_ppm (tests and demos of clock alignment on one machine). */
jobviz_status jobviz_profiler_create_emulated(int global_rank, int local_worker, int world_size,
                                              const char* output_path, int64_t profile_start,
                                              int64_t profile_end, int64_t clock_offset_ns,
                                              double clock_drift_ppm, jobviz_profiler** out);
/* Flushes everything and frees the profiler. */
void jobviz_profiler_destroy(jobviz_profiler* profiler);

/* *out is JOBVIZ_NO_JOB when the job is not recorded (outside the window,
 * a full buffer: JOBVIZ_OK, counted lost) or refused: a type that is not one
 * word (\w+) or a micro-batch outside 0 to 2147483647 give
 * JOBVIZ_ERROR_INVALID_ARGUMENT. */
jobviz_status jobviz_job_begin(jobviz_profiler* profiler, jobviz_stream* stream, const char* type,
                               int64_t job_id, int64_t micro_batch, jobviz_job* out);
/* JOBVIZ_ERROR_INVALID_ARGUMENT for a token ended already, a stale one (its
 * slot was reused) or one given up as never ended; JOBVIZ_NO_JOB is fine. */
jobviz_status jobviz_job_end(jobviz_profiler* profiler, jobviz_stream* stream, jobviz_job job);
jobviz_status jobviz_step_begin(jobviz_profiler* profiler, int64_t step);
jobviz_status jobviz_step_end(jobviz_profiler* profiler);
jobviz_status jobviz_set_profile_window(jobviz_profiler* profiler, int64_t start, int64_t end);
/* Writes the line that tells jobviz this rank's pipeline stage (pp_rank),
 * replica (dp_rank: data parallel or sharding) and tensor-parallel index
 * (tp_rank), for frameworks that do not print Paddle's HybridParallelInfo
 * line. Once per profiler; values 0..999999 whose (pp_rank+1)(dp_rank+1)
 * (tp_rank+1) is at most 10,000,000 ranks (else INVALID_ARGUMENT). */
jobviz_status jobviz_set_topology(jobviz_profiler* profiler, int pp_rank, int dp_rank, int tp_rank);
/* The watchdog: a job begun and not ended after `seconds` (default 60), or
 * enqueued and never begun, gets a line at once (docs/runtime-shim.md);
 * 0 turns it off. INVALID_ARGUMENT for a negative or non-finite value. */
jobviz_status jobviz_set_stall_after(jobviz_profiler* profiler, double seconds);
/* Records lost so far (jobviz_stats.records_lost). */
uint64_t jobviz_records_lost(const jobviz_profiler* profiler);

/* Waits up to timeout_ms for job ends already enqueued, writes everything
 * and the final stats line; jobs begun and never ended are given up and
 * reported (in the log; on stderr when warn_on_stderr). Nothing is recorded
 * afterwards, but the stats stay readable until jobviz_profiler_destroy
 * (which shuts down with a 5 s timeout if this was not called). */
jobviz_status jobviz_profiler_shutdown(jobviz_profiler* profiler, int timeout_ms, int warn_on_stderr);

typedef struct {
  uint64_t jobs_recorded;    /* job lines written or to be written */
  uint64_t records_lost;     /* dropped (docs/runtime-shim.md, "What is counted") */
  uint64_t lines_written;    /* reached the log */
  uint64_t calls_refused;    /* bad type or micro-batch, a second or stale end */
  uint64_t jobs_never_ended; /* begun and never ended (in records_lost too) */
} jobviz_stats;
jobviz_status jobviz_get_stats(const jobviz_profiler* profiler, jobviz_stats* out);

/* The index-th job given up as never ended (index < min(jobs_never_ended, 16)). */
typedef struct {
  char type[64];
  int64_t job_id;
  int64_t micro_batch;
  int64_t start_ns; /* when its start ran on the stream, ns since the epoch */
} jobviz_job_info;
jobviz_status jobviz_never_ended_job(const jobviz_profiler* profiler, uint64_t index, jobviz_job_info* out);

/* Wraps a cudaStream_t (e.g. torch.cuda.current_stream().cuda_stream). */
jobviz_status jobviz_stream_wrap_cuda(void* cuda_stream, jobviz_stream** out);
/* A CPU stand-in stream; work is simulated with jobviz_cpu_stream_sleep. */
jobviz_status jobviz_stream_create_cpu(jobviz_stream** out);
jobviz_status jobviz_cpu_stream_sleep(jobviz_stream* stream, int64_t microseconds);
/* Waits for all work enqueued so far (CPU: the queue; CUDA: cudaStreamSynchronize). */
jobviz_status jobviz_stream_synchronize(jobviz_stream* stream);
void jobviz_stream_destroy(jobviz_stream* stream);

/* Clock sync (docs/clock-alignment.md). A communicator is the group whose
 * ranks take the time together: the application's NCCL communicator
 * (an ncclComm_t), an own one from an ncclUniqueId of
 * JOBVIZ_NCCL_UNIQUE_ID_BYTES bytes that rank 0 made and the application
 * distributed, or an in-process CPU group (tests, CPU streams). */
typedef struct jobviz_communicator jobviz_communicator;
#define JOBVIZ_NCCL_UNIQUE_ID_BYTES 128
jobviz_status jobviz_communicator_wrap_nccl(void* nccl_comm, jobviz_communicator** out);
jobviz_status jobviz_nccl_unique_id(void* unique_id_out);
jobviz_status jobviz_communicator_create_nccl(const void* unique_id, int rank, int size,
                                              jobviz_communicator** out);
/* A group of any processes whose collective is a barrier the application
 * supplies (torch.distributed.barrier, MPI_Barrier, ...): `barrier` returns 0
 * once every rank has reached it. Clock sync then runs on the calling thread
 * and needs no stream: pass NULL as the stream to jobviz_sync_clocks and
 * jobviz_attach_clock_sync. No GPU, no NCCL. */
typedef int (*jobviz_barrier_fn)(void* user_data);
jobviz_status jobviz_communicator_create_barrier(jobviz_barrier_fn barrier, void* user_data, int rank, int size,
                                                 jobviz_communicator** out);
/* Fills out[0..size-1] with the members of one in-process group. */
jobviz_status jobviz_communicator_create_cpu_group(int size, jobviz_communicator** out);
void jobviz_communicator_destroy(jobviz_communicator* communicator);
/* Runs `rounds` rounds now (rounds < 0: the default, 5). The stream may be
 * NULL for a barrier communicator. */
jobviz_status jobviz_sync_clocks(jobviz_profiler* profiler, jobviz_communicator* communicator,
                                 jobviz_stream* stream, int rounds);
/* Runs them by itself at the profiling window's start and end; NULLs detach. */
jobviz_status jobviz_attach_clock_sync(jobviz_profiler* profiler, jobviz_communicator* communicator,
                                       jobviz_stream* stream);

const char* jobviz_status_string(jobviz_status status);
const char* jobviz_version(void);

#ifdef __cplusplus
}
#endif

#endif /* JOBVIZ_JOBVIZ_H */
