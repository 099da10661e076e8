#include "nimbus/metrics/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "nimbus/core/file_io.h"
#include "nimbus/core/json_integer.h"
#include "nimbus/wire/messages.h"

namespace nimbus {
namespace {

// A ROUND or a REPLY on the wire beyond its model-sized vectors: the 72-byte header and a few
// scalars and timings.
constexpr double kMessageOverheadBytes = 160;

// A worker's start crosses the link this many times one way: the connection's handshake
// (ZMTP's greetings and CurveZMQ's HELLO, WELCOME, INITIATE and READY) and then nimbus's
// HELLO, ASSIGN and READY. Measured: through a proxy that delays every stream, the setup grows
// by 5 round trips (bench/link.sh, 5 to 50 ms).
constexpr double kStartTrips = 10;

bool FiniteNonNegative(double value) { return std::isfinite(value) && value >= 0; }

// One worker's shard.
double ShardBytesOf(const Scenario& scenario) {
  return ShardBytes(static_cast<double>(scenario.rows), static_cast<double>(scenario.nnz)) / scenario.workers;
}

// The per-round work of a calibration point, in the units of the fitted costs: the x-update's
// (or a block's coordinate descent's) steps run on the worker's own coordinates.
double ModelSeconds(const Profile& p, const ProfilePoint& at, double shard_nnz, double features, double rows) {
  const double local = p.LocalSize(at, shard_nnz, features);
  return p.seconds_per_nnz * at.data_passes * shard_nnz +
         p.CoordinateSeconds(local) * (at.cg_iterations + at.local_iterations) * local + p.seconds_per_round +
         p.seconds_per_row * rows;
}

// Least squares a + b x.
std::pair<double, double> FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double denominator = n * sxx - sx * sx;
  if (x.size() < 2 || std::abs(denominator) < 1e-12) return {n > 0 ? sy / n : 0, 0};
  const double b = (n * sxy - sx * sy) / denominator;
  return {(sy - b * sx) / n, b};
}

// A ROUND and a REPLY on the wire, in bytes: the vectors the profile says each carries.
struct MessageSizes {
  double request = 0;
  double reply = 0;
};

// `local_size`: the coordinates the worker holds, which its vectors carry; `rows`: the rows,
// which the column method's carry.
MessageSizes MessagesOf(const ProfilePoint& at, double local_size, double rows) {
  return {8 * (local_size * at.request_vectors + rows * at.request_row_vectors) + kMessageOverheadBytes,
          8 * (local_size * at.reply_vectors + rows * at.reply_row_vectors) + kMessageOverheadBytes};
}

struct RoundTimes {
  double end = 0;           // from the first dispatch to the master's end of the round
  double mean_compute = 0;  // over workers
  double master = 0;        // the master's own work
};

// One round where every worker has its own CPU: the master sends ROUND to each worker in turn
// through its link, each worker computes, the REPLYs come back through the master's link in
// the order they are ready, the master adds each into the sum, then does the rest of its round
// (z-update, or a CG step).
RoundTimes SimulateRoundOwnCpus(const Platform& platform, const std::vector<double>& compute,
                                const MessageSizes& messages, double master_per_reply, double master_fixed,
                                bool free_messages) {
  const std::size_t k = compute.size();
  const double latency = free_messages ? 0 : platform.latency_seconds;
  const double slower_link = std::min(platform.master_bandwidth, platform.worker_bandwidth);
  auto on_master_link = [&](double bytes) { return free_messages ? 0 : bytes / platform.master_bandwidth; };
  auto end_to_end = [&](double bytes) { return free_messages ? 0 : bytes / slower_link; };
  const double request_transfer = end_to_end(messages.request), reply_transfer = end_to_end(messages.reply);
  std::vector<double> finish(k);
  for (std::size_t i = 0; i < k; ++i) {
    finish[i] = static_cast<double>(i) * on_master_link(messages.request) + latency + request_transfer + compute[i];
  }
  std::vector<std::size_t> order(k);
  for (std::size_t i = 0; i < k; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return finish[a] < finish[b]; });
  double link_free = 0, master_free = 0;
  for (const std::size_t i : order) {
    const double received = std::max(finish[i] + latency + reply_transfer, link_free + on_master_link(messages.reply));
    link_free = received;
    master_free = std::max(master_free, received) + master_per_reply;
  }
  return {master_free + master_fixed, 0, 0};
}

// Relays between the master and the workers (runtime/relay.h): the master's children are
// relays over consecutive groups of workers, cut as GroupForRelays cuts them, and a relay
// with more workers than the fanout has relays of its own. A node's link carries its
// children's messages one after another, as the master's does in the star.
struct TreeNode {
  std::size_t begin = 0, end = 0;  // its workers
  bool worker = false;
  double bandwidth = 0;            // its own link, each direction
  MessageSizes messages;           // its ROUND and REPLY, to and from its parent
  double sum_seconds = 0;          // its parent's work adding its REPLY into the sum
  double own_seconds = 0;          // a relay's work once every REPLY is in (its z on the whole model)
  std::vector<TreeNode> children;
};

// One round on a relay tree where every worker and relay has its own CPU: when the node's
// ROUND is in (at `arrived`), the time its REPLY is ready to leave.
double TreeReplyReady(const Platform& platform, const std::vector<double>& compute, const TreeNode& node,
                      double arrived, bool free_messages) {
  if (node.worker) return arrived + compute[node.begin];
  const double latency = free_messages ? 0 : platform.latency_seconds;
  auto on_link = [&](double bytes, double bandwidth) { return free_messages ? 0 : bytes / bandwidth; };
  std::vector<std::pair<double, const TreeNode*>> ready;
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    const TreeNode& child = node.children[i];
    const double slower = std::min(node.bandwidth, child.bandwidth);
    const double in = arrived + static_cast<double>(i) * on_link(child.messages.request, node.bandwidth) + latency +
                      on_link(child.messages.request, slower);
    ready.emplace_back(TreeReplyReady(platform, compute, child, in, free_messages), &child);
  }
  std::sort(ready.begin(), ready.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double link_free = arrived, free_at = arrived;
  for (const auto& [at, child] : ready) {
    const double slower = std::min(node.bandwidth, child->bandwidth);
    const double received = std::max(at + latency + on_link(child->messages.reply, slower),
                                     link_free + on_link(child->messages.reply, node.bandwidth));
    link_free = received;
    free_at = std::max(free_at, received) + child->sum_seconds;
  }
  return free_at + node.own_seconds;
}

// The storage reduction's transfers: the round's vector on the whole model, which the master
// puts once and every worker gets; a worker's reply (on its support), which it puts in K
// slices; the sum of the replies on the whole model, in K slices, one a worker.
struct StorageSizes {
  double request = 0;
  double worker_reply = 0;
  double sum = 0;
  // A round's PUTs, GETs and polls (LIST or HEAD): the master's PUT, K GETs, K^2 slices put and
  // got, K polls, K sums put, the master's poll and K GETs.
  static int64_t RequestsPerRound(int64_t k) { return 2 * k * k + 4 * k + 2; }
};

