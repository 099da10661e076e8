// End to end: the remote runtimes through the command line, with real worker processes.
#include <nlohmann/json.hpp>

#include <map>
#include <tuple>
#include <sstream>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

using Json = nlohmann::json;

TEST(RuntimeCli, ProcessAndCommandRuntimesGiveTheThreadsModel) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--out", dir.File("threads.json")});
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--runtime", "process", "--out",
         dir.File("process.json")});
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--runtime", "command", "--launch",
         std::string(NIMBUS_BINARY) + " worker {args}", "--out", dir.File("command.json")});
  const std::string expected = ReadTextFile(dir.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ReadTextFile(dir.File("process.json")), expected);
  EXPECT_EQ(ReadTextFile(dir.File("command.json")), expected);
}

TEST(RuntimeCli, ProcessWorkersLoadTheShardsOfADirectory) {
  TempDir dir;
  ASSERT_EQ(RunNimbus({"split", "--data", HeartScalePath(), "--shards", "2", "--out", dir.File("s")}).exit_code, 0);
  Train({"--data", dir.File("s"), "--l1", "0.01", "--runtime", "process", "--out", dir.File("p.json")});
  Train({"--data", dir.File("s"), "--l1", "0.01", "--out", dir.File("t.json")});
  EXPECT_EQ(ReadTextFile(dir.File("p.json")), ReadTextFile(dir.File("t.json")));
}

TEST(RuntimeCli, AnInjectedCrashIsSurvivedAndReported) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--out", dir.File("clean.json")});
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--runtime", "process", "--inject-crash",
         "@1:2", "--heartbeat", "0.2", "--out", dir.File("crashed.json"), "--summary-json", dir.File("s.json"),
         "--trace", dir.File("t.jsonl")});
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  EXPECT_EQ(summary["termination"], "converged");
  EXPECT_EQ(summary["worker_restarts"], 1);
  const double clean = ObjectiveOf(dir.File("clean.json"), HeartScalePath(), 0.01, 0);
  EXPECT_NEAR(ObjectiveOf(dir.File("crashed.json"), HeartScalePath(), 0.01, 0), clean, 1e-8 * clean);
  const std::string trace = ReadTextFile(dir.File("t.jsonl"));
  EXPECT_NE(trace.find("\"what\":\"failed\",\"detail\":\"its process ended (killed by signal 9) while busy\""),
            std::string::npos);
}

// --algorithm: auto picks Newton, and ADMM where an option needs it; Newton refuses what it
// cannot do, naming the option; its process and command workers give the
// threads model, and a worker killed in its third round is replaced.
TEST(RuntimeCli, TheAlgorithmIsChosenAndNewtonRunsOnEveryLocalRuntime) {
  TempDir dir;
  const std::vector<std::string> l2 = {"--data", HeartScalePath(), "--l2", "0.01", "--workers", "3"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = l2;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  Train(with({"--out", dir.File("threads.json"), "--summary-json", dir.File("t.json")}));
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("t.json")))["algorithm"], "newton");
  Train(with({"--runtime", "process", "--out", dir.File("process.json")}));
  Train(with({"--runtime", "command", "--launch", std::string(NIMBUS_BINARY) + " worker {args}", "--out",
              dir.File("command.json")}));
  const std::string expected = ReadTextFile(dir.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ReadTextFile(dir.File("process.json")), expected);
  EXPECT_EQ(ReadTextFile(dir.File("command.json")), expected);
  Train(with({"--runtime", "process", "--inject-crash", "@1:3", "--heartbeat", "0.2", "--out", dir.File("crashed.json"),
              "--summary-json", dir.File("c.json")}));
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("c.json")))["worker_restarts"], 1);
  EXPECT_EQ(ReadTextFile(dir.File("crashed.json")), expected);
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--summary-json", dir.File("a.json")});
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("a.json")))["algorithm"], "newton");
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--barrier", "2", "--summary-json", dir.File("b.json")});
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("b.json")))["algorithm"], "admm");
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {with({"--algorithm", "newton", "--barrier", "2"}), "--algorithm newton: not with --barrier"},
           {with({"--algorithm", "fastest"}), "--algorithm: 'fastest' is not newton, admm, columns or auto"}}) {
    const CommandResult result = RunNimbus([&] {
      std::vector<std::string> argv{"train"};
      argv.insert(argv.end(), args.begin(), args.end());
      return argv;
    }());
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
  }
}

