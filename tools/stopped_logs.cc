// Writes a simulated run that stops (analyse/stop_simulator.h) as worker
// logs, the way Paddle and libjobviz write them: glog-stamped job lines,
// a HybridParallelInfo line per rank (libjobviz's form; none for a plain
// pipeline), noise lines (some stamped seconds before the jobs around them,
// as a logging thread's late lines are), in-flight lines where the watchdog
// would have written them, NCCL's timeout line at the kill only where the
// simulated run has one, a copy's line cut mid-write, and each machine's
// clock off by a few milliseconds. No line marks a cut or a death: real
// logs have none. Prints the truth as one JSON line, for
// tools/eval-stops-cli (docs/analysis.md, "Where the run stopped").
//   jobviz-stopped-logs SEED DIR [--no-skew] [--no-noise]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "analyse/stop_evaluation.h"

using namespace jobviz;

namespace {

// "I1020 09:15:07.265326 4242 f.cc:1] ": the glog prefix of an instant, in UTC+8.
std::string Prefix(char level, Nanos t) {
  const Nanos local = t + 8LL * 3600 * 1'000'000'000;
  const std::time_t seconds = static_cast<std::time_t>(local / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::snprintf(text, sizeof text, "%c%02d%02d %02d:%02d:%02d.%06lld 4242 executor.cc:217] ", level, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(local % 1'000'000'000 / 1000));
  return text;
}

std::string Millis(Nanos t) {
  char text[48];
  std::snprintf(text, sizeof text, "%lld.%06lld", static_cast<long long>(t / 1'000'000),
                static_cast<long long>(t % 1'000'000));
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: jobviz-stopped-logs SEED DIR [--no-skew] [--no-noise]\n");
    return 2;
  }
  const std::uint64_t seed = std::strtoull(argv[1], nullptr, 10);
  const std::filesystem::path dir = argv[2];
  bool skew = true, noise = true;
  for (int i = 3; i < argc; ++i) {
    skew &= std::strcmp(argv[i], "--no-skew") != 0;
    noise &= std::strcmp(argv[i], "--no-noise") != 0;
  }
  const sim::StopRun spec = sim::RandomStopRun(seed);
  sim::StopTruth truth;
  const Timeline t = sim::SimulateStop(spec, &truth);
  std::uint64_t state = seed * 2862933555777941757ULL + 3037000493ULL;
  for (size_t m = 0; m < t.machines.size(); ++m) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    // Machine 0 is the reference; the others within +-2 ms.
    const Nanos offset = skew && m > 0 ? static_cast<Nanos>((state >> 33) % 4'000'000) - 2'000'000 : 0;
    const Machine& machine = t.machines[m];
    std::filesystem::create_directories(dir / machine.name);
    for (const Worker& w : machine.workers) {
      FILE* f = std::fopen((dir / machine.name / ("workerlog." + std::to_string(w.index))).c_str(), "w");
      if (!f) return 1;
      const Nanos first = w.jobs.empty() ? truth.kill_time : w.jobs.front().start;
      std::fprintf(f, "%sGPU Compute Capability: 8.0, Driver API Version: 12.0\n", Prefix('W', first + offset - 5'000'000'000).c_str());
      if (w.role.known())
        std::fprintf(f, "%sHybridParallelInfo: rank_id: %lld, pp_rank: %d, dp_rank: %d, tp_rank: %d\n",
                     Prefix('I', first + offset - 4'000'000'000).c_str(), static_cast<long long>(w.role.rank),
                     w.role.stage, w.role.replica, w.role.peer);
      size_t open = 0;
      for (size_t j = 0; j < w.jobs.size(); ++j) {
        const Job& job = w.jobs[j];
        std::fprintf(f, "%sProfiler Info: Job (%zu), type = %s, micro_batch_id = %lld, job_start_time = %s, job_end_time = %s\n",
                     Prefix('I', job.end + offset + 20'000).c_str(), j, job.type.str().c_str(),
                     static_cast<long long>(job.micro_batch), Millis(job.start + offset).c_str(),
                     Millis(job.end + offset).c_str());
        if (noise && j % 7 == 3)
          std::fprintf(f, "%stensor shape=[8, 1024, 4096] dtype=bfloat16 place=Place(gpu:0)\n",
                       Prefix('I', job.end + offset + 30'000).c_str());
        // A logging thread's line stamped long before it was printed, last in some logs.
        if (noise && (j % 11 == 5 || (j + 1 == w.jobs.size() && w.index % 3 == 1)))
          std::fprintf(f, "%sdataloader: prefetched batch\n", Prefix('I', job.end + offset - 2'000'000'000).c_str());
      }
      for (; open < w.in_flight.size(); ++open) {
        const InFlightJob& job = w.in_flight[open];
        std::fprintf(f, "%sProfiler Info: Job (%zu) still running, type = %s, micro_batch_id = %lld, job_start_time = %s, waited = %.3f s\n",
                     Prefix('W', job.seen + offset).c_str(), w.jobs.size() + open, job.type.str().c_str(),
                     static_cast<long long>(job.micro_batch), Millis(job.start + offset).c_str(),
                     static_cast<double>(job.seen - job.start) / 1e9);
      }
      if (w.end.stamped != 0)
        std::fprintf(f, "%sProcessGroupNCCL: Watchdog caught collective operation timeout\n",
                     Prefix('W', w.end.stamped + offset).c_str());
      if (w.end.cut_mid_line)  // copied while this line was being written
        std::fprintf(f, "%stensor sha", Prefix('I', (w.jobs.empty() ? truth.kill_time : w.jobs.back().end) + offset + 40'000).c_str());
      std::fclose(f);
    }
  }
  // The truth: the places that stopped first, by (replica, stage), with their last and next jobs.
  std::printf("{\"seed\": %llu, \"stopped\": %s, \"class\": \"%s\", \"kind\": \"%s\", \"layout\": \"%s\", "
              "\"barrier\": %s, \"in_flight\": %s, \"kill_lines\": %s, \"looks_finished\": %s, "
              "\"hung_all_reduce\": %d, \"hung_step\": %lld, \"first\": [",
              static_cast<unsigned long long>(seed), truth.stopped ? "true" : "false", sim::JudgedAs(truth).c_str(),
              sim::StopKindName(spec.stop), spec.run.topology ? "hybrid" : "plain", spec.barrier ? "true" : "false",
              spec.in_flight ? "true" : "false", spec.kill_lines ? "true" : "false",
              sim::LooksFinished(t, truth) ? "true" : "false", truth.hung_all_reduce,
              static_cast<long long>(truth.hung_step));
  for (size_t i = 0; i < truth.first.size(); ++i) {
    const sim::TruePlace& p = truth.first[i];
    std::printf("%s{\"replica\": %d, \"stage\": %d, \"in_all_reduce\": %s, \"last\": [\"%s\", %lld, %lld], \"next\": [\"%s\", %lld, %lld]}",
                i ? ", " : "", p.replica, p.stage, p.in_all_reduce ? "true" : "false", p.last_type.str().c_str(), static_cast<long long>(p.last_micro_batch),
                static_cast<long long>(p.last_step), p.next_type.str().c_str(),
                static_cast<long long>(p.next_micro_batch), static_cast<long long>(p.next_step));
  }
  std::printf("]}\n");
  return 0;
}
