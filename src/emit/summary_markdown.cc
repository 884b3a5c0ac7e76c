#include "emit/summary_markdown.h"

#include "emit/summary_tables.h"

namespace jobviz {

std::string EmitSummaryMarkdown(const FinishedRun& run, const Sink& sink) {
  std::string out = "## jobviz: pipeline summary\n\n";
  out += std::to_string(run.jobs) + " jobs on " + std::to_string(run.analysis.workers.size()) + " workers, " +
         std::to_string(run.read.files.size()) + " files, " + std::to_string(run.skipped.total()) +
         " lines skipped; " + RunStartLine(run.timeline) + ".\n\n";
  // The verdict first: the gates a CI run passes or fails on.
  if (!run.gates.empty())
    out += "**" + GatesVerdict(run.gates) + "**\n\n" + MarkdownTable(GateRows(run.gates), {0}) + "\n";
  for (const SummarySection& section : SummarySections(run.analysis, run.timeline)) {
    if (!section.text.empty()) out += "**" + MarkdownCell(section.text) + "**\n\n";
    if (section.rows.empty()) continue;
    out += "### " + section.title + "\n\n" + MarkdownTable(ShownRows(section.rows)) + "\n";
    if (section.rows.size() > kShownRows + 1)  // GitHub renders a table inside <details> with blank lines around it
      out += "<details><summary>All " + std::to_string(section.rows.size() - 1) + " rows</summary>\n\n" +
             MarkdownTable(section.rows) + "\n</details>\n\n";
  }
  sink(out);
  return "";
}

}  // namespace jobviz