// auto with a calibrated profile of each algorithm takes the one they predict the shorter solve
// for: with either profile's rounds made 100 times as many, the other algorithm; with a column
// method's profile, it when the other is slowed, and not when it is. An option that decides
// (--barrier) still decides, and the profiles must be of two algorithms or more, one each.
TEST(RuntimeCli, AutoTakesTheAlgorithmItsProfilesPredictTheShorterSolveFor) {
  TempDir dir;
  const std::vector<std::string> problem = {"--data", HeartScalePath(), "--l1", "0.01"};
  for (const std::string algorithm : {"newton", "admm", "columns"}) {
    std::vector<std::string> calibrate = {"simulate", "calibrate", "--algorithm", algorithm, "--workers", "1,2",
                                          "--repeat", "1", "--quiet", "--out", dir.File(algorithm + ".json")};
    calibrate.insert(calibrate.end(), problem.begin(), problem.end());
    const CommandResult calibrated = RunNimbus(calibrate);
    ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  }
  // The profile of `algorithm`, every point's rounds (and ADMM's iterations) 100 times as many.
  auto slowed = [&](const std::string& algorithm) {
    Json profile = Json::parse(ReadTextFile(dir.File(algorithm + ".json")));
    for (Json& point : profile["points"]) {
      point["rounds"] = 100 * point["rounds"].get<int>();
      if (algorithm != "newton") point["iterations"] = 100 * point["iterations"].get<int>();
    }
    WriteTextFile(dir.File(algorithm + "-slow.json"), profile.dump());
    return dir.File(algorithm + "-slow.json");
  };
  auto chosen = [&](const std::string& profiles, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = problem;
    args.insert(args.end(), {"--workers", "2", "--runtime", "process", "--algorithm-profiles", profiles,
                             "--summary-json", dir.File("s.json")});
    args.insert(args.end(), extra.begin(), extra.end());
    Train(args);
    return Json::parse(ReadTextFile(dir.File("s.json")));
  };
  const Json admm = chosen(slowed("newton") + "," + dir.File("admm.json"));
  EXPECT_EQ(admm["algorithm"], "admm");
  EXPECT_NE(admm["algorithm_reason"].get<std::string>().find("auto: admm, predicted"), std::string::npos)
      << admm["algorithm_reason"];
  EXPECT_EQ(chosen(dir.File("newton.json") + "," + slowed("admm"))["algorithm"], "newton");
  // The column method on the process workers, a block of columns each, to the others' optimum.
  const Json columns = chosen(slowed("newton") + "," + dir.File("columns.json"));  // any two algorithms
  EXPECT_EQ(columns["algorithm"], "columns");
  EXPECT_EQ(columns["runtime"], "process");
  EXPECT_NEAR(columns["objective"].get<double>(), admm["objective"].get<double>(), 1e-6);
  EXPECT_NE(columns["algorithm_reason"].get<std::string>().find("against newton's"), std::string::npos)
      << columns["algorithm_reason"];
  EXPECT_EQ(chosen(dir.File("newton.json") + "," + slowed("admm") + "," + slowed("columns"))["algorithm"], "newton");
  // ADMM's partial barrier decides before any prediction.
  EXPECT_EQ(chosen(dir.File("newton.json") + "," + slowed("admm"), {"--barrier", "1"})["algorithm"], "admm");
  for (const auto& [profiles, extra, message] :
       std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>{
           {dir.File("newton.json") + "," + slowed("newton"), {}, "are both newton's: give one of each algorithm"},
           {dir.File("newton.json"), {}, "give one profile of each algorithm"},
           {dir.File("newton.json") + "," + dir.File("admm.json"), {"--algorithm", "admm"},
            "--algorithm-profiles: for --algorithm auto"}}) {
    std::vector<std::string> args = {"train"};
    args.insert(args.end(), problem.begin(), problem.end());
    args.insert(args.end(), {"--workers", "2", "--runtime", "process", "--algorithm-profiles", profiles});
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult refused = RunNimbus(args);
    EXPECT_NE(refused.exit_code, 0) << message;
    EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
  }
}