// One round of the storage reduction (ScatterReduce) where every worker has its own CPU. A
// storage request waits the storage latency; a worker's transfers go at its storage bandwidth
// (or its link's, the slower), the master's through its link. Requests issued together run in
// parallel. The master puts the vector and sends each worker a ROUND naming it; worker i gets
// it, computes and puts its reply's K slices; worker j polls until every worker's slice j is
// in, gets them, sums and puts slice j of the sum; the master polls until every slice of the
// sum is in and gets them.
double StorageRoundEnd(const Platform& platform, const std::vector<double>& compute, const StorageSizes& sizes,
                       bool free_messages) {
  const double k = static_cast<double>(compute.size());
  const double latency = free_messages ? 0 : platform.latency_seconds;
  const double request = free_messages ? 0 : platform.storage_latency_seconds;
  const double worker_bandwidth = std::min(platform.storage_bandwidth, platform.worker_bandwidth);
  auto at_worker = [&](double bytes) { return free_messages ? 0 : bytes / worker_bandwidth; };
  auto at_master = [&](double bytes) { return free_messages ? 0 : bytes / platform.master_bandwidth; };
  const double put = request + at_master(sizes.request);
  double scattered = 0;
  for (std::size_t i = 0; i < compute.size(); ++i) {
    const double notified = put + static_cast<double>(i + 1) * at_master(kMessageOverheadBytes) + latency;
    scattered = std::max(scattered, notified + request + at_worker(sizes.request) + compute[i] + request +
                                        at_worker(sizes.worker_reply));
  }
  const double reduced = scattered + request + request + at_worker(sizes.worker_reply) + request + at_worker(sizes.sum / k);
  return reduced + request + request + at_master(sizes.sum);
}

// Weighted processor sharing on `cores` CPUs, of jobs that start as others end or after a
// delay. A running job of weight w gets w min(1, cores / W) CPUs, W the running jobs' total
// weight; so all progress alike in work per weight, and a job ends when the service per
// weight given since its start reaches its work over its weight.
class SharedCpus {
 public:
  using Then = std::function<void()>;
  explicit SharedCpus(int cores) : cores_(cores) {}

  double now() const { return now_; }
  void Run(double work, double weight, Then then) {
    running_.push({service_ + work / weight, Add(std::move(then)), weight});
    running_weight_ += weight;
  }
  void After(double delay, Then then) { timers_.push({now_ + delay, Add(std::move(then)), 0}); }
  void RunAll() {
    while (!running_.empty() || !timers_.empty()) {
      const double rate = running_.empty() ? 0 : std::min(1.0, cores_ / running_weight_);  // service per weight
      const double next_end = running_.empty() ? std::numeric_limits<double>::infinity()
                                               : now_ + (running_.top().at - service_) / rate;
      if (!timers_.empty() && timers_.top().at <= next_end) {
        const Event timer = timers_.top();
        timers_.pop();
        service_ += rate * std::max(0.0, timer.at - now_);
        now_ = std::max(now_, timer.at);
        Fire(timer);
      } else {
        const Event job = running_.top();
        running_.pop();
        service_ = job.at;
        now_ = next_end;
        running_weight_ = running_.empty() ? 0 : running_weight_ - job.weight;
        Fire(job);
      }
    }
  }

 private:
  struct Event {
    double at;  // service (a job) or time (a timer)
    std::size_t then;
    double weight;
    bool operator>(const Event& other) const { return at != other.at ? at > other.at : then > other.then; }
  };
  using Queue = std::priority_queue<Event, std::vector<Event>, std::greater<>>;

  std::size_t Add(Then then) {
    thens_.push_back(std::move(then));
    return thens_.size() - 1;
  }
  void Fire(const Event& event) {
    Then then = std::move(thens_[event.then]);
    then();
  }

  const int cores_;
  double now_ = 0, service_ = 0, running_weight_ = 0;
  Queue running_, timers_;
  std::vector<Then> thens_;
};

// A relay's CPU for one message: reading it in, and writing it on.
struct RelayWork {
  double read = 0, write = 0;
  bool any() const { return read > 0 || write > 0; }
};

// What a message costs on shared cores: CPU at each of its ends (encoding, CurveZMQ, the
// kernel's copies), a fixed part and a part per byte; with a relay on the same cores, the
// relay's forwarding it; a wire, and a delay.
struct SharedMessageCosts {
  double request_cpu = 0, reply_cpu = 0;  // at one end
  double request_wire = 0, reply_wire = 0;
  double latency = 0;
  RelayWork request_relay, reply_relay;
};

SharedMessageCosts SharedCostsOf(const Platform& platform, const MessageSizes& messages, bool free_messages) {
  if (free_messages) return {};
  const double wire = std::min(platform.master_bandwidth, platform.worker_bandwidth);
  auto cpu = [&](double bytes) { return platform.message_cpu_seconds + bytes * platform.message_cpu_seconds_per_byte; };
  auto relay = [&](double bytes) {
    return RelayWork{bytes * platform.relay_read_seconds_per_byte, bytes * platform.relay_write_seconds_per_byte};
  };
  return {cpu(messages.request),
          cpu(messages.reply),
          messages.request / wire,
          messages.reply / wire,
          platform.latency_seconds,
          relay(messages.request),
          relay(messages.reply)};
}

// Jobs that run one at a time, in the order given, on shared cores: the master's thread, or a
// relay's.
class SerialCpu {
 public:
  explicit SerialCpu(SharedCpus& cpus) : cpus_(cpus) {}
  // `then` runs when the job is done.
  void Run(double work, double weight, SharedCpus::Then then) {
    queue_.push_back({work, weight, std::move(then)});
    Next();
  }

 private:
  struct Job {
    double work, weight;
    SharedCpus::Then then;
  };
  void Next() {
    if (busy_ || queue_.empty()) return;
    busy_ = true;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    cpus_.Run(job.work, job.weight, [this, then = std::move(job.then)] {
      busy_ = false;
      then();
      Next();
    });
  }
  SharedCpus& cpus_;
  std::deque<Job> queue_;
  bool busy_ = false;
};

// One round on cores that the workers, the master and every message's ends share: the master
// seals the ROUNDs one after another and they leave together once the last is sealed, each
// worker computes once its ROUND is in and sends its REPLY, the master takes the REPLYs in the
// order they come and adds each into the sum, then does the rest of its round. The master's
// end of a message runs on two threads (its own and ZeroMQ's I/O thread), so it weighs 2 among
// the running jobs.
class SharedRound {
 public:
  SharedRound(int cores, const std::vector<double>& compute, const SharedMessageCosts& costs, double master_per_reply,
              double master_fixed)
      : cpus_(cores), master_(cpus_), relay_(cpus_), compute_(compute), costs_(costs),
        master_per_reply_(master_per_reply), master_fixed_(master_fixed) {}

  double Run() {
    for (std::size_t i = 0; i < compute_.size(); ++i) SendRound(i);
    cpus_.RunAll();
    return end_;
  }

 private:
  static constexpr double kMasterMessageWeight = 2;

