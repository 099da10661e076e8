// Tests of ShardWorker: one shard's ADMM state and rounds, checked against the update
// formulas of wire/messages.h with every quantity recomputed independently in the test.
#include "nimbus/worker/shard_worker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "local/sparse_test_problem.h"

namespace nimbus {
namespace {

using testing::MakeRandomProblem;
using testing::RefDataGradient;
using testing::RefDataLoss;
using testing::RefMaxAbsDiff;
using testing::RefNorm;
using testing::RefSquaredLossMinimizer;
using testing::SparseProblem;
using testing::RandomVector;
using testing::kAllLosses;

constexpr LocalSolver kAllSolvers[] = {LocalSolver::kNewtonCg, LocalSolver::kLbfgs};

// The x-update tolerance of every round here, and the rounding slack of recovering x from w.
constexpr double kInnerTolerance = 1e-7;

double SquaredNormOf(std::span<const double> a) {
  double s = 0;
  for (double v : a) s += v * v;
  return s;
}

double SquaredDistanceOf(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t j = 0; j < a.size(); ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
  return s;
}

// A problem of 80 rows in all, of which the worker owns rows [20, 60) (a row range of the
// full matrix, so row_ptr does not start at 0).
struct ShardSetup {
  ShardSetup(Loss loss, bool intercept, uint64_t seed = 3) : loss(loss), intercept(intercept) {
    full = std::make_shared<SparseProblem>(MakeRandomProblem(80, 10, 3, seed, loss));
    // The shard as a SparseProblem of its own, for the dense references.
    shard.cols = full->cols;
    for (int64_t r = 20; r < 60; ++r) {
      std::vector<std::pair<uint32_t, double>> entries;
      for (int64_t k = full->row_ptr[static_cast<std::size_t>(r)]; k < full->row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
        entries.emplace_back(full->col_idx[static_cast<std::size_t>(k)], full->values[static_cast<std::size_t>(k)]);
      }
      shard.AddRow(entries, full->labels[static_cast<std::size_t>(r)]);
    }
    spec.loss = loss;
    spec.intercept = intercept;
    spec.rows = 80;
    spec.cols = full->cols;
    width = spec.model_size();
  }

  Dataset ShardDataset() const {
    Dataset all;
    all.matrix = full->View();
    all.labels = full->labels;
    all.encoding.classification = IsClassification(loss);
    all.storage = full;
    return all.Rows(20, 60);
  }

  ShardWorker MakeWorker(LocalSolver solver = LocalSolver::kNewtonCg, int id = 3) const {
    WorkerOptions options;
    options.solver = solver;
    return ShardWorker(id, ShardDataset(), spec, options);
  }

  // f_i(x) = (1/N) sum over the shard of the loss, and its gradient.
  double DataLoss(const std::vector<double>& x) const { return RefDataLoss(shard, loss, intercept, 80.0, x); }
  std::vector<double> DataGradient(const std::vector<double>& x) const {
    return RefDataGradient(shard, loss, intercept, 80.0, x);
  }
  // ||grad f_i(x) + rho (x - z + u)||: the x-update's optimality residual.
  double XUpdateResidual(const std::vector<double>& x, const std::vector<double>& z, const std::vector<double>& u,
                         double rho) const {
    std::vector<double> g = DataGradient(x);
    for (std::size_t j = 0; j < g.size(); ++j) g[j] += rho * (x[j] - z[j] + u[j]);
    return RefNorm(g);
  }