// Power-law data: each worker's shard touches its own part of the 30,000 features.
std::string PowerLawData(const TempDir& dir) {
  const std::string path = dir.File("power.svm");
  const CommandResult gen = RunNimbus({"gen", "--rows", "6000", "--cols", "30000", "--nnz-per-row", "15",
                                       "--power-law", "1", "--seed", "9", "--out", path});
  EXPECT_EQ(gen.exit_code, 0) << gen.err;
  return path;
}

// (L2, whose vectors have no zeros to leave out: the bytes are the supports' alone.)
TEST(RuntimeCli, TheGeneralFormSendsTheSupportsAloneAndGivesTheThreadsModel) {
  TempDir dir;
  const std::string data = PowerLawData(dir);
  Train({"--data", data, "--l2", "1e-4", "--workers", "4", "--eps-rel", "1e-5", "--out", dir.File("threads.json")});
  Train({"--data", data, "--l2", "1e-4", "--workers", "4", "--eps-rel", "1e-5", "--runtime", "process", "--out",
         dir.File("general.json"), "--summary-json", dir.File("general-summary.json")});
  Train({"--data", data, "--l2", "1e-4", "--workers", "4", "--eps-rel", "1e-5", "--runtime", "process", "--consensus",
         "dense", "--out", dir.File("dense.json"), "--summary-json", dir.File("dense-summary.json")});
  EXPECT_EQ(ReadTextFile(dir.File("general.json")), ReadTextFile(dir.File("threads.json")));
  // Per round, the general form moves each worker's support both ways, the dense form all of
  // d: far fewer bytes, and the same optimum.
  const Json general = Json::parse(ReadTextFile(dir.File("general-summary.json")));
  const Json dense = Json::parse(ReadTextFile(dir.File("dense-summary.json")));
  const double general_per_round = general["bytes_sent"].get<double>() / general["rounds"].get<double>();
  const double dense_per_round = dense["bytes_sent"].get<double>() / dense["rounds"].get<double>();
  EXPECT_LT(general_per_round, 0.6 * dense_per_round) << general_per_round << " vs " << dense_per_round;
  const double f_general = ObjectiveOf(dir.File("general.json"), data, 0, 1e-4);
  const double f_dense = ObjectiveOf(dir.File("dense.json"), data, 0, 1e-4);
  EXPECT_NEAR(f_general, f_dense, 1e-5 * f_dense);
}

