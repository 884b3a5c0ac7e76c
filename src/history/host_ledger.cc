#include "history/host_ledger.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace jobviz {

namespace {

// A job's stage: where a slowness is the job's when that stage is slow in
// most of the job's runs, whichever host ran it.
using Place = std::pair<std::string, int>;  // (run name, stage; -1 when unknown)

Place PlaceOf(const LedgerWorker& w) { return {w.run_name, w.worker.stage.value_or(-1)}; }

// Per place: the runs in which a worker there was slow.
using SlowRuns = std::map<Place, std::set<std::int64_t>>;

// Whether a host's slowness is its own or its job's; `where` names the job's stage.
SlowCause CauseOf(const std::set<Place>& slow_at, const SlowRuns& slow_runs, const HostFacts& facts, std::string* where) {
  if (slow_at.empty()) return SlowCause::kNone;
  if (slow_at.size() > 1) return SlowCause::kHost;  // different jobs or stages: it follows the host
  const Place& place = *slow_at.begin();
  const auto runs = facts.runs_of_name.find(place.first);
  const size_t of_job = runs == facts.runs_of_name.end() ? 0 : runs->second, slow = slow_runs.at(place).size();
  if (slow >= 2 && 2 * slow >= of_job) {
    *where = (place.second >= 0 ? "stage " + std::to_string(place.second) + " of " : std::string()) + place.first;
    return SlowCause::kJob;
  }
  return SlowCause::kHost;  // the job's other runs had that stage at speed
}

struct Tally {
  HostLine line;
  std::set<Place> slow_at;
};

void Count(Tally& t, const LedgerWorker& w) {
  t.line.lost_us += w.worker.cost_us;
  t.line.worst_score = std::max(t.line.worst_score, w.worker.score);
  if (w.worker.slow_factor) {
    t.slow_at.insert(PlaceOf(w));
    if (t.line.slow_runs.empty() || t.line.slow_runs.back() != w.run) t.line.slow_runs.push_back(w.run);
  }
  if (w.worker.first_stop && (t.line.stop_runs.empty() || t.line.stop_runs.back() != w.run)) t.line.stop_runs.push_back(w.run);
}

std::vector<HostLine> Ranked(std::map<std::pair<std::string, int>, Tally>& tallies, const SlowRuns& slow_runs,
                             const HostFacts& facts) {
  std::vector<HostLine> lines;
  for (auto& [key, t] : tallies) {
    HostLine line = std::move(t.line);
    for (std::vector<std::int64_t>* ids : {&line.slow_runs, &line.stop_runs}) {
      std::sort(ids->begin(), ids->end());
      ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    }
    line.runs = facts.took_part ? facts.took_part(line.host, line.gpu) : 0;
    line.slow = line.slow_runs.size();
    line.first_stop = line.stop_runs.size();
    line.cause = CauseOf(t.slow_at, slow_runs, facts, &line.where);
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end(), [](const HostLine& a, const HostLine& b) {
    if (a.lost_us != b.lost_us) return a.lost_us > b.lost_us;
    if (a.first_stop != b.first_stop) return a.first_stop > b.first_stop;
    if (a.slow != b.slow) return a.slow > b.slow;
    return std::tie(a.host, a.gpu) < std::tie(b.host, b.gpu);
  });
  return lines;
}

}  // namespace

const char* SlowCauseKey(SlowCause cause) {
  switch (cause) {
    case SlowCause::kHost: return "host";
    case SlowCause::kJob: return "job";
    case SlowCause::kNone: break;
  }
  return "";
}

HostFacts FactsOfWorkers(const std::vector<LedgerWorker>& workers) {
  HostFacts facts;
  std::map<std::string, std::set<std::int64_t>> runs_of_name;
  auto took_part = std::make_shared<std::map<std::pair<std::string, int>, std::set<std::int64_t>>>();  // (host, gpu or -1)
  for (const LedgerWorker& w : workers) {
    runs_of_name[w.run_name].insert(w.run);
    (*took_part)[{w.worker.host, -1}].insert(w.run);
    (*took_part)[{w.worker.host, w.worker.gpu}].insert(w.run);
    if (w.worker.slow_factor || w.worker.first_stop) facts.notable.push_back(w);
  }
  for (const auto& [name, runs] : runs_of_name) {
    facts.runs_of_name[name] = runs.size();
    facts.runs += runs.size();
  }
  facts.took_part = [took_part](const std::string& host, std::optional<int> gpu) {
    const auto it = took_part->find({host, gpu.value_or(-1)});
    return it == took_part->end() ? size_t{0} : it->second.size();
  };
  return facts;
}

HostLedger RankHosts(const HostFacts& facts) {
  SlowRuns slow_runs;
  for (const LedgerWorker& w : facts.notable)
    if (w.worker.slow_factor) slow_runs[PlaceOf(w)].insert(w.run);
  std::map<std::pair<std::string, int>, Tally> hosts, gpus;  // (host, -1) and (host, gpu)
  for (const LedgerWorker& w : facts.notable) {
    Tally& host = hosts[{w.worker.host, -1}];
    host.line.host = w.worker.host;
    Count(host, w);
    Tally& gpu = gpus[{w.worker.host, w.worker.gpu}];
    gpu.line.host = w.worker.host;
    gpu.line.gpu = w.worker.gpu;
    Count(gpu, w);
  }
  return {Ranked(hosts, slow_runs, facts), Ranked(gpus, slow_runs, facts), facts.runs};
}

}  // namespace jobviz