  Loss loss;
  bool intercept;
  std::shared_ptr<SparseProblem> full;
  SparseProblem shard;
  ProblemSpec spec;
  std::size_t width = 0;
};

RoundRequest Request(int64_t round, const std::vector<double>& z, double rho, double alpha,
                     double tolerance = kInnerTolerance) {
  RoundRequest request;
  request.round = round;
  request.z = std::make_shared<const std::vector<double>>(z);
  request.rho = rho;
  request.relaxation = alpha;
  request.inner_tolerance = tolerance;
  return request;
}

// x from the reply: w = alpha x + (1 - alpha) z + u.
std::vector<double> RecoverX(const WorkerReply& reply, const std::vector<double>& z, const std::vector<double>& u,
                             double alpha) {
  std::vector<double> x(z.size());
  for (std::size_t j = 0; j < z.size(); ++j) x[j] = (reply.w[j] - u[j] - (1 - alpha) * z[j]) / alpha;
  return x;
}

std::string Label(Loss loss, bool intercept, LocalSolver solver) {
  return std::string(LossName(loss)) + (intercept ? " +b " : " ") + std::string(NameOf(solver));
}

// ---- Ready ----

TEST(ShardWorkerTest, ReadyReportsSizesAndCurvatureTrace) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      const ShardSetup s(loss, intercept);
      const ShardWorker worker = s.MakeWorker(LocalSolver::kNewtonCg, 7);
      const WorkerReady ready = worker.Ready(1.25);
      EXPECT_EQ(ready.worker, 7);
      EXPECT_EQ(worker.id(), 7);
      EXPECT_EQ(ready.rows, 40);
      EXPECT_EQ(ready.cols, 10);
      EXPECT_EQ(ready.nnz, 40 * 3);
      EXPECT_EQ(ready.load_seconds, 1.25);
      // loss''(0) sum_r ||a_r||^2 (+ one per row for the constant feature of the intercept).
      const double second_at_zero = loss == Loss::kLogistic ? 0.25 : loss == Loss::kSquared ? 1.0 : 2.0;
      double squares = 0;
      for (double v : s.shard.values) squares += v * v;
      if (intercept) squares += 40;
      EXPECT_NEAR(ready.curvature_trace, second_at_zero * squares, 1e-12 * squares) << LossName(loss);
      // Which is N times the trace of the shard's loss Hessian at 0 (a dense computation).
      const std::vector<double> h = testing::RefDataHessian(s.shard, loss, intercept, 80.0, std::vector<double>(s.width));
      double trace = 0;
      for (std::size_t j = 0; j < s.width; ++j) trace += h[j * s.width + j];
      EXPECT_NEAR(ready.curvature_trace, 80.0 * trace, 1e-12 * squares) << LossName(loss);
    }
  }
}

// ---- Round 0 ----

TEST(ShardWorkerTest, FirstRoundSolvesTheXUpdateAndReportsNoScalars) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      for (LocalSolver solver : kAllSolvers) {
        const ShardSetup s(loss, intercept);
        ShardWorker worker = s.MakeWorker(solver);
        const std::vector<double> z = RandomVector(s.width, 11, 1.0);
        const double rho = 0.5, alpha = 1.6;
        const WorkerReply reply = worker.Serve(Request(0, z, rho, alpha));
        const std::string what = Label(loss, intercept, solver);
        ASSERT_EQ(reply.status, ReplyStatus::kOk) << what << ": " << reply.error;
        EXPECT_EQ(reply.worker, 3) << what;
        EXPECT_EQ(reply.round, 0) << what;
        EXPECT_FALSE(reply.scalars.valid) << what;
        ASSERT_EQ(reply.w.size(), s.width) << what;
        // f_i(z^0) is reported even in round 0.
        EXPECT_NEAR(reply.scalars.loss_at_z, s.DataLoss(z), 1e-14) << what;
        // u = 0 in round 0: x = (w - (1 - alpha) z) / alpha minimizes f_i(x) + rho/2 ||x - z||^2.
        const std::vector<double> u(s.width, 0.0);
        const std::vector<double> x = RecoverX(reply, z, u, alpha);
        EXPECT_LE(s.XUpdateResidual(x, z, u, rho), kInnerTolerance * (1 + 1e-6) + 1e-13) << what;
        if (loss == Loss::kSquared) {
          const std::vector<double> exact = RefSquaredLossMinimizer(s.shard, intercept, 80.0, rho, z);
          EXPECT_LE(RefMaxAbsDiff(x, exact), kInnerTolerance / rho * (1 + 1e-6) + 1e-13) << what;
        }
        EXPECT_GE(reply.timings.local_iterations, 1) << what;
        EXPECT_GE(reply.timings.data_passes, 1) << what;
        EXPECT_GE(reply.timings.compute_seconds, reply.timings.solve_seconds) << what;
        EXPECT_LE(reply.timings.start_wall, reply.timings.end_wall) << what;
      }
    }
  }
}

TEST(ShardWorkerTest, RelativeInnerToleranceIsHonoured) {
  const ShardSetup s(Loss::kLogistic, true);
  ShardWorker worker = s.MakeWorker();
  const std::vector<double> z = RandomVector(s.width, 12, 2.0);
  const double rho = 0.05;
  RoundRequest request = Request(0, z, rho, 1.0, 0.0);
  request.inner_relative_tolerance = 0.25;
  const WorkerReply reply = worker.Serve(request);
  ASSERT_EQ(reply.status, ReplyStatus::kOk);
  // Round 0 starts from x = z, where the gradient of the x-update objective is grad f_i(z).
  const double g0 = RefNorm(s.DataGradient(z));
  const std::vector<double> u(s.width, 0.0);
  const std::vector<double> x = RecoverX(reply, z, u, 1.0);
  EXPECT_LE(s.XUpdateResidual(x, z, u, rho), 0.25 * g0 * (1 + 1e-9));
  EXPECT_GE(reply.timings.local_iterations, 1);
}

