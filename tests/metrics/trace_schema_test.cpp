// The trace's one schema (executor/trace_schema.h) from both ends: what the writers write, the
// reader reads back field for field, and a field of the wrong type is named with its line.
#include "nimbus/executor/trace_schema.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "nimbus/metrics/trace_reader.h"

namespace nimbus {
namespace {

// Every field away from its default, each value different, so that a field the list lacks (or
// reads into the wrong member) reads back unequal.
TraceSetup ReadySetup() {
  TraceSetup setup{.runtime = "process", .workers = 2, .rows = 3000000000, .cols = 7, .loss = "squared_hinge",
                   .l1 = 0.25, .l2 = 0.5, .intercept = true, .rho = 1.5, .setup_seconds = 2.5, .shards = {}};
  setup.shards.push_back({.worker = 0, .rows = 11, .nnz = 12, .load_seconds = 0.125, .invocation = 18446744073709551615u,
                          .invoke = 100.5, .process_start = 101.5, .hello = 102.5, .ready = 103.5});
  setup.shards.push_back({.worker = 1, .rows = 21, .nnz = 22, .load_seconds = 0.375, .invocation = 2,
                          .invoke = 200.5, .process_start = 201.5, .hello = 202.5, .ready = 203.5});
  return setup;
}

TraceRound TestedRound() {
  TraceRound round{.round = 4, .kind = RoundKind::kHessianVector, .time = 1.25, .rho = 0.75, .objective = 0.6931471805599453,
                   .primal_residual = 1e-3, .dual_residual = 2e-3, .eps_primal = 3e-3, .eps_dual = 4e-3,
                   .inner_tolerance = 0.01, .lean = true, .wait_seconds = 0.5, .master_seconds = 0.25,
                   .z_update_seconds = 0.125, .stop_test_seconds = 0.0625, .dispatch = 300.5, .replies = 301.5,
                   .workers = {}};
  round.workers.push_back({WorkerTimings{.compute_seconds = 0.4, .solve_seconds = 0.3, .local_iterations = 5,
                                         .cg_iterations = 6, .data_passes = 7, .receive_wall = 300.6,
                                         .start_wall = 300.7, .end_wall = 300.8, .send_wall = 300.9,
                                         .arrival_wall = 301.0, .bytes_in = 8, .bytes_out = 9},
                           1});
  return round;
}

TraceWorkerEvent FailedWorker() {
  return {.time = 400.5, .worker = 1, .invocation = 3, .what = "failed", .detail = "its process ended"};
}

Summary FinishedSummary() {
  Summary s;
  s.termination = Termination::kTargetObjective;
  s.message = "reached the target";
  s.iterations = 1;
  s.rounds = 2;
  s.objective = 0.5;
  s.primal_residual = 0.01;
  s.dual_residual = 0.02;
  s.eps_primal = 0.03;
  s.eps_dual = 0.04;
  s.rho = 0.05;
  s.initial_rho = 0.06;
  s.rho_updates = 3;
  s.gradient_norm = 0.07;
  s.gradient_tolerance = 0.08;
  s.nnz = 4;
  s.load_seconds = 0.09;
  s.setup_seconds = 0.10;
  s.solve_seconds = 0.11;
  s.master_seconds = 0.12;
  s.wait_seconds = 0.13;
  s.worker_compute_seconds = 0.14;
  s.data_passes = 5;
  s.local_iterations = 6;
  s.cg_iterations = 7;
  s.stale_replies = 8;
  s.lean_rounds = 9;
  s.worker_restarts = 10;
  s.messages_dropped = 11;
  s.reconnects = 12;
  s.rounds_resent = 13;
  s.bytes_sent = 14;
  s.bytes_received = 15;
  s.security = "curve";
  s.clients_refused = 16;
  s.checkpoints = 17;
  s.checkpoint_seconds = 0.15;
  s.checkpoint_failures = 18;
  s.resumed_at_round = 19;
  s.cost_dollars = 0.16;
  s.cost_gb_seconds = 0.17;
  s.algorithm = Algorithm::kNewton;
  s.algorithm_reason = "smooth";
  s.runtime = "lambda";
  s.workers = 20;
  s.rows = 21;
  s.cols = 22;
  s.solved_cols = 23;
  s.data_nnz = 24;
  return s;
}

TEST(TraceSchema, WhatIsWrittenReadsBackFieldForField) {
  TraceRound untested = TestedRound();  // a round without a stop test, F unknown, no replies in time
  untested.objective = untested.primal_residual = untested.dual_residual = untested.eps_primal = untested.eps_dual =
      std::nullopt;
  untested.workers.clear();
  TraceWorkerEvent plain = FailedWorker();
  plain.detail.reset();
  const std::string text = TraceLine(ReadySetup()) + "\n" + TraceLine(TestedRound()) + "\n" + TraceLine(untested) + "\n" +
                           TraceLine(FailedWorker()) + "\n" + TraceLine(plain) + "\n" + TraceLine(FinishedSummary()) +
                           "\n";
  Result<Trace> trace = ParseTrace(text, "t.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(static_cast<const TraceSetup&>(*trace), ReadySetup()) << text;
  ASSERT_EQ(trace->rounds.size(), 2u);
  EXPECT_EQ(trace->rounds[0], TestedRound()) << text;
  EXPECT_EQ(trace->rounds[1], untested) << text;
  ASSERT_EQ(trace->events.size(), 2u);
  EXPECT_EQ(trace->events[0], FailedWorker()) << text;
  EXPECT_EQ(trace->events[1], plain) << text;
  ASSERT_TRUE(trace->summary.has_value());
  EXPECT_EQ(*trace->summary, FinishedSummary()) << text;
}

// The lines as the trace contract has them: the event first, the fields in their order, a
// field not known in that round (or with nothing to say) left out, and the summary's as
// --summary-json writes them.
TEST(TraceSchema, LinesKeepTheirKeysAndOrder) {
  TraceRound round;
  round.round = 1;
  round.time = 0.5;
  round.rho = 2;
  round.objective = 0.25;
  round.dispatch = 10;
  round.replies = 11;
  round.workers.emplace_back().data_passes = 3;
  round.workers[0].bytes_in = 4;
  EXPECT_EQ(TraceLine(round),
            R"({"event":"round","round":1,"kind":"admm","time":0.5,"rho":2.0,"objective":0.25,"inner_tolerance":0.0,)"
            R"("lean":false,"wait_seconds":0.0,"master_seconds":0.0,"z_update_seconds":0.0,"stop_test_seconds":0.0,)"
            R"("dispatch":10.0,"replies":11.0,"workers":[{"worker":0,"compute_seconds":0.0,"solve_seconds":0.0,)"
            R"("local_iterations":0,"cg_iterations":0,"passes":3,"receive":0.0,"start":0.0,"end":0.0,"send":0.0,)"
            R"("arrival":0.0,"bytes_in":4,"bytes_out":0}]})");
  EXPECT_EQ(TraceLine(TraceWorkerEvent{.time = 1.5, .worker = 2, .invocation = 3, .what = "launched", .detail = {}}),
            R"({"event":"worker","time":1.5,"worker":2,"invocation":3,"what":"launched"})");
  const Summary summary = FinishedSummary();
  EXPECT_EQ(TraceLine(summary), R"({"event":"summary",)" + summary.ToJson().substr(1));
}

TEST(TraceSchema, AFieldOfTheWrongTypeIsNamedWithItsLine) {
  const std::string setup = R"({"event":"setup","workers":1,"shards":[]})";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"event":"round","round":1,"time":"soon","workers":[]})",
       "t.jsonl:2: round event: field 'time' is not a number"},
      {R"({"event":"round","round":1,"lean":"yes","workers":[]})",
       "t.jsonl:2: round event: field 'lean' is not true or false"},
      {R"({"event":"round","round":1,"objective":[0.5],"workers":[]})",
       "t.jsonl:2: round event: field 'objective' is not a number"},
      {R"({"event":"round","round":1,"workers":[{"worker":0,"arrival":true}]})",
       "t.jsonl:2: round event: field 'workers[0].arrival' is not a number"},
      {R"({"event":"round","round":1,"workers":[7]})", "t.jsonl:2: round event: field 'workers[0]' is not an object"},
      {R"({"event":"round","round":1})", "t.jsonl:2: round event: field 'workers' is missing"},
      {R"({"event":"setup","runtime":4,"shards":[]})", "t.jsonl:2: setup event: field 'runtime' is not a string"},
      {R"({"event":"setup","shards":[{"hello":"now"}]})",
       "t.jsonl:2: setup event: field 'shards[0].hello' is not a number"},
      {R"({"event":"worker","worker":0,"what":"failed","detail":{}})",
       "t.jsonl:2: worker event: field 'detail' is not a string"},
      {R"({"event":"summary","termination":"exhausted"})",
       "t.jsonl:2: summary event: field 'termination' is not converged, max_iterations, target_objective, "
       "user_stopped or worker_failed"},
      {R"({"event":"summary","algorithm":1})", "t.jsonl:2: summary event: field 'algorithm' is not a string"},
      {R"({"event":"summary","nnz":1.5})", "t.jsonl:2: summary event: field 'nnz' is not an integer"},
  };
  for (const auto& [line, expected] : cases) {
    Result<Trace> trace = ParseTrace(setup + "\n" + line + "\n", "t.jsonl");
    ASSERT_FALSE(trace.ok()) << line;
    EXPECT_NE(trace.status().message().find(expected), std::string::npos) << trace.status().message();
  }
}

}  // namespace
}  // namespace nimbus
