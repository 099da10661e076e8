#include "nimbus/solve/admm/reply_board.h"

#include <algorithm>

namespace nimbus {

ReplyBoard::ReplyBoard(int workers, int barrier, int max_staleness)
    : workers_(workers),
      barrier_(barrier <= 0 || barrier >= workers ? workers : barrier),
      max_staleness_(std::max(0, max_staleness)),
      latest_(static_cast<std::size_t>(workers)),
      outstanding_(static_cast<std::size_t>(workers), -1) {
  for (int i = 0; i < workers; ++i) {
    latest_[static_cast<std::size_t>(i)].worker = i;
    latest_[static_cast<std::size_t>(i)].round = -1;
  }
}

bool ReplyBoard::AllAnswered(int64_t round) const {
  return std::all_of(latest_.begin(), latest_.end(), [round](const WorkerReply& r) { return r.round == round; });
}

void ReplyBoard::Record(std::vector<WorkerReply>& arrived, std::vector<WorkerReply> replies) {
  for (WorkerReply& reply : replies) {
    const auto i = static_cast<std::size_t>(reply.worker);
    if (i >= latest_.size() || outstanding_[i] != reply.round) continue;  // not an answer we wait for
    outstanding_[i] = -1;
    if (reply.status == ReplyStatus::kOk) latest_[i] = reply;
    arrived.push_back(std::move(reply));
  }
}

std::vector<WorkerReply> ReplyBoard::Drain(Executor& executor, Deadline deadline) {
  std::vector<WorkerReply> arrived;
  auto out = [&] { return static_cast<int>(std::count_if(outstanding_.begin(), outstanding_.end(),
                                                         [](int64_t r) { return r >= 0; })); };
  while (out() > 0 && !deadline.Expired()) Record(arrived, executor.Collect(out(), deadline));
  AppendTimedOut(arrived);
  return arrived;
}

void ReplyBoard::AppendTimedOut(std::vector<WorkerReply>& arrived) const {
  for (std::size_t i = 0; i < outstanding_.size(); ++i) {
    if (outstanding_[i] < 0) continue;
    WorkerReply missing;
    missing.worker = static_cast<int>(i);
    missing.round = outstanding_[i];
    missing.status = ReplyStatus::kTimedOut;
    missing.error = "no reply before the round deadline";
    arrived.push_back(std::move(missing));
  }
}

std::vector<WorkerReply> ReplyBoard::Synchronous(Executor& executor, const RoundRequest& request, Deadline deadline) {
  std::vector<WorkerReply> arrived = Drain(executor, deadline);
  if (std::any_of(arrived.begin(), arrived.end(), [](const WorkerReply& r) { return r.status != ReplyStatus::kOk; })) {
    return arrived;
  }
  std::vector<WorkerReply> replies = executor.RunRound(request, deadline);
  for (WorkerReply& reply : replies) {
    if (reply.status == ReplyStatus::kOk) latest_[static_cast<std::size_t>(reply.worker)] = reply;
    arrived.push_back(std::move(reply));
  }
  return arrived;
}

bool ReplyBoard::MayProceed(int64_t round, int answered) const {
  if (answered < barrier_) return false;
  // Every w_i the z-update will use must answer a round no older than round - max_staleness.
  return std::all_of(latest_.begin(), latest_.end(),
                     [&](const WorkerReply& r) { return r.round >= round - max_staleness_; });
}

std::vector<WorkerReply> ReplyBoard::Partial(Executor& executor, const RoundRequest& request, Deadline deadline) {
  std::vector<int> idle;
  for (int i = 0; i < workers_; ++i) {
    if (outstanding_[static_cast<std::size_t>(i)] < 0) idle.push_back(i);
  }
  executor.Dispatch(request, idle);
  for (const int i : idle) outstanding_[static_cast<std::size_t>(i)] = request.round;

  std::vector<WorkerReply> arrived;
  auto answered = [&] {
    return static_cast<int>(std::count_if(latest_.begin(), latest_.end(),
                                          [&](const WorkerReply& r) { return r.round == request.round; }));
  };
  while (!MayProceed(request.round, answered())) {
    if (deadline.Expired()) {
      AppendTimedOut(arrived);  // (some worker is out: with none out, the bound holds)
      return arrived;
    }
    Record(arrived, executor.Collect(1, deadline));
    if (std::any_of(arrived.begin(), arrived.end(), [](const WorkerReply& r) { return r.status != ReplyStatus::kOk; })) {
      return arrived;
    }
  }
  for (const WorkerReply& r : latest_) stale_replies_ += r.round < request.round ? 1 : 0;
  return arrived;
}

}  // namespace nimbus
