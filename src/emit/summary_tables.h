// The analysis as aligned tables for a terminal (--summary).
#pragma once

#include <set>
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

// Tables longer than this show their first rows and hold the rest back: the
// terminal says how many more, Markdown and HTML fold them in <details>. A
// long Workers table is sorted by bubble, highest first.
inline constexpr size_t kShownRows = 25;
// The rows shown before the fold: the header and the first kShownRows.
std::vector<std::vector<std::string>> ShownRows(const std::vector<std::vector<std::string>>& rows);

// The --fail-on results as rows: gate, value, result ("passed", "FAILED" or
// "error"). Markdown shows the condition as code (MarkdownTable's code_columns).
std::vector<std::vector<std::string>> GateRows(const std::vector<GateResult>& gates);

std::string Percent(double ratio);  // "43.9%"

// Rows (the first is the header) as aligned text, or as a Markdown table
// (first column left-aligned, the figures right-aligned).
std::string TextTable(const std::vector<std::vector<std::string>>& rows);
// `code_columns`: columns whose cells (below the header) are code spans.
std::string MarkdownTable(const std::vector<std::vector<std::string>>& rows, const std::set<size_t>& code_columns = {});
// Text that shows as itself in GitHub-flavoured Markdown: HTML's special
// characters as entities, Markdown's punctuation (\ ` * _ [ ] | ~ # !)
// backslash-escaped, line breaks as spaces.
std::string MarkdownCell(const std::string& text);
// `text` as a code span whose fence no backtick inside can close; in a table
// cell its pipes are escaped (GFM removes the backslash there).
std::string MarkdownCode(const std::string& text, bool in_table);

std::string SummaryTables(const Analysis& analysis, const Timeline& timeline);
// "times after the run start, 2023-10-20T09:15:07.213760986Z (its first step
// or job)": each report says once what its times count from.
std::string RunStartLine(const Timeline& timeline);

std::string EmitSummaryTables(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
