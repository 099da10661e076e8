// End to end: relays between the master and its workers (runtime/relay.h), with real worker
// and relay processes. A relay sums its group's replies, so the master's link carries one
// message a relay; the answer is the star's.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

using Json = nlohmann::json;

// A sparse problem whose shards touch different features, so that a relay's support (the
// union of its workers') differs from each worker's and from the model.
std::string SparseData(TempDir& dir) {
  const std::string path = dir.File("sparse.svm");
  EXPECT_EQ(RunNimbus({"gen", "--rows", "3000", "--cols", "4000", "--nnz-per-row", "10", "--seed", "11", "--out", path})
                .exit_code,
            0);
  return path;
}

struct SolvedRun {
  Json summary;
  double objective = 0;
};

SolvedRun TrainWith(TempDir& dir, const std::string& data, const std::string& name, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--data", data, "--l1", "2e-4", "--workers", "4", "--out",
                                   dir.File(name + ".model"), "--summary-json", dir.File(name + ".json")};
  if (std::find(extra.begin(), extra.end(), "--runtime") == extra.end()) args.insert(args.end(), {"--runtime", "process"});
  args.insert(args.end(), extra.begin(), extra.end());
  Train(args);
  return {Json::parse(ReadTextFile(dir.File(name + ".json"))), ObjectiveOf(dir.File(name + ".model"), data, 2e-4, 0)};
}

// Relays of worker processes, relays of worker threads and a tree (one relay whose two relays
// hold two workers each) all reach the star's optimum. In the general form (the default) a
// relay's messages hold the union of its workers' supports, so the master receives fewer bytes
// than in the star, and fewer still through one relay than through two.
TEST(Relays, RelaysAndATreeReachTheStarsOptimumWithFewerBytesAtTheMaster) {
  TempDir dir;
  const std::string data = SparseData(dir);
  const SolvedRun star = TrainWith(dir, data, "star", {});
  ASSERT_EQ(star.summary["relays"], 0);
  double received_through_two = 0;
  for (const auto& [name, extra, relays] : std::vector<std::tuple<std::string, std::vector<std::string>, int>>{
           {"processes", {"--relays", "2"}, 2},
           {"threads", {"--relays", "2", "--relay-workers", "threads"}, 2},
           {"tree", {"--relays", "1", "--relay-fanout", "2"}, 1}}) {
    SCOPED_TRACE(name);
    const SolvedRun relayed = TrainWith(dir, data, name, extra);
    EXPECT_EQ(relayed.summary["termination"], "converged");
    EXPECT_EQ(relayed.summary["algorithm"], "newton");
    EXPECT_EQ(relayed.summary["workers"], 4);
    EXPECT_EQ(relayed.summary["relays"], relays);
    EXPECT_EQ(relayed.summary["rounds"], star.summary["rounds"]);
    EXPECT_NEAR(relayed.objective, star.objective, 1e-9 * star.objective);
    EXPECT_NEAR(relayed.summary["objective"].get<double>(), star.summary["objective"].get<double>(),
                1e-9 * star.objective);
    const double received = relayed.summary["bytes_received"].get<double>();
    EXPECT_LT(received, 0.9 * star.summary["bytes_received"].get<double>());
    if (relays == 2) received_through_two = received;
    if (relays == 1) {
      EXPECT_LT(received, 0.75 * received_through_two);
    }
  }
}

// In the dense form every message holds the whole model: the master's link carries one reply
// a relay, a half of the star's bytes through two relays for four workers (HELLO and READY aside).
TEST(Relays, InTheDenseFormTheMasterReceivesOneReplyARelay) {
  TempDir dir;
  const std::string data = SparseData(dir);
  const SolvedRun star = TrainWith(dir, data, "star", {"--consensus", "dense"});
  const SolvedRun relayed = TrainWith(dir, data, "relayed", {"--consensus", "dense", "--relays", "2"});
  EXPECT_NEAR(relayed.objective, star.objective, 1e-9 * star.objective);
  const double share = relayed.summary["bytes_received"].get<double>() / star.summary["bytes_received"].get<double>();
  EXPECT_GT(share, 0.49);
  EXPECT_LT(share, 0.51);
}

