#include "cli/cli_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "cli/exit_status.h"
#include "analyse/fail_on.h"
#include "jobviz/version.h"


namespace jobviz {

std::optional<RunChoice> ParseRunChoice(const std::string& text) {
  if (text == "last") return RunChoice{RunChoice::Kind::kLast, 0};
  if (text == "all") return RunChoice{RunChoice::Kind::kAll, 0};
  int number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end != text.data() + text.size() || number < 1) return std::nullopt;
  return RunChoice{RunChoice::Kind::kNumber, number};
}

std::optional<std::map<std::string, Nanos>> ParseClockOffsets(const std::string& text, std::string* error) {
  std::map<std::string, Nanos> offsets;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    begin = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = "'" + item + "': expected MACHINE=OFFSET, e.g. machine1=+2.5ms";
      return std::nullopt;
    }
    std::string value = item.substr(eq + 1);
    double scale = 1e6;  // ms
    for (const auto& [suffix, factor] : {std::pair<const char*, double>{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}) {
      const std::string_view sv(suffix);
      if (value.size() > sv.size() && value.compare(value.size() - sv.size(), sv.size(), sv) == 0) {
        value.resize(value.size() - sv.size());
        scale = factor;
        break;
      }
    }
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(std::abs(number * scale) < 1e15)) {
      *error = "'" + item + "': the offset is not a number with ns, us, ms or s";
      return std::nullopt;
    }
    offsets[item.substr(0, eq)] = static_cast<Nanos>(std::llround(number * scale));
  }
  return offsets;
}

namespace {

// jobviz extract --log_dir DIR --machine NAME -o events.jsonl.gz
ParseOutcome ParseExtract(int argc, char** argv) {
  CLI::App app{"jobviz extract: parse one machine's worker logs where they are and write only the records\n"
               "(jobs, steps, clock-sync points, counts) for `jobviz merge`."};
  Options options;
  options.mode = Options::Mode::kExtract;
  bool quiet = false;
  app.add_option("--log_dir,--log-dir", options.log_dir, "This machine's directory of workerlog.N files")
      ->required()->type_name("DIR");
  app.add_option("--machine", options.machine, "The machine's name in the merged trace (e.g. machine3)")
      ->required()->type_name("NAME");
  app.add_option("-o,--output", options.output, "Events file to write (gzip JSON lines)")->required()->type_name("PATH");
  app.add_option("--devices", options.devices, "Worker indices to read (default: all found)")
      ->delimiter(',')->type_name("N,N,...");
  app.add_option("-j,--threads", options.threads, "Files read in parallel")->check(CLI::Range(0, 1024));
  app.add_flag("-q,--quiet", quiet, "Print only errors");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return {std::nullopt, app.exit(e)};
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "jobviz extract: error: %s\n  hint: run 'jobviz extract --help'\n", e.what());
    return {std::nullopt, kExitUsage};
  }
  options.verbosity = quiet ? 0 : 1;
  std::sort(options.devices.begin(), options.devices.end());
  options.devices.erase(std::unique(options.devices.begin(), options.devices.end()), options.devices.end());
  return {options, kExitOk};
}

}  // namespace

