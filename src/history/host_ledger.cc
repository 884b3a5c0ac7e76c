#include "history/host_ledger.h"

#include <algorithm>
#include <map>
#include <set>

namespace jobviz {

namespace {

// A job's stage: where a slowness is the job's when most hosts that ran it were slow.
using Place = std::pair<std::string, int>;  // (run name, stage; -1 when unknown)

struct Places {
  std::map<Place, std::set<std::string>> ran, slow;  // place -> hosts
};

Place PlaceOf(const LedgerWorker& w) { return {w.run_name, w.worker.stage.value_or(-1)}; }

// Whether `host`'s slowness is its own or its job's; `where` names the job's stage.
SlowCause CauseOf(const std::set<Place>& slow_at, const Places& places, std::string* where) {
  if (slow_at.empty()) return SlowCause::kNone;
  if (slow_at.size() > 1) return SlowCause::kHost;  // different jobs or stages: it follows the host
  const Place& place = *slow_at.begin();
  const size_t ran = places.ran.at(place).size(), slow = places.slow.at(place).size();
  if (slow >= 2 && 2 * slow >= ran) {
    *where = (place.second >= 0 ? "stage " + std::to_string(place.second) + " of " : std::string()) + place.first;
    return SlowCause::kJob;
  }
  return SlowCause::kHost;  // others ran the same and were not slow
}

struct Tally {
  HostLine line;
  std::set<std::int64_t> runs;
  std::set<Place> slow_at;
};

void Count(Tally& t, const LedgerWorker& w) {
  t.runs.insert(w.run);
  t.line.lost_us += w.worker.cost_us;
  t.line.worst_score = std::max(t.line.worst_score, w.worker.score);
  if (w.worker.slow_factor) {
    t.slow_at.insert(PlaceOf(w));
    if (t.line.slow_runs.empty() || t.line.slow_runs.back() != w.run) t.line.slow_runs.push_back(w.run);
  }
  if (w.worker.first_stop && (t.line.stop_runs.empty() || t.line.stop_runs.back() != w.run)) t.line.stop_runs.push_back(w.run);
}

std::vector<HostLine> Ranked(std::map<std::pair<std::string, int>, Tally>& tallies, const Places& places) {
  std::vector<HostLine> lines;
  for (auto& [key, t] : tallies) {
    HostLine line = std::move(t.line);
    for (std::vector<std::int64_t>* ids : {&line.slow_runs, &line.stop_runs}) {
      std::sort(ids->begin(), ids->end());
      ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    }
    line.runs = t.runs.size();
    line.slow = line.slow_runs.size();
    line.first_stop = line.stop_runs.size();
    line.cause = CauseOf(t.slow_at, places, &line.where);
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

HostLedger RankHosts(const std::vector<LedgerWorker>& workers) {
  Places places;
  for (const LedgerWorker& w : workers) {
    places.ran[PlaceOf(w)].insert(w.worker.host);
    if (w.worker.slow_factor) places.slow[PlaceOf(w)].insert(w.worker.host);
  }
  std::map<std::pair<std::string, int>, Tally> hosts, gpus;  // (host, -1) and (host, gpu)
  std::set<std::int64_t> runs;
  for (const LedgerWorker& w : workers) {
    runs.insert(w.run);
    Tally& host = hosts[{w.worker.host, -1}];
    host.line.host = w.worker.host;
    Count(host, w);
    Tally& gpu = gpus[{w.worker.host, w.worker.gpu}];
    gpu.line.host = w.worker.host;
    gpu.line.gpu = w.worker.gpu;
    Count(gpu, w);
  }
  return {Ranked(hosts, places), Ranked(gpus, places), runs.size()};
}

}  // namespace jobviz