TEST(ShardWorkerTest, AlreadyOptimalStartTakesNoIterations) {
  // z = argmin f_i (squared loss: the normal equations with no proximal term) makes x = z
  // optimal for the first x-update: no local iterations, and w = z.
  for (bool intercept : {false, true}) {
    const ShardSetup s(Loss::kSquared, intercept);
    const std::vector<double> z = RefSquaredLossMinimizer(s.shard, intercept, 80.0, 0.0, std::vector<double>(s.width));
    ASSERT_LE(RefNorm(s.DataGradient(z)), 1e-13);
    ShardWorker worker = s.MakeWorker();
    const WorkerReply reply = worker.Serve(Request(0, z, 0.5, 1.5));
    ASSERT_EQ(reply.status, ReplyStatus::kOk);
    EXPECT_EQ(reply.timings.local_iterations, 0);
    EXPECT_LE(RefMaxAbsDiff(reply.w, z), 1e-15 * (1 + RefNorm(z)));
  }
}

// ---- Later rounds: dual update, scalars, rho changes ----

TEST(ShardWorkerTest, LaterRoundsUpdateTheDualAndReportTheScalars) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      for (LocalSolver solver : kAllSolvers) {
        const ShardSetup s(loss, intercept);
        ShardWorker worker = s.MakeWorker(solver);
        const std::string what = Label(loss, intercept, solver);
        const double alpha = 1.5;
        double rho = 0.4;

        // Round 0.
        const std::vector<double> z0 = RandomVector(s.width, 21, 1.0);
        const WorkerReply r0 = worker.Serve(Request(0, z0, rho, alpha));
        ASSERT_EQ(r0.status, ReplyStatus::kOk) << what;
        std::vector<double> u(s.width, 0.0);
        const std::vector<double> x0 = RecoverX(r0, z0, u, alpha);
        std::vector<double> xh(s.width);
        for (std::size_t j = 0; j < s.width; ++j) xh[j] = alpha * x0[j] + (1 - alpha) * z0[j];

        // Round 1, same rho: u <- u + xh - z1.
        const std::vector<double> z1 = RandomVector(s.width, 22, 1.0);
        const WorkerReply r1 = worker.Serve(Request(1, z1, rho, alpha));
        ASSERT_EQ(r1.status, ReplyStatus::kOk) << what;
        EXPECT_EQ(r1.round, 1) << what;
        for (std::size_t j = 0; j < s.width; ++j) u[j] += xh[j] - z1[j];
        ASSERT_TRUE(r1.scalars.valid) << what;
        EXPECT_NEAR(r1.scalars.primal_squared, SquaredDistanceOf(x0, z1), 1e-12) << what;
        EXPECT_NEAR(r1.scalars.x_squared, SquaredNormOf(x0), 1e-12) << what;
        EXPECT_NEAR(r1.scalars.u_squared, SquaredNormOf(u), 1e-12) << what;
        EXPECT_NEAR(r1.scalars.loss_at_z, s.DataLoss(z1), 1e-14) << what;
        const std::vector<double> x1 = RecoverX(r1, z1, u, alpha);
        EXPECT_LE(s.XUpdateResidual(x1, z1, u, rho), kInnerTolerance * (1 + 1e-6) + 1e-12) << what;
        for (std::size_t j = 0; j < s.width; ++j) xh[j] = alpha * x1[j] + (1 - alpha) * z1[j];
        // The reply is w = xh + u.
        for (std::size_t j = 0; j < s.width; ++j) EXPECT_NEAR(r1.w[j], xh[j] + u[j], 1e-14) << what;

        // Round 2, rho quadrupled: u <- (u + xh - z2) * rho_old / rho_new; the reported ||u||^2
        // is taken after the dual update, before the rescale.
        const std::vector<double> z2 = RandomVector(s.width, 23, 1.0);
        const double rho2 = 4 * rho;
        const WorkerReply r2 = worker.Serve(Request(2, z2, rho2, alpha));
        ASSERT_EQ(r2.status, ReplyStatus::kOk) << what;
        for (std::size_t j = 0; j < s.width; ++j) u[j] += xh[j] - z2[j];
        ASSERT_TRUE(r2.scalars.valid) << what;
        EXPECT_NEAR(r2.scalars.primal_squared, SquaredDistanceOf(x1, z2), 1e-12) << what;
        EXPECT_NEAR(r2.scalars.x_squared, SquaredNormOf(x1), 1e-12) << what;
        EXPECT_NEAR(r2.scalars.u_squared, SquaredNormOf(u), 1e-12) << what;
        EXPECT_NEAR(r2.scalars.loss_at_z, s.DataLoss(z2), 1e-14) << what;
        ASSERT_GT(SquaredNormOf(u), 1e-2) << what << ": the rescale must make a visible difference";
        for (double& v : u) v *= rho / rho2;
        const std::vector<double> x2 = RecoverX(r2, z2, u, alpha);
        EXPECT_LE(s.XUpdateResidual(x2, z2, u, rho2), kInnerTolerance * (1 + 1e-6) + 1e-12) << what;
        for (std::size_t j = 0; j < s.width; ++j) xh[j] = alpha * x2[j] + (1 - alpha) * z2[j];

        // Round 3, rho halved again.
        const std::vector<double> z3 = RandomVector(s.width, 24, 1.0);
        const double rho3 = rho2 / 2;
        const WorkerReply r3 = worker.Serve(Request(3, z3, rho3, alpha));
        ASSERT_EQ(r3.status, ReplyStatus::kOk) << what;
        for (std::size_t j = 0; j < s.width; ++j) u[j] += xh[j] - z3[j];
        EXPECT_NEAR(r3.scalars.u_squared, SquaredNormOf(u), 1e-12) << what;
        EXPECT_NEAR(r3.scalars.primal_squared, SquaredDistanceOf(x2, z3), 1e-12) << what;
        for (double& v : u) v *= rho2 / rho3;
        const std::vector<double> x3 = RecoverX(r3, z3, u, alpha);
        EXPECT_LE(s.XUpdateResidual(x3, z3, u, rho3), kInnerTolerance * (1 + 1e-6) + 1e-12) << what;
      }
    }
  }
}

