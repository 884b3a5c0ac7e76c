// jobviz-bench-cuda: libjobviz's job marks on a real CUDA stream against the
// GPU's own record of the same points (docs/runtime-shim.md, "On a GPU").
//
// Each job is [gap kernel][event][begin mark][work kernel][event][end mark]
// on one stream. The truth of "when the stream reached the mark" comes from
// two independent clocks: CUDA events recorded right before each mark (GPU
// time), and a word in mapped host memory that each kernel writes as it
// ends, watched by a host thread spinning on it (host time). A straight-line
// fit of the one against the other puts the events on the host clock; the
// marks' errors are then their distance from the events.
//
// Runs of the same kernels:
//   plain    - no marks: the stream time the kernels and events take;
//   events   - libjobviz's default on CUDA streams: a CUDA event per job
//              start and end, put on the host clock by a side-stream anchor
//              (src/shim/event_clock.h);
//   callback - libjobviz with JOBVIZ_CUDA_TIMING=callbacks: a host callback
//              per job start and end;
//   anchored - CUDA events per job plus one host callback per step of 8 jobs
//              that ties the step's events to the host clock (the first
//              fallback considered; measured, not built into libjobviz).
// Exits 77 without a CUDA device.
#include <cuda_runtime.h>

#include "parse/log_jobs.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "jobviz/profiler.h"
#include "spin_kernels.cuh"

namespace {

std::int64_t HostNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);  // the clock libjobviz stamps with
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Spins `ns` on the GPU's timer, then publishes `mark` to the host.
__global__ void SpinThenMark(unsigned long long ns, volatile unsigned long long* word, unsigned long long mark) {
  SpinFor(ns);
  *word = mark;
  __threadfence_system();
}

bool Ok(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "jobviz-bench-cuda: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

struct Stats {
  double median = 0, p99 = 0, worst = 0;
};

// Of absolute values, in microseconds.
Stats Summarise(std::vector<double> us) {
  Stats s;
  if (us.empty()) return s;
  for (double& v : us) v = std::abs(v);
  std::sort(us.begin(), us.end());
  s.median = us[us.size() / 2];
  s.p99 = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  s.worst = us.back();
  return s;
}

// host = a + b * gpu, least squares (b absorbs the two clocks' drift).
struct Line {
  double a = 0, b = 1;
  double At(double x) const { return a + b * x; }
};
Line Fit(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i];
  const double mx = sx / n, my = sy / n;
  for (size_t i = 0; i < x.size(); ++i) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  Line line;
  line.b = sxx > 0 ? sxy / sxx : 1;
  line.a = my - line.b * mx;
  return line;
}

// One job's points, each in host nanoseconds (0 = not seen).
struct JobTimes {
  std::int64_t start = 0, end = 0;
};

struct Options {
  int jobs = 20000;
  int kernel_us = 50, gap_us = 20, jobs_per_step = 8;
  std::string json;
};

class Bench {
 public:
  Bench(const Options& o) : o_(o) {}
  bool Init();
  ~Bench();
  // Runs one layout; fills the stream time per job and, per job, the truth.
  enum class Marks { kNone, kCallback, kEvents, kAnchored };
  bool Run(Marks marks, const char* log_path);
  double stream_us_per_job = 0;
  std::vector<JobTimes> truth, marked;  // marked: what the layout says
  double host_us_per_boundary = 0;     // launching thread, libjobviz's runs

 private:
  bool HostCost(jobviz::Profiler& profiler, jobviz::CudaStream& stream);
  Options o_;
  cudaStream_t stream_ = nullptr;
  unsigned long long* word_ = nullptr;  // mapped host memory
  unsigned long long* word_device_ = nullptr;
  std::vector<cudaEvent_t> events_;  // 2 per job: before begin, before end
  std::vector<cudaEvent_t> anchors_;
};