  // A message: CurveZMQ seals it whole and opens it whole, so the sender's end is done before
  // its first byte leaves and the receiver's end starts once its last byte is in. Between them
  // the wire carries it, after the delay. A relay (if any) reads it first, and its delay starts
  // from there (bench/link.sh's proxy times each chunk from its read); it writes it on once
  // due, while the wire carries it.
  using End = std::function<void(SharedCpus::Then done)>;
  void Send(double wire, const RelayWork& relay, const End& sender_end, const End& receiver_end,
            SharedCpus::Then delivered) {
    sender_end([this, wire, relay, receiver_end, delivered = std::move(delivered)] {
      auto carry = [this, wire, relay, receiver_end, delivered] {
        auto parts = std::make_shared<int>(relay.any() ? 2 : 1);
        auto carried = [parts, receiver_end, delivered] {
          if (--*parts == 0) receiver_end(delivered);
        };
        if (relay.any()) cpus_.After(costs_.latency, [this, relay, carried] { relay_.Run(relay.write, 1, carried); });
        cpus_.After(costs_.latency + wire, carried);
      };
      if (relay.any()) relay_.Run(relay.read, 1, carry);
      else carry();
    });
  }
  End MasterEnd(double work) {
    return [this, work](SharedCpus::Then done) { master_.Run(work, kMasterMessageWeight, std::move(done)); };
  }
  // ZeroMQ's I/O thread seals a message and writes its first 8 kB as soon as the master queues
  // it, and writes the rest at its next poll; the master queues a round's ROUNDs at once, so
  // all are sealed before the rest of any is written (strace of the master's I/O thread at
  // K = 2: sendto(A, 8192), sendto(B, 8192), sendto(A, 471888), sendto(B, 471864)).
  End MasterSealsRound(double work) {
    return [this, seal = MasterEnd(work)](SharedCpus::Then done) {
      seal([this, done = std::move(done)] {
        sealed_rounds_.push_back(done);
        if (sealed_rounds_.size() < compute_.size()) return;
        for (const SharedCpus::Then& leave : sealed_rounds_) leave();
      });
    };
  }
  End WorkerEnd(double work) {
    return [this, work](SharedCpus::Then done) { cpus_.Run(work, 1, std::move(done)); };
  }
  void SendRound(std::size_t i) {
    Send(costs_.request_wire, costs_.request_relay, MasterSealsRound(costs_.request_cpu), WorkerEnd(costs_.request_cpu),
         [this, i] { cpus_.Run(compute_[i], 1, [this] { SendReply(); }); });
  }
  void SendReply() {
    Send(costs_.reply_wire, costs_.reply_relay, WorkerEnd(costs_.reply_cpu), MasterEnd(costs_.reply_cpu + master_per_reply_),
         [this] { ReplyIn(); });
  }
  void ReplyIn() {
    if (++replies_in_ < compute_.size()) return;
    master_.Run(master_fixed_, 1, [this] { end_ = cpus_.now(); });
  }

  SharedCpus cpus_;
  SerialCpu master_, relay_;
  const std::vector<double>& compute_;
  const SharedMessageCosts costs_;
  const double master_per_reply_, master_fixed_;
  std::vector<SharedCpus::Then> sealed_rounds_;  // each ROUND's way on, once all are sealed
  std::size_t replies_in_ = 0;
  double end_ = 0;
};

// One round, on the platform's shared cores or on a CPU per worker; through relays or the
// storage reduction where given (own CPUs).
RoundTimes SimulateRound(const Platform& platform, const std::vector<double>& compute, const MessageSizes& messages,
                         double master_per_reply, double master_fixed, bool free_messages, const TreeNode* relays,
                         const StorageSizes* storage) {
  RoundTimes times;
  const double k = static_cast<double>(compute.size());
  for (const double c : compute) times.mean_compute += c / k;
  if (storage != nullptr) {  // the master gets one sum: its work is the rest of its round
    times.end = StorageRoundEnd(platform, compute, *storage, free_messages) + master_fixed;
    times.master = master_fixed;
    return times;
  }
  if (relays != nullptr) {  // own CPUs (Simulate refuses relays on shared cores)
    times.end = TreeReplyReady(platform, compute, *relays, 0, free_messages);
    times.master = relays->own_seconds;
    for (const TreeNode& child : relays->children) times.master += child.sum_seconds;
    return times;
  }
  if (platform.cores > 0) {
    SharedRound round(platform.cores, compute, SharedCostsOf(platform, messages, free_messages), master_per_reply,
                      master_fixed);
    times.end = round.Run();
  } else {
    times.end = SimulateRoundOwnCpus(platform, compute, messages, master_per_reply, master_fixed, free_messages).end;
  }
  times.master = master_per_reply * k + master_fixed;
  return times;
}

// The calibration point a fraction t of the way from a to b in log K. Compute time mixes
// geometrically (the work per worker falls as a power of K); ADMM's rounds are its
// iterations + 1, Newton's and the column method's are mixed as measured (`measured_rounds`).
ProfilePoint Between(const ProfilePoint& a, const ProfilePoint& b, double t, bool measured_rounds) {
  auto mix = [t](double x, double y) { return x + t * (y - x); };
  ProfilePoint at;
  at.iterations = static_cast<int>(std::lround(mix(a.iterations, b.iterations)));
  at.rounds = measured_rounds ? static_cast<int>(std::lround(mix(a.rounds, b.rounds))) : at.iterations + 1;
  at.compute_seconds = std::exp(mix(std::log(std::max(a.compute_seconds, 1e-12)), std::log(std::max(b.compute_seconds, 1e-12))));
  at.imbalance = mix(a.imbalance, b.imbalance);
  at.data_passes = mix(a.data_passes, b.data_passes);
  at.local_iterations = mix(a.local_iterations, b.local_iterations);
  at.cg_iterations = mix(a.cg_iterations, b.cg_iterations);
  at.master_seconds = mix(a.master_seconds, b.master_seconds);
  at.shared_slowdown = mix(a.shared_slowdown, b.shared_slowdown);
  at.spread = mix(a.spread, b.spread);
  at.request_vectors = mix(a.request_vectors, b.request_vectors);
  at.reply_vectors = mix(a.reply_vectors, b.reply_vectors);
  at.request_row_vectors = mix(a.request_row_vectors, b.request_row_vectors);
  at.reply_row_vectors = mix(a.reply_row_vectors, b.reply_row_vectors);
  at.local_fraction = std::exp(mix(std::log(a.local_fraction), std::log(b.local_fraction)));
  at.cg_steps = static_cast<int>(std::lround(mix(a.cg_steps, b.cg_steps)));
  return at;
}

