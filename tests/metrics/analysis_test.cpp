// Trace reading and the analyses behind reports, on hand-made traces with known answers.
#include "nimbus/metrics/analysis.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "nimbus/metrics/cost.h"
#include "nimbus/metrics/report.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

// Two workers, three rounds. Times in seconds from 100.
constexpr char kTrace[] =
    R"({"event":"setup","runtime":"process","workers":2,"rows":100,"cols":10,"loss":"logistic","l1":0.01,"l2":0,"intercept":false,"rho":0.5,"setup_seconds":0.2,"shards":[{"worker":0,"rows":50,"nnz":500,"load_seconds":0.01,"invocation":1,"invoke":99.0,"process_start":99.02,"hello":99.03,"ready":99.05},{"worker":1,"rows":50,"nnz":500,"load_seconds":0.02,"invocation":1,"invoke":99.0,"process_start":99.04,"hello":99.05,"ready":99.10}]}
{"event":"worker","time":99.0,"worker":0,"invocation":1,"what":"launched","detail":"pid 1"}
{"event":"worker","time":99.0,"worker":1,"invocation":1,"what":"launched","detail":"pid 2"}
{"event":"round","round":0,"time":1.0,"rho":0.5,"objective":0.69,"inner_tolerance":0,"wait_seconds":1.0,"master_seconds":0.0,"z_update_seconds":0,"stop_test_seconds":0,"dispatch":100.0,"replies":101.0,"workers":[{"worker":0,"compute_seconds":0.5,"solve_seconds":0.4,"local_iterations":1,"cg_iterations":2,"passes":4,"receive":100.1,"start":100.1,"end":100.6,"send":100.6,"arrival":100.7,"bytes_in":100,"bytes_out":100},{"worker":1,"compute_seconds":0.8,"solve_seconds":0.7,"local_iterations":1,"cg_iterations":2,"passes":4,"receive":100.1,"start":100.1,"end":100.9,"send":100.9,"arrival":101.0,"bytes_in":100,"bytes_out":100}]}
{"event":"round","round":1,"time":2.0,"rho":0.5,"objective":0.6,"primal_residual":1.0,"dual_residual":0.1,"eps_primal":0.01,"eps_dual":0.01,"inner_tolerance":0.1,"wait_seconds":0.9,"master_seconds":0.1,"z_update_seconds":0.05,"stop_test_seconds":0.05,"dispatch":101.1,"replies":102.0,"workers":[{"worker":0,"compute_seconds":0.2,"solve_seconds":0.2,"local_iterations":1,"cg_iterations":2,"passes":4,"receive":101.2,"start":101.2,"end":101.4,"send":101.4,"arrival":101.5,"bytes_in":100,"bytes_out":100},{"worker":1,"compute_seconds":0.7,"solve_seconds":0.6,"local_iterations":1,"cg_iterations":2,"passes":4,"receive":101.2,"start":101.2,"end":101.9,"send":101.9,"arrival":102.0,"bytes_in":100,"bytes_out":100}]}
{"event":"round","round":2,"time":3.0,"rho":0.5,"objective":null,"primal_residual":0.5,"dual_residual":0.05,"eps_primal":0.01,"eps_dual":0.01,"inner_tolerance":0.1,"wait_seconds":0.5,"master_seconds":0.0,"z_update_seconds":0,"stop_test_seconds":0,"dispatch":102.0,"replies":102.5,"workers":[{"worker":0,"compute_seconds":0.3,"solve_seconds":0.2,"local_iterations":1,"cg_iterations":2,"passes":4,"receive":102.1,"start":102.1,"end":102.4,"send":102.4,"arrival":102.5,"bytes_in":100,"bytes_out":100},{"worker":1,"compute_seconds":0.3,"solve_seconds":0.2,"local_iterations":1,"cg_iterations":2,"passes":4,"receive":102.1,"start":102.1,"end":102.4,"send":102.4,"arrival":102.45,"bytes_in":100,"bytes_out":100}]}
{"event":"summary","termination":"converged","iterations":2,"rounds":3,"objective":0.55,"load_seconds":0.5,"setup_seconds":0.2,"solve_seconds":3.0,"worker_restarts":0,"bytes_sent":600,"bytes_received":600}
)";

Trace Load(const std::string& text) {
  TempDir dir;
  WriteTextFile(dir.File("t.jsonl"), text);
  Result<Trace> trace = ReadTrace(dir.File("t.jsonl"));
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  return trace.ok() ? *trace : Trace{};
}