TEST(ShardWorkerTest, WithoutOverRelaxationTheReplyIsXPlusU) {
  const ShardSetup s(Loss::kLogistic, false);
  ShardWorker worker = s.MakeWorker();
  const std::vector<double> z0 = RandomVector(s.width, 31, 1.0);
  const std::vector<double> z1 = RandomVector(s.width, 32, 1.0);
  const WorkerReply r0 = worker.Serve(Request(0, z0, 1.0, 1.0));
  const WorkerReply r1 = worker.Serve(Request(1, z1, 1.0, 1.0));
  ASSERT_EQ(r1.status, ReplyStatus::kOk);
  // alpha = 1: xh = x, so x0 = w0 and u1 = w0 - z1.
  std::vector<double> u(s.width);
  for (std::size_t j = 0; j < s.width; ++j) u[j] = r0.w[j] - z1[j];
  EXPECT_NEAR(r1.scalars.x_squared, SquaredNormOf(r0.w), 1e-12);
  EXPECT_NEAR(r1.scalars.u_squared, SquaredNormOf(u), 1e-12);
  const std::vector<double> x1 = RecoverX(r1, z1, u, 1.0);
  EXPECT_LE(s.XUpdateResidual(x1, z1, u, 1.0), kInnerTolerance * (1 + 1e-6) + 1e-12);
}

// ---- Replacement workers ----