bool Bench::Init() {
  // Mapped host memory needs no flag on 64-bit systems (unified addressing).
  if (!Ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !Ok(cudaHostAlloc(reinterpret_cast<void**>(&word_), sizeof *word_, cudaHostAllocMapped), "cudaHostAlloc") ||
      !Ok(cudaHostGetDevicePointer(reinterpret_cast<void**>(&word_device_), word_, 0), "cudaHostGetDevicePointer"))
    return false;
  events_.resize(2 * o_.jobs);
  for (auto& e : events_)
    if (!Ok(cudaEventCreate(&e), "cudaEventCreate")) return false;
  anchors_.resize(o_.jobs / o_.jobs_per_step + 1);
  for (auto& e : anchors_)
    if (!Ok(cudaEventCreate(&e), "cudaEventCreate")) return false;
  return true;
}

Bench::~Bench() {
  for (auto& e : events_) cudaEventDestroy(e);
  for (auto& e : anchors_) cudaEventDestroy(e);
  if (word_) cudaFreeHost(word_);
  if (stream_) cudaStreamDestroy(stream_);
}

// An anchor: the host time at which the stream passed `anchors_[k]`.
struct Anchor {
  std::atomic<std::int64_t> host{0};
};
void TakeAnchor(void* p) { static_cast<Anchor*>(p)->host.store(HostNanos(), std::memory_order_relaxed); }

// The forward job lines libjobviz wrote, by job id, as jobviz reads them.
std::vector<JobTimes> ReadJobLines(const char* path, int jobs) {
  std::vector<JobTimes> times(jobs);
  for (const jobviz::log_jobs::JobLine& job : jobviz::log_jobs::ReadLogJobs(path).jobs) {
    if (job.in_flight || job.type != "forward") continue;
    char* end = nullptr;
    const long long id = std::strtoll(job.id.c_str(), &end, 10);
    if (*end != '\0' || id < 0 || id >= jobs) continue;
    times[id] = {job.start, job.end};
  }
  return times;
}

