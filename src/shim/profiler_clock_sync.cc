// Profiler's clock sync (docs/clock-alignment.md): rounds in which every rank
// reads its clock at one shared instant (a barrier on the host, or a
// collective on the stream), each reading written as a "Clock Sync" line.
#include "profiler_impl.h"

namespace jobviz {

void Profiler::SyncClocks(Communicator& communicator, Stream& stream, int rounds) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (impl_->shut_down.load()) return;
  SyncClocksLocked(communicator, &stream, rounds < 0 ? config_.clock_sync_rounds : rounds);
}

void Profiler::SyncClocks(BarrierCommunicator& communicator, int rounds) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (impl_->shut_down.load()) return;
  SyncClocksLocked(communicator, nullptr, rounds < 0 ? config_.clock_sync_rounds : rounds);
}

void Profiler::SyncClocksLocked(Communicator& communicator, Stream* stream, int rounds) {
  for (int k = 0; k < rounds; ++k) {
    const std::int64_t round = impl_->next_round++;
    if (communicator.OnHost()) {
      impl_->HostSyncRound(communicator, round);
      continue;
    }
    // The collective goes on the stream whether or not the record fits, so
    // every rank enqueues the same collectives.
    const bool enqueued = stream && communicator.EnqueueCollective(*stream);
    std::uint64_t index;
    Record* record = impl_->Claim(&index);
    if (!record) continue;
    record->kind = RecordKind::kClockSync;
    record->a = impl_->rank;
    record->b = round;
    if (!enqueued || !stream->LaunchHostFunction(OnSyncPoint, record)) {
      impl_->lost.fetch_add(1, std::memory_order_relaxed);
      record->state.store(kAbandoned, std::memory_order_release);
    }
  }
}

void Profiler::AttachClockSync(Communicator* communicator, Stream* stream) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  const bool usable = communicator && (stream || communicator->OnHost());
  impl_->sync_communicator = usable ? communicator : nullptr;
  impl_->sync_stream = usable ? stream : nullptr;
}

}  // namespace jobviz