TEST(ShardWorkerTest, RestoreDualResumesWithTheGivenDual) {
  for (LocalSolver solver : kAllSolvers) {
    const ShardSetup s(Loss::kSquaredHinge, true);
    const std::vector<double> u_kept = RandomVector(s.width, 41, 0.5);
    const std::vector<double> z = RandomVector(s.width, 42, 1.0);
    const double alpha = 1.3;

    // Same rho as the kept dual: u is used as it is.
    ShardWorker worker = s.MakeWorker(solver);
    ASSERT_TRUE(worker.RestoreDual(u_kept, 0.8).ok());
    const WorkerReply reply = worker.Serve(Request(5, z, 0.8, alpha));
    ASSERT_EQ(reply.status, ReplyStatus::kOk);
    EXPECT_FALSE(reply.scalars.valid) << "a replacement has no previous x_i";
    EXPECT_NEAR(reply.scalars.loss_at_z, s.DataLoss(z), 1e-14);
    const std::vector<double> x = RecoverX(reply, z, u_kept, alpha);
    EXPECT_LE(s.XUpdateResidual(x, z, u_kept, 0.8), kInnerTolerance * (1 + 1e-6) + 1e-12) << NameOf(solver);

    // A different rho: the kept dual is rescaled by rho_kept / rho.
    ShardWorker other = s.MakeWorker(solver);
    ASSERT_TRUE(other.RestoreDual(u_kept, 0.8).ok());
    const WorkerReply reply2 = other.Serve(Request(5, z, 0.2, alpha));
    ASSERT_EQ(reply2.status, ReplyStatus::kOk);
    std::vector<double> u_scaled = u_kept;
    for (double& v : u_scaled) v *= 0.8 / 0.2;
    const std::vector<double> x2 = RecoverX(reply2, z, u_scaled, alpha);
    EXPECT_LE(s.XUpdateResidual(x2, z, u_scaled, 0.2), kInnerTolerance * (1 + 1e-6) + 1e-12)
        << NameOf(solver);

    // The next round applies the dual update to the restored u.
    const std::vector<double> z_next = RandomVector(s.width, 43, 1.0);
    const WorkerReply next = worker.Serve(Request(6, z_next, 0.8, alpha));
    ASSERT_EQ(next.status, ReplyStatus::kOk);
    std::vector<double> u = u_kept;
    for (std::size_t j = 0; j < s.width; ++j) u[j] += alpha * x[j] + (1 - alpha) * z[j] - z_next[j];
    EXPECT_TRUE(next.scalars.valid);
    EXPECT_NEAR(next.scalars.u_squared, SquaredNormOf(u), 1e-12);
    EXPECT_NEAR(next.scalars.primal_squared, SquaredDistanceOf(x, z_next), 1e-12);

    // Restoring over a worker that has iterates of its own: they are forgotten, the given u
    // is used as it is (no dual update with the old x_i, no scalars).
    const std::vector<double> z_after = RandomVector(s.width, 44, 1.0);
    ASSERT_TRUE(worker.RestoreDual(u_kept, 0.8).ok());
    const WorkerReply after = worker.Serve(Request(7, z_after, 0.8, alpha));
    ASSERT_EQ(after.status, ReplyStatus::kOk);
    EXPECT_FALSE(after.scalars.valid);
    const std::vector<double> x_after = RecoverX(after, z_after, u_kept, alpha);
    EXPECT_LE(s.XUpdateResidual(x_after, z_after, u_kept, 0.8), kInnerTolerance * (1 + 1e-6) + 1e-12)
        << NameOf(solver);
  }
}

TEST(ShardWorkerTest, ReplacementFromTheMastersStoredReplyContinuesTheRun) {
  // The master keeps w_i and gives a replacement u_i = w_i - z: the dual the original worker
  // would compute itself at the start of the next round.
  const ShardSetup s(Loss::kLogistic, true);
  const double rho = 0.5, alpha = 1.4;
  ShardWorker original = s.MakeWorker();
  const std::vector<double> z0 = RandomVector(s.width, 51, 1.0);
  const std::vector<double> z1 = RandomVector(s.width, 52, 1.0);
  const std::vector<double> z2 = RandomVector(s.width, 53, 1.0);
  ASSERT_EQ(original.Serve(Request(0, z0, rho, alpha)).status, ReplyStatus::kOk);
  const WorkerReply stored = original.Serve(Request(1, z1, rho, alpha));
  ASSERT_EQ(stored.status, ReplyStatus::kOk);
  const WorkerReply a = original.Serve(Request(2, z2, rho, alpha));

  ShardWorker replacement = s.MakeWorker(LocalSolver::kNewtonCg, 3);
  std::vector<double> u(s.width);
  for (std::size_t j = 0; j < s.width; ++j) u[j] = stored.w[j] - z2[j];
  ASSERT_TRUE(replacement.RestoreDual(u, rho).ok());
  const WorkerReply b = replacement.Serve(Request(2, z2, rho, alpha));
  ASSERT_EQ(a.status, ReplyStatus::kOk);
  ASSERT_EQ(b.status, ReplyStatus::kOk);
  EXPECT_NEAR(a.scalars.u_squared, SquaredNormOf(u), 1e-12);
  // Both solve the same x-update to the tolerance: ||x_a - x_b|| <= 2 tol / rho, and w
  // differs by alpha times that.
  EXPECT_LE(RefMaxAbsDiff(a.w, b.w), alpha * 2 * kInnerTolerance / rho * (1 + 1e-6));
  const std::vector<double> xb = RecoverX(b, z2, u, alpha);
  EXPECT_LE(s.XUpdateResidual(xb, z2, u, rho), kInnerTolerance * (1 + 1e-6) + 1e-12);
}

