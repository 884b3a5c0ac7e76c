#include "emit/summary_markdown.h"

#include "emit/summary_tables.h"

namespace jobviz {

namespace {

// A table cell: pipes and line breaks would end the cell or the row.
std::string Cell(const std::string& text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') cell += "\\|";
    else if (c == '\n' || c == '\r') cell += ' ';
    else cell += c;
  }
  return cell;
}

// First column left-aligned, the figures right-aligned.
std::string MarkdownTable(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (const std::string& cell : rows[r]) out += " " + Cell(cell) + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t c = 0; c < rows[0].size(); ++c) out += c == 0 ? " --- |" : " ---: |";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string EmitSummaryMarkdown(const FinishedRun& run, const Sink& sink) {
  std::string out = "## jobviz: pipeline summary\n\n";
  out += std::to_string(run.jobs) + " jobs on " + std::to_string(run.analysis.workers.size()) + " workers, " +
         std::to_string(run.read.files.size()) + " files, " + std::to_string(run.skipped.total()) +
         " lines skipped.\n\n";
  for (const SummarySection& section : SummarySections(run.analysis, run.timeline)) {
    if (!section.text.empty()) out += "**" + Cell(section.text) + "**\n\n";
    if (!section.rows.empty()) out += "### " + section.title + "\n\n" + MarkdownTable(section.rows) + "\n";
  }
  if (!run.gates.empty()) {
    std::vector<std::vector<std::string>> rows = {{"gate", "value", "result"}};
    for (const GateResult& gate : run.gates)
      rows.push_back({"`" + gate.condition.text + "`", gate.Message(), !gate.value ? "error" : gate.failed ? "FAILED" : "passed"});
    out += "### Gates (--fail-on)\n\n" + MarkdownTable(rows) + "\n";
  }
  sink(out);
  return "";
}

}  // namespace jobviz
