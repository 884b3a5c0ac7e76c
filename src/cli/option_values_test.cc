#include "cli/option_values.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_option_values_test {

using namespace jobviz;

TEST_CASE("Comma lists keep empty items, so they can be refused") {
  CHECK(SplitList("a,b") == std::vector<std::string>{"a", "b"});
  CHECK(SplitList("a,,b,") == std::vector<std::string>{"a", "", "b", ""});
  CHECK(SplitList("") == std::vector<std::string>{""});
}

TEST_CASE("--run: last, all or a number from 1") {
  CHECK(ParseRunChoice("last")->kind == RunChoice::Kind::kLast);
  CHECK(ParseRunChoice("all")->kind == RunChoice::Kind::kAll);
  CHECK(ParseRunChoice("3")->number == 3);
  CHECK_FALSE(ParseRunChoice("0"));
  CHECK_FALSE(ParseRunChoice("2x"));
  CHECK_FALSE(ParseRunChoice(""));
}

TEST_CASE("--clock_offset: units, signs and bad items") {
  std::string error;
  const auto offsets = ParseClockOffsets("machine1=+2.5ms,machine2=-300us,m3=7ns,m4=1s,m5=2", &error);
  REQUIRE(offsets);
  CHECK(offsets->at("machine1") == 2500000);
  CHECK(offsets->at("machine2") == -300000);
  CHECK(offsets->at("m3") == 7);
  CHECK(offsets->at("m4") == 1000000000);
  CHECK(offsets->at("m5") == 2000000);  // ms by default
  CHECK_FALSE(ParseClockOffsets("machine1=fast", &error));
  CHECK(error == "'machine1=fast': the offset is not a number with ns, us, ms or s");
  CHECK_FALSE(ParseClockOffsets("=1ms", &error));
  CHECK_FALSE(ParseClockOffsets("machine1=1ms,", &error));
  CHECK_FALSE(ParseClockOffsets("machine1=nan", &error));
  CHECK_FALSE(ParseClockOffsets("machine1=1e300s", &error));
}

TEST_CASE("--stage_order: MACHINE:WORKER items, each once") {
  std::string error;
  const auto order = ParseStageOrder("machine1:0,machine0:12,host:a:1", &error);
  REQUIRE(order);
  REQUIRE(order->size() == 3);
  CHECK((*order)[0].machine == "machine1");
  CHECK((*order)[1].worker == 12);
  CHECK((*order)[2].machine == "host:a");  // the last colon splits
  for (const char* bad : {"machine0", "machine0:", ":1", "machine0:1x", "machine0:-1", "machine0:0,"}) {
    INFO(bad);
    CHECK_FALSE(ParseStageOrder(bad, &error));
  }
  CHECK_FALSE(ParseStageOrder("m:0,m:0", &error));
  CHECK(error == "'m:0' given twice");
}

TEST_CASE("--what-if: the top cause's when the analysis is made anyway, on runs it fits; a named one always; none never") {
  const std::vector<OutputRequest> trace = {{OutputFormat::kPerfettoJson, "t.json", false, "-o"}};
  const std::vector<OutputRequest> trace_and_summary = {{OutputFormat::kPerfettoJson, "t.json", false, "-o"},
                                                        {OutputFormat::kSummaryJson, "s.json", false, "--summary-json"}};
  const std::vector<OutputRequest> summary = {{OutputFormat::kSummaryJson, "s.json", false, "--summary-json"}};
  CHECK_FALSE(PlanWhatIf("", trace, false).draw);  // a trace alone: no analysis to pay for
  const WhatIfDrawing top = PlanWhatIf("", trace_and_summary, false);
  CHECK(top.draw);
  CHECK_FALSE(top.kind);
  CHECK(top.max_jobs == kDefaultWhatIfJobs);
  CHECK(PlanWhatIf("", trace, true).draw);  // a gate makes the analysis too
  const WhatIfDrawing named = PlanWhatIf("no_stall", trace, false);
  CHECK(named.draw);
  CHECK(named.kind == WhatIfKind::kNoStall);
  CHECK(named.max_jobs == std::numeric_limits<size_t>::max());
  CHECK_FALSE(PlanWhatIf("none", trace_and_summary, false).draw);
  CHECK_FALSE(PlanWhatIf("no_stall", summary, false).draw);  // nothing draws it
  const std::vector<std::string> choices = WhatIfChoices();  // what --what-if accepts: none and the summary's keys
  CHECK(choices == std::vector<std::string>{"none", "balanced_stages", "free_hand_offs", "no_outliers", "no_stall",
                                            "no_slow_workers", "no_step_gaps", "all"});
}

}  // namespace unit_option_values_test