TEST(ShardWorkerTest, AnEmptyShardOnlyFollowsTheConsensus) {
  // More shards than rows leaves a worker with none: f_i = 0, so x_i = z - u exactly.
  const ShardSetup s(Loss::kLogistic, true);
  Dataset all;
  all.matrix = s.full->View();
  all.labels = s.full->labels;
  all.storage = s.full;
  WorkerOptions options;
  ShardWorker worker(0, all.Rows(20, 20), s.spec, options);
  const WorkerReady ready = worker.Ready(0.0);
  EXPECT_EQ(ready.rows, 0);
  EXPECT_EQ(ready.nnz, 0);
  EXPECT_EQ(ready.curvature_trace, 0.0);
  const double alpha = 1.5, rho = 0.7;
  const std::vector<double> z0 = RandomVector(s.width, 71, 1.0);
  const std::vector<double> z1 = RandomVector(s.width, 72, 1.0);
  const WorkerReply r0 = worker.Serve(Request(0, z0, rho, alpha));
  ASSERT_EQ(r0.status, ReplyStatus::kOk) << r0.error;
  EXPECT_EQ(r0.scalars.loss_at_z, 0.0);
  EXPECT_LE(RefMaxAbsDiff(r0.w, z0), 1e-15);  // x = z, xh = z, u = 0
  const WorkerReply r1 = worker.Serve(Request(1, z1, rho, alpha));
  ASSERT_EQ(r1.status, ReplyStatus::kOk) << r1.error;
  for (std::size_t j = 0; j < s.width; ++j) {
    const double u = z0[j] - z1[j];
    const double x = z1[j] - u;
    EXPECT_NEAR(r1.w[j], alpha * x + (1 - alpha) * z1[j] + u, alpha * kInnerTolerance / rho) << j;
  }
  EXPECT_NEAR(r1.scalars.primal_squared, SquaredDistanceOf(z0, z1), 1e-12);
}

// ---- Bad requests ----

TEST(ShardWorkerTest, WrongSizedZFailsWithoutTouchingTheState) {
  const ShardSetup s(Loss::kLogistic, true);
  ShardWorker worker = s.MakeWorker();
  ShardWorker twin = s.MakeWorker();  // sees only the good requests
  const std::vector<double> z0 = RandomVector(s.width, 61, 1.0);
  const std::vector<double> z1 = RandomVector(s.width, 62, 1.0);

  for (std::size_t size : {s.width - 1, s.width + 3, std::size_t{0}}) {
    const WorkerReply bad = worker.Serve(Request(0, std::vector<double>(size, 0.5), 0.5, 1.5));
    EXPECT_EQ(bad.status, ReplyStatus::kFailed) << size;
    EXPECT_FALSE(bad.error.empty()) << size;
    EXPECT_NE(bad.error.find(std::to_string(size)), std::string::npos) << bad.error;
    EXPECT_NE(bad.error.find(std::to_string(s.width)), std::string::npos) << bad.error;
    EXPECT_EQ(bad.worker, 3);
    EXPECT_EQ(bad.round, 0);
  }
  // A good round afterwards is still round 0 for this worker, identical to the twin's.
  const WorkerReply good = worker.Serve(Request(0, z0, 0.5, 1.5));
  const WorkerReply twin_good = twin.Serve(Request(0, z0, 0.5, 1.5));
  ASSERT_EQ(good.status, ReplyStatus::kOk);
  EXPECT_FALSE(good.scalars.valid);
  EXPECT_EQ(good.w, twin_good.w);

  // A bad request between good rounds: no dual update, no rho change is remembered.
  const WorkerReply bad = worker.Serve(Request(1, std::vector<double>(s.width + 1, 0.0), 3.0, 1.5));
  EXPECT_EQ(bad.status, ReplyStatus::kFailed);
  EXPECT_EQ(bad.round, 1);
  const WorkerReply next = worker.Serve(Request(1, z1, 0.5, 1.5));
  const WorkerReply twin_next = twin.Serve(Request(1, z1, 0.5, 1.5));
  ASSERT_EQ(next.status, ReplyStatus::kOk);
  EXPECT_EQ(next.w, twin_next.w);
  EXPECT_EQ(next.scalars.u_squared, twin_next.scalars.u_squared);
  EXPECT_EQ(next.scalars.primal_squared, twin_next.scalars.primal_squared);
}

