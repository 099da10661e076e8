#include "network/network_support.h"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

namespace nimbus::testing {

const NetworkProblem& NetworkProblem::Get() {
  static const NetworkProblem problem;  // destroyed at exit, and its directory with it
  return problem;
}

NetworkProblem::NetworkProblem() : data_(dir_.File("gen.svm")) {
  const CommandResult gen = RunNimbus({"gen", "--rows", "3000", "--cols", "2000", "--nnz-per-row", "20", "--seed", "3",
                                       "--out", data_});
  EXPECT_EQ(gen.exit_code, 0) << gen.err;
  std::vector<std::string> threads = TrainCommand(dir_.File("threads.json"));
  threads.insert(threads.end(), {"--runtime", "threads"});
  const CommandResult run = RunCommand(threads);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  objective_ = Json::parse(ReadTextFile(dir_.File("threads.json")))["objective"].get<double>();
}

std::vector<std::string> NetworkProblem::TrainCommand(const std::string& summary_json,
                                                      const LinkTimeouts& timeouts) const {
  return {"timeout", "120", NIMBUS_BINARY, "train", "--quiet", "--data", data_, "--l1", "1e-4", "--workers", "3",
          "--heartbeat", Number(timeouts.heartbeat_seconds), "--round-timeout-floor",
          Number(timeouts.round_timeout_floor_seconds), "--summary-json", summary_json};
}

int ProxiedRun::Count(const std::string& event, const std::string& why_prefix) const {
  int count = 0;
  for (const Json& e : events) {
    if (e["event"] == event && e.value("why", std::string()).starts_with(why_prefix)) ++count;
  }
  return count;
}

const std::string& NetworkNamespaces::Unavailable() {
  static const std::string why = [] {
    const CommandResult check = RunCommand({NIMBUS_SOURCE_DIR "/tests/support/netns.sh", "check"});
    return check.exit_code == 0 ? std::string() : check.out + check.err;
  }();
  return why;
}

NetworkNamespaces::NetworkNamespaces(int workers, int relays, const LinkRates& rates)
    : prefix_("nb" + std::to_string(::getpid())), workers_(workers), relays_(relays) {
  std::vector<std::string> up_command = {NIMBUS_SOURCE_DIR "/tests/support/netns.sh", "up", prefix_,
                                         std::to_string(workers), std::to_string(relays)};
  if (rates.master_mbit > 0) {
    up_command.insert(up_command.end(), {std::to_string(rates.master_mbit), std::to_string(rates.worker_mbit)});
  }
  const CommandResult up = RunCommand(up_command);
  EXPECT_EQ(up.exit_code, 0) << up.out << up.err;
}

NetworkNamespaces::~NetworkNamespaces() {
  const CommandResult down = RunCommand({NIMBUS_SOURCE_DIR "/tests/support/netns.sh", "down", prefix_});
  EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
}

std::vector<std::string> NetworkNamespaces::In(const std::string& ns, std::vector<std::string> command) {
  command.insert(command.begin(), {"ip", "netns", "exec", ns});
  return command;
}

std::vector<std::string> NetworkNamespaces::CommandRuntime() const {
  std::string hosts;
  for (int k = 1; k <= workers_; ++k) hosts += (k > 1 ? "," : "") + worker(k);
  std::vector<std::string> runtime = {"--runtime", "command", "--hosts", hosts, "--launch",
                                      std::string("ip netns exec {host} ") + NIMBUS_BINARY + " worker {args}"};
  if (relays_ == 0) return runtime;
  std::string relay_hosts;
  for (int r = 1; r <= relays_; ++r) relay_hosts += (r > 1 ? "," : "") + relay(r);
  runtime.insert(runtime.end(), {"--relay-hosts", relay_hosts, "--relay-workers", "command"});
  return runtime;
}

std::vector<std::string> Schedule(uint64_t seed) {
  std::mt19937_64 random(seed);
  auto pick = [&random](std::vector<std::string> options) { return options[random() % options.size()]; };
  auto between = [&random](int low, int high) { return std::to_string(low + static_cast<int>(random() % (high - low + 1))); };
  std::vector<std::string> streams = {"*=delay:1"};
  for (int stream = 0; stream < 6; ++stream) {
    std::string faults = "delay:" + pick({"0", "1", "3", "8"}) + ",jitter:" + pick({"0", "2"});
    const std::string rate = pick({"0", "0", "100", "1000"});
    if (rate != "0") faults += ",rate:" + rate;
    if (random() % 2 == 0) {
      faults += "," + pick({"reset-round:" + between(2, 20), "reset-byte:" + between(2000, 400000),
                            "blackhole-round:" + between(2, 20) + ":" + pick({"300", "2600"}),
                            "blackhole-after:" + between(50, 400) + ":" + pick({"300", "1500"})});
    }
    streams.push_back(std::to_string(stream) + "=" + faults);
  }
  return streams;
}

ProxiedRun RunThroughProxy(const std::vector<std::string>& streams, uint64_t seed, const NetworkNamespaces* namespaces,
                           const LinkTimeouts& timeouts) {
  TempDir dir;
  const int master_port = FreePort(), proxy_port = FreePort();
  // In namespaces the proxy listens where the workers can reach it; the master stays on the
  // loopback of its own namespace, behind the proxy.
  const std::string proxy_host = namespaces != nullptr ? "10.77.0.1" : "127.0.0.1";
  std::vector<std::string> proxy = {NIMBUS_FAULT_PROXY, "--listen", proxy_host + ":" + std::to_string(proxy_port),
                                    "--target", "127.0.0.1:" + std::to_string(master_port), "--round-bytes",
                                    std::to_string(kRoundBytes), "--seed", std::to_string(seed), "--report",
                                    dir.File("report.jsonl"), "--chunks", dir.File("chunks.jsonl"),
                                    "--ready-file", dir.File("ready")};
  for (const std::string& spec : streams) proxy.insert(proxy.end(), {"--stream", spec});
  if (namespaces != nullptr) proxy = NetworkNamespaces::In(namespaces->master(), proxy);
  ProxiedRun run;
  {
    BackgroundProcess running(proxy, dir.File("proxy.log"));
    for (int i = 0; i < 200 && !FileExists(dir.File("ready")) && !running.Exited(); ++i) ::usleep(50000);
    if (!FileExists(dir.File("ready"))) {
      ADD_FAILURE() << "nimbus-fault-proxy did not start: " << ReadTextFile(dir.File("proxy.log"));
      return run;
    }
    std::vector<std::string> train = NetworkProblem::Get().TrainCommand(dir.File("summary.json"), timeouts);
    train.insert(train.end(), {"--listen", "tcp://127.0.0.1:" + std::to_string(master_port), "--advertise",
                               "tcp://" + proxy_host + ":" + std::to_string(proxy_port)});
    if (namespaces == nullptr) {
      train.insert(train.end(), {"--runtime", "process"});
    } else {
      const std::vector<std::string> runtime = namespaces->CommandRuntime();
      train.insert(train.end(), runtime.begin(), runtime.end());
      train = NetworkNamespaces::In(namespaces->master(), train);
    }
    run.result = RunCommand(train);
  }  // the proxy ends here, its report complete
  if (FileExists(dir.File("summary.json"))) run.summary = Json::parse(ReadTextFile(dir.File("summary.json")));
  std::istringstream lines(FileExists(dir.File("report.jsonl")) ? ReadTextFile(dir.File("report.jsonl")) : "");
  for (std::string line; std::getline(lines, line);) run.events.push_back(Json::parse(line));
  std::istringstream chunks(FileExists(dir.File("chunks.jsonl")) ? ReadTextFile(dir.File("chunks.jsonl")) : "");
  for (std::string line; std::getline(chunks, line);) run.chunks.push_back(Json::parse(line));
  return run;
}

void ExpectFaultFreeObjective(const ProxiedRun& run, const std::string& context) {
  ASSERT_EQ(run.result.exit_code, 0) << context << "\n" << run.result.err;
  const double expected = NetworkProblem::Get().objective();
  const double objective = run.summary["objective"].get<double>();
  EXPECT_NEAR(objective, expected, 1e-8 * expected) << context;
}

}  // namespace nimbus::testing