bool Bench::HostCost(jobviz::Profiler& profiler, jobviz::CudaStream& stream) {
  // The stream held by a kernel, so the enqueue is measured, not the stream.
  constexpr int kJobs = 400;
  *word_ = 0;
  WaitForHost<<<1, 1, 0, stream_>>>(word_device_);
  const std::int64_t t0 = HostNanos();
  for (int j = 0; j < kJobs; ++j) profiler.EndJob(stream, profiler.BeginJob(stream, "warmup", j, 0));
  host_us_per_boundary = (HostNanos() - t0) / 1e3 / (2.0 * kJobs);
  *word_ = 1;
  return Ok(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

bool Bench::Run(Marks marks, const char* log_path) {
  const int n = o_.jobs;
  jobviz::ProfilerConfig config;
  config.output_path = log_path;
  config.stall_after_s = 0;
  config.capacity = 4096;  // the ring wraps: events are reused, as in a long run
  config.cuda_timing = marks == Marks::kEvents ? jobviz::ProfilerConfig::CudaTiming::kDeviceEvents
                                               : jobviz::ProfilerConfig::CudaTiming::kHostCallbacks;
  std::unique_ptr<jobviz::Profiler> profiler;
  jobviz::CudaStream stream(stream_);
  std::vector<Anchor> anchor_host(anchors_.size());
  bool ok = true;
  if (marks == Marks::kCallback || marks == Marks::kEvents) profiler = std::make_unique<jobviz::Profiler>(config);
  std::vector<std::atomic<std::int64_t>> seen(2 * n + 1);
  *word_ = 0;
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    unsigned long long last = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const unsigned long long now = *static_cast<volatile unsigned long long*>(word_);
      if (now != last && now <= static_cast<unsigned long long>(2 * n)) {
        seen[now].store(HostNanos(), std::memory_order_relaxed);
        last = now;
      }
    }
  });
  const unsigned long long gap_ns = o_.gap_us * 1000ull, kernel_ns = o_.kernel_us * 1000ull;
  for (int i = 0; i < n && ok; ++i) {
    if (marks == Marks::kAnchored && i % o_.jobs_per_step == 0) {
      const int k = i / o_.jobs_per_step;
      cudaEventRecord(anchors_[k], stream_);
      ok = stream.LaunchHostFunction(TakeAnchor, &anchor_host[k]);
    }
    SpinThenMark<<<1, 1, 0, stream_>>>(gap_ns, word_device_, 2 * i + 1);
    cudaEventRecord(events_[2 * i], stream_);
    jobviz::JobToken token;
    if (profiler) token = profiler->BeginJob(stream, "forward", i, 0);
    SpinThenMark<<<1, 1, 0, stream_>>>(kernel_ns, word_device_, 2 * i + 2);
    cudaEventRecord(events_[2 * i + 1], stream_);
    if (profiler) ok = profiler->EndJob(stream, token) && ok;
  }
  ok = Ok(cudaStreamSynchronize(stream_), "cudaStreamSynchronize") && ok;
  stop = true;
  watcher.join();
  // After the watcher (it holds the stream with the same word), on slots
  // whose events exist already: the steady state, not the first use.
  if (profiler && ok) ok = HostCost(*profiler, stream);
  if (profiler) profiler->Shutdown();
  if (!ok) return false;

  // Events on the host clock, by the marks the watcher saw.
  std::vector<double> gpu_ms(2 * n), xs, ys;
  for (int p = 0; p < 2 * n; ++p) {
    float ms = 0;
    if (!Ok(cudaEventElapsedTime(&ms, events_[0], events_[p]), "cudaEventElapsedTime")) return false;
    gpu_ms[p] = ms;
    if (const std::int64_t host = seen[p + 1].load()) xs.push_back(ms), ys.push_back(static_cast<double>(host - seen[1].load()));
  }
  if (xs.size() < static_cast<size_t>(n)) {
    std::fprintf(stderr, "jobviz-bench-cuda: the watcher saw %zu of %d marks\n", xs.size(), 2 * n);
    return false;
  }
  const Line line = Fit(xs, ys);
  const std::int64_t base = seen[1].load();
  truth.assign(n, {});
  for (int i = 0; i < n; ++i)
    truth[i] = {base + std::llround(line.At(gpu_ms[2 * i])), base + std::llround(line.At(gpu_ms[2 * i + 1]))};
  stream_us_per_job = (gpu_ms[2 * n - 1] - gpu_ms[0]) * 1e3 / (n - 1);

  marked.assign(n, {});
  if (profiler) marked = ReadJobLines(log_path, n);
  if (marks == Marks::kAnchored) {
    for (int i = 0; i < n; ++i) {
      const int k = i / o_.jobs_per_step;
      float a_to_start = 0, a_to_end = 0;
      cudaEventElapsedTime(&a_to_start, anchors_[k], events_[2 * i]);
      cudaEventElapsedTime(&a_to_end, anchors_[k], events_[2 * i + 1]);
      const std::int64_t h = anchor_host[k].host.load();
      marked[i] = {h + std::llround(a_to_start * 1e6), h + std::llround(a_to_end * 1e6)};
    }
  }
  return true;
}

struct Errors {
  Stats start, end, duration;
  int jobs = 0, missing = 0;
};

Errors Compare(const std::vector<JobTimes>& truth, const std::vector<JobTimes>& marked) {
  std::vector<double> start, end, duration;
  Errors e;
  for (size_t i = 0; i < truth.size(); ++i) {
    if (marked[i].start == 0 || marked[i].end == 0) {
      ++e.missing;
      continue;
    }
    start.push_back((marked[i].start - truth[i].start) / 1e3);
    end.push_back((marked[i].end - truth[i].end) / 1e3);
    duration.push_back(((marked[i].end - marked[i].start) - (truth[i].end - truth[i].start)) / 1e3);
  }
  e.jobs = static_cast<int>(start.size());
  e.start = Summarise(start), e.end = Summarise(end), e.duration = Summarise(duration);
  return e;
}

void Print(const char* name, const Errors& e, double added_us) {
  std::printf("  %-9s start %7.2f / %7.2f / %8.2f us   end %7.2f / %7.2f / %8.2f us   duration %7.2f / %7.2f / %8.2f us"
              "   stream time added %6.2f us/job  (%d jobs, %d missing)\n",
              name, e.start.median, e.start.p99, e.start.worst, e.end.median, e.end.p99, e.end.worst,
              e.duration.median, e.duration.p99, e.duration.worst, added_us, e.jobs, e.missing);
}

