#include "model/topology.h"

#include "align/pipeline_order.h"
#include "model/topology_inference.h"
#include "model/topology_resolver.h"
#include "parse/hybrid_info.h"
#include "parse/line_parser.h"

#include <catch2/catch.hpp>

#include <set>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_topology_test {

using namespace jobviz;

namespace {

constexpr Nanos kUs = 1000, kMs = 1'000'000;

AxisValues Degrees(int dp, int pp, int sharding, int sep, int mp) { return {dp, pp, sharding, sep, mp}; }

// The published 2024 form, for rank 9 of mp2 x sharding4 x pp4 (Paddle order).
const char* kRank9 =
    "[2024-04-30 17:28:28,401] [    INFO] topology.py:288 - HybridParallelInfo: rank_id: 9, mp_degree: 2, "
    "sharding_degree: 4, pp_degree: 4, dp_degree: 1, sep_degree: 1, mp_group: [8, 9],  sharding_group: [9, 11, 13, "
    "15], pp_group: [1, 9, 17, 25], dp_group: [9], sep:group: None, check/clip group: [0, 1, 2, 3]";

LogRecord PlaceRecord(std::int64_t rank, const ParallelPlace& place) {
  LogRecord r;
  r.kind = RecordKind::kHybridInfo;
  r.rank = rank;
  r.place = place;
  return r;
}

// machines x per_machine workers, each with the given jobs (copied).
Timeline Workers(int machines, int per_machine, const std::vector<Job>& jobs = {}) {
  Timeline t;
  for (int m = 0; m < machines; ++m) {
    t.machines.emplace_back("machine" + std::to_string(m));
    for (int w = 0; w < per_machine; ++w) {
      Worker worker;
      worker.machine = m;
      worker.index = w;
      worker.file = "machine" + std::to_string(m) + "/workerlog." + std::to_string(w);
      worker.jobs = jobs;
      t.machines[m].workers.push_back(worker);
    }
  }
  return t;
}

// Gives every worker the HybridParallelInfo line Paddle would print for its launcher rank.
void AddLines(Timeline* t, const AxisValues& degrees) {
  std::int64_t rank = 0;
  for (Machine& machine : t->machines)
    for (Worker& worker : machine.workers) {
      worker.markers.push_back(PlaceRecord(rank, PlaceOfRank(rank, degrees, PaddleRankOrder())));
      ++rank;
    }
}

}  // namespace

TEST_CASE("Degrees and rank orders parse; bad ones say why") {
  AxisValues degrees;
  std::string error;
  REQUIRE(ParseDegrees("pp=4,mp=2,sharding=4,dp=1", &degrees, &error));
  CHECK(degrees == Degrees(1, 4, 4, 1, 2));
  REQUIRE(ParseDegrees("tp=8", &degrees, &error));
  CHECK(degrees == Degrees(1, 1, 1, 1, 8));
  CHECK_FALSE(ParseDegrees("pp=4,pp=2", &degrees, &error));
  CHECK(error == "pp is given twice");
  CHECK_FALSE(ParseDegrees("pp=0", &degrees, &error));
  CHECK_FALSE(ParseDegrees("pipeline=4", &degrees, &error));
  CHECK_FALSE(ParseDegrees("pp=4x", &degrees, &error));
  CHECK_FALSE(ParseDegrees("", &degrees, &error));
  CHECK_FALSE(ParseDegrees("pp=100000,mp=100000,dp=100000", &degrees, &error));

  std::vector<ParallelAxis> order;
  REQUIRE(ParseRankOrder("pp,dp,tp", &order, &error));
  CHECK(order == std::vector<ParallelAxis>{ParallelAxis::kPp, ParallelAxis::kDp, ParallelAxis::kMp,
                                           ParallelAxis::kSharding, ParallelAxis::kSep});
  CHECK_FALSE(ParseRankOrder("pp,pp", &order, &error));
  CHECK_FALSE(ParseRankOrder("pp,x", &order, &error));
}

