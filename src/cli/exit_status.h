// Exit codes of the jobviz command, documented in docs/usage.md.
#pragma once

namespace jobviz {

enum ExitStatus : int {
  kExitOk = 0,         // trace written
  kExitBadInput = 1,   // unreadable, empty or unusable input; nothing written
  kExitUsage = 2,      // bad command line
  kExitGateFailed = 3, // a --fail-on condition holds; outputs were written
  kExitStalled = 4,    // jobviz follow --exit-on-stall: no job finished for --stall-after; outputs were written
  kExitLedger = 5,     // the run history cannot be used (not a ledger, newer schema, locked, full, corrupt); outputs were written
  kExitInternal = 70,  // a bug in jobviz (EX_SOFTWARE); nothing half-written is left
};

}  // namespace jobviz
