// Option values that are more than a number: each parser turns the text of
// one option into a typed value or says what is wrong with it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/plan.h"

namespace jobviz {

// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> SplitList(const std::string& text, char separator = ',');

// "last", "all" or a 1-based number.
std::optional<RunChoice> ParseRunChoice(const std::string& text);

// "machine1=+2.5ms,machine2=-300us": units ns, us, ms (default) or s.
std::optional<std::map<std::string, Nanos>> ParseClockOffsets(const std::string& text, std::string* error);

// "machine1:0,machine0:1": each MACHINE:WORKER once. Whether those workers
// exist is known only once the logs are found (ResolveStageOrder).
std::optional<std::vector<StageRef>> ParseStageOrder(const std::string& text, std::string* error);

// --what-if KEY ("" when not given): the top cause's replay whenever the
// analysis is made anyway (a gate, or an output that reads it) and
// something draws it, on runs of up to kDefaultWhatIfJobs; a named one
// always; "none" never.
WhatIfDrawing PlanWhatIf(const std::string& key, const std::vector<OutputRequest>& outputs, bool gates);
// What --what-if takes: "none" and every WhatIfKey.
std::vector<std::string> WhatIfChoices();

}  // namespace jobviz
