#include "emit/junit.h"

#include "write/json_text.h"

namespace jobviz {

std::string EmitJUnit(const FinishedRun& run, const Sink& sink) {
  size_t failures = 0, errors = 0;
  for (const GateResult& gate : run.gates) {
    failures += gate.value && gate.failed;
    errors += !gate.value;
  }
  const std::string counts = "tests=\"" + std::to_string(run.gates.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"jobviz\" " + counts +
                    ">\n  <testsuite name=\"jobviz gates\" " + counts + ">\n";
  for (const GateResult& gate : run.gates) {
    out += "    <testcase classname=\"jobviz.fail_on\" name=\"" + MarkupText(gate.condition.text) + "\"";
    if (!gate.value) {
      out += ">\n      <error message=\"" + MarkupText(gate.Message()) + "\"/>\n    </testcase>\n";
    } else if (gate.failed) {
      out += ">\n      <failure message=\"" + MarkupText("--fail-on " + gate.condition.text + ": " + gate.Message()) +
             "\" type=\"gate\"/>\n    </testcase>\n";
    } else {
      out += ">\n      <system-out>" + MarkupText(gate.Message()) + "</system-out>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  sink(out);
  return "";
}

}  // namespace jobviz
