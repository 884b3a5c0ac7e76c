// EventClock::Make: the event clock the profiler uses, or a test's stand-in
// (event_marks_test.cc drives the profiler's event path without a GPU).
#include "event_clock.h"

#include <atomic>

namespace jobviz {

namespace {
std::atomic<EventClock::Factory> test_factory{nullptr};
}  // namespace

std::unique_ptr<EventClock> EventClock::Make(size_t slots) {
  const Factory factory = test_factory.load();
  return factory ? factory(slots) : Create(slots);
}

void EventClock::SetFactoryForTesting(Factory factory) { test_factory.store(factory); }

}  // namespace jobviz