TEST_CASE("Paddle's rank order puts the model axis innermost: mp2 x sharding4 x pp4") {
  const AxisValues degrees = Degrees(1, 4, 4, 1, 2);
  for (std::int64_t rank = 0; rank < 32; ++rank) {
    const ParallelPlace place = PlaceOfRank(rank, degrees, PaddleRankOrder());
    const WorkerRole role = RoleOf(place, degrees, rank);
    CHECK(role.stage == rank / 8);          // ranks 0-7 stage 0, 8-15 stage 1, ...
    CHECK(role.peer == rank % 2);           // mp innermost
    CHECK(role.replica == (rank / 2) % 4);  // sharding between
  }
  // Megatron's order (tp, then dp, then pp outermost).
  std::vector<ParallelAxis> megatron;
  std::string error;
  REQUIRE(ParseRankOrder("pp,dp,mp", &megatron, &error));
  const AxisValues dp2pp2mp2 = Degrees(2, 2, 1, 1, 2);
  CHECK(RoleOf(PlaceOfRank(5, dp2pp2mp2, megatron), dp2pp2mp2, 5) == WorkerRole{5, 1, 1, 0});
  CHECK(DescribeDegrees(Degrees(1, 4, 4, 1, 2)) == "pp4 × mp2 × sharding4");
  CHECK(DescribeDegrees(Degrees(4, 1, 1, 1, 1)) == "pp1 × dp4");
}

TEST_CASE("HybridParallelInfo lines of every published form place their rank") {
  LineParser parser;
  std::string scratch;
  ParsedLine parsed = parser.ParseFirst(kRank9, &scratch);
  REQUIRE(parsed.kind == ParsedLine::Kind::kHybridInfo);
  CHECK(parsed.rank == 9);
  CHECK(parsed.place.at(ParallelAxis::kPp) == 1);
  CHECK(parsed.place.at(ParallelAxis::kMp) == 1);
  CHECK(parsed.place.at(ParallelAxis::kSharding) == 0);
  CHECK(parsed.place.degree == Degrees(1, 4, 4, 1, 2));
  // The same place from the launcher's rank layout.
  CHECK(parsed.place == PlaceOfRank(9, Degrees(1, 4, 4, 1, 2), PaddleRankOrder()));

  parsed = parser.ParseFirst(
      "2022-04-02 23:32:10,565-INFO: [topology.py:152:__init__] HybridParallelInfo: rank_id: 2, dp_degree: 4, "
      "mp_degree: 1, pp_degree: 1, dp_group: [0, 1, 2, 3], mp_group: [2], pp_group: [2], check/clip group: [2]",
      &scratch);
  REQUIRE(parsed.kind == ParsedLine::Kind::kHybridInfo);
  CHECK(parsed.place.at(ParallelAxis::kDp) == 2);
  CHECK(parsed.place.degree == Degrees(4, 1, 1, 1, 1));  // no sharding or sep: degree 1

  parsed = parser.ParseFirst("HybridParallelInfo: rank_id: 5, pp_rank: 1, dp_rank: 0, tp_rank: 1", &scratch);
  REQUIRE(parsed.kind == ParsedLine::Kind::kShimTopology);  // libjobviz's form: coordinates
  CHECK(parsed.place.degree == Degrees(0, 0, 1, 1, 0));     // dp, pp, mp not stated (the largest index + 1); the rest 1
  CHECK(parsed.rank == 5);
  CHECK(parsed.place.at(ParallelAxis::kPp) == 1);
  CHECK(parsed.place.at(ParallelAxis::kMp) == 1);
}