std::string Json(const char* name, const Errors& e, double added_us) {
  char text[768];
  const auto s = [](const Stats& s) {
    char b[128];
    std::snprintf(b, sizeof b, "{\"median_us\": %.3f, \"p99_us\": %.3f, \"worst_us\": %.3f}", s.median, s.p99, s.worst);
    return std::string(b);
  };
  std::snprintf(text, sizeof text,
                "\"%s\": {\"start\": %s, \"end\": %s, \"duration\": %s, \"stream_us_added_per_job\": %.3f, "
                "\"jobs\": %d, \"missing\": %d}",
                name, s(e.start).c_str(), s(e.end).c_str(), s(e.duration).c_str(), added_us, e.jobs, e.missing);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--jobs") o.jobs = std::atoi(argv[i + 1]);
    else if (key == "--kernel_us") o.kernel_us = std::atoi(argv[i + 1]);
    else if (key == "--gap_us") o.gap_us = std::atoi(argv[i + 1]);
    else if (key == "--json") o.json = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: jobviz-bench-cuda [--jobs N] [--kernel_us US] [--gap_us US] [--json FILE]\n");
      return 2;
    }
  }
  if (o.jobs < 16 || o.kernel_us < 1 || o.gap_us < 1) {
    std::fprintf(stderr, "jobviz-bench-cuda: --jobs >= 16, --kernel_us and --gap_us >= 1\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  Bench bench(o);
  if (!bench.Init()) return 1;
  char log_path[] = "/tmp/jobviz-bench-cuda-XXXXXX";
  const int fd = mkstemp(log_path);
  if (fd < 0) return 1;
  close(fd);
  if (!bench.Run(Bench::Marks::kNone, log_path)) return 1;  // warms up too
  if (!bench.Run(Bench::Marks::kNone, log_path)) return 1;
  const double plain = bench.stream_us_per_job;
  std::remove(log_path);
  if (!bench.Run(Bench::Marks::kCallback, log_path)) return 1;
  const Errors callback = Compare(bench.truth, bench.marked);
  const double callback_added = bench.stream_us_per_job - plain;
  const double callback_host = bench.host_us_per_boundary;
  std::remove(log_path);
  if (!bench.Run(Bench::Marks::kEvents, log_path)) return 1;
  const Errors events = Compare(bench.truth, bench.marked);
  const double events_added = bench.stream_us_per_job - plain;
  const double events_host = bench.host_us_per_boundary;
  std::remove(log_path);
  if (!bench.Run(Bench::Marks::kAnchored, log_path)) return 1;
  const Errors anchored = Compare(bench.truth, bench.marked);
  const double anchored_added = bench.stream_us_per_job - plain;
  std::remove(log_path);

  std::printf("jobviz-bench-cuda on %s: %d jobs of %d us kernels with %d us gaps, one stream\n", prop.name, o.jobs,
              o.kernel_us, o.gap_us);
  std::printf("  stream time per job without marks: %.2f us\n", plain);
  std::printf("  error against CUDA events on the host clock: median / p99 / worst\n");
  Print("events", events, events_added);
  Print("callback", callback, callback_added);
  Print("anchored", anchored, anchored_added);
  std::printf("  launching thread per job boundary (stream held, 400 jobs): events %.2f us, callback %.2f us\n",
              events_host, callback_host);
  const auto meets = [](const Errors& e, double added) {
    return e.missing == 0 && e.start.median <= 20 && e.end.median <= 20 && added <= 10;
  };
  const bool met = meets(events, events_added);
  std::printf("  goals (median error <= 20 us, <= 10 us stream time per job): events %s, callback %s\n",
              met ? "met" : "MISSED", meets(callback, callback_added) ? "met" : "MISSED");
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << "{\"device\": \"" << prop.name << "\", \"jobs\": " << o.jobs << ", \"kernel_us\": " << o.kernel_us
        << ", \"gap_us\": " << o.gap_us << ", \"stream_us_per_job_plain\": " << plain
        << ", \"host_us_per_boundary\": {\"events\": " << events_host << ", \"callback\": " << callback_host << "}, "
        << Json("events", events, events_added) << ", " << Json("callback", callback, callback_added) << ", "
        << Json("anchored", anchored, anchored_added) << ", \"goals_met\": " << (met ? "true" : "false") << "}\n";
  }
  return 0;
}