TEST(TraceReader, ReadsEveryEvent) {
  const Trace trace = Load(kTrace);
  EXPECT_EQ(trace.runtime, "process");
  EXPECT_EQ(trace.workers, 2);
  ASSERT_EQ(trace.shards.size(), 2u);
  EXPECT_EQ(trace.shards[1].ready, 99.10);
  ASSERT_EQ(trace.rounds.size(), 3u);
  EXPECT_FALSE(trace.rounds[0].primal_residual.has_value());
  EXPECT_EQ(*trace.rounds[1].primal_residual, 1.0);
  EXPECT_FALSE(trace.rounds[2].objective.has_value());  // null: unknown in that round
  EXPECT_EQ(trace.rounds[1].workers[1].arrival_wall, 102.0);
  ASSERT_EQ(trace.events.size(), 2u);
  ASSERT_TRUE(trace.summary.has_value());
  EXPECT_EQ(trace.summary->termination, Termination::kConverged);
}

TEST(TraceReader, BadTracesNameTheLine) {
  TempDir dir;
  WriteTextFile(dir.File("bad.jsonl"), std::string(R"({"event":"setup","shards":[]})") + "\n{not json\n");
  Result<Trace> bad = ReadTrace(dir.File("bad.jsonl"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.jsonl:2: not a JSON object"), std::string::npos) << bad.status().message();
  WriteTextFile(dir.File("odd.jsonl"), R"({"event":"mystery"})");
  EXPECT_NE(ReadTrace(dir.File("odd.jsonl")).status().message().find("odd.jsonl:1: unknown event 'mystery'"),
            std::string::npos);
  // The manifest's fuzzer found numbers out of range throwing; traces are read the same way.
  WriteTextFile(dir.File("huge.jsonl"), R"({"event":"setup","rho":1e999})");
  Result<Trace> huge = Trace{};
  EXPECT_NO_THROW(huge = ReadTrace(dir.File("huge.jsonl")));
  EXPECT_NE(huge.status().message().find("huge.jsonl:1: not a JSON object"), std::string::npos)
      << huge.status().message();
  WriteTextFile(dir.File("empty.jsonl"), "");
  EXPECT_FALSE(ReadTrace(dir.File("empty.jsonl")).ok());
  EXPECT_EQ(ReadTrace(dir.File("none.jsonl")).status().code(), StatusCode::kNotFound);
}

// Counts are read as integers within their type's range: casting a double such as 1e300 to
// an integer was undefined behaviour. The error names the line and the field.
TEST(TraceReader, CountsThatAreNotIntegersInRangeNameTheLineAndField) {
  const std::string setup = R"({"event":"setup","workers":1,"shards":[]})";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"event":"round","round":1e300,"workers":[]})", "t.jsonl:2: round event: field 'round' is not an integer"},
      {R"({"event":"round","round":3,"workers":[{"worker":0},{"worker":1,"passes":9223372036854775808}]})",
       "t.jsonl:2: round event: field 'workers[1].passes' is an integer out of range"},
      {R"({"event":"setup","workers":2.5,"shards":[]})", "t.jsonl:2: setup event: field 'workers' is not an integer"},
      {R"({"event":"setup","shards":[{"rows":1},{"rows":1e19}]})",
       "t.jsonl:2: setup event: field 'shards[1].rows' is not an integer"},
      {R"({"event":"setup","shards":[{"worker":"zero"}]})",
       "t.jsonl:2: setup event: field 'shards[0].worker' is not an integer"},
      {R"({"event":"worker","worker":0,"invocation":-1})",
       "t.jsonl:2: worker event: field 'invocation' is an integer out of range"},
      {R"({"event":"summary","rounds":2147483648})", "t.jsonl:2: summary event: field 'rounds' is an integer out of range"},
      {R"({"event":"round","round":1,"workers":{"worker":0}})", "t.jsonl:2: round event: field 'workers' is not an array"},
  };
  for (const auto& [line, expected] : cases) {
    Result<Trace> trace = ParseTrace(setup + "\n" + line + "\n", "t.jsonl");
    ASSERT_FALSE(trace.ok()) << line;
    EXPECT_NE(trace.status().message().find(expected), std::string::npos) << trace.status().message();
  }
  // The extremes of each type are counts like any other; null is "not known", as absent.
  Result<Trace> extremes = ParseTrace(
      setup + "\n" +
          R"({"event":"worker","worker":-2147483648,"invocation":18446744073709551615})" + "\n" +
          R"({"event":"round","round":-9223372036854775808,"workers":[{"worker":2147483647,"passes":null}]})",
      "t.jsonl");
  ASSERT_TRUE(extremes.ok()) << extremes.status().ToString();
  EXPECT_EQ(extremes->events[0].worker, std::numeric_limits<int>::min());
  EXPECT_EQ(extremes->events[0].invocation, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(extremes->rounds[0].round, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(extremes->rounds[0].workers[0].worker, std::numeric_limits<int>::max());
  EXPECT_EQ(extremes->rounds[0].workers[0].data_passes, 0);
}

TEST(TraceReader, TextInMemoryReadsAsTheFileDoes) {
  Result<Trace> trace = ParseTrace(kTrace, "memory.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->rounds.size(), 3u);
  EXPECT_EQ(trace->shards[1].nnz, 500);
  EXPECT_EQ(trace->rounds[1].workers[0].data_passes, 4);
  EXPECT_EQ(trace->summary->rounds, 3);
  EXPECT_NE(ParseTrace("{\"event\":\"mystery\"}", "memory.jsonl").status().message().find("memory.jsonl:1: unknown"),
            std::string::npos);
}

TEST(Analysis, BreakdownSplitsEachRound) {
  const std::vector<RoundBreakdown> rows = BreakdownRounds(Load(kTrace));
  ASSERT_EQ(rows.size(), 3u);
  // Round 1: wall 0.9 + 0.1 = 1.0; mean compute (0.2 + 0.7)/2 = 0.45; communication: worker 0
  // out 0.1 + back 0.1, worker 1 out 0.1 + back 0.1: mean 0.2; master 0.1; waiting the rest.
  EXPECT_NEAR(rows[1].wall, 1.0, 1e-12);
  EXPECT_NEAR(rows[1].compute, 0.45, 1e-12);
  EXPECT_NEAR(rows[1].communication, 0.2, 1e-9);
  EXPECT_NEAR(rows[1].master, 0.1, 1e-12);
  EXPECT_NEAR(rows[1].waiting, 0.25, 1e-9);
  EXPECT_NEAR(rows[1].slowest_compute, 0.7, 1e-12);
}

// One round of two remote workers whose clocks the master corrected by 0.9 s too much (the
// HELLO's delay was in the offset estimate): their receive and send times fall late, the way
// back looks negative. The master's own clock says: dispatch at 10.0, replies at 11.6 and
// 11.0, the last one 1.6 s after dispatch, then 0.4 s of master work: a 2.0 s round.
//   worker 0: compute 0.8, communication 1.6 - 0.8 = 0.8, waiting 0
//   worker 1: compute 0.4, communication 1.0 - 0.4 = 0.6, waiting 1.6 - 1.0 = 0.6
// Means: compute 0.6 (30%), communication 0.7 (35%), waiting 0.3 (15%), master 0.4 (20%).
constexpr char kSkewedTrace[] =
    R"({"event":"setup","runtime":"process","workers":2,"rows":10,"cols":2,"loss":"logistic","shards":[]}
{"event":"round","round":0,"time":2.0,"wait_seconds":1.6,"master_seconds":0.4,"dispatch":10.0,"replies":11.6,"workers":[{"worker":0,"compute_seconds":0.8,"receive":11.3,"start":11.3,"end":12.1,"send":12.1,"arrival":11.6},{"worker":1,"compute_seconds":0.4,"receive":11.2,"start":11.2,"end":11.6,"send":11.6,"arrival":11.0}]}
)";

TEST(Analysis, BreakdownPartitionsTheRoundWhateverTheWorkersClocksSay) {
  const std::vector<RoundBreakdown> rows = BreakdownRounds(Load(kSkewedTrace));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].wall, 2.0, 1e-12);
  EXPECT_NEAR(rows[0].compute, 0.6, 1e-12);
  EXPECT_NEAR(rows[0].communication, 0.7, 1e-12);
  EXPECT_NEAR(rows[0].waiting, 0.3, 1e-12);
  EXPECT_NEAR(rows[0].master, 0.4, 1e-12);
  for (const RoundBreakdown& r : BreakdownRounds(Load(kTrace))) {
    EXPECT_NEAR(r.master + r.compute + r.communication + r.waiting, r.wall, 1e-12) << "round " << r.round;
  }
}

