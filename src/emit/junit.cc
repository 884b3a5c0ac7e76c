#include "emit/junit.h"

#include "emit/json_text.h"

namespace jobviz {

namespace {

// XML text and attribute values: the five special characters escaped, and
// bytes XML 1.0 forbids (control characters, invalid UTF-8) replaced.
std::string Xml(const std::string& text) {
  std::string out;
  for (char c : ValidUtf8(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') ? '?' : c;
    }
  }
  return out;
}

}  // namespace

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
    out += "    <testcase classname=\"jobviz.fail_on\" name=\"" + Xml(gate.condition.text) + "\"";
    if (!gate.value) {
      out += ">\n      <error message=\"" + Xml(gate.Message()) + "\"/>\n    </testcase>\n";
    } else if (gate.failed) {
      out += ">\n      <failure message=\"" + Xml("--fail-on " + gate.condition.text + ": " + gate.Message()) +
             "\" type=\"gate\"/>\n    </testcase>\n";
    } else {
      out += ">\n      <system-out>" + Xml(gate.Message()) + "</system-out>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  sink(out);
  return "";
}

}  // namespace jobviz