// (L2, whose vectors have no zeros to leave out: float32 halves every entry. A mostly-zero vector
// goes as its nonzeros, 12 bytes each, or 8 lean: the Newton test below and codec_test.)
TEST(RuntimeCli, LeanMessagesHalveTheBytesAndFinishWithExactRounds) {
  TempDir dir;
  const std::string data = PowerLawData(dir);
  const double lambda = 1e-4;
  const std::string reference = TrainLiblinear(0, 1.0 / (6000 * lambda), 1e-6, data, dir.File("liblinear.model"));
  for (const std::string precision : {"float64", "float32"}) {
    Train({"--data", data, "--l2", Number(lambda), "--workers", "3", "--eps-rel", "1e-4", "--runtime", "process",
           "--algorithm", "admm", "--message-precision", precision, "--out", dir.File(precision + ".json"), "--summary-json",
           dir.File(precision + "-summary.json"), "--trace", dir.File(precision + ".jsonl")});
  }
  const Json exact = Json::parse(ReadTextFile(dir.File("float64-summary.json")));
  const Json lean = Json::parse(ReadTextFile(dir.File("float32-summary.json")));
  EXPECT_EQ(lean["termination"], "converged");
  EXPECT_EQ(exact["lean_rounds"], 0);
  EXPECT_GT(lean["lean_rounds"].get<int>(), 0);
  EXPECT_LT(lean["lean_rounds"].get<int>(), lean["rounds"].get<int>());
  const double lean_per_round = lean["bytes_sent"].get<double>() / lean["rounds"].get<double>();
  const double exact_per_round = exact["bytes_sent"].get<double>() / exact["rounds"].get<double>();
  EXPECT_LT(lean_per_round, 0.6 * exact_per_round) << lean_per_round << " vs " << exact_per_round;
  // The stop test was made on exact rounds: the last two went as doubles.
  std::vector<bool> lean_flags;
  std::istringstream trace(ReadTextFile(dir.File("float32.jsonl")));
  for (std::string line; std::getline(trace, line);) {
    const Json event = Json::parse(line);
    if (event["event"] == "round") lean_flags.push_back(event["lean"].get<bool>());
  }
  ASSERT_GE(lean_flags.size(), 3u);
  EXPECT_TRUE(lean_flags.front());
  EXPECT_FALSE(lean_flags[lean_flags.size() - 1]);
  EXPECT_FALSE(lean_flags[lean_flags.size() - 2]);
  // Both reach liblinear's optimum as closely as the stop test asks.
  const double theirs = ObjectiveOf(reference, data, 0, lambda);
  EXPECT_NEAR(ObjectiveOf(dir.File("float32.json"), data, 0, lambda), theirs, 1e-5 * theirs);
  EXPECT_NEAR(ObjectiveOf(dir.File("float64.json"), data, 0, lambda), theirs, 1e-5 * theirs);
}

// Newton's lean messages: its Hessian-vector products go as float32 (the direction out, the
// product back), its evaluations as doubles; the answer is liblinear's optimum, L1 and L2, and
// through relays too.
TEST(RuntimeCli, NewtonsLeanProductsCostFewerBytesAndReachLiblinearsOptimum) {
  TempDir dir;
  const std::string data = PowerLawData(dir);
  const double lambda = 1e-4;
  for (const std::string term : {"l1", "l2"}) {
    SCOPED_TRACE(term);
    const std::string reference = TrainLiblinear(term == "l1" ? 6 : 0, 1.0 / (6000 * lambda), 1e-6, data,
                                                 dir.File(term + "-liblinear.model"));
    const double theirs = ObjectiveOf(reference, data, term == "l1" ? lambda : 0, term == "l2" ? lambda : 0);
    std::map<std::string, Json> summaries;
    for (const std::string how : {"float64", "float32", "relays"}) {
      const std::string name = term + "-" + how;
      std::vector<std::string> args = {"--data", data, "--" + term, Number(lambda), "--workers", "3", "--runtime",
                                       "process", "--message-precision", how == "float64" ? "float64" : "float32",
                                       "--out", dir.File(name + ".json"), "--summary-json", dir.File(name + "-s.json")};
      if (how == "relays") args.insert(args.end(), {"--relays", "2"});
      Train(args);
      summaries[how] = Json::parse(ReadTextFile(dir.File(name + "-s.json")));
      EXPECT_EQ(summaries[how]["algorithm"], "newton");
      EXPECT_EQ(summaries[how]["termination"], "converged");
      const double ours = ObjectiveOf(dir.File(name + ".json"), data, term == "l1" ? lambda : 0,
                                      term == "l2" ? lambda : 0);
      EXPECT_NEAR(ours, theirs, 1e-6 * theirs) << how;
    }
    const Json& exact = summaries["float64"];
    const Json& lean = summaries["float32"];
    EXPECT_EQ(exact["lean_rounds"], 0);
    // Every round but the evaluations is a product, lean.
    EXPECT_GT(lean["lean_rounds"].get<int>(), lean["rounds"].get<int>() / 3);
    EXPECT_LT(lean["lean_rounds"].get<int>(), lean["rounds"].get<int>());
    const double lean_per_round = lean["bytes_sent"].get<double>() / lean["rounds"].get<double>();
    const double exact_per_round = exact["bytes_sent"].get<double>() / exact["rounds"].get<double>();
    EXPECT_LT(lean_per_round, 0.85 * exact_per_round) << lean_per_round << " vs " << exact_per_round;
  }
}

