// What the ledger keeps of one run (docs/history.md): made from the finished
// run's summary document and timeline, the same numbers every other output
// shows. Plain values: the ledger store writes them, tests build them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "emit/emitter.h"

namespace jobviz {

struct RecordedWorker {
  std::string host;         // libjobviz's host where its log names one, else the machine directory
  std::string machine_dir;  // machineN
  int gpu = 0;              // N of workerlog.N: the local index on its machine
  std::optional<std::int64_t> rank;
  std::optional<int> stage;
  int mp = 0, replica = 0;
  double busy_us = 0, idle_us = 0;
  std::optional<double> speed;        // its jobs' speed against the same jobs elsewhere (summary "speed")
  std::optional<double> slow_factor;  // a slow worker: how much slower than its peers or replicas
  // The step time it costs: the no-slow-workers what-if's gain, shared among
  // the slow workers by how much slower each is (factor - 1); 0 for the others.
  double cost_us = 0;
  double score = 0;  // cost_us over the run's step time: comparable across runs
  bool first_stop = false;  // the stop report names it as the first to stop
};

struct RecordedWhatIf {
  std::string key;
  bool applies = false;
  double gain = 0, saved_us = 0;
};

struct RunRecord {
  std::string identity;  // the logs' content: recording the same logs twice is one run
  std::int64_t recorded_at = 0, started_at = 0;  // unix seconds
  std::string name, command;
  std::map<std::string, std::string> tags;
  int pp = 1, mp = 1, dp = 1;
  int stages = 0, micro_batches = 0;
  size_t machines = 0, workers = 0, jobs = 0;
  std::string schedule;
  size_t steps = 0;
  double step_us = 0;  // the median step's duration
  double bubble = 0;
  std::optional<double> ideal_bubble;
  std::string top_cause, top_what_if;  // the first cause: its sentence and its what-if's key
  double top_gain = 0;
  std::string stop_kind = "finished", stop_sentence;
  std::optional<std::int64_t> stop_step;
  std::string stop_host;  // the first to stop: its host, GPU and rank
  std::optional<int> stop_gpu;
  std::optional<std::int64_t> stop_rank;
  std::vector<std::pair<std::int64_t, std::pair<double, double>>> step_rows;  // step -> (duration_us, bubble)
  std::vector<RecordedWorker> worker_rows;
  std::vector<RecordedWhatIf> what_ifs;

  bool finished() const { return stop_kind == "finished"; }
  // Whether the medians of history and --baseline-history take it: a run
  // that stopped says where it stopped, not how fast it ran.
  bool comparable() const { return finished() && steps > 0; }
  std::int64_t when() const { return started_at ? started_at : recorded_at; }  // unix seconds
};

// The median of `values` (the mean of the middle two of an even count); 0 when empty.
double Median(std::vector<double> values);

// Median's value of the values added so far, in O(log n) an addition: the
// lower half in a max-heap, the upper in a min-heap.
class RunningMedian {
 public:
  void Add(double value);
  double median() const;

 private:
  std::priority_queue<double> lower_;  // holds as many as upper_, or one more
  std::priority_queue<double, std::vector<double>, std::greater<>> upper_;
};

// The run's identity: a hash of every job (machine, worker, type,
// micro-batch, start, end) and the machines' names, as 16 hex digits.
std::string RunIdentity(const Timeline& timeline);

// `run` must have its analysis and summary made (AnalyseRun).
RunRecord RecordOf(const FinishedRun& run, std::string name, std::map<std::string, std::string> tags,
                   std::string command, std::int64_t recorded_at);

}  // namespace jobviz