TEST_CASE("HybridParallelInfo lines that place no rank are malformed, with the reason") {
  ParallelPlace place;
  std::string error;
  bool by_coordinates = false;
  const auto Fields = [&](std::string_view text, std::int64_t rank, ParallelPlace* out, std::string* why) {
    return ParseHybridFields(text, rank, out, &by_coordinates, why);
  };
  CHECK_FALSE(Fields(", pp_rank: 1000000", 9, &place, &error));
  CHECK(error == "pp_rank is not a whole number below 1000000");
  CHECK_FALSE(Fields(", pp_rank: -1", 9, &place, &error));
  CHECK_FALSE(Fields(", pp_degree: 4, pp_group: [0, 8, 16, 24]", 9, &place, &error));
  CHECK(error == "rank_id 9 is not in its own pp_group");
  CHECK_FALSE(Fields(", pp_degree: 4, pp_group: [1, 9, 17]", 9, &place, &error));
  CHECK(error == "pp_group holds 3 ranks but pp_degree is 4");
  CHECK_FALSE(Fields(", pp_degree: 4", 9, &place, &error));
  CHECK_FALSE(Fields(", pp_group: [1, 9, ...]", 9, &place, &error));
  CHECK(error == "pp_group is not a list of ranks");
  // An unused group may hold anything (Paddle abbreviates nothing, but be lenient).
  CHECK(Fields(", pp_group: [1, 9], check/clip group: [0, 1, ...]", 9, &place, &error));
  CHECK(place.at(ParallelAxis::kPp) == 1);

  LineParser parser;
  std::string scratch;
  const ParsedLine bad = parser.ParseFirst("HybridParallelInfo: rank_id: 3, pp_degree: 2, pp_group: [0, 1]", &scratch);
  CHECK(bad.kind == ParsedLine::Kind::kMalformed);
  CHECK(bad.format == LineKind::kHybridInfo);
}

TEST_CASE("Pipelines are a replica's stages for one tensor-parallel index; hand-offs only between consecutive stages") {
  // mp2 x sharding2 x pp2 on 2 machines of 4: ranks 0-3 stage 0, 4-7 stage 1.
  const AxisValues degrees = Degrees(1, 2, 2, 1, 2);
  std::vector<Job> jobs = {{"0", "forward", 0, 0, 1 * kMs, 1, 1}, {"1", "backward", 0, 3 * kMs, 5 * kMs, 2, 1}};
  Timeline t = Workers(2, 4, jobs);
  for (Job& job : t.machines[1].workers[0].jobs) job.start += 1 * kMs, job.end += 1 * kMs;
  AddLines(&t, degrees);
  const TopologyOutcome outcome = ResolveTopology({}, &t);
  CHECK(outcome.warnings.empty());
  REQUIRE(t.topology.source == TopologySource::kHybridInfo);
  const auto chains = PipelineChains(t);
  REQUIRE(chains.size() == 4);  // 2 replicas x 2 peers
  for (const PipelineChain& chain : chains) {
    REQUIRE(chain.stages.size() == 2);
    CHECK(chain.stages[0].first == 0);  // stage 0 on machine0, stage 1 on machine1
    CHECK(chain.stages[1].first == 1);
    CHECK(chain.stages[0].second->role.peer == chain.stages[1].second->role.peer);
    CHECK(chain.stages[0].second->role.replica == chain.stages[1].second->role.replica);
    CHECK(chain.numbers == std::vector<int>{0, 1});
  }
  std::set<std::pair<const Worker*, const Worker*>> pairs;
  ForEachHandOff(t, [&](const HandOff& h) {
    CHECK(h.sender_worker->role.replica == h.receiver_worker->role.replica);
    CHECK(h.sender_worker->role.peer == h.receiver_worker->role.peer);
    CHECK(std::abs(h.sender_worker->role.stage - h.receiver_worker->role.stage) == 1);
    pairs.insert({h.sender_worker, h.receiver_worker});
  });
  CHECK(pairs.size() == 8);  // each chain: one forward and one backward direction
}

