// CpuCommunicator: a reusable barrier across the CpuStreams of one group.
#include <condition_variable>
#include <mutex>

#include "jobviz/clock_sync.h"

namespace jobviz {

struct CpuCommunicator::Group {
  explicit Group(int n) : size(n) {}
  const int size;
  std::mutex mutex;
  std::condition_variable all_arrived;
  int waiting = 0;
  long generation = 0;

  void Arrive() {
    std::unique_lock<std::mutex> lock(mutex);
    const long mine = generation;
    if (++waiting == size) {
      waiting = 0;
      ++generation;
      all_arrived.notify_all();
      return;
    }
    all_arrived.wait(lock, [&] { return generation != mine; });
  }
};

std::vector<std::unique_ptr<CpuCommunicator>> CpuCommunicator::CreateGroup(int size) {
  auto group = std::make_shared<Group>(size);
  std::vector<std::unique_ptr<CpuCommunicator>> members;
  for (int r = 0; r < size; ++r) members.push_back(std::unique_ptr<CpuCommunicator>(new CpuCommunicator(group, r)));
  return members;
}

int CpuCommunicator::size() const { return group_->size; }

bool CpuCommunicator::EnqueueCollective(Stream& stream) {
  auto* cpu = dynamic_cast<CpuStream*>(&stream);
  if (!cpu) return false;
  std::shared_ptr<Group> group = group_;
  cpu->Enqueue([group] { group->Arrive(); });
  return true;
}

}  // namespace jobviz
