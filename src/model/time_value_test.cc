#include "model/time_value.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_time_value_test {

using namespace jobviz;

TEST_CASE("ParseMillis keeps every printed digit") {
  const auto t = ParseMillis("1697793307213.760986");
  REQUIRE(t);
  CHECK(t->ns == 1697793307213760986);
  CHECK(t->decimals == 6);
}

TEST_CASE("ParseMillis reads the old whole-millisecond start times") {
  const auto t = ParseMillis("1697793307213");
  REQUIRE(t);
  CHECK(t->ns == 1697793307213000000);
  CHECK(t->decimals == 0);
  CHECK(ParseMillis("12.5")->ns == 12500000);
  CHECK(ParseMillis("12.")->ns == 12000000);
}

TEST_CASE("ParseMillis drops digits below a nanosecond") {
  CHECK(ParseMillis("1.1234567")->ns == 1123456);
  CHECK(ParseMillis("1.1234567")->decimals == 7);
}

TEST_CASE("ParseMillis rejects what is not a number or does not fit") {
  CHECK_FALSE(ParseMillis(""));
  CHECK_FALSE(ParseMillis(".5"));
  CHECK_FALSE(ParseMillis("12a"));
  CHECK_FALSE(ParseMillis("1.2.3"));
  CHECK_FALSE(ParseMillis("99999999999999999999"));
  CHECK(ParseMillis("9223372036853"));  // largest whole ms that fits in int64 ns
  CHECK_FALSE(ParseMillis("9223372036855"));
}

TEST_CASE("Micros are printed with exactly three decimals") {
  CHECK(FormatMicros(1697793307213760986) == "1697793307213760.986");
  CHECK(FormatMicros(40245118) == "40245.118");
  CHECK(FormatMicros(5) == "0.005");
  CHECK(FormatMicros(0) == "0.000");
  CHECK(FormatMicros(-1500) == "-1.500");
}

TEST_CASE("Durations read well in reports") {
  CHECK(FormatDuration(850) == "850 ns");
  CHECK(FormatDuration(12'345) == "12.3 us");
  CHECK(FormatDuration(4'560'000) == "4.56 ms");
  CHECK(FormatDuration(-4'560'000) == "-4.56 ms");
  CHECK(FormatDuration(7'890'000'000) == "7.89 s");
}

TEST_CASE("Sums of times saturate instead of wrapping around") {
  using jobviz::SaturatingAdd;
  using jobviz::SaturatingSub;
  CHECK(SaturatingAdd(INT64_MAX - 5, 10) == INT64_MAX);
  CHECK(SaturatingAdd(INT64_MIN + 5, -10) == INT64_MIN);
  CHECK(SaturatingAdd(3, 4) == 7);
  CHECK(SaturatingSub(INT64_MIN + 1, 2) == INT64_MIN);
  CHECK(SaturatingSub(INT64_MAX, -2) == INT64_MAX);
  CHECK(SaturatingSub(10, 4) == 6);
}

TEST_CASE("Times after the run start keep every nanosecond") {
  using jobviz::FormatSinceStart;
  CHECK(FormatSinceStart(0) == "+0.000000 ms");
  CHECK(FormatSinceStart(20'305'408) == "+20.305408 ms");
  CHECK(FormatSinceStart(424'045'357'001) == "+424045.357001 ms");
  CHECK(FormatSinceStart(-1'500) == "-0.001500 ms");
  CHECK(FormatSinceStart(INT64_MIN) == "-9223372036854.775808 ms");
}

}  // namespace unit_time_value_test