ParseOutcome ParseCommandLine(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "extract") return ParseExtract(argc - 1, argv + 1);
  const bool merge = first == "merge";
  if (merge) {
    --argc;
    ++argv;
  }
  CLI::App app{
      "jobviz: draw when every pipeline job ran on every GPU, from the worker logs of a\n"
      "pipeline-parallel training run, as a Perfetto / chrome://tracing timeline."};
  app.get_formatter()->column_width(30);
  Options options;
  std::string run_text = "last";
  bool quiet = false, verbose = false;

  app.add_option("--log_dir,--log-dir", options.log_dir,
                 "Directory with workerlog.N files (or machine*/workerlog.N)")
      ->type_name("DIR");
  app.add_option("files", options.files, "Worker logs to read instead of --log_dir, one worker each ('-': stdin)")
      ->type_name("FILE");
  app.add_flag("--multi_machine,--multi-machine", options.multi_machine,
               "Read LOG_DIR/machine*/workerlog.N, machines in natural order");
  app.add_option("--devices", options.devices,
                 "Worker indices to read on every machine, e.g. 0,2 (default: all found)")
      ->delimiter(',')
      ->check([](const std::string& value) -> std::string {
        const bool digits = !value.empty() && value.size() <= 9 &&
                            std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
        return digits ? "" : "'" + value + "' is not a worker index (expected e.g. --devices 0,2)";
      })
      ->type_name("N,N,...");
  app.add_option("--run", run_text,
                 "Which of the runs appended to a workerlog to draw: last, all or N (1-based)")
      ->type_name("last|all|N")
      ->check([](const std::string& value) {
        return ParseRunChoice(value) ? std::string() : "expected last, all or a number from 1";
      });
  app.add_option("-o,--output", options.output,
                 "Perfetto trace to write (default LOG_DIR/pipeline_profile_perfetto.json)")
      ->type_name("PATH");
  auto* chrome = app.add_option("--chrome-output", options.chrome_output,
                                "Legacy Chrome trace to write (default LOG_DIR/pipeline_profile.json)")
                     ->type_name("PATH");
  app.add_flag("--no-chrome", options.no_chrome, "Do not write the legacy Chrome trace")
      ->excludes(chrome);
  app.add_option("-j,--threads", options.threads, "Files read in parallel (default: one per core)")
      ->check(CLI::Range(0, 1024));
  std::string align_text = "auto", offsets_text;
  app.add_option("--clock_align,--clock-align", align_text,
                 "Put machines on one clock: auto (sync when Clock Sync lines exist), sync, causal, none")
      ->check(CLI::IsMember({"auto", "sync", "causal", "none"}));
  app.add_option("--clock_offset,--clock-offset", offsets_text,
                 "Manual clock offsets, machine clock minus reference: machine1=+2.5ms,machine2=-300us")
      ->type_name("M=OFFSET,...")
      ->check([](const std::string& value) {
        std::string error;
        return ParseClockOffsets(value, &error) ? std::string() : error;
      });
  app.add_option("--clock_ref,--clock-ref", options.clock_ref, "Reference machine (default: the first)")
      ->type_name("MACHINE");
  app.add_option("--stage_order,--stage-order", options.stage_order,
                 "Pipeline stage order, first stage first (default: machine order, then worker)")
      ->type_name("M:W,M:W,...");
  bool summary_on = false, summary_off = false;
  auto* summary_flag = app.add_flag("--summary", summary_on, "Print the analysis tables on stdout (default when it is a terminal)");
  app.add_flag("--no-summary", summary_off, "Do not print the analysis tables")->excludes(summary_flag);
  app.add_option("--summary-json", options.summary_json, "Write the analysis as JSON to PATH, or - for stdout")
      ->type_name("PATH|-");
  app.add_option("--fail-on", options.fail_on,
                 "Exit 3 when a condition on the summary holds, e.g. bubble_ratio>0.35 (repeatable)")
      ->type_name("EXPR")
      ->check([](const std::string& value) {
        std::string error;
        return ParseCondition(value, &error) ? std::string() : error;
      });
  auto* quiet_flag = app.add_flag("-q,--quiet", quiet, "Print only errors");
  app.add_flag("-v,--verbose", verbose, "Also print per-file details, timing and memory")
      ->excludes(quiet_flag);
  app.set_version_flag("--version", "jobviz " JOBVIZ_VERSION);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return {std::nullopt, app.exit(e)};
  } catch (const CLI::CallForAllHelp& e) {
    return {std::nullopt, app.exit(e)};
  } catch (const CLI::CallForVersion& e) {
    return {std::nullopt, app.exit(e)};
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "jobviz: error: %s\n  hint: run 'jobviz --help' for the options\n",
                 e.what());
    return {std::nullopt, kExitUsage};
  }

  if (merge) {
    options.mode = Options::Mode::kMerge;
    if (!options.log_dir.empty() || options.files.empty() || options.multi_machine || !options.devices.empty()) {
      std::fprintf(stderr, "jobviz merge: error: give the events files of `jobviz extract` (and no --log_dir, "
                           "--multi_machine or --devices)\n");
      return {std::nullopt, kExitUsage};
    }
  } else if (options.log_dir.empty() == options.files.empty()) {
    std::fprintf(stderr, "jobviz: error: %s\n  hint: run 'jobviz --help' for the options\n",
                 options.files.empty() ? "--log_dir is required (or give the log files)"
                                       : "give --log_dir or log files, not both");
    return {std::nullopt, kExitUsage};
  }
  if (!options.files.empty() && options.multi_machine) {
    std::fprintf(stderr, "jobviz: error: --multi_machine reads a --log_dir tree, not single files\n");
    return {std::nullopt, kExitUsage};
  }
  options.run = *ParseRunChoice(run_text);
  options.summary = summary_on ? 1 : summary_off ? 0 : -1;
  if (options.output == "-" && options.summary_json == "-") {
    std::fprintf(stderr, "jobviz: error: -o - and --summary-json - both want standard output\n"
                         "  hint: write one of them to a file\n");
    return {std::nullopt, kExitUsage};
  }
  options.clock_align = align_text == "sync"     ? AlignMode::kSync
                        : align_text == "causal" ? AlignMode::kCausal
                        : align_text == "none"   ? AlignMode::kNone
                                                 : AlignMode::kAuto;
  if (!offsets_text.empty()) {
    std::string ignored;
    options.clock_offsets = *ParseClockOffsets(offsets_text, &ignored);
  }
  options.verbosity = quiet ? 0 : verbose ? 2 : 1;
  std::sort(options.devices.begin(), options.devices.end());
  options.devices.erase(std::unique(options.devices.begin(), options.devices.end()),
                        options.devices.end());
  // With explicit files, outputs go to the current directory.
  const std::filesystem::path dir(options.log_dir.empty() ? "." : options.log_dir);
  if (options.output.empty()) options.output = (dir / "pipeline_profile_perfetto.json").string();
  if (options.chrome_output.empty()) options.chrome_output = (dir / "pipeline_profile.json").string();
  return {options, kExitOk};
}

}  // namespace jobviz