TEST(ShardWorkerTest, ARoundWithoutZFailsInsteadOfCrashing) {
  const ShardSetup s(Loss::kLogistic, false);
  ShardWorker worker = s.MakeWorker();
  RoundRequest request;  // no z at all
  request.rho = 1.0;
  const WorkerReply reply = worker.Serve(request);
  EXPECT_EQ(reply.status, ReplyStatus::kFailed);
  EXPECT_NE(reply.error.find("z has 0 entries"), std::string::npos) << reply.error;
}

TEST(ShardWorkerTest, RestoreDualRefusesAWrongSizeOrRho) {
  const ShardSetup s(Loss::kLogistic, false);
  ShardWorker worker = s.MakeWorker();
  const Status too_long = worker.RestoreDual(std::vector<double>(s.width + 5, 1.0), 0.5);
  EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.message().find("u has"), std::string::npos) << too_long.message();
  EXPECT_FALSE(worker.RestoreDual(std::vector<double>(s.width, 1.0), 0.0).ok());
  EXPECT_TRUE(worker.RestoreDual(std::vector<double>(s.width, 1.0), 0.5).ok());
}

// ---- Names and options ----

TEST(LocalSolverTest, NamesRoundTrip) {
  for (LocalSolver solver : kAllSolvers) {
    const Result<LocalSolver> parsed = ParseLocalSolver(std::string(NameOf(solver)));
    ASSERT_TRUE(parsed.ok()) << NameOf(solver);
    EXPECT_EQ(*parsed, solver);
  }
  EXPECT_EQ(NameOf(LocalSolver::kNewtonCg), "newton-cg");
  EXPECT_EQ(NameOf(LocalSolver::kLbfgs), "lbfgs");
  EXPECT_EQ(*ParseLocalSolver("newton"), LocalSolver::kNewtonCg);
  EXPECT_EQ(*ParseLocalSolver("l-bfgs"), LocalSolver::kLbfgs);
  const Result<LocalSolver> bad = ParseLocalSolver("sgd");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'sgd'"), std::string::npos);
}

TEST(WorkerOptionsTest, ValidateNamesTheSolverAndTheField) {
  EXPECT_TRUE(WorkerOptions().Validate().ok());
  WorkerOptions options;
  options.newton.cg_forcing = 2.0;
  Status status = options.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("newton: cg_forcing:", 0), 0u) << status.message();
  options = WorkerOptions();
  options.lbfgs.memory = 0;
  status = options.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("lbfgs: memory:", 0), 0u) << status.message();
}

// ---- General-form consensus ----

// 30 rows over 25 features, of which rows [10, 30) touch only features 2, 5, 7, 11 and 20.
struct SparseSupportSetup {
  SparseSupportSetup(Loss loss, bool intercept) : loss(loss), intercept(intercept) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    const uint32_t support[] = {2, 5, 7, 11, 20};
    full = std::make_shared<SparseProblem>();
    full->cols = 25;
    compact.cols = 5;
    for (int r = 0; r < 30; ++r) {
      std::vector<std::pair<uint32_t, double>> entries, renumbered;
      for (uint32_t k = 0; k < 5; ++k) {
        const uint32_t j = r < 10 ? static_cast<uint32_t>(k * 5 + 1) : support[k];
        if (r >= 10 && (r + k) % 3 == 0) continue;  // not every row has every feature
        const double v = value(rng);
        entries.emplace_back(j, v);
        renumbered.emplace_back(k, v);
      }
      const double label = IsClassification(loss) ? (r % 3 == 0 ? -1.0 : 1.0) : value(rng);
      full->AddRow(entries, label);
      if (r >= 10) compact.AddRow(renumbered, label);
    }
    spec.loss = loss;
    spec.intercept = intercept;
    spec.rows = 30;
    spec.cols = 25;
  }

  Dataset Shard() const {
    Dataset all;
    all.matrix = full->View();
    all.labels = full->labels;
    all.storage = full;
    return all.Rows(10, 30);
  }
  // The same rows with their features numbered 0..4, as a dense-form problem of 5 features.
  Dataset CompactShard() const {
    Dataset data;
    data.matrix = compact.View();
    data.labels = compact.labels;
    return data;
  }

  Loss loss;
  bool intercept;
  std::shared_ptr<SparseProblem> full;
  SparseProblem compact;
  ProblemSpec spec;
};