TEST_CASE("A stage whose log was not read breaks the pipeline there; a stage number far out costs nothing") {
  // pp4, logs of stages 0, 1 and 3 only (one per machine), and a worker that claims stage 999999.
  Timeline t = Workers(4, 1, {{"0", "forward", 0, 0, kMs, 1, 1}});
  for (int m = 0; m < 4; ++m) t.machines[m].workers[0].markers.push_back(PlaceRecord(m, PlaceOfRank(m, Degrees(1, 4, 1, 1, 1), PaddleRankOrder())));
  t.machines[2].workers[0].markers[0].place.index[static_cast<size_t>(ParallelAxis::kPp)] = 999'999;
  ResolveTopology({}, &t);
  REQUIRE(t.topology.source == TopologySource::kHybridInfo);
  const auto chains = PipelineChains(t);
  REQUIRE(chains.size() == 1);
  CHECK(chains[0].numbers == std::vector<int>{0, 1, 3, 999'999});
  std::vector<int> pairs;
  ForEachHandOff(t, [&](const HandOff& h) { pairs.push_back(h.stage); });
  CHECK(pairs == std::vector<int>{0});  // only 0 -> 1 are neighbours
}

TEST_CASE("--topology: ranks in launcher order; a count that cannot fit is a usage error; contradicting lines are named") {
  Timeline t = Workers(2, 4);
  TopologyRequest request;
  request.degrees = Degrees(1, 2, 1, 1, 2);  // 4 ranks, 8 workers
  request.degrees_text = "pp=2,mp=2";
  TopologyOutcome outcome = ResolveTopology(request, &t);
  CHECK(outcome.usage_error == "--topology pp=2,mp=2 describes 4 ranks, but 8 worker logs were read");

  request.degrees = Degrees(2, 2, 1, 1, 2);
  outcome = ResolveTopology(request, &t);
  CHECK(outcome.usage_error.empty());
  CHECK(t.topology.source == TopologySource::kOption);
  CHECK(t.machines[1].workers[3].role == WorkerRole{7, 1, 1, 1});  // dp outermost: machine1 is replica 1

  // The logs say pp2 x mp4 instead: every worker's role differs somewhere.
  AddLines(&t, Degrees(1, 2, 1, 1, 4));
  outcome = ResolveTopology(request, &t);
  REQUIRE(outcome.warnings.size() == 1);
  CHECK(outcome.warnings[0].find("--topology contradicts the topology lines of") == 0);
  CHECK(outcome.warnings[0].find("machine0/workerlog.2: stage 0, mp 2, replica 0 in the log, stage 1, mp 0, replica 0 by --topology") != std::string::npos);
  CHECK(t.topology.source == TopologySource::kOption);  // the user's word wins, said so

  request.none = true;
  outcome = ResolveTopology(request, &t);
  CHECK(t.topology.source == TopologySource::kNone);
  CHECK_FALSE(t.machines[0].workers[0].role.known());
}

TEST_CASE("Lines that contradict each other are reported with the files and not used") {
  Timeline t = Workers(1, 4);
  AddLines(&t, Degrees(1, 2, 1, 1, 2));
  t.machines[0].workers[3].markers[0] = t.machines[0].workers[2].markers[0];  // two files claim rank 2's place
  TopologyOutcome outcome = ResolveTopology({}, &t);
  REQUIRE_FALSE(outcome.warnings.empty());
  CHECK(outcome.warnings[0] ==
        "topology lines disagree: machine0/workerlog.2 and machine0/workerlog.3 both say stage 1, mp 0, replica 0; "
        "the lines are not used (give --topology)");
  CHECK(t.topology.source != TopologySource::kHybridInfo);

  Timeline u = Workers(1, 4);
  AddLines(&u, Degrees(1, 2, 1, 1, 2));
  u.machines[0].workers[1].markers[0].place.degree[static_cast<size_t>(ParallelAxis::kPp)] = 4;
  outcome = ResolveTopology({}, &u);
  REQUIRE_FALSE(outcome.warnings.empty());
  CHECK(outcome.warnings[0].find("topology lines disagree: machine0/workerlog.0 says pp degree 2, "
                                 "machine0/workerlog.1 says 4") == 0);
}

TEST_CASE("Lines each of a size a job can have, together past 10,000,000 ranks: not used, never wrapped") {
  Timeline t = Workers(1, 2);
  AddLines(&t, Degrees(1, 2, 1, 1, 1));
  // Coordinates only (libjobviz's form): each line alone needs 10^4 ranks, both 10^8.
  for (Worker& w : t.machines[0].workers) w.markers[0].place.degree = {};
  t.machines[0].workers[0].markers[0].place.index[static_cast<size_t>(ParallelAxis::kDp)] = 9999;
  t.machines[0].workers[1].markers[0].place.index[static_cast<size_t>(ParallelAxis::kMp)] = 9999;
  const TopologyOutcome outcome = ResolveTopology({}, &t);
  REQUIRE_FALSE(outcome.warnings.empty());
  CHECK(outcome.warnings[0] ==
        "topology lines disagree: together they need pp2 × mp10000 × dp10000, more than the 10,000,000 ranks a job "
        "can have; the lines are not used (give --topology)");
  CHECK(t.topology.source != TopologySource::kShimLines);
  for (const Worker& w : t.machines[0].workers) CHECK(w.role.peer < 10'000);
}

TEST_CASE("Lines: a rank other than the launcher's, missing lines and a degree product that is not the file count are said") {
  Timeline t = Workers(2, 2);
  AddLines(&t, Degrees(1, 2, 1, 1, 2));
  std::swap(t.machines[0].workers[0].markers, t.machines[1].workers[0].markers);  // machine dirs mixed up
  t.machines[1].workers[1].markers.clear();
  const TopologyOutcome outcome = ResolveTopology({}, &t);
  CHECK(t.topology.source == TopologySource::kHybridInfo);
  std::string all;
  for (const std::string& w : outcome.warnings) all += w + "\n";
  CHECK(all.find("1 of 4 files have no topology line (first: machine1/workerlog.1)") != std::string::npos);
  CHECK(all.find("2 file(s) hold a rank other than machine index × workers per machine + worker index "
                 "(machine0/workerlog.0 says rank 2, its place gives 0)") != std::string::npos);
  CHECK_FALSE(t.machines[1].workers[1].role.known());
}

namespace {

// pp2 x mp2 x dp2 on each machine of 8, Paddle order: ranks 0-1 replica 0
// stage 0, 2-3 replica 0 stage 1, 4-5 replica 1 stage 0, 6-7 replica 1 stage 1
// (on a second machine, replicas 2 and 3).
Timeline Pp2Mp2Dp2(int machines) {
  Timeline t = Workers(machines, 8);
  for (int rank = 0; rank < 8 * machines; ++rank) {
    const int replica = rank / 4, stage = rank / 2 % 2, peer = rank % 2;
    const Nanos base = replica * 300 * kUs + peer * 2 * kUs;  // replicas drift, peers do not
    std::vector<Job>& jobs = t.machines[static_cast<size_t>(rank / 8)].workers[static_cast<size_t>(rank % 8)].jobs;
    // 1F1B with 4 micro-batches: stage 0 runs 2 forwards before its first backward, stage 1 one.
    const std::vector<std::pair<const char*, int>> order =
        stage == 0 ? std::vector<std::pair<const char*, int>>{{"forward", 0}, {"forward", 1}, {"backward", 0}, {"forward", 2},
                                                              {"backward", 1}, {"forward", 3}, {"backward", 2}, {"backward", 3}}
                   : std::vector<std::pair<const char*, int>>{{"forward", 0}, {"backward", 0}, {"forward", 1}, {"backward", 1},
                                                              {"forward", 2}, {"backward", 2}, {"forward", 3}, {"backward", 3}};
    Nanos at = base + stage * kMs;
    std::uint64_t line = 1;
    for (const auto& [type, mb] : order) {
      jobs.push_back({std::to_string(line), type, mb, at, at + kMs, line, 1});
      at += 2 * kMs;
      ++line;
    }
  }
  return t;
}

}  // namespace

TEST_CASE("Inference: tensor-parallel peers from lockstep, stages from the 1F1B warm-up, replicas repeat") {
  Timeline t = Pp2Mp2Dp2(1);
  CHECK(InLockstep(t.machines[0].workers[0], t.machines[0].workers[1]));
  CHECK_FALSE(InLockstep(t.machines[0].workers[0], t.machines[0].workers[4]));  // a replica, 300 us apart
  CHECK_FALSE(InLockstep(t.machines[0].workers[1], t.machines[0].workers[2]));  // another stage
  const TopologyOutcome outcome = ResolveTopology({}, &t);
  REQUIRE(t.topology.source == TopologySource::kInferred);
  CHECK(t.topology.degrees == Degrees(2, 2, 1, 1, 2));
  CHECK(t.topology.detail.find("likely, not certain") != std::string::npos);
  for (int rank = 0; rank < 8; ++rank) {
    const WorkerRole& role = t.machines[0].workers[rank].role;
    CHECK(role.stage == rank / 2 % 2);
    CHECK(role.peer == rank % 2);
    CHECK(role.replica == rank / 4);
  }
}

TEST_CASE("Inference on several threads (machines compared each on its own) finds what one thread finds") {
  Timeline one = Pp2Mp2Dp2(3), many = Pp2Mp2Dp2(3);
  ResolveTopology({}, &one, 1);
  ResolveTopology({}, &many, 4);
  REQUIRE(one.topology.source == TopologySource::kInferred);
  CHECK(one.topology.degrees == Degrees(6, 2, 1, 1, 2));
  CHECK(many.topology.source == one.topology.source);
  CHECK(many.topology.degrees == one.topology.degrees);
  CHECK(many.topology.detail == one.topology.detail);
  for (size_t m = 0; m < 3; ++m)
    for (size_t w = 0; w < 8; ++w) {
      const WorkerRole &a = one.machines[m].workers[w].role, &b = many.machines[m].workers[w].role;
      CHECK(std::tie(a.stage, a.peer, a.replica) == std::tie(b.stage, b.peer, b.replica));
      CHECK(a.replica == static_cast<int>(m) * 2 + static_cast<int>(w) / 4);
    }
}

TEST_CASE("Inference finds nothing in a plain pipeline: every worker stays its own stage") {
  Timeline t = Workers(1, 2);
  for (int w = 0; w < 2; ++w)
    for (int mb = 0; mb < 3; ++mb)
      t.machines[0].workers[w].jobs.push_back({"0", "forward", mb, (w + mb) * kMs, (w + mb + 1) * kMs, 1, 1});
  ResolveTopology({}, &t);
  CHECK(t.topology.source == TopologySource::kNone);
  CHECK(PipelineChains(t).size() == 1);
  CHECK(PipelineChains(t)[0].stages.size() == 2);
}

// A stage's hand-off jobs are sorted by (type, micro-batch) keeping start
// order among equal keys: by counting where keys span little (the usual
// run), by merge sort where they do not (more than 8 types, micro-batches
// far apart). Either way the k-th job of a key on one stage pairs with the
// k-th of that key on the next, whatever else the two did in between.
TEST_CASE("Hand-offs pair the k-th job of each type and micro-batch, however the keys spread") {
  const auto run = [](const std::vector<std::string>& types, const std::vector<std::int64_t>& micro_batches) {
    // Each key twice on stage 0, three times on stage 1 (its last ones pair
    // with nothing), in the reverse order of keys.
    std::vector<std::pair<std::string, std::int64_t>> keys;
    for (const std::string& type : types)
      for (std::int64_t mb : micro_batches) keys.emplace_back(type, mb);
    auto jobs_in = [&](bool reversed) {
      std::vector<Job> jobs;
      for (int occurrence = 0; occurrence < (reversed ? 3 : 2); ++occurrence)
        for (size_t i = 0; i < keys.size(); ++i) {
          const auto& [type, mb] = keys[reversed ? keys.size() - 1 - i : i];
          const Nanos start = static_cast<Nanos>(jobs.size()) * kMs;
          jobs.push_back({type + "/" + std::to_string(mb) + "/" + std::to_string(occurrence), type, mb, start,
                          start + kMs / 2, jobs.size() + 1, 1});
        }
      return jobs;
    };
    Timeline t = Workers(2, 1);
    t.machines[0].workers[0].jobs = jobs_in(false);
    t.machines[1].workers[0].jobs = jobs_in(true);
    size_t visits = 0;
    ForEachHandOff(t, [&](const HandOff& h) {
      CHECK(h.sender->id.str() == h.receiver->id.str());  // the same type, micro-batch and occurrence
      ++visits;
    });
    return visits;
  };
  CHECK(run({"forward", "backward"}, {0, 1, 2, 3}) == 2 * 4 * 2);  // counted
  std::vector<std::string> chunks;
  for (int c = 0; c < 9; ++c) chunks.push_back("forward_c" + std::to_string(c));
  CHECK(run(chunks, {0, 1}) == 9 * 2 * 2);                           // 9 types: merge sort
  CHECK(run({"forward", "backward"}, {0, 1'000'000'000}) == 2 * 2 * 2);  // far apart: merge sort
  CHECK(run({"forward"}, {5, -3, 7}) == 3 * 2);                      // a negative micro-batch: merge sort
}

}  // namespace unit_topology_test
