// Workers on hosts of their own: network namespaces made by tests/support/netns.sh, with a
// master at 10.77.0.1 and workers at 10.77.0.2.. whose nftables drop every inbound connection
// attempt (a Lambda function's network). Workers only dial out, so a solve works across them,
// over CurveZMQ, and also through the fault proxy. Skipped, with the reason, where namespaces
// cannot be made (not root).
#include <cstdio>

#include "network/network_support.h"

namespace nimbus::testing {
namespace {

constexpr int kWorkers = 3;

// `bash -c 'exec 3<>/dev/tcp/HOST/PORT'` in `ns`, given 2 s: whether the connection was made.
bool Connects(const std::string& ns, const std::string& host, int port) {
  const CommandResult tried = RunCommand(NetworkNamespaces::In(
      ns, {"timeout", "2", "bash", "-c", "exec 3<>/dev/tcp/" + host + "/" + std::to_string(port)}));
  return tried.exit_code == 0;
}

// A listener in `ns` at host:port (the fault proxy, which accepts any connection).
std::unique_ptr<BackgroundProcess> ListenIn(const std::string& ns, const std::string& host, int port,
                                            const TempDir& dir) {
  auto listener = std::make_unique<BackgroundProcess>(
      NetworkNamespaces::In(ns, {NIMBUS_FAULT_PROXY, "--listen", host + ":" + std::to_string(port), "--target",
                                 "127.0.0.1:9", "--ready-file", dir.File(ns + ".ready")}),
      dir.File(ns + ".log"));
  for (int i = 0; i < 100 && !FileExists(dir.File(ns + ".ready")); ++i) ::usleep(50000);
  EXPECT_TRUE(FileExists(dir.File(ns + ".ready"))) << ReadTextFile(dir.File(ns + ".log"));
  return listener;
}

TEST(Namespace, AWorkersNamespaceDropsInboundConnectionsAndLetsItDialOut) {
  NIMBUS_SKIP_WITHOUT_NAMESPACES();
  NetworkNamespaces namespaces(kWorkers);
  TempDir dir;
  const int port = FreePort();
  {
    const auto in_worker = ListenIn(namespaces.worker(1), "10.77.0.2", port, dir);
    EXPECT_TRUE(Connects(namespaces.worker(1), "10.77.0.2", port));  // its own listener, from inside: it listens
    EXPECT_FALSE(Connects(namespaces.master(), "10.77.0.2", port));  // from the master: dropped
    EXPECT_FALSE(Connects(namespaces.worker(2), "10.77.0.2", port));  // from another worker: dropped
  }
  const CommandResult counted = RunCommand(NetworkNamespaces::In(
      namespaces.worker(1), {"nft", "list", "chain", "inet", "nimbus_worker", "input"}));
  EXPECT_EQ(counted.out.find("packets 0 "), std::string::npos) << "the drop rule counted nothing:\n" << counted.out;
  const auto in_master = ListenIn(namespaces.master(), "10.77.0.1", port, dir);
  EXPECT_TRUE(Connects(namespaces.worker(1), "10.77.0.1", port));  // out to the master: fine
}

// The master in its namespace, each worker started in its own by the command runtime
// (`ip netns exec NS nimbus worker {args}`), dialing 10.77.0.1 over CurveZMQ: the threads
// answer.
TEST(Namespace, WorkersInTheirOwnNamespacesReachTheThreadsAnswerOverCurveZmq) {
  NIMBUS_SKIP_WITHOUT_NAMESPACES();
  NetworkNamespaces namespaces(kWorkers);
  TempDir dir;
  std::vector<std::string> train = NetworkProblem::Get().TrainCommand(dir.File("summary.json"));
  const std::vector<std::string> runtime = namespaces.CommandRuntime();
  train.insert(train.end(), runtime.begin(), runtime.end());
  train.insert(train.end(), {"--listen", "tcp://10.77.0.1:" + std::to_string(FreePort())});
  const CommandResult run = RunCommand(NetworkNamespaces::In(namespaces.master(), train));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json summary = Json::parse(ReadTextFile(dir.File("summary.json")));
  const double expected = NetworkProblem::Get().objective();
  EXPECT_NEAR(summary["objective"].get<double>(), expected, 1e-8 * expected);
  EXPECT_EQ(summary["runtime"], "command");
  EXPECT_EQ(summary["security"], "curve");
  EXPECT_EQ(summary["worker_restarts"], 0);
}

// Relays in namespaces of their own, between the master and the workers in theirs: the master
// starts each relay, each relay its workers, which dial it (they accept no connection). Two
// relays, and a tree of one relay whose two relays run on its host: the threads answer.
TEST(Namespace, RelaysInTheirOwnNamespacesServeWorkersInTheirsAndReachTheThreadsAnswer) {
  NIMBUS_SKIP_WITHOUT_NAMESPACES();
  NetworkNamespaces namespaces(kWorkers, /*relays=*/2);
  for (const std::vector<std::string>& topology :
       {std::vector<std::string>{"--relays", "2"}, std::vector<std::string>{"--relays", "1", "--relay-fanout", "2"}}) {
    TempDir dir;
    std::vector<std::string> train = NetworkProblem::Get().TrainCommand(dir.File("summary.json"));
    const std::vector<std::string> runtime = namespaces.CommandRuntime();
    train.insert(train.end(), runtime.begin(), runtime.end());
    train.insert(train.end(), topology.begin(), topology.end());
    train.insert(train.end(), {"--algorithm", "newton", "--listen", "tcp://10.77.0.1:" + std::to_string(FreePort())});
    const CommandResult run = RunCommand(NetworkNamespaces::In(namespaces.master(), train));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const Json summary = Json::parse(ReadTextFile(dir.File("summary.json")));
    const double expected = NetworkProblem::Get().objective();
    EXPECT_NEAR(summary["objective"].get<double>(), expected, 1e-8 * expected) << topology[1];
    EXPECT_EQ(summary["relays"], std::stoi(topology[1]));
    EXPECT_EQ(summary["security"], "curve");
    EXPECT_EQ(summary["worker_restarts"], 0);
  }
}

// Three of the seeded schedules, with the proxy in the master's namespace and the workers in
// theirs.
class NamespaceSchedules : public ::testing::TestWithParam<uint64_t> {};

TEST_P(NamespaceSchedules, EndAtTheFaultFreeObjective) {
  NIMBUS_SKIP_WITHOUT_NAMESPACES();
  NetworkNamespaces namespaces(kWorkers);
  const std::vector<std::string> streams = Schedule(GetParam());
  const ProxiedRun run = RunThroughProxy(streams, GetParam(), &namespaces);
  std::string context = "proxy:";
  for (const Json& e : run.events) context += "\n  " + e.dump();
  ExpectFaultFreeObjective(run, context + "\n" + run.summary.dump());
  EXPECT_GE(run.Count("open"), 6) << context;
  EXPECT_GE(run.summary["rounds_resent"].get<int>() + run.summary["worker_restarts"].get<int>(),
            run.Count("reset", "round"))
      << context;
}

INSTANTIATE_TEST_SUITE_P(Seeds, NamespaceSchedules, ::testing::Values(1, 4, 6),
                         [](const ::testing::TestParamInfo<uint64_t>& info) {
                           return "seed_" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace nimbus::testing