// ADMM's iterations outside the measured K: the trend of the three nearest points in log K,
// but never below the nearest point's count beyond the largest K (more workers do not make
// ADMM converge faster).
int AdmmIterationsBeyond(const std::vector<ProfilePoint>& points, int workers, bool below) {
  const ProfilePoint& nearest = below ? points.front() : points.back();
  std::vector<double> x, y;
  const std::size_t fitted = std::min<std::size_t>(3, points.size());
  for (std::size_t i = 0; i < fitted; ++i) {
    const ProfilePoint& p = below ? points[i] : points[points.size() - fitted + i];
    x.push_back(std::log2(static_cast<double>(p.workers)));
    y.push_back(p.iterations);
  }
  const auto [a, b] = FitLine(x, y);
  const double trend = a + b * std::log2(static_cast<double>(std::max(1, workers)));
  return std::max(1, static_cast<int>(std::lround(below ? trend : std::max<double>(trend, nearest.iterations))));
}

}  // namespace

// The shared-core rounds' processor sharing (SharedCpus), every job of weight 1 and released
// at its arrival.
std::vector<double> ShareCores(const std::vector<double>& arrival, const std::vector<double>& work, int cores) {
  SharedCpus cpus(cores);
  std::vector<double> finish(arrival.size(), 0);
  for (std::size_t i = 0; i < arrival.size(); ++i) {
    cpus.After(arrival[i], [&cpus, &finish, &work, i] {
      cpus.Run(work[i], 1, [&cpus, &finish, i] { finish[i] = cpus.now(); });
    });
  }
  cpus.RunAll();
  return finish;
}

double ShardBytes(double rows, double nnz) { return rows * 16 + nnz * 12; }

Status Profile::Validate() const {
  if (algorithm != Algorithm::kAdmm && algorithm != Algorithm::kNewton && algorithm != Algorithm::kColumns) {
    return InvalidArgument("profile: algorithm must be admm, newton or columns, got '" + std::string(NameOf(algorithm)) +
                           "'");
  }
  if (points.empty()) return InvalidArgument("profile: has no calibration points");
  if (rows <= 0 || cols <= 0 || nnz <= 0) return InvalidArgument("profile: rows, cols and nnz must be positive");
  if (cores < 1) return InvalidArgument("profile: cores must be >= 1, got " + std::to_string(cores));
  if (blocks < 1) return InvalidArgument("profile: blocks must be >= 1, got " + std::to_string(blocks));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ProfilePoint& p = points[i];
    const std::string where = "profile: point " + std::to_string(i) + ": ";
    if (p.workers < 1 || (i > 0 && p.workers <= points[i - 1].workers)) {
      return InvalidArgument(where + "workers must be >= 1 and ascending");
    }
    if (p.iterations < 1) return InvalidArgument(where + "iterations must be >= 1");
    if (newton() && p.rounds < 1) return InvalidArgument(where + "rounds must be >= 1");
    if (columns() && p.rounds < p.iterations) return InvalidArgument(where + "rounds must be >= iterations");
    for (const double vectors : {p.request_vectors, p.reply_vectors}) {
      if (!(vectors > 0) || !std::isfinite(vectors)) {
        return InvalidArgument(where + "request_vectors and reply_vectors must be > 0 (a message carries a vector, "
                                       "in float32 or as its nonzeros perhaps)");
      }
    }
    if (p.cg_steps < 0) return InvalidArgument(where + "cg_steps must be >= 0");
    if (!(p.local_fraction > 0 && p.local_fraction <= 1)) {
      return InvalidArgument(where + "local_fraction must be in (0, 1] (a share of the model)");
    }
    for (const double value : {p.compute_seconds, p.data_passes, p.local_iterations, p.cg_iterations, p.master_seconds,
                               p.request_row_vectors, p.reply_row_vectors}) {
      if (!FiniteNonNegative(value)) return InvalidArgument(where + "times and counts must be finite and >= 0");
    }
    if (!(p.imbalance >= 1) || !std::isfinite(p.imbalance)) return InvalidArgument(where + "imbalance must be >= 1");
    if (!(p.shared_slowdown > 0) || !std::isfinite(p.shared_slowdown)) {
      return InvalidArgument(where + "shared_slowdown must be positive");
    }
    if (!FiniteNonNegative(p.spread)) return InvalidArgument(where + "spread must be finite and >= 0");
  }
  for (const double value : {seconds_per_nnz, seconds_per_coordinate, seconds_per_coordinate_wide, seconds_per_round, master_seconds_per_reply_coordinate,
                             master_seconds_per_coordinate, message_latency_seconds, process_start_seconds,
                             process_spawn_seconds, prepare_seconds_per_nnz, seconds_per_row,
                             master_seconds_per_reply_row, master_seconds_per_row}) {
    if (!FiniteNonNegative(value)) return InvalidArgument("profile: fitted costs must be finite and >= 0");
  }
  if (!(message_bandwidth > 0) || !(shard_load_bandwidth > 0)) {
    return InvalidArgument("profile: message_bandwidth and shard_load_bandwidth must be positive");
  }
  return Status::Ok();
}

ProfilePoint Profile::At(int workers) const {
  const double log_k = std::log2(static_cast<double>(std::max(1, workers)));
  auto log_of = [](const ProfilePoint& p) { return std::log2(static_cast<double>(p.workers)); };
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const ProfilePoint &a = points[i], &b = points[i + 1];
    if (workers < a.workers || workers > b.workers) continue;
    ProfilePoint at = Between(a, b, (log_k - log_of(a)) / (log_of(b) - log_of(a)), newton() || columns());
    at.workers = workers;
    return at;
  }
  if (points.size() == 1 && workers == points[0].workers) return points[0];
  // Outside the measured range: the nearest point's work per round, its compute scaled by the
  // fitted model to the shard at this K. Newton's rounds and steps stay the nearest point's;
  // the column method's rounds beyond its iterations too.
  const bool below = workers < points.front().workers;
  const ProfilePoint& nearest = below ? points.front() : points.back();
  ProfilePoint at = nearest;
  at.workers = workers;
  if (!newton()) {
    at.iterations = AdmmIterationsBeyond(points, workers, below);
    at.rounds = at.iterations + (columns() ? nearest.rounds - nearest.iterations : 1);
  }
  const double d = static_cast<double>(cols), n = static_cast<double>(rows);
  const double here = ModelSeconds(*this, at, static_cast<double>(nnz) / workers, d, n);
  const double there = ModelSeconds(*this, nearest, static_cast<double>(nnz) / nearest.workers, d, n);
  if (here > 0 && there > 0) at.compute_seconds = nearest.compute_seconds * here / there;
  return at;
}

double Profile::WorkerRoundSeconds(const ProfilePoint& at, double shard_nnz, double features, double rows_of) const {
  // Exact at the calibration problem (the measured time); elsewhere scaled by the fitted model.
  const double measured_model = ModelSeconds(*this, at, static_cast<double>(nnz) / std::max(1, at.workers),
                                             static_cast<double>(cols), static_cast<double>(rows));
  if (!(measured_model > 0)) return at.compute_seconds;
  const double scenario_rows = rows_of > 0 ? rows_of : static_cast<double>(rows);
  return at.compute_seconds * ModelSeconds(*this, at, shard_nnz, features, scenario_rows) / measured_model;
}

