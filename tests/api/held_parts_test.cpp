// TrainingData::HeldByWorkers: rows that stay with the processes serving them (a Dask worker's
// partitions), each part served by ServeWorker on a thread of this test as a Dask task would
// serve it, over real ZeroMQ sockets. The answers are checked against the same rows solved from
// the caller's arrays in one piece.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nimbus/data/libsvm_reader.h"
#include "nimbus/nimbus.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::HeartScalePath;

// heart_scale's rows as the caller's arrays.
struct Rows {
  std::vector<int64_t> row_ptr;
  std::vector<uint32_t> col_idx;
  std::vector<double> values, labels, weights;
  int64_t cols = 0;

  int64_t rows() const { return static_cast<int64_t>(labels.size()); }
  CsrView Matrix() const { return {rows(), cols, row_ptr.data(), col_idx.data(), values.data()}; }
  // Rows [begin, end) as a held part (its arrays are these, offsets and all).
  HeldPart Part(std::string key, int64_t begin, int64_t end) const {
    const CsrView matrix{end - begin, cols, row_ptr.data() + begin, col_idx.data(), values.data()};
    const auto from = static_cast<std::size_t>(begin), count = static_cast<std::size_t>(end - begin);
    return {std::move(key), matrix, std::span<const double>(labels).subspan(from, count),
            weights.empty() ? std::span<const double>() : std::span<const double>(weights).subspan(from, count)};
  }
};

Rows HeartScale() {
  Result<Dataset> data = ReadLibsvmFile(HeartScalePath(), LibsvmReadOptions{});
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  Rows rows;
  rows.row_ptr.assign(data->matrix.row_ptr, data->matrix.row_ptr + data->rows() + 1);
  rows.col_idx.assign(data->matrix.col_idx, data->matrix.col_idx + data->nnz());
  rows.values.assign(data->matrix.values, data->matrix.values + data->nnz());
  rows.labels.assign(data->labels.begin(), data->labels.end());
  rows.cols = data->cols();
  return rows;
}

// Serves each part on a thread of its own when the master starts its worker, as a Dask task
// runs ServeWorker where its partition is.
class PartServers {
 public:
  explicit PartServers(std::vector<HeldPart> parts) : parts_(std::move(parts)) {}
  ~PartServers() {
    for (std::thread& thread : threads_) thread.join();
  }

  Result<StartedWorker> Start(const WorkerStart& start) {
    if (start.worker < 0 || start.worker >= static_cast<int>(parts_.size())) {
      return InvalidArgument("no part for worker " + std::to_string(start.worker));
    }
    ++starts_;
    auto ended = std::make_shared<std::atomic<bool>>(false);
    threads_.emplace_back([this, start, ended] {
      const int code = ServeWorker(start.arguments, start.client_secret, parts_[static_cast<std::size_t>(start.worker)]);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        exit_codes_.push_back(code);
      }
      *ended = true;
    });
    return StartedWorker{[ended] { return ended->load(); }, nullptr};
  }

  int starts() const { return starts_; }
  std::vector<int> exit_codes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return exit_codes_;
  }

 private:
  std::vector<HeldPart> parts_;
  std::vector<std::thread> threads_;
  int starts_ = 0;
  std::mutex mutex_;
  std::vector<int> exit_codes_;
};

SolveOptions Options(double l1, double l2) {
  SolveOptions options;
  if (l1 > 0) options.l1 = l1;
  if (l2 > 0) options.l2 = l2;
  options.intercept = true;
  options.gradient_tolerance = 1e-9;
  return options;
}

// The same problem solved from held parts (3, of unequal sizes) and from the arrays in one
// piece: the same optimum, and every part's worker left when told to.
void ExpectHeldPartsSolveAsTheArraysDo(const Rows& rows, SolveOptions options) {
  const Result<SolveResult> whole = Solve(
      rows.weights.empty() ? TrainingData::Csr(rows.Matrix(), rows.labels)
                           : TrainingData::Csr(rows.Matrix(), rows.labels).WithSampleWeights(std::span<const double>(rows.weights)),
      options);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_TRUE(whole->summary.ok()) << whole->summary.message;

  Result<SolveResult> held = Status::Ok();
  {
    PartServers servers({rows.Part("p0", 0, 150), rows.Part("p1", 150, 170), rows.Part("p2", 170, rows.rows())});
    options.runtime.kind = RuntimeKind::kCommand;
    options.runtime.start_worker = [&servers](const WorkerStart& start) { return servers.Start(start); };
    held = Solve(TrainingData::HeldByWorkers({"p0", "p1", "p2"}), options);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    ASSERT_TRUE(held->summary.ok()) << held->summary.message;
    EXPECT_EQ(servers.starts(), 3);
    // The parts' threads end as their workers leave (the servers join them).
  }
  EXPECT_EQ(held->summary.workers, 3);
  EXPECT_EQ(held->summary.rows, rows.rows());
  EXPECT_NEAR(held->summary.objective, whole->summary.objective, 1e-8 * whole->summary.objective);
  const std::vector<double> a = held->model.WeightsFor(rows.cols), b = whole->model.WeightsFor(rows.cols);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 1e-5) << "weight " << j;
  EXPECT_NEAR(held->model.bias(0), whole->model.bias(0), 1e-5);
}

TEST(HeldParts, L1PartsOfUnequalSizesSolveAsTheArraysDo) {
  ExpectHeldPartsSolveAsTheArraysDo(HeartScale(), Options(0.01, 0));
}

TEST(HeldParts, L2PartsWithTheirOwnRowWeightsSolveAsTheArraysDo) {
  Rows rows = HeartScale();
  for (int64_t r = 0; r < rows.rows(); ++r) rows.weights.push_back(1.0 + static_cast<double>(r % 3));
  ExpectHeldPartsSolveAsTheArraysDo(rows, Options(0, 1e-3));
}

TEST(HeldParts, NeedWorkersStartedWhereThePartsAre) {
  const Rows rows = HeartScale();
  SolveOptions options = Options(0.01, 0);
  const Result<SolveResult> no_start = Solve(TrainingData::HeldByWorkers({"p0"}), options);
  ASSERT_FALSE(no_start.ok());
  EXPECT_NE(no_start.status().message().find("start_worker"), std::string::npos) << no_start.status().message();

  options.runtime.kind = RuntimeKind::kCommand;
  options.runtime.start_worker = [](const WorkerStart&) -> Result<StartedWorker> { return StartedWorker{}; };
  options.algorithm = Algorithm::kColumns;
  const Result<SolveResult> columns = Solve(TrainingData::HeldByWorkers({"p0"}), options);
  ASSERT_FALSE(columns.ok());
  EXPECT_NE(columns.status().message().find("columns"), std::string::npos) << columns.status().message();

  options.algorithm = Algorithm::kNewton;
  options.runtime.workers = 2;
  const Result<SolveResult> counted = Solve(TrainingData::HeldByWorkers({"p0"}), options);
  ASSERT_FALSE(counted.ok());
  EXPECT_NE(counted.status().message().find("held part"), std::string::npos) << counted.status().message();
}

}  // namespace
}  // namespace nimbus