// A relay killed in its third round (with its two workers, which end with it) is replaced by
// the master; the new relay starts new workers, and the answer is the star's.
TEST(Relays, AKilledRelayIsReplacedAndTheAnswerStands) {
  TempDir dir;
  const std::string data = SparseData(dir);
  const SolvedRun star = TrainWith(dir, data, "star", {});
  const SolvedRun crashed = TrainWith(dir, data, "crashed", {"--relays", "2", "--inject-crash", "@1:3", "--heartbeat", "0.2"});
  EXPECT_EQ(crashed.summary["termination"], "converged");
  EXPECT_EQ(crashed.summary["worker_restarts"], 1);
  EXPECT_NEAR(crashed.objective, star.objective, 1e-9 * star.objective);
}

// A LIBSVM file is split by the master into shards for the relays, which the command runtime
// starts; the answer is the threads runtime's.
TEST(Relays, ALibsvmFileIsSplitForTheRelaysAndGivesTheThreadsOptimum) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--out", dir.File("threads.model")});
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--runtime", "command", "--launch",
         std::string(NIMBUS_BINARY) + " worker {args}", "--relays", "2", "--out", dir.File("relays.model")});
  const double threads = ObjectiveOf(dir.File("threads.model"), HeartScalePath(), 0.01, 0);
  EXPECT_NEAR(ObjectiveOf(dir.File("relays.model"), HeartScalePath(), 0.01, 0), threads, 1e-9 * threads);
}

// Relays on their hosts and workers on theirs (--relay-workers command): the master launches
// each relay on a --relay-hosts host, each relay launches its workers on their --hosts hosts,
// and they dial it where it reaches the master from. Flat and as a tree, the star's answer.
TEST(Relays, WorkersOnOtherHostsDialTheirRelayAndReachTheStarsOptimum) {
  TempDir dir;
  const std::string data = SparseData(dir);
  const SolvedRun star = TrainWith(dir, data, "star", {});
  const std::string launch = "echo {host} >> " + dir.File("hosts.log") + "; exec " + NIMBUS_BINARY + " worker {args}";
  for (const std::string fanout : {"0", "2"}) {
    const SolvedRun relayed =
        TrainWith(dir, data, "command-" + fanout,
                  {"--runtime", "command", "--launch", launch, "--hosts", "w1,w2,w3,w4", "--relay-hosts", "r1,r2",
                   "--relays", fanout == "0" ? "2" : "1", "--relay-fanout", fanout, "--relay-workers", "command"});
    EXPECT_NEAR(relayed.objective, star.objective, 1e-9 * star.objective) << "fanout " << fanout;
    EXPECT_EQ(relayed.summary["rounds"], star.summary["rounds"]) << "fanout " << fanout;
  }
  // Flat: r1, r2 and w1..w4; the tree: r1 (its relays run on its host) and w1..w4.
  std::map<std::string, int> launched;
  std::istringstream hosts(ReadTextFile(dir.File("hosts.log")));
  for (std::string host; hosts >> host;) ++launched[host];
  EXPECT_EQ(launched, (std::map<std::string, int>{{"r1", 2}, {"r2", 1}, {"w1", 2}, {"w2", 2}, {"w3", 2}, {"w4", 2}}));
}

TEST(Relays, WhatRelaysCannotDoIsRefusedNamingTheOption) {
  const std::vector<std::string> base = {"train", "--data", HeartScalePath(), "--l1", "0.01", "--workers", "4"};
  ExpectRefused(base, {{{"--relays", "2"}, "--relays: relays are processes the master starts: --runtime process or "
                                           "command, not threads"},
                       {{"--runtime", "process", "--relays", "5"}, "--relays: 5 relays for 4 workers"},
                       {{"--runtime", "process", "--relays", "2", "--algorithm", "admm"},
                        "--relays: relays sum Newton's rounds"},
                       {{"--runtime", "process", "--relay-fanout", "2"}, "--relay-fanout: needs --relays R"},
                       {{"--runtime", "process", "--relays", "2", "--relay-fanout", "1"},
                        "--relay-fanout: a relay of one worker sums nothing"},
                       {{"--runtime", "process", "--relays", "2", "--relay-workers", "lambda"},
                        "--relay-workers: a relay runs its workers as process, threads or command, not lambda"},
                       {{"--runtime", "process", "--relays", "2", "--relay-workers", "command"},
                        "--relay-workers command and --relay-hosts: the relays and their workers start by --launch"},
                       {{"--runtime", "command", "--launch", "{args}", "--relays", "2", "--relay-workers", "command"},
                        "--relay-workers command: give --relay-hosts"}});
}

}  // namespace
}  // namespace nimbus::testing