double Profile::CoordinateSeconds(double coordinates) const {
  const double measured = ModelSize(static_cast<double>(cols));
  if (wide_cols <= measured || coordinates <= measured) return seconds_per_coordinate;
  if (coordinates >= static_cast<double>(wide_cols)) return seconds_per_coordinate_wide;
  const double t = std::log(coordinates / measured) / std::log(static_cast<double>(wide_cols) / measured);
  return seconds_per_coordinate + t * (seconds_per_coordinate_wide - seconds_per_coordinate);
}

double Profile::LocalFraction(double shard_nnz, double features) const {
  if (points.empty() || !(shard_nnz > 0) || !(features > 0) || nnz <= 0 || cols <= 0) return 1;
  const bool dense = std::all_of(points.begin(), points.end(), [](const ProfilePoint& p) { return p.local_fraction >= 1; });
  if (dense) return 1;  // every worker held the whole model, as it does at every K
  auto log_s = [this](const ProfilePoint& p) {
    return std::log(static_cast<double>(nnz) / p.workers / static_cast<double>(cols));
  };
  const double x = std::log(shard_nnz / features);
  // The points ascend in K, so their s descends: the segment around x, or the nearest one.
  std::size_t a = 0;
  while (a + 2 < points.size() && x < log_s(points[a + 1])) ++a;
  double fraction = points[a].local_fraction;
  if (points.size() > 1) {
    const ProfilePoint &p = points[a], &q = points[a + 1];
    const double run = log_s(p) - log_s(q);
    double slope = run > 0 ? (std::log(p.local_fraction) - std::log(q.local_fraction)) / run : 0;
    const bool fewer_per_coordinate = x < log_s(q), more_per_coordinate = x > log_s(p);
    if (fewer_per_coordinate || more_per_coordinate) slope = std::clamp(slope, 0.0, 1.0);
    const ProfilePoint& nearest = fewer_per_coordinate ? q : p;
    fraction = std::exp(std::log(nearest.local_fraction) + slope * (x - log_s(nearest)));
  }
  return std::min({1.0, fraction, (shard_nnz + 1) / features});
}

double Profile::LocalSize(const ProfilePoint& at, double shard_nnz, double features) const {
  if (columns()) return ModelSize(features) / std::max(1, at.workers);
  return LocalFraction(shard_nnz, features) * ModelSize(features);
}

std::string Profile::ToJson() const {
  nlohmann::ordered_json json;
  json["machine"] = machine;
  json["date"] = date;
  json["algorithm"] = NameOf(algorithm);
  json["cores"] = cores;
  json["data"] = data;
  json["rows"] = rows;
  json["cols"] = cols;
  json["nnz"] = nnz;
  json["blocks"] = blocks;
  json["seconds_per_nnz"] = seconds_per_nnz;
  json["seconds_per_coordinate"] = seconds_per_coordinate;
  json["seconds_per_coordinate_wide"] = seconds_per_coordinate_wide;
  json["wide_cols"] = wide_cols;
  json["seconds_per_round"] = seconds_per_round;
  json["master_seconds_per_reply_coordinate"] = master_seconds_per_reply_coordinate;
  json["master_seconds_per_coordinate"] = master_seconds_per_coordinate;
  json["seconds_per_row"] = seconds_per_row;
  json["master_seconds_per_reply_row"] = master_seconds_per_reply_row;
  json["master_seconds_per_row"] = master_seconds_per_row;
  json["message_latency_seconds"] = message_latency_seconds;
  json["message_bandwidth"] = message_bandwidth;
  json["process_start_seconds"] = process_start_seconds;
  json["process_spawn_seconds"] = process_spawn_seconds;
  json["shard_load_bandwidth"] = shard_load_bandwidth;
  json["prepare_seconds_per_nnz"] = prepare_seconds_per_nnz;
  json["points"] = nlohmann::ordered_json::array();
  for (const ProfilePoint& p : points) {
    json["points"].push_back({{"workers", p.workers},
                              {"iterations", p.iterations},
                              {"rounds", p.rounds},
                              {"compute_seconds", p.compute_seconds},
                              {"imbalance", p.imbalance},
                              {"data_passes", p.data_passes},
                              {"local_iterations", p.local_iterations},
                              {"cg_iterations", p.cg_iterations},
                              {"master_seconds", p.master_seconds},
                              {"shared_slowdown", p.shared_slowdown},
                              {"request_vectors", p.request_vectors},
                              {"reply_vectors", p.reply_vectors},
                              {"request_row_vectors", p.request_row_vectors},
                              {"reply_row_vectors", p.reply_row_vectors},
                              {"cg_steps", p.cg_steps},
                              {"local_fraction", p.local_fraction},
                              {"spread", p.spread}});
  }
  return json.dump(2) + "\n";
}

Result<Profile> Profile::FromJson(const std::string& text, const std::string& origin) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return InvalidArgument(origin + ": not a JSON object");
  Profile profile;
  std::string missing;
  auto number = [&](const nlohmann::json& object, const char* field, auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const auto it = object.find(field);
    // A count must be an integer within its type's range (a cast of 1e300 would be undefined).
    const bool integral = std::is_integral_v<T>;
    bool usable = it != object.end() && (integral ? it->is_number_integer() : it->is_number());
    if (usable && integral) {
      try {
        *out = static_cast<T>(JsonInteger<std::conditional_t<integral, T, int>>(*it));
      } catch (const nlohmann::json::exception&) {
        usable = false;
      }
    } else if (usable) {
      *out = it->get<T>();
    }
    if (!usable && missing.empty()) missing = field;
  };
  // Fields newer profiles have: absent, the default stands (what profiles before them meant).
  auto optional_number = [&](const nlohmann::json& object, const char* field, auto* out) {
    if (object.contains(field)) number(object, field, out);
  };
  if (json.contains("machine") && json["machine"].is_string()) profile.machine = json["machine"];
  if (json.contains("date") && json["date"].is_string()) profile.date = json["date"];
  if (json.contains("data") && json["data"].is_string()) profile.data = json["data"];
  if (json.contains("algorithm")) {
    if (!json["algorithm"].is_string()) return InvalidArgument(origin + ": field \"algorithm\" must be a string");
    Result<Algorithm> algorithm = ParseChoice<Algorithm>(json["algorithm"].get<std::string>());
    if (!algorithm.ok()) return algorithm.status().WithContext(origin);
    profile.algorithm = *algorithm;
  }
  number(json, "cores", &profile.cores);
  number(json, "rows", &profile.rows);
  number(json, "cols", &profile.cols);
  number(json, "nnz", &profile.nnz);
  optional_number(json, "blocks", &profile.blocks);
  number(json, "seconds_per_nnz", &profile.seconds_per_nnz);
  number(json, "seconds_per_coordinate", &profile.seconds_per_coordinate);
  number(json, "seconds_per_coordinate_wide", &profile.seconds_per_coordinate_wide);
  number(json, "wide_cols", &profile.wide_cols);
  number(json, "seconds_per_round", &profile.seconds_per_round);
  number(json, "master_seconds_per_reply_coordinate", &profile.master_seconds_per_reply_coordinate);
  number(json, "master_seconds_per_coordinate", &profile.master_seconds_per_coordinate);
  optional_number(json, "seconds_per_row", &profile.seconds_per_row);
  optional_number(json, "master_seconds_per_reply_row", &profile.master_seconds_per_reply_row);
  optional_number(json, "master_seconds_per_row", &profile.master_seconds_per_row);
  number(json, "message_latency_seconds", &profile.message_latency_seconds);
  number(json, "message_bandwidth", &profile.message_bandwidth);
  number(json, "process_start_seconds", &profile.process_start_seconds);
  number(json, "process_spawn_seconds", &profile.process_spawn_seconds);
  number(json, "shard_load_bandwidth", &profile.shard_load_bandwidth);
  optional_number(json, "prepare_seconds_per_nnz", &profile.prepare_seconds_per_nnz);
  if (!json.contains("points") || !json["points"].is_array()) return InvalidArgument(origin + ": no \"points\" array");
  for (const nlohmann::json& item : json["points"]) {
    if (!item.is_object()) return InvalidArgument(origin + ": \"points\" must hold objects");
    ProfilePoint p;
    number(item, "workers", &p.workers);
    number(item, "iterations", &p.iterations);
    number(item, "rounds", &p.rounds);
    number(item, "compute_seconds", &p.compute_seconds);
    number(item, "imbalance", &p.imbalance);
    number(item, "data_passes", &p.data_passes);
    number(item, "local_iterations", &p.local_iterations);
    number(item, "cg_iterations", &p.cg_iterations);
    number(item, "master_seconds", &p.master_seconds);
    number(item, "shared_slowdown", &p.shared_slowdown);
    optional_number(item, "request_vectors", &p.request_vectors);
    optional_number(item, "reply_vectors", &p.reply_vectors);
    optional_number(item, "request_row_vectors", &p.request_row_vectors);
    optional_number(item, "reply_row_vectors", &p.reply_row_vectors);
    optional_number(item, "cg_steps", &p.cg_steps);
    optional_number(item, "local_fraction", &p.local_fraction);
    optional_number(item, "spread", &p.spread);
    profile.points.push_back(p);
  }
  if (!missing.empty()) return InvalidArgument(origin + ": field \"" + missing + "\" is missing or not a number");
  if (Status valid = profile.Validate(); !valid.ok()) return valid.WithContext(origin);
  return profile;
}

