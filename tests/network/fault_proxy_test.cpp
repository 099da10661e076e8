// Worker processes whose streams pass through nimbus-fault-proxy: delays, narrow links,
// resets and blackholes, in 20 seeded schedules and a few chosen ones. Every run ends by itself
// at the fault-free objective, and its summary accounts for what the faults cost: rounds sent
// again after a reset, workers replaced after a partition past their deadline, their late
// messages dropped.
#include <cstdio>
#include <map>
#include <random>
#include <sstream>

#include "network/network_support.h"

namespace nimbus::testing {
namespace {

std::string Text(const std::vector<std::string>& streams) {
  std::ostringstream out;
  for (const std::string& s : streams) out << " --stream " << s;
  return out.str();
}

std::string Describe(const ProxiedRun& run, const std::vector<std::string>& streams) {
  std::ostringstream out;
  out << "schedule:" << Text(streams) << "\nsummary: " << run.summary.dump() << "\nproxy:";
  for (const Json& e : run.events) out << "\n  " << e.dump();
  out << "\nstderr: " << run.result.err;
  return out.str();
}

class FaultProxySchedules : public ::testing::TestWithParam<uint64_t> {};

TEST_P(FaultProxySchedules, EndAtTheFaultFreeObjectiveWithTheFaultsCounted) {
  const std::vector<std::string> streams = Schedule(GetParam());
  const ProxiedRun run = RunThroughProxy(streams, GetParam());
  const std::string context = Describe(run, streams);
  ExpectFaultFreeObjective(run, context);
  if (HasFatalFailure()) return;
  // A reset as a ROUND arrives loses that round: the worker, reconnected, says its last
  // message again and the master sends the round again, or (should that fail too) replaces it.
  const int round_resets = run.Count("reset", "round");
  EXPECT_GE(run.summary["rounds_resent"].get<int>() + run.summary["worker_restarts"].get<int>(), round_resets)
      << context;
  if (round_resets > 0) {
    EXPECT_GE(run.summary["reconnects"].get<int>(), 1) << context;
  }
  // A link held past the round deadline (2 s) at a round: its worker is replaced.
  int long_partitions = 0;
  for (const Json& e : run.events) {
    if (e["event"] == "blackhole" && e["why"] == "round" && e["hold_seconds"].get<double>() > 2) ++long_partitions;
  }
  EXPECT_GE(run.summary["worker_restarts"].get<int>(), long_partitions) << context;
  std::printf("seed %llu: %d resets, %d blackholes; summary: %d restarts, %d reconnects, %d rounds sent again, "
              "%d messages dropped, %d rounds\n", static_cast<unsigned long long>(GetParam()), run.Count("reset"),
              run.Count("blackhole"), run.summary["worker_restarts"].get<int>(), run.summary["reconnects"].get<int>(),
              run.summary["rounds_resent"].get<int>(), run.summary["messages_dropped"].get<int>(),
              run.summary["rounds"].get<int>());
}

INSTANTIATE_TEST_SUITE_P(Seeds, FaultProxySchedules, ::testing::Range<uint64_t>(1, 21),
                         [](const ::testing::TestParamInfo<uint64_t>& info) {
                           return "seed_" + std::to_string(info.param);
                         });

// Through the proxy and nothing else: the same answer, nothing counted, every stream closed
// in order at the end.
TEST(FaultProxy, AFaultlessProxyChangesNothing) {
  const ProxiedRun run = RunThroughProxy({}, 1);
  ExpectFaultFreeObjective(run, Describe(run, {}));
  EXPECT_EQ(run.summary["worker_restarts"], 0);
  EXPECT_EQ(run.summary["reconnects"], 0);
  EXPECT_EQ(run.summary["messages_dropped"], 0);
  EXPECT_EQ(run.Count("open"), 6);  // each worker's link and heartbeat stream
  EXPECT_EQ(run.Count("close"), 6);
}

// Every worker's link is reset as its 5th round arrives: each worker reconnects and says its
// last REPLY again, the master sends the round again, and no worker is replaced.
TEST(FaultProxy, ARoundLostWithAResetIsSentAgainWithoutAReplacement) {
  const std::vector<std::string> streams = {"*=reset-round:5"};
  const ProxiedRun run = RunThroughProxy(streams, 1);
  const std::string context = Describe(run, streams);
  ExpectFaultFreeObjective(run, context);
  EXPECT_GE(run.Count("reset", "round"), 3) << context;
  EXPECT_EQ(run.summary["worker_restarts"], 0) << context;
  EXPECT_GE(run.summary["rounds_resent"].get<int>(), 3) << context;
  EXPECT_GE(run.summary["reconnects"].get<int>(), 3) << context;
}

// A link reset after 30,000 bytes, in the middle of a message: the same recovery.
TEST(FaultProxy, AResetInTheMiddleOfAMessageIsRecovered) {
  const std::vector<std::string> streams = {"0=reset-byte:30000", "*=delay:1"};
  const ProxiedRun run = RunThroughProxy(streams, 1);
  const std::string context = Describe(run, streams);
  ExpectFaultFreeObjective(run, context);
  EXPECT_EQ(run.Count("reset", "byte"), 1) << context;
  EXPECT_GE(run.summary["reconnects"].get<int>() + run.summary["worker_restarts"].get<int>(), 1) << context;
}

// Every worker's link reset in the middle of a message, with heartbeats 1.5 s apart (and a
// round deadline well past that, so no worker is replaced): a worker sees its link remade
// within a heartbeat, and the master must count each reconnect although the run ends
// soon after, before the heartbeat socket's next beat. (Of the first six streams, the three
// links reach 30,000 bytes in their first rounds; the heartbeat streams never do.)
TEST(FaultProxy, EveryReconnectIsCountedThoughTheRunEndsBeforeTheNextHeartbeat) {
  std::vector<std::string> streams = {"*=delay:1"};
  for (int stream = 0; stream < 6; ++stream) streams.push_back(std::to_string(stream) + "=reset-byte:30000,delay:1");
  const ProxiedRun run = RunThroughProxy(streams, 1, nullptr, {.heartbeat_seconds = 1.5, .round_timeout_floor_seconds = 10});
  const std::string context = Describe(run, streams);
  ExpectFaultFreeObjective(run, context);
  EXPECT_EQ(run.Count("reset", "byte"), 3) << context;
  EXPECT_EQ(run.summary["worker_restarts"], 0) << context;
  EXPECT_EQ(run.summary["reconnects"], 3) << context;
}

// Delays and a narrow link only slow the run: nothing is lost, nothing counted. The proxy's
// log of every chunk shows the schedule kept: each chunk due 5-8 ms after it came in, no
// sooner than the one before it, and at least its bytes' time at 50 Mbit/s after it; and the
// chunks add up to every byte the report says each stream carried; the report ends with the
// proxy's CPU, reading and writing apart.
TEST(FaultProxy, DelayJitterAndARateCapOnlySlowTheRun) {
  const std::vector<std::string> streams = {"*=delay:5,jitter:3,rate:50"};
  const ProxiedRun run = RunThroughProxy(streams, 2);
  ExpectFaultFreeObjective(run, Describe(run, streams));
  EXPECT_EQ(run.summary["worker_restarts"], 0);
  EXPECT_EQ(run.summary["rounds_resent"], 0);
  ASSERT_FALSE(run.chunks.empty());
  const double bytes_per_second = 50e6 / 8;
  const double slack = 1e-5;  // the log's times are to the microsecond
  std::map<std::pair<int, bool>, double> last_due;
  std::map<std::pair<int, bool>, int64_t> carried;
  for (const Json& chunk : run.chunks) {
    const std::pair<int, bool> direction{chunk["stream"].get<int>(), chunk["down"].get<bool>()};
    const double read = chunk["read"].get<double>(), due = chunk["due"].get<double>();
    const int64_t bytes = chunk["bytes"].get<int64_t>();
    EXPECT_GE(due - read, 5e-3 - slack) << chunk.dump();
    if (last_due.contains(direction)) {
      EXPECT_GE(due, last_due[direction] + bytes / bytes_per_second - slack)
          << chunk.dump() << " after " << std::to_string(last_due[direction]);
    } else {
      EXPECT_LE(due - read, 8e-3 + bytes / bytes_per_second + slack) << chunk.dump();
    }
    last_due[direction] = due;
    carried[direction] += bytes;
  }
  for (const Json& e : run.events) {
    if (e["event"] != "close") continue;
    const int stream = e["stream"].get<int>();
    EXPECT_EQ((carried[{stream, false}]), e["bytes_up"].get<int64_t>()) << e.dump();
    EXPECT_EQ((carried[{stream, true}]), e["bytes_down"].get<int64_t>()) << e.dump();
  }
  // The report's last line is the proxy's CPU: some in reading and some in writing, together
  // no more than the whole process's.
  ASSERT_FALSE(run.events.empty());
  const Json& cpu = run.events.back();
  ASSERT_EQ(cpu["event"], "cpu") << cpu.dump();
  EXPECT_GT(cpu["read_seconds"].get<double>(), 0) << cpu.dump();
  EXPECT_GT(cpu["write_seconds"].get<double>(), 0) << cpu.dump();
  EXPECT_LE(cpu["read_seconds"].get<double>() + cpu["write_seconds"].get<double>(),
            cpu["process_seconds"].get<double>() + 0.02) << cpu.dump();
}

// A link blackholed for 0.3 s (within the round deadline and with heartbeats flowing on the
// other stream): late, but not replaced.
TEST(NetworkPartition, AShortPartitionOnlyDelaysTheRound) {
  const std::vector<std::string> streams = {"0=blackhole-round:3:300", "*=delay:1"};
  const ProxiedRun run = RunThroughProxy(streams, 1);
  const std::string context = Describe(run, streams);
  ExpectFaultFreeObjective(run, context);
  EXPECT_EQ(run.Count("blackhole", "round"), 1) << context;
  EXPECT_EQ(run.summary["worker_restarts"], 0) << context;
}

// A partition that falls while a worker computes its 3rd round: what it sends is held for
// 2.2 s, past the 2 s round deadline. It is replaced, and its answer, delivered when the
// partition heals (the 10 ms delays keep the run going past that), is dropped as an old
// invocation's.
TEST(NetworkPartition, AWorkerPartitionedPastItsDeadlineIsReplacedAndItsLateMessagesDropped) {
  const std::vector<std::string> streams = {"0=delay:10,blackhole-up-round:3:2200", "*=delay:10"};
  const ProxiedRun run = RunThroughProxy(streams, 1);
  const std::string context = Describe(run, streams);
  ExpectFaultFreeObjective(run, context);
  ASSERT_EQ(run.Count("blackhole", "round"), 1) << context << "\n(stream 0 is the first worker's link)";
  EXPECT_GE(run.summary["worker_restarts"].get<int>(), 1) << context;
  EXPECT_GE(run.summary["messages_dropped"].get<int>(), 1) << context;
}

}  // namespace
}  // namespace nimbus::testing