TEST(ShardWorkerTest, TheGeneralFormWorksOnTheSupportAsADenseWorkerOnTheCompactProblem) {
  for (const Loss& loss : kAllLosses) {
    for (bool intercept : {false, true}) {
      SCOPED_TRACE(Label(loss, intercept, LocalSolver::kNewtonCg));
      const SparseSupportSetup s(loss, intercept);
      WorkerOptions general;
      general.general_form = true;
      ShardWorker worker(4, s.Shard(), s.spec, general);
      ProblemSpec compact_spec = s.spec;
      compact_spec.cols = 5;
      ShardWorker reference(4, s.CompactShard(), compact_spec, WorkerOptions{});

      const WorkerReady ready = worker.Ready(0);
      ASSERT_NE(ready.support, nullptr);
      std::vector<uint32_t> expected = {2, 5, 7, 11, 20};
      if (intercept) expected.push_back(25);
      EXPECT_EQ(*ready.support, expected);
      EXPECT_EQ(worker.local_size(), expected.size());
      EXPECT_EQ(ready.curvature_trace, reference.Ready(0).curvature_trace);

      // Rounds with the whole z (in-process) and with z on the support (over the wire) give
      // the reference's replies exactly.
      ShardWorker wire(4, s.Shard(), s.spec, general);
      std::mt19937_64 rng(5);
      std::normal_distribution<double> normal(0.0, 0.5);
      for (int64_t round = 0; round < 3; ++round) {
        std::vector<double> z(s.spec.model_size());
        for (double& v : z) v = normal(rng);
        std::vector<double> z_local;
        for (const uint32_t j : expected) z_local.push_back(z[j]);
        const WorkerReply got = worker.Serve(Request(round, z, 0.5, 1.5));
        const WorkerReply over_wire = wire.Serve(Request(round, z_local, 0.5, 1.5));
        const WorkerReply want = reference.Serve(Request(round, z_local, 0.5, 1.5));
        ASSERT_EQ(got.status, ReplyStatus::kOk) << got.error;
        ASSERT_EQ(over_wire.status, ReplyStatus::kOk) << over_wire.error;
        EXPECT_EQ(got.w.ToVector(), want.w.ToVector()) << "round " << round;
        EXPECT_EQ(over_wire.w.ToVector(), want.w.ToVector()) << "round " << round;
        EXPECT_EQ(got.scalars.loss_at_z, want.scalars.loss_at_z);
        EXPECT_EQ(got.scalars.primal_squared, want.scalars.primal_squared);
        EXPECT_EQ(got.scalars.u_squared, want.scalars.u_squared);
      }
      // A z of neither size is refused.
      const WorkerReply wrong = worker.Serve(Request(3, std::vector<double>(3, 0.0), 0.5, 1.5));
      EXPECT_EQ(wrong.status, ReplyStatus::kFailed);
    }
  }
}

// A shard numbered in a space of 2^31 - 1 features (as a store written before data were
// renumbered holds it): the worker's vectors and its bookkeeping follow the 3 features its
// rows touch, with nothing sized by the space.
TEST(ShardWorkerTest, TheGeneralFormSizesAShardOfAHugeSpaceByItsSupport) {
  struct Arrays {
    std::vector<int64_t> row_ptr = {0, 2, 4};
    std::vector<uint32_t> col_idx = {5, 2147483646, 5, 70000};
    std::vector<double> values = {1.0, 2.0, -1.0, 0.5};
    std::vector<double> labels = {1.0, -1.0};
  };
  auto arrays = std::make_shared<Arrays>();
  Dataset shard;
  shard.matrix = {2, 2147483647, arrays->row_ptr.data(), arrays->col_idx.data(), arrays->values.data()};
  shard.labels = arrays->labels;
  shard.storage = arrays;
  ProblemSpec spec;
  spec.rows = 2;
  spec.cols = 2147483647;
  spec.intercept = true;
  const LocalShard local = MakeLocalShard(shard, spec, /*general_form=*/true);
  ASSERT_NE(local.support, nullptr);
  EXPECT_EQ(*local.support, (std::vector<uint32_t>{5, 70000, 2147483646, 2147483647}));  // and the intercept
  EXPECT_EQ(local.spec.cols, 3);
  EXPECT_EQ(local.model_size, 2147483648u);
  const CsrView& m = local.data.matrix;
  EXPECT_EQ(std::vector<uint32_t>(m.col_idx, m.col_idx + 4), (std::vector<uint32_t>{0, 2, 0, 1}));
  EXPECT_EQ(std::vector<double>(m.values, m.values + 4), arrays->values);
  WorkerOptions general;
  general.general_form = true;
  const ShardWorker worker(0, local, general);
  EXPECT_EQ(worker.local_size(), 4u);
}

}  // namespace
}  // namespace nimbus
