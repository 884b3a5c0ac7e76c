#include "parse/line_formats.h"

namespace jobviz {

namespace {
// Milliseconds since the epoch: "1697793307213.760986", or whole ms in old logs.
#define JOBVIZ_MILLIS R"((\d+(?:\.\d*)?))"
}  // namespace

const std::vector<LineFormat>& LineFormats() {
  static const std::vector<LineFormat> formats = {
      {LineKind::kJob,
       "job line",
       "Profiler Info: Job",
       {
           {"Profiler Info: Job (<id>)", R"(Profiler Info: Job\s*\(\s*([^()\s]+)\s*\))"},
           {", type = <word>", R"(,\s*type\s*=\s*(\w+))"},
           {", micro_batch_id = <integer>", R"(,\s*micro_batch_id\s*=\s*(\d+))"},
           {", job_start_time = <milliseconds>", R"(,\s*job_start_time\s*=\s*)" JOBVIZ_MILLIS},
           {", job_end_time = <milliseconds>", R"(,\s*job_end_time\s*=\s*)" JOBVIZ_MILLIS},
       },
       {
           "I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (3), "
           "type = forward, micro_batch_id = 2, job_start_time = 1697793307213.760986, "
           "job_end_time = 1697793307254.006104",
           "Profiler Info: Job (0), type = backward_w0, micro_batch_id = 0, "
           "job_start_time = 1697793307213, job_end_time = 1697793307254.006104",
       }},
      {LineKind::kProfilerWindow,
       "profiler window line",
       "Schedule Profiler start",
       {
           {"Schedule Profiler start at step <integer>", R"(Schedule Profiler start at step\s+(\d+))"},
           {" and end at step <integer>", R"((?:\s+and end at step\s+(\d+))?)"},
       },
       {
           "Schedule Profiler start at step 5 and end at step 10",
           "[2023-10-20 09:15:07,265] [    INFO] - Schedule Profiler start at step 2",
       }},
      {LineKind::kNvtx,
       "NVTX step line",
       "NVTX range",
       {
           // A push names a step (digits) or a range of the model's own
           // (LlamaDecoderLayerAuto_fwd): any name up to the comma.
           {"NVTX range push: <step or name> or NVTX range pop",
            R"(NVTX range\s+(?:push:\s*(\d+|[^,\s][^,]*?)|(pop)))"},
           {", time: <milliseconds>", R"(,\s*time:\s*)" JOBVIZ_MILLIS},
       },
       {
           "NVTX range push: 7, time: 1697793307213.760986",
           "I1020 09:15:07.265326 22317 nvtx.cc:20] NVTX range pop, time: 1697793307290.113281",
           "NVTX range push: LlamaDecoderLayerAuto_fwd, time: 1697793307213.760986",
       }},
      {LineKind::kClockSync,
       "clock sync line",
       "Clock Sync:",
       {
           {"Clock Sync: rank = <integer>", R"(Clock Sync:\s*rank\s*=\s*(\d+))"},
           {", round = <integer>", R"(,\s*round\s*=\s*(\d+))"},
           {", time = <milliseconds>", R"(,\s*time\s*=\s*)" JOBVIZ_MILLIS},
       },
       {
           "Clock Sync: rank = 5, round = 0, time = 1697793307213.760986",
       }},
      // Paddle prints this once per process when it first sets up its GPU;
      // a second one in a workerlog means the job was started again.
      {LineKind::kStartBanner,
       "start-up banner",
       "GPU Compute Capability",
       {
           {"GPU Compute Capability", R"(GPU Compute Capability)"},
       },
       {
           "W1020 09:15:01.101362 22317 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.0, "
           "Driver API Version: 12.0, Runtime API Version: 11.8",
       }},
      // Paddle's fleet prints where a rank sits once, at start-up
      // (HybridCommunicateGroup in topology.py); the fields after rank_id
      // vary in order and number between versions (parse/hybrid_info.h).
      // libjobviz writes the same line with coordinates (pp_rank: 1) where
      // the framework prints none: one keyword for both.
      {LineKind::kHybridInfo,
       "HybridParallelInfo line",
       "HybridParallelInfo:",
       {
           {"HybridParallelInfo: rank_id: <integer>", R"(HybridParallelInfo:\s*rank_id:\s*(\d+))"},
           // The rest of the line: its fields are read (and checked, each
           // with its reason) by parse/hybrid_info.h, not cut short here.
           {", <name>: <integer, None or [ranks]>, ...", R"((.*))"},
       },
       {
           "[2024-04-30 17:28:28,401] [    INFO] topology.py:288 - HybridParallelInfo: rank_id: 0, mp_degree: 2, "
           "sharding_degree: 4, pp_degree: 4, dp_degree: 1, sep_degree: 1, mp_group: [0, 1],  sharding_group: [0, 2, "
           "4, 6], pp_group: [0, 8, 16, 24], dp_group: [0], sep:group: None, check/clip group: [0, 1, 2, 3]",
           "2022-07-20 09:46:51,333-INFO: [topology.py:187:__init__] HybridParallelInfo: rank_id: 0, mp_degree: 1, "
           "sharding_degree: 1, pp_degree: 1, dp_degree: 4, mp_group: [0],  sharding_group: [0], pp_group: [0], "
           "dp_group: [0, 1, 2, 3], check/clip group: [0]",
           "2022-04-02 23:32:10,565-INFO: [topology.py:152:__init__] HybridParallelInfo: rank_id: 0, dp_degree: 4, "
           "mp_degree: 1, pp_degree: 1, dp_group: [0, 1, 2, 3], mp_group: [0], pp_group: [0], check/clip group: [0]",
           // libjobviz's form (Profiler pp_rank, dp_rank, tp_rank): coordinates instead of groups.
           "I1020 09:15:07.265326 22317 jobviz_profiler.cc:1] HybridParallelInfo: rank_id: 5, pp_rank: 1, dp_rank: 0, "
           "tp_rank: 1",
       }},
      // libjobviz's first line in each process (docs/runtime-shim.md): two
      // of them from processes writing one file at once are how two ranks
      // given the same log path show when they print no clock-sync or step
      // lines (model/run_splitter.h, FindSharedWriters).
      // The keyword is the tail of "jobviz profiler: rank": its first bytes,
      // which the scanner's tables look up, are not "pro" of the
      // "jobviz_profiler.cc" that prefixes every libjobviz line (the parser
      // checks the "jobviz profile" before it).
      {LineKind::kProfilerHeader,
       "libjobviz start line",
       "r: rank",
       {
           // Optional: a line of other text with these words is left alone.
           {"jobviz profiler: rank = <integer>", R"(r: rank(?:\s*=\s*(\d+))?)"},
           // Optional too: the host its process ran on (older lines: none).
           {", host = <name>", R"((?:[^\n]*?,\s*host\s*=\s*([^,\s]+))?)"},
           // Written when the log was locked by another live profiler.
           {", log shared with another live jobviz profiler", R"((.*log shared with another live)?)"},
       },
       {
           "I1020 09:15:01.101362 22317 jobviz_profiler.cc:1] jobviz profiler: rank = 3, local worker = 1, "
           "world size = 4, host = node7",
           "I1020 09:15:01.101362 22318 jobviz_profiler.cc:1] jobviz profiler: rank = 2, local worker = 0, "
           "world size = 4, host = node7, log shared with another live jobviz profiler",
       }},
      // libjobviz's watchdog (docs/runtime-shim.md): a job begun and not
      // ended after stall_after seconds, or enqueued and never begun (its
      // stream blocked behind a hung kernel or collective).
      {LineKind::kInFlight,
       "in-flight job line",
       "Profiler Info: Job",
       {
           {"Profiler Info: Job (<id>)", R"(Profiler Info: Job\s*\(\s*([^()\s]+)\s*\))"},
           {" still running or not started", R"(\s+(still running|not started))"},
           {", type = <word>", R"(,\s*type\s*=\s*(\w+))"},
           {", micro_batch_id = <integer>", R"(,\s*micro_batch_id\s*=\s*(\d+))"},
           {", job_start_time or enqueue_time = <milliseconds>",
            R"(,\s*(?:job_start_time|enqueue_time)\s*=\s*)" JOBVIZ_MILLIS},
           {", waited = <seconds> s", R"(,\s*waited\s*=\s*(\d+(?:\.\d*)?)\s*s)"},
       },
       {
           "Profiler Info: Job (7) still running, type = backward, micro_batch_id = 2, "
           "job_start_time = 1697793307213.760986, waited = 60.000 s",
           "I1020 09:16:07.300000 22317 jobviz_profiler.cc:1] Profiler Info: Job (8) not started, type = forward, "
           "micro_batch_id = 3, enqueue_time = 1697793307240.000000, waited = 60.000 s",
       }},
  };
  return formats;
}

#undef JOBVIZ_MILLIS

}  // namespace jobviz
