#include "emit/html_timeline.h"

#include <zlib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "emit/html_report.h"
#include "write/json_text.h"
#include "emit/perfetto_proto.h"
#include "model/step_window.h"
#include "analyse/analysis.h"

#include <limits>
#include <set>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_html_timeline_test {

using namespace jobviz;

namespace {

std::string Gunzip(const std::string& bytes) {
  z_stream stream{};
  REQUIRE(inflateInit2(&stream, 15 + 16) == Z_OK);
  std::string out(1 << 16, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  CHECK(inflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

// Two workers; `steps` steps of `per_step` jobs each on worker 0; one job
// on worker 1 that overlaps itself (two lanes).
Timeline Run(int steps, int per_step, const std::string& file = "m/workerlog.0") {
  Timeline t;
  t.machines.emplace_back("machine0");
  Worker w;
  w.file = file;
  for (int s = 0; s < steps; ++s) {
    for (int j = 0; j < per_step; ++j) {
      const Nanos start = 1'000'000'000'000 + s * 1000 + j * 100;
      w.jobs.push_back({std::to_string(s * per_step + j), j % 2 ? "backward" : "forward", j, start, start + 50,
                        static_cast<std::uint64_t>(10 + j), s});
    }
    t.steps.push_back({s, 1'000'000'000'000 + s * 1000, 1'000'000'000'000 + s * 1000 + per_step * 100});
  }
  t.machines[0].workers.push_back(w);
  Worker other;
  other.index = 1;
  other.file = "m/workerlog.1";
  other.jobs.push_back({"x", "forward", 0, 1'000'000'000'000, 1'000'000'000'500, 3, 0});
  other.jobs.push_back({"y", "lr", 0, 1'000'000'000'100, 1'000'000'000'200, 4, 0});
  t.machines[0].workers.push_back(other);
  return t;
}

std::string FromBase64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0, value = 0;
  for (char c : text) {
    if (c == '=') break;
    value = value << 6 | static_cast<unsigned>(alphabet.find(c));
    if ((bits += 6) >= 8) out += static_cast<char>((value >> (bits -= 8)) & 0xff);
  }
  return out;
}

}  // namespace

TEST_CASE("Base64 is RFC 4648's") {
  CHECK(Base64("") == "");
  CHECK(Base64("f") == "Zg==");
  CHECK(Base64("fo") == "Zm8=");
  CHECK(Base64("foo") == "Zm9v");
  CHECK(Base64("foob") == "Zm9vYg==");
  CHECK(Base64("fooba") == "Zm9vYmE=");
  CHECK(Base64("foobar") == "Zm9vYmFy");
  CHECK(Base64(std::string("\xff\x00\xfe", 3)) == "/wD+");
}

TEST_CASE("GzipBytes writes gzip that zlib reads back") {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "job " + std::to_string(i) + '\n';
  const std::string gz = GzipBytes(text);
  REQUIRE(gz.size() > 2);
  CHECK(static_cast<unsigned char>(gz[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(gz[1]) == 0x8b);
  CHECK(gz.size() < text.size() / 3);
  CHECK(Gunzip(gz) == text);
}

TEST_CASE("The timeline data: rows per worker lane, jobs grouped by row, times after the origin") {
  const HtmlTimeline html = BuildHtmlTimeline(Run(2, 3), 1000, "t");
  CHECK(html.total_jobs == 8);
  CHECK(html.shown_jobs == 8);
  CHECK(html.window_note.empty());
  const auto data = nlohmann::json::parse(html.json);
  REQUIRE(data["rows"].size() == 3);  // worker 0, worker 1 and its overlap lane
  CHECK(data["rows"][0]["label"] == "machine0 worker 0");
  CHECK(data["rows"][1]["count"] == 1);
  CHECK(data["rows"][2]["lane"] == 1);
  CHECK(data["rows"][2]["first"] == 7);
  CHECK(data["types"] == nlohmann::json({"forward", "backward", "lr"}));
  CHECK(data["jobs"]["start"][0] == 0);  // 1e12 ns is a whole second: the origin
  CHECK(data["jobs"]["start"][4] == 1100);
  CHECK(data["jobs"]["dur"][4] == 50);
  CHECK(data["jobs"]["line"][4] == 11);
  CHECK(data["jobs"]["id"][4] == 4);
  CHECK(data["jobs"]["id"][6] == "x");  // not a number: kept as a string
  CHECK(data["steps"]["step"] == nlohmann::json({0, 1}));
  CHECK(data["origin_utc"] == "1970-01-01T00:16:40Z");
}

TEST_CASE("Names cannot end the page's <script>") {
  const HtmlTimeline html = BuildHtmlTimeline(Run(1, 2, "logs/</script><script>alert(1)</script>"), 1000, "t");
  CHECK(html.json.find('<') == std::string::npos);
  CHECK(nlohmann::json::parse(html.json)["rows"][0]["file"] == "logs/</script><script>alert(1)</script>");
  CHECK(MarkupText("a<b>&\"'\x01") == "a&lt;b&gt;&amp;&quot;&#39;?");
}

TEST_CASE("Above the cap the page holds the first whole steps that fit, and says so") {
  // 3 steps of 4 jobs on worker 0, plus worker 1's 2 jobs in step 0.
  const HtmlTimeline one_step = BuildHtmlTimeline(Run(3, 4), 7, "t");
  CHECK(one_step.total_jobs == 14);
  CHECK(one_step.shown_jobs == 6);
  CHECK(one_step.window_note.find("step0 to step0 (6 jobs)") != std::string::npos);
  CHECK(one_step.window_note.find("--html-max-jobs 7") != std::string::npos);
  const HtmlTimeline two_steps = BuildHtmlTimeline(Run(3, 4), 10, "t");
  CHECK(two_steps.shown_jobs == 10);
  CHECK(nlohmann::json::parse(two_steps.json)["steps"]["step"] == nlohmann::json({0, 1}));
  // A first step above the cap is still shown whole.
  CHECK(BuildHtmlTimeline(Run(3, 4), 2, "t").shown_jobs == 6);
}

TEST_CASE("Without steps, above the cap the page holds the earliest jobs") {
  Timeline t = Run(3, 4);
  t.steps.clear();
  const HtmlTimeline html = BuildHtmlTimeline(t, 5, "t");
  CHECK(html.shown_jobs == 5);
  CHECK(html.window_note.find("earliest 5 jobs") != std::string::npos);
}

TEST_CASE("Without steps, jobs that start together count against the cap one by one") {
  Timeline t = Run(3, 4);
  t.steps.clear();
  for (Machine& machine : t.machines)
    for (Worker& worker : machine.workers)
      for (Job& job : worker.jobs) {
        job.step = kNoStep;
        job.end = job.end - job.start + 1'000'000;
        job.start = 1'000'000;  // every job at one start
      }
  const HtmlTimeline html = BuildHtmlTimeline(t, 5, "t");
  CHECK(html.shown_jobs == 5);
  CHECK(html.window_note.find("earliest 5 jobs") != std::string::npos);
}

TEST_CASE("Steps with no job in them (NVTX pushed after every job) fall back to the earliest jobs") {
  Timeline t = Run(3, 4);
  for (Machine& machine : t.machines)
    for (Worker& worker : machine.workers)
      for (Job& job : worker.jobs) job.step = kNoStep;
  const HtmlTimeline html = BuildHtmlTimeline(t, 5, "t");
  CHECK(html.shown_jobs == 5);
  CHECK(html.window_note.find("earliest 5 jobs") != std::string::npos);
}

TEST_CASE("The embedded trace is the .pftrace of the jobs shown") {
  const HtmlTimeline html = BuildHtmlTimeline(Run(3, 4), 7, "t");
  std::string expected;
  WritePerfettoProto(CopyJobsWhere(Run(3, 4), [](const Job& job) { return job.step == 0; }),
                     [&](std::string_view piece) { expected += piece; });
  CHECK(Gunzip(FromBase64(html.trace_base64)) == expected);
}

TEST_CASE("--rows stage: the HTML rows are grouped by pipeline stage, labelled with their roles, also in a window of steps") {
  // dp2 x pp2 on two machines: machine m is replica m, worker w stage w.
  Timeline t;
  t.topology.source = TopologySource::kOption;
  t.topology.degrees = {2, 2, 1, 1, 1};
  for (int m = 0; m < 2; ++m) {
    Machine& machine = t.machines.emplace_back("machine" + std::to_string(m));
    for (int w = 0; w < 2; ++w) {
      Worker worker;
      worker.machine = m;
      worker.index = w;
      worker.file = machine.name + "/workerlog." + std::to_string(w);
      worker.role = {2 * m + w, w, 0, m};
      for (int s = 0; s < 2; ++s) {
        const Nanos start = 1'000'000'000'000 + s * 1000 + w * 100;
        worker.jobs.push_back({std::to_string(s), "forward", 0, start, start + 50, static_cast<std::uint64_t>(s + 1), s});
      }
      machine.workers.push_back(worker);
    }
  }
  for (int s = 0; s < 2; ++s) t.steps.push_back({s, 1'000'000'000'000 + s * 1000, 1'000'000'000'000 + s * 1000 + 500});
  t.rows_by_stage = true;
  for (const size_t max_jobs : {size_t{1000}, size_t{4}}) {  // everything, and a window of one step (a copy)
    INFO(max_jobs);
    const HtmlTimeline html = BuildHtmlTimeline(t, max_jobs, "t");
    const auto data = nlohmann::json::parse(html.json);
    REQUIRE(data["machines"].size() == 2);
    CHECK(data["machines"][0]["name"] == "stage 0");
    CHECK(data["machines"][1]["name"] == "stage 1");
    CHECK(data["machines"][0]["clock"] == "");
    std::vector<std::string> labels;
    std::vector<int> groups;
    for (const auto& row : data["rows"]) {
      labels.push_back(row["label"]);
      groups.push_back(row["machine"]);
    }
    CHECK(labels == std::vector<std::string>{"machine0 worker 0 · stage 0 · replica 0", "machine1 worker 0 · stage 0 · replica 1",
                                             "machine0 worker 1 · stage 1 · replica 0", "machine1 worker 1 · stage 1 · replica 1"});
    CHECK(groups == std::vector<int>{0, 0, 1, 1});
  }
  t.rows_by_stage = false;  // the default: by machine, as before
  const auto data = nlohmann::json::parse(BuildHtmlTimeline(t, 1000, "t").json);
  CHECK(data["machines"][1]["name"] == "machine1");
  CHECK(data["rows"][1]["label"] == "machine0 worker 1 · stage 1 · replica 0");
}

TEST_CASE("The critical paths: every marked job and each step's chain, by index into the job table, also in a window") {
  const Timeline t = Run(4, 6);
  const Bottleneck b = FindCriticalPaths(t, StepWindowsOf(t, 1), 1);
  REQUIRE(b.critical_paths.size() == 4);
  const auto check = [&](const HtmlTimeline& html, size_t steps) {
    const nlohmann::json data = nlohmann::json::parse(html.json);
    REQUIRE(data.contains("critical"));
    REQUIRE(data["path"].size() == steps);
    const size_t jobs = data["jobs"]["start"].size();
    std::set<size_t> marked;
    for (const auto& i : data["critical"]) marked.insert(i.get<size_t>());
    for (const auto& chain : data["path"]) {
      std::int64_t last_end = std::numeric_limits<std::int64_t>::min();
      for (const auto& i : chain) {
        const size_t job = i.get<size_t>();
        REQUIRE(job < jobs);
        CHECK(marked.count(job) == 1);  // a chain's jobs are marked
        const std::int64_t start = data["jobs"]["start"][job], dur = data["jobs"]["dur"][job];
        CHECK(start >= last_end);        // in time order, each after the one before ended
        last_end = start + dur;
      }
    }
  };
  check(BuildHtmlTimeline(t, 1000, "t", &b), 4);
  // A window of the first two steps keeps their paths, in the window's own numbering.
  const HtmlTimeline window = BuildHtmlTimeline(t, 14, "t", &b);
  CHECK(!window.window_note.empty());
  check(window, 2);
  // Without a bottleneck, no critical path in the data.
  CHECK_FALSE(nlohmann::json::parse(BuildHtmlTimeline(t, 1000, "t").json).contains("critical"));
}

TEST_CASE("A job overlapping the one before by a rounding's few microseconds stays on its row in the page, not in Perfetto") {
  Timeline t;
  t.machines.emplace_back("machine0");
  Worker w;
  w.file = "m/workerlog.0";
  const Nanos base = 1'000'000'000'000;
  w.jobs.push_back({"a", "forward", 0, base, base + 100'000, 1, 0});
  w.jobs.push_back({"b", "forward", 1, base + 98'000, base + 200'000, 2, 0});    // 2 us early: rounding
  w.jobs.push_back({"c", "backward", 0, base + 150'000, base + 160'000, 3, 0});  // inside b: a second stream
  t.machines[0].workers.push_back(w);
  const auto data = nlohmann::json::parse(BuildHtmlTimeline(t, 1000, "t").json);
  REQUIRE(data["rows"].size() == 2);  // a and b on one row, c on an overlap lane
  CHECK(data["rows"][0]["count"] == 2);
  CHECK(data["rows"][1]["lane"] == 1);
  // Perfetto nests slices: b gets a row of its own there.
  int lanes = 0;
  AssignLanes(t.machines[0].workers[0].jobs, &lanes);
  CHECK(lanes == 2);
  const std::vector<int> with_slack = AssignLanes(t.machines[0].workers[0].jobs, &lanes, 5'000);
  CHECK(with_slack == std::vector<int>{0, 0, 1});
}

}  // namespace unit_html_timeline_test