TEST(RuntimeCli, AReplacementWorkerResumesOnItsSupport) {
  TempDir dir;
  const std::string data = PowerLawData(dir);
  Train({"--data", data, "--l1", "1e-4", "--workers", "3", "--out", dir.File("clean.json")});
  Train({"--data", data, "--l1", "1e-4", "--workers", "3", "--runtime", "process", "--inject-crash", "@1:3",
         "--heartbeat", "0.2", "--out", dir.File("crashed.json"), "--summary-json", dir.File("s.json")});
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  EXPECT_EQ(summary["worker_restarts"], 1);
  const double clean = ObjectiveOf(dir.File("clean.json"), data, 1e-4, 0);
  EXPECT_NEAR(ObjectiveOf(dir.File("crashed.json"), data, 1e-4, 0), clean, 1e-8 * clean);
}

TEST(RuntimeCli, WorkersHandOverAtTheirLifetimeCap) {
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "2", "--out", dir.File("clean.json")});
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "2", "--runtime", "process", "--max-lifetime",
         "0.2", "--inject-delay", "15", "--out", dir.File("handed.json"), "--summary-json", dir.File("s.json")});
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  EXPECT_GE(summary["worker_restarts"].get<int>(), 2);
  const double clean = ObjectiveOf(dir.File("clean.json"), HeartScalePath(), 0.01, 0);
  EXPECT_NEAR(ObjectiveOf(dir.File("handed.json"), HeartScalePath(), 0.01, 0), clean, 1e-10 * clean);
}

TEST(RuntimeCli, RuntimeOptionsAreChecked) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--runtime", "command"}, "needs --launch"},
      {{"--runtime", "command", "--launch", "ssh host nimbus worker"}, "must contain {args}"},
      {{"--runtime", "gpu"}, "--runtime: 'gpu' is not threads, process, command, lambda or mpi"},
      {{"--runtime", "lambda"}, "needs --lambda-function"},
      {{"--barrier", "x"}, "--barrier: 'all' or a number"},
      {{"--workers", "3", "--barrier", "5"}, "--barrier: 5 of 3 workers"},
      {{"--inject-crash", "2"}, "inject-crash: the probability must be in [0, 1)"},
      {{"--inject-delay", "abc"}, "--inject-delay: bad milliseconds"},
      {{"--inject-slow", "5"}, "--inject-slow: bad '5'"},
      {{"--runtime", "process", "--heartbeat", "0"}, "heartbeat_seconds: must be a positive number"},
      {{"--runtime", "process", "--message-precision", "half"}, "--message-precision: 'half' is not float64 or float32"},
      {{"--message-precision", "float32"}, "only where messages cross a wire"},
      {{"--runtime", "process", "--insecure", "--listen", "tcp://0.0.0.0:0"}, "allowed only on loopback"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"train", "--data", HeartScalePath()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CommandResult result = RunNimbus(args);
    EXPECT_NE(result.exit_code, 0) << c.message;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << "expected '" << c.message << "' in: " << result.err;
  }
}