Result<Profile> Profile::Read(const std::string& path) {
  NIMBUS_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return FromJson(text, path);
}

Status Profile::Write(const std::string& path) const { return WriteFileAtomically(path, ToJson()); }

Status Platform::Validate() const {
  if (cores < 0 || start_cores < 0) return InvalidArgument("platform " + name + ": cores must be >= 0");
  if (!FiniteNonNegative(relay_bandwidth)) return InvalidArgument("platform " + name + ": relay bandwidth must be >= 0");
  for (const double value : {compute_speed, master_bandwidth, worker_bandwidth, storage_bandwidth}) {
    if (!(value > 0) || !std::isfinite(value)) {
      return InvalidArgument("platform " + name + ": compute speed and bandwidths must be positive");
    }
  }
  for (const double value : {latency_seconds, launch_seconds, cold_start_median, cold_start_sigma,
                             storage_latency_seconds, jitter_sigma, message_cpu_seconds, message_cpu_seconds_per_byte,
                             relay_read_seconds_per_byte, relay_write_seconds_per_byte}) {
    if (!FiniteNonNegative(value)) return InvalidArgument("platform " + name + ": times must be finite and >= 0");
  }
  if (!(straggler_probability >= 0 && straggler_probability <= 1)) {
    return InvalidArgument("platform " + name + ": straggler probability must be in [0, 1]");
  }
  if (!(straggler_slowdown >= 1) || !std::isfinite(straggler_slowdown)) {
    return InvalidArgument("platform " + name + ": straggler slowdown must be >= 1");
  }
  return Status::Ok();
}

Platform Platform::Local(const Profile& profile) {
  Platform local;
  local.name = "local";
  local.cores = profile.cores;
  // On 127.0.0.1 a message is CPU at its two ends, the kernel's copy included, and no wire.
  // Each end costs the calibrated one-way time (half a quiet ping-pong's round trip): in runs
  // through bench/link.sh's proxy, with the cores shared, sealing a 400 kB ROUND took 2.2 ns a
  // byte, opening a 550 kB REPLY 3.2 and a worker's opening and sealing 2.0, against the
  // one-way 1.9 (Zipf topics, K = 2, 2026-12-02). In CPU alone both ends together take about
  // the one-way time (bench/thread_cpu.py); the whole of it at each end stands in for the time
  // the real runs' cores sit idle, which processor sharing does not have (docs/evaluation.md,
  // "Where a round's CPU goes").
  local.message_cpu_seconds = profile.message_latency_seconds;
  local.message_cpu_seconds_per_byte = 1 / profile.message_bandwidth;
  local.latency_seconds = 0;
  local.master_bandwidth = kNoWire;
  local.worker_bandwidth = kNoWire;
  local.launch_seconds = profile.process_spawn_seconds;
  // Measured here: two worker processes starting at once each took twice as long as one alone
  // (52-62 ms against 25-37 ms, launch to HELLO): starts fault the program's pages in, and this
  // machine's page faults do not overlap.
  local.start_cores = 1;
  local.cold_start_median = profile.process_start_seconds;
  local.cold_start_sigma = 0.25;
  local.storage_bandwidth = profile.shard_load_bandwidth;
  return local;
}

Platform Platform::Lambda() {
  // The sources of these figures are in docs/evaluation.md ("The Lambda platform model").
  Platform lambda;
  lambda.name = "lambda";
  lambda.cores = 0;
  lambda.compute_speed = 1.0;          // 1769 MB and up: one full vCPU, our workers use one
  lambda.latency_seconds = 0.5e-3;     // EC2 to EC2 is ~0.29 ms round trip; functions add hops
  lambda.master_bandwidth = 1.25e9;    // a 10 Gbit/s master instance
  lambda.worker_bandwidth = 538e6 / 8; // 538 Mbit/s per function
  lambda.launch_seconds = 5e-3;        // one asynchronous Invoke request, from a pool of threads
  lambda.cold_start_median = 0.177;    // mean ~0.25 s, standard deviation ~0.25 s
  lambda.cold_start_sigma = 0.83;
  lambda.storage_latency_seconds = 0.03;
  lambda.storage_bandwidth = 40e6;     // S3 reads from one function, ~40 MB/s
  lambda.jitter_sigma = 0.05;
  lambda.straggler_probability = 0.0016;  // a straggler in 10% of rounds at K = 64
  lambda.straggler_slowdown = 2;
  return lambda;
}

namespace {

// The run's random draws (cold starts, noise, stragglers) from one stream, so that the same
// seed gives the same run.
struct Draws {
  explicit Draws(uint64_t seed) : random(seed) {}
  double Normal() { return normal(random); }
  double Uniform() { return uniform(random); }