TEST(Report, RoundSharesAddUpToTheRoundsAndSayWhatTheyAre) {
  const std::string text = ReportText(Load(kSkewedTrace), Prices{});
  EXPECT_NE(text.find("rounds        2.000 s in all, as the mean worker spent them: compute 30.0% (its work), "
                      "communication 35.0% (the rest of dispatch to its reply), waiting 15.0% (its reply to the last), "
                      "master 20.0% (after the last reply)\n"),
            std::string::npos)
      << text;
}

TEST(Analysis, StragglersAsThePaperCountsThem) {
  const StragglerStats s = Stragglers(Load(kTrace));
  // Response times: round 0: 0.7, 1.0; round 1: 0.4, 0.9; round 2: 0.5, 0.45. The 90th
  // percentile of {0.4, 0.45, 0.5, 0.7, 0.9, 1.0} interpolates to 0.95: only worker 1 in
  // round 0 is above it.
  EXPECT_NEAR(s.threshold, 0.95, 1e-9);
  EXPECT_EQ(s.rounds, 3);
  ASSERT_EQ(s.share_per_worker.size(), 2u);
  EXPECT_NEAR(s.share_per_worker[0], 0.0, 1e-12);
  EXPECT_NEAR(s.share_per_worker[1], 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(s.rounds_with_straggler, 1.0 / 3.0, 1e-12);
}

TEST(Analysis, ColdStartsAndQuantiles) {
  const ColdStarts cold = ColdStartsOf(Load(kTrace));
  ASSERT_EQ(cold.total.size(), 2u);
  EXPECT_NEAR(cold.total[1], 0.10, 1e-9);
  EXPECT_NEAR(cold.process_start[1], 0.04, 1e-9);
  EXPECT_NEAR(cold.connect[1], 0.01, 1e-9);
  EXPECT_EQ(cold.load[1], 0.02);
  EXPECT_EQ(Quantile({3, 1, 2}, 0.5), 2);
  EXPECT_EQ(Quantile({}, 0.5), 0);
  EXPECT_NEAR(Quantile({0, 10}, 0.25), 2.5, 1e-12);
}

TEST(Cost, AddsTheParts) {
  Prices prices;
  prices.function_memory_gb = 2.0;
  const Cost cost = EstimateCost(prices, 10, 100.0, 1000, 3600.0);
  EXPECT_NEAR(cost.function_gb_seconds, 200.0, 1e-12);
  EXPECT_NEAR(cost.lambda_dollars, 200 * 0.0000166667 + 10 * 0.2e-6, 1e-12);
  EXPECT_NEAR(cost.s3_dollars, 1000 * 0.0004e-3, 1e-15);
  EXPECT_NEAR(cost.master_dollars, 0.085, 1e-12);
  EXPECT_NEAR(cost.total_dollars(), cost.lambda_dollars + cost.s3_dollars + cost.master_dollars, 1e-15);
  EXPECT_EQ(ShardLoadRequests(100), 2);                       // HEAD + GET
  EXPECT_EQ(ShardLoadRequests(20 << 20, 8 << 20), 1 + 3);     // HEAD + 3 ranges
  Prices bad;
  bad.lambda_request = -1;
  EXPECT_FALSE(bad.Validate().ok());
  // The trace's run: 2 workers x (0.2 + 3.0) s, 2 launches.
  const Cost run = CostOfTrace(Load(kTrace), Prices{});
  EXPECT_EQ(run.requests, 2);
  EXPECT_NEAR(run.function_gb_seconds, 2 * 3.2 * 1.769, 1e-9);
}

TEST(Report, WritesDataAndPlots) {
  TempDir dir;
  ReportOptions options;
  options.out_dir = dir.File("report");
  Result<ReportFiles> files = WriteReport(Load(kTrace), options);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->plots.size(), 12u);
  for (const std::string& plot : files->plots) EXPECT_GT(testing::ReadTextFile(plot).size(), 500u) << plot;
  EXPECT_NE(testing::ReadTextFile(dir.File("report/convergence-round.svg")).find("<svg"), std::string::npos);
  // Two rounds carry residuals; the breakdown has all three.
  const std::string convergence = testing::ReadTextFile(dir.File("report/convergence.dat"));
  EXPECT_EQ(std::count(convergence.begin(), convergence.end(), '\n'), 3);
  EXPECT_NE(convergence.find("\n1 2 1 0.1 0.01 0.01 0.6 "), std::string::npos) << convergence;
  EXPECT_NE(convergence.find("\n2 3 0.5 0.05 0.01 0.01 NaN NaN"), std::string::npos) << convergence;
  const std::string breakdown = testing::ReadTextFile(dir.File("report/breakdown.dat"));
  EXPECT_EQ(std::count(breakdown.begin(), breakdown.end(), '\n'), 4);
  EXPECT_NE(breakdown.find("\n1 100.000000 200.000000 450.000000 250.000000"), std::string::npos) << breakdown;
  const std::string stragglers = testing::ReadTextFile(dir.File("report/stragglers.dat"));
  EXPECT_NE(stragglers.find("\n1 0.333333"), std::string::npos) << stragglers;
  const std::string html = testing::ReadTextFile(files->html);
  EXPECT_NE(html.find("<img src=\"breakdown.svg\""), std::string::npos);
  EXPECT_NE(testing::ReadTextFile(files->text).find("converged after 2 iterations"), std::string::npos);
}

}  // namespace
}  // namespace nimbus
