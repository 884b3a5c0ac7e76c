// The analysis as aligned tables for a terminal (--summary).
#pragma once

#include <string>
#include <vector>

#include "analyse/analysis.h"
#include "emit/emitter.h"

namespace jobviz {

// The summary as titled tables (and lines of text), for every renderer:
// the terminal tables here, Markdown in summary_markdown.
struct SummarySection {
  std::string title;  // "" for a line of text
  std::string text;
  std::vector<std::vector<std::string>> rows;  // the first is the header
};
std::vector<SummarySection> SummarySections(const Analysis& analysis, const Timeline& timeline);

// The --fail-on results as rows: gate, value, result ("passed", "FAILED" or
// "error"); `quote` goes around the condition (Markdown: a backtick).
std::vector<std::vector<std::string>> GateRows(const std::vector<GateResult>& gates, const std::string& quote = "");

std::string Percent(double ratio);  // "43.9%"

// Rows (the first is the header) as aligned text, or as a Markdown table
// (first column left-aligned, the figures right-aligned).
std::string TextTable(const std::vector<std::vector<std::string>>& rows);
std::string MarkdownTable(const std::vector<std::vector<std::string>>& rows);
std::string MarkdownCell(const std::string& text);  // pipes escaped, line breaks as spaces

std::string SummaryTables(const Analysis& analysis);

std::string EmitSummaryTables(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