  std::mt19937_64 random;
  std::normal_distribution<double> normal{0.0, 1.0};
  std::uniform_real_distribution<double> uniform{0.0, 1.0};
};

// The rounds a run at this K takes: the profile's, or those of a given number of ADMM
// iterations (the stop test of iteration k lags one round), column method iterations (with
// the profile's rounds beyond them) or Newton steps (at the profile's rounds per step).
int RoundsAt(const Profile& profile, const ProfilePoint& at, int iterations) {
  if (profile.columns()) return iterations > 0 ? iterations + (at.rounds - at.iterations) : at.rounds;
  if (!profile.newton()) return (iterations > 0 ? iterations : at.iterations) + 1;
  if (iterations <= 0) return at.rounds;
  const double per_step = static_cast<double>(at.rounds) / std::max(1, at.iterations);
  return std::max(1, static_cast<int>(std::lround(iterations * per_step)));
}

// The relay tree of a scenario, with each node's link, messages and work: a node over n
// workers holds the union of their supports, LocalFraction(n nnz_i, d) of the model.
class TreeBuilder {
 public:
  TreeBuilder(const Profile& profile, const Platform& platform, const ProfilePoint& at, const Scenario& scenario)
      : profile_(profile), platform_(platform), at_(at), scenario_(scenario),
        nnz_per_worker_(static_cast<double>(scenario.nnz) / scenario.workers),
        d_(static_cast<double>(scenario.cols)) {}

  TreeNode Master() const {
    TreeNode master;
    master.end = static_cast<std::size_t>(scenario_.workers);
    master.bandwidth = platform_.master_bandwidth;
    master.own_seconds = profile_.master_seconds_per_coordinate * profile_.ModelSize(d_);
    master.children = Cut(0, master.end, static_cast<std::size_t>(scenario_.relays));
    return master;
  }

 private:
  std::vector<TreeNode> Cut(std::size_t begin, std::size_t end, std::size_t groups) const {
    std::vector<TreeNode> relays;
    const std::size_t n = end - begin;
    for (std::size_t g = 0, next = begin; g < groups; ++g) {
      const std::size_t size = n / groups + (g < n % groups ? 1 : 0);
      relays.push_back(Relay(next, next + size));
      next += size;
    }
    return relays;
  }
  TreeNode Relay(std::size_t begin, std::size_t end) const {
    TreeNode relay = Sized(begin, end, platform_.relay_bandwidth > 0 ? platform_.relay_bandwidth : platform_.master_bandwidth);
    // It puts z on the whole model before its workers' gathers (runtime/relay.cpp).
    relay.own_seconds = profile_.master_seconds_per_coordinate * profile_.ModelSize(d_);
    if (const int64_t relays = RelaysUnder(static_cast<int64_t>(end - begin), scenario_.relay_fanout); relays > 0) {
      relay.children = Cut(begin, end, static_cast<std::size_t>(relays));
    } else {
      for (std::size_t i = begin; i < end; ++i) {
        relay.children.push_back(Sized(i, i + 1, platform_.worker_bandwidth));
        relay.children.back().worker = true;
      }
    }
    return relay;
  }
  TreeNode Sized(std::size_t begin, std::size_t end, double bandwidth) const {
    const double local = profile_.LocalFraction(nnz_per_worker_ * static_cast<double>(end - begin), d_) *
                         profile_.ModelSize(d_);
    TreeNode node;
    node.begin = begin;
    node.end = end;
    node.bandwidth = bandwidth;
    node.messages = MessagesOf(at_, local, static_cast<double>(scenario_.rows));
    node.sum_seconds = profile_.master_seconds_per_reply_coordinate * local;
    return node;
  }

  const Profile& profile_;
  const Platform& platform_;
  const ProfilePoint& at_;
  const Scenario& scenario_;
  double nnz_per_worker_, d_;
};

// When each worker is launched: a node launches its children one after another; a relay,
// once running (a process start after its launch), launches its own.
void LaunchTimes(const TreeNode& node, double at, double launch_seconds, double relay_start_seconds,
                 std::vector<double>& launched) {
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    const TreeNode& child = node.children[i];
    const double when = at + static_cast<double>(i) * launch_seconds;
    if (child.worker) {
      launched[child.begin] = when;
    } else {
      LaunchTimes(child, when + relay_start_seconds, launch_seconds, relay_start_seconds, launched);
    }
  }
}

int CountRelays(const TreeNode& node) {
  int relays = 0;
  for (const TreeNode& child : node.children) relays += child.worker ? 0 : 1 + CountRelays(child);
  return relays;
}

// Setup: serial launches, a cold start each, the connection, HELLO and ASSIGN, the shard load
// and the worker's preparation of it, READY. Fills the prediction's setup, cold start, load and
// preparation times.
void SimulateStart(const Profile& profile, const Platform& platform, const Scenario& scenario, const TreeNode* relays,
                   Draws& draws, Prediction& out) {
  const int k = scenario.workers;
  const double shard_bytes = ShardBytesOf(scenario);
  out.prepare_seconds = profile.prepare_seconds_per_nnz * static_cast<double>(scenario.nnz) / k / platform.compute_speed;
  // On shared cores the starts, loads and preparations are CPU work that the workers share
  // (the process starts on start_cores of them); elsewhere each worker has its own.
  const std::size_t workers = static_cast<std::size_t>(k);
  std::vector<double> launched(workers), cold_work(workers), load_work(workers);
  for (std::size_t i = 0; i < workers; ++i) {
    launched[i] = static_cast<double>(i) * platform.launch_seconds;
    cold_work[i] = platform.cold_start_median * std::exp(platform.cold_start_sigma * draws.Normal());
  }
  // Behind relays, each relay launches its own workers, side by side with the others.
  if (relays != nullptr) LaunchTimes(*relays, 0, platform.launch_seconds, profile.process_start_seconds, launched);
  for (std::size_t i = 0; i < workers; ++i) {
    const double cold = cold_work[i];
    const double load = platform.storage_latency_seconds + shard_bytes / platform.storage_bandwidth;
    load_work[i] = load + out.prepare_seconds;
    out.cold_start_seconds = std::max(out.cold_start_seconds, launched[i] + cold);
    out.load_seconds = load;  // the same for every shard
  }
  std::vector<double> started(workers);
  if (platform.cores > 0) {
    const int start_cores = platform.start_cores > 0 ? platform.start_cores : platform.cores;
    const std::vector<double> running = ShareCores(launched, cold_work, start_cores);
    started = ShareCores(running, load_work, platform.cores);
  } else {
    for (std::size_t i = 0; i < workers; ++i) started[i] = launched[i] + cold_work[i] + load_work[i];
  }
  for (const double t : started) {
    out.setup_seconds = std::max(out.setup_seconds, t + kStartTrips * platform.latency_seconds);
  }
}

// Each worker's round: the base time times its fixed place in the measured spread (the
// slowest is `imbalance` times the mean), lognormal noise and the odd straggling round.
struct WorkerTimes {
  double base = 0;
  std::vector<double> spread;

