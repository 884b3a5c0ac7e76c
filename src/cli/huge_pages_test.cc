#include "cli/huge_pages.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_huge_pages_test {

using namespace jobviz;

TEST_CASE("The hugetlb tunable is added to what GLIBC_TUNABLES holds") {
  CHECK(TunablesAskingHugePages(nullptr) == "glibc.malloc.hugetlb=1");
  CHECK(TunablesAskingHugePages("") == "glibc.malloc.hugetlb=1");
  CHECK(TunablesAskingHugePages("glibc.malloc.arena_max=2") == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  // A name that only starts like it is another tunable.
  CHECK(TunablesAskingHugePages("glibc.malloc.hugetlbx=0") == "glibc.malloc.hugetlbx=0:glibc.malloc.hugetlb=1");
}

TEST_CASE("A hugetlb tunable the user set stands, off included") {
  CHECK_FALSE(TunablesAskingHugePages("glibc.malloc.hugetlb=0"));
  CHECK_FALSE(TunablesAskingHugePages("glibc.malloc.hugetlb=2"));
  CHECK_FALSE(TunablesAskingHugePages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0"));
  CHECK_FALSE(TunablesAskingHugePages("glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2"));
}

}  // namespace unit_huge_pages_test