TEST(RuntimeCli, AWorkerWithoutAMasterLeavesOnItsDeadline) {
  const CommandResult help = RunNimbus({"worker", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: nimbus worker --connect"), std::string::npos);
  // Port 1 on loopback: nothing listens there.
  const CommandResult lost = RunNimbus(
      {"worker", "--connect", "tcp://127.0.0.1:1", "--run", "5", "--worker", "0", "--connect-timeout", "0.3"});
  EXPECT_EQ(lost.exit_code, 3);
  EXPECT_NE(lost.err.find("no word from the master"), std::string::npos) << lost.err;
  const CommandResult missing = RunNimbus({"worker", "--run", "5", "--worker", "0"});
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(RuntimeCli, RunsAreSecureByDefaultAndPlaintextOnlyWhenAskedOnLoopback) {
  TempDir dir;
  const std::vector<std::string> common{"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3",
                                        "--runtime", "process"};
  auto train = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    for (const std::string& a : {std::string("--out"), dir.File(name + ".json"), std::string("--summary-json"),
                                 dir.File(name + ".summary")}) {
      args.push_back(a);
    }
    Train(args);
    return Json::parse(ReadTextFile(dir.File(name + ".summary")));
  };
  const Json secure = train("secure", {});
  const Json plaintext = train("plaintext", {"--insecure"});
  EXPECT_EQ(secure["security"], "curve");
  EXPECT_EQ(secure["clients_refused"], 0);
  EXPECT_EQ(plaintext["security"], "plaintext");
  EXPECT_EQ(ReadTextFile(dir.File("secure.json")), ReadTextFile(dir.File("plaintext.json")));

  // The secret key travels in the environment, not in the arguments: a launch command that
  // drops it starts workers that cannot join, and the start fails naming the worker.
  const CommandResult stripped = RunNimbus({"train", "--data", HeartScalePath(), "--workers", "2", "--runtime",
                                            "command", "--max-restarts", "0", "--launch",
                                            "env -u NIMBUS_CLIENT_SECRET " + std::string(NIMBUS_BINARY) +
                                                " worker {args}"});
  EXPECT_NE(stripped.exit_code, 0);
  EXPECT_NE(stripped.err.find("could not start"), std::string::npos) << stripped.err;
}

TEST(RuntimeCli, AWorkersKeysAreChecked) {
  const std::string key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";  // ZeroMQ's documented example key
  const std::vector<std::string> worker{NIMBUS_BINARY, "worker", "--connect", "tcp://127.0.0.1:1", "--run", "5",
                                        "--worker", "0", "--connect-timeout", "0.3"};
  auto run = [&](std::vector<std::string> env, std::vector<std::string> extra) {
    std::vector<std::string> argv{"/usr/bin/env", "-u", "NIMBUS_CLIENT_SECRET"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), worker.begin(), worker.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  };
  const CommandResult no_secret = run({}, {"--server-key", key, "--client-key", key});
  EXPECT_EQ(no_secret.exit_code, 2) << no_secret.err;
  EXPECT_NE(no_secret.err.find("NIMBUS_CLIENT_SECRET"), std::string::npos) << no_secret.err;
  const CommandResult bad_key = run({"NIMBUS_CLIENT_SECRET=" + key}, {"--server-key", "short", "--client-key", key});
  EXPECT_EQ(bad_key.exit_code, 2) << bad_key.err;
  EXPECT_NE(bad_key.err.find("--server-key: not a CURVE key"), std::string::npos) << bad_key.err;
  // Well-formed keys: the worker dials out (securely) and leaves when no master answers.
  const CommandResult lost = run({"NIMBUS_CLIENT_SECRET=" + key}, {"--server-key", key, "--client-key", key});
  EXPECT_EQ(lost.exit_code, 3) << lost.err;
  const CommandResult help = RunNimbus({"worker", "--help"});
  EXPECT_NE(help.out.find("NIMBUS_CLIENT_SECRET"), std::string::npos);
}

}  // namespace
}  // namespace nimbus::testing