  WorkerTimes(double base_seconds, double imbalance, int k)
      : base(base_seconds), spread(static_cast<std::size_t>(k), 1.0) {
    if (k < 2) return;
    for (int i = 0; i < k; ++i) spread[static_cast<std::size_t>(i)] = 1 + (imbalance - 1) * (2.0 * i / (k - 1) - 1);
  }
  void Draw(const Platform& platform, Draws& draws, std::vector<double>& compute) const {
    for (std::size_t i = 0; i < spread.size(); ++i) {
      double seconds = base * spread[i];
      if (platform.jitter_sigma > 0) seconds *= std::exp(platform.jitter_sigma * draws.Normal());
      if (platform.straggler_probability > 0 && draws.Uniform() < platform.straggler_probability) {
        seconds *= platform.straggler_slowdown;
      }
      compute[i] = seconds;
    }
  }
};

// Every round, with its messages and once more with free messages (the same draws), into the
// prediction's solve time and shares.
void SimulateRounds(const Platform& platform, const WorkerTimes& workers, const MessageSizes& messages,
                    double master_per_reply, double master_fixed, const TreeNode* relays, const StorageSizes* storage,
                    int rounds, Draws& draws, Prediction& out) {
  std::vector<double> compute(workers.spread.size());
  double solve = 0, solve_free = 0, compute_total = 0, master_total = 0;
  for (int round = 0; round < rounds; ++round) {
    workers.Draw(platform, draws, compute);
    const RoundTimes times =
        SimulateRound(platform, compute, messages, master_per_reply, master_fixed, false, relays, storage);
    solve += times.end;
    solve_free += SimulateRound(platform, compute, messages, master_per_reply, master_fixed, true, relays, storage).end;
    compute_total += times.mean_compute;
    master_total += times.master;
  }
  out.solve_seconds = solve;
  out.round_seconds = solve / rounds;
  if (solve > 0) {
    out.compute_share = compute_total / solve;
    out.master_share = master_total / solve;
    out.communication_share = std::max(0.0, 1 - solve_free / solve);
    out.waiting_share = std::max(0.0, 1 - out.compute_share - out.master_share - out.communication_share);
  }
}

}  // namespace

Result<Prediction> Simulate(const Profile& profile, const Platform& platform, const Scenario& scenario,
                            const Prices& prices) {
  NIMBUS_RETURN_IF_ERROR(profile.Validate());
  NIMBUS_RETURN_IF_ERROR(platform.Validate());
  NIMBUS_RETURN_IF_ERROR(prices.Validate());
  if (scenario.workers < 1) return InvalidArgument("simulate: workers must be >= 1");
  if (scenario.rows < scenario.workers || scenario.cols < 1 || scenario.nnz < scenario.rows) {
    return InvalidArgument("simulate: the problem needs rows >= workers, cols >= 1 and nnz >= rows");
  }
  const int k = scenario.workers;
  const ProfilePoint at = profile.At(k);
  const double d = static_cast<double>(scenario.cols);
  Prediction out;
  out.workers = k;
  out.cols = scenario.cols;
  out.iterations = scenario.iterations > 0 ? scenario.iterations : at.iterations;
  out.rounds = RoundsAt(profile, at, scenario.iterations);
  if (scenario.relays < 0 || scenario.relays > k || scenario.relay_fanout < 0 || scenario.relay_fanout == 1) {
    return InvalidArgument("simulate: relays must be in [0, workers] and the relay fanout 0 or >= 2");
  }
  if (scenario.relays > 0 && platform.cores > 0) {
    return InvalidArgument("simulate: relays are modelled where every worker has its own CPU (--platform lambda), "
                           "not on platform " + platform.name + "'s shared cores");
  }
  if (profile.columns() && (scenario.relays > 0 || scenario.storage_reduction)) {
    return InvalidArgument("simulate: the column method's replies are each block's own, not summed: no relays or "
                           "storage reduction");
  }
  if (scenario.storage_reduction && (scenario.relays > 0 || platform.cores > 0)) {
    return InvalidArgument("simulate: the storage reduction is modelled where every worker has its own CPU "
                           "(--platform lambda), without relays");
  }
  std::optional<TreeNode> relays;
  if (scenario.relays > 0) relays = TreeBuilder(profile, platform, at, scenario).Master();
  const TreeNode* tree = relays ? &*relays : nullptr;
  Draws draws(scenario.seed);
  SimulateStart(profile, platform, scenario, tree, draws, out);

  // On shared cores, workers computing side by side slow each other down (memory, caches).
  const double n = static_cast<double>(scenario.rows), shard_nnz = static_cast<double>(scenario.nnz) / k;
  const double base = profile.WorkerRoundSeconds(at, shard_nnz, d, n) / platform.compute_speed *
                      (platform.cores > 0 ? at.shared_slowdown : 1.0);
  const double local_size = profile.LocalSize(at, shard_nnz, d);
  const MessageSizes messages = MessagesOf(at, local_size, n);
  const double master_per_reply =
      profile.master_seconds_per_reply_coordinate * local_size + profile.master_seconds_per_reply_row * at.reply_row_vectors * n;
  const double master_fixed =
      profile.master_seconds_per_coordinate * profile.ModelSize(d) + profile.master_seconds_per_row * n;
  std::optional<StorageSizes> storage;
  if (scenario.storage_reduction) {
    const double model = 8 * profile.ModelSize(d);
    storage = StorageSizes{model * at.request_vectors, messages.reply, model * at.reply_vectors};
  }
  SimulateRounds(platform, WorkerTimes(base, at.imbalance, k), messages, master_per_reply, master_fixed, tree,
                 storage ? &*storage : nullptr, out.rounds, draws, out);
  out.total_seconds = out.setup_seconds + out.solve_seconds;
  out.cold_start_share = out.total_seconds > 0 ? out.cold_start_seconds / out.total_seconds : 0;
  out.bytes_per_round = static_cast<int64_t>(k * (messages.request + messages.reply));
  if (tree != nullptr) {
    out.bytes_per_round = 0;
    for (const TreeNode& relay : tree->children) {
      out.bytes_per_round += static_cast<int64_t>(relay.messages.request + relay.messages.reply);
    }
    out.relay_hosts = CountRelays(*tree);
  }
  double storage_dollars = 0;
  if (storage) {
    out.bytes_per_round = static_cast<int64_t>(storage->request + storage->sum + k * kMessageOverheadBytes);
    out.storage_requests_per_round = StorageSizes::RequestsPerRound(k);
    // PUTs: the master's, the K^2 slices and the K sums; the rest are GETs and polls.
    const double puts = 1 + static_cast<double>(k) * k + k;
    storage_dollars = out.rounds * (puts * prices.s3_put + (static_cast<double>(out.storage_requests_per_round) - puts) *
                                                               prices.s3_get);
  }

  const int64_t s3_requests = k * (1 + ShardLoadRequests(static_cast<int64_t>(ShardBytesOf(scenario))));
  // Each relay host is priced as the master's, for the whole run.
  const Cost cost = EstimateCost(prices, k, k * out.total_seconds, s3_requests, (1 + out.relay_hosts) * out.total_seconds);
  out.dollars = cost.total_dollars() + storage_dollars;
  out.gb_seconds = cost.function_gb_seconds;
  return out;
}

}  // namespace nimbus
