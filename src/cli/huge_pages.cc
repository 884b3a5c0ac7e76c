#include "cli/huge_pages.h"

#include <cstdlib>
#include <fstream>
#include <unistd.h>

// Whether the allocator is glibc's, with the hugetlb tunable (glibc 2.35).
// A sanitizer brings its own allocator, which the tunable does not reach.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define JOBVIZ_OWN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define JOBVIZ_OWN_ALLOCATOR 1
#endif
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)) && \
    !defined(JOBVIZ_OWN_ALLOCATOR)
#define JOBVIZ_GLIBC_HUGE_PAGES 1
#endif

namespace jobviz {

namespace {

constexpr std::string_view kTunable = "glibc.malloc.hugetlb";
constexpr const char* kSwitch = "JOBVIZ_HUGE_PAGES";  // 0: off; "asked": this is the second run
constexpr const char* kAsked = "asked";

// The value `tunables` ("name=value:name=value") gives `name`, if any.
std::optional<std::string_view> TunableValue(std::string_view tunables, std::string_view name) {
  while (!tunables.empty()) {
    const size_t colon = tunables.find(':');
    const std::string_view entry = tunables.substr(0, colon);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
    if (colon == std::string_view::npos) break;
    tunables.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

[[maybe_unused]] std::string_view Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The kernel's transparent huge page mode: the bracketed word of
// "always [madvise] never", or "unknown".
[[maybe_unused]] std::string KernelMode() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(file, line)) return "unknown";
  const size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "unknown";
  return line.substr(open + 1, close - open - 1);
}

// valgrind's own allocator; run again, the program would run outside it.
[[maybe_unused]] bool UnderValgrind() { return Env("LD_PRELOAD").find("vgpreload") != std::string_view::npos; }

}  // namespace

std::optional<std::string> TunablesAskingHugePages(const char* current) {
  const std::string_view tunables = current ? current : "";
  if (TunableValue(tunables, kTunable)) return std::nullopt;
  std::string asked(tunables);
  if (!asked.empty()) asked += ':';
  return asked + std::string(kTunable) + "=1";
}

void RunAgainWithHugePages(char** argv) {
#if defined(JOBVIZ_GLIBC_HUGE_PAGES)
  if (Env(kSwitch) == "0" || Env(kSwitch) == kAsked || UnderValgrind()) return;
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::optional<std::string> tunables = TunablesAskingHugePages(before);
  if (!tunables) return;
  const std::string kept_before = before ? before : "";
  // The mark first: should the loader drop GLIBC_TUNABLES (a set-user-ID
  // run does), the second run still does not run a third time.
  setenv(kSwitch, kAsked, 1);
  setenv("GLIBC_TUNABLES", tunables->c_str(), 1);
  execv("/proc/self/exe", argv);
  // No /proc (some containers): go on as we are.
  unsetenv(kSwitch);
  if (before)
    setenv("GLIBC_TUNABLES", kept_before.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

#if defined(JOBVIZ_GLIBC_HUGE_PAGES)
namespace {

// What this run's environment says, as both functions below read it.
enum class Request { kOffBySwitch, kValgrind, kNotRunAgain, kOffByTunable, kAsked };

Request ThisRun() {
  if (Env(kSwitch) == "0") return Request::kOffBySwitch;
  if (UnderValgrind()) return Request::kValgrind;
  const std::optional<std::string_view> value = TunableValue(Env("GLIBC_TUNABLES"), kTunable);
  if (!value) return Request::kNotRunAgain;
  return *value == "0" ? Request::kOffByTunable : Request::kAsked;
}

}  // namespace
#endif

bool HugePagesAsked() {
#if defined(JOBVIZ_GLIBC_HUGE_PAGES)
  // "never": the kernel gives none, and a padded heap would only hold address space.
  return ThisRun() == Request::kAsked && KernelMode() != "never";
#else
  return false;
#endif
}

std::string HugePagesState() {
#if defined(JOBVIZ_GLIBC_HUGE_PAGES)
  switch (ThisRun()) {
    case Request::kOffBySwitch: return "huge pages off (JOBVIZ_HUGE_PAGES=0)";
    case Request::kValgrind: return "huge pages not asked (valgrind)";
    case Request::kNotRunAgain: return "huge pages not asked (could not run again)";
    case Request::kOffByTunable: return "huge pages off (GLIBC_TUNABLES)";
    case Request::kAsked: break;
  }
  return "huge pages asked (kernel: " + KernelMode() + ")";
#elif defined(JOBVIZ_OWN_ALLOCATOR)
  return "huge pages not asked (a sanitizer's allocator)";
#else
  return "huge pages not asked (not glibc 2.35's malloc)";
#endif
}

}  // namespace jobviz
