#include "nimbus/columns/column_block.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include "nimbus/problem/problem.h"

namespace nimbus {
namespace {

// argmin_t gradient t + curvature t^2 / 2 + l1 |w + t|: the Newton step, soft-thresholded.
double CoordinateStep(double gradient, double curvature, double w, double l1) {
  if (gradient + l1 <= curvature * w) return -(gradient + l1) / curvature;
  if (gradient - l1 >= curvature * w) return -(gradient - l1) / curvature;
  return -w;
}

bool IsIntercept(const ColumnBlock& block, std::size_t j) { return j == block.end - block.begin; }

// sum_r a_r v_r over column j's entries (the intercept's: every row, with a = 1).
double ColumnDot(const ColumnBlock& block, std::size_t j, std::span<const double> v) {
  double sum = 0;
  if (IsIntercept(block, j)) {
    for (const double x : v) sum += x;
    return sum;
  }
  for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) sum += block.values[k] * v[block.row_idx[k]];
  return sum;
}

// sum_r a_r v_r and sum_r a_r^2 v_r over column j's entries.
std::pair<double, double> ColumnMoments(const ColumnBlock& block, std::size_t j, std::span<const double> v) {
  if (IsIntercept(block, j)) {
    const double sum = ColumnDot(block, j, v);
    return {sum, sum};
  }
  double first = 0, second = 0;
  for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) {
    const double av = block.values[k] * v[block.row_idx[k]];
    first += av;
    second += block.values[k] * av;
  }
  return {first, second};
}

// sum_r a_r h_r r_r over the block's entries [from, to) (of one column).
double DotOfEntries(const ColumnBlock& block, int64_t from, int64_t to, std::span<const double> h,
                    std::span<const double> r) {
  double sum = 0;
  for (int64_t k = from; k < to; ++k) sum += block.values[k] * h[block.row_idx[k]] * r[block.row_idx[k]];
  return sum;
}

// r += t a over the block's entries [from, to) (of one column).
void AddEntries(const ColumnBlock& block, int64_t from, int64_t to, double t, std::span<double> r) {
  for (int64_t k = from; k < to; ++k) r[block.row_idx[k]] += t * block.values[k];
}

// sum_r a_r h_r r_r over column j's entries: the change of the column's gradient that the
// block's steps so far have made.
double ColumnDot(const ColumnBlock& block, std::size_t j, std::span<const double> h, std::span<const double> r) {
  if (!IsIntercept(block, j)) return DotOfEntries(block, block.col_ptr[j], block.col_ptr[j + 1], h, r);
  double sum = 0;
  for (std::size_t row = 0; row < r.size(); ++row) sum += h[row] * r[row];
  return sum;
}

// r += t a_j.
void AddColumn(const ColumnBlock& block, std::size_t j, double t, std::span<double> r) {
  if (!IsIntercept(block, j)) return AddEntries(block, block.col_ptr[j], block.col_ptr[j + 1], t, r);
  for (double& x : r) x += t;
}

// The entries of column j.
int64_t ColumnEntries(const ColumnBlock& block, std::size_t j) {
  return IsIntercept(block, j) ? block.rows : block.col_ptr[j + 1] - block.col_ptr[j];
}

// Rows cut into `parts` runs of about equal entries: parts + 1 ascending row numbers from 0 to rows.
std::vector<int64_t> CutRows(const CsrView& matrix, int parts) {
  std::vector<int64_t> cuts{0};
  const int64_t total = matrix.nnz();
  int64_t row = 0;
  for (int p = 1; p < parts; ++p) {
    const int64_t due = matrix.row_ptr[0] + total / parts * p;
    while (row < matrix.rows && matrix.row_ptr[row] < due) ++row;
    cuts.push_back(row);
  }
  cuts.push_back(matrix.rows);
  return cuts;
}

// body(p) for p in [0, parts), each on a thread of its own but the first.
void OnParts(int parts, const std::function<void(int)>& body) {
  std::vector<std::thread> others;
  for (int p = 1; p < parts; ++p) others.emplace_back(body, p);
  body(0);
  for (std::thread& thread : others) thread.join();
}

}  // namespace

ColumnBlock ColumnBlock::Of(const CsrView& matrix, uint32_t begin, uint32_t end, bool intercept,
                            std::span<const uint32_t> position_of, int threads) {
  const auto position = [&](uint32_t j) { return position_of.empty() ? j : position_of[j]; };
  ColumnBlock block;
  block.begin = begin;
  block.end = end;
  block.rows = matrix.rows;
  block.intercept = intercept;
  const std::size_t cols = end - begin;
  // Each part of the rows counts its entries in each column, then writes them from where the
  // parts before it end: so each column's rows come out ascending, as one pass in order makes
  // them. Small matrices are not worth a thread.
  const int parts = matrix.nnz() < (int64_t{1} << 20) ? 1 : std::max(threads, 1);
  const std::vector<int64_t> row_cuts = CutRows(matrix, parts);
  std::vector<std::vector<int64_t>> next(static_cast<std::size_t>(parts), std::vector<int64_t>(cols, 0));
  OnParts(parts, [&](int p) {
    std::vector<int64_t>& counts = next[static_cast<std::size_t>(p)];
    for (int64_t r = row_cuts[p]; r < row_cuts[p + 1]; ++r) {
      for (int64_t k = matrix.row_ptr[r]; k < matrix.RowEnd(r); ++k) {
        const uint32_t j = position(matrix.col_idx[k]);
        if (j >= begin && j < end) ++counts[j - begin];
      }
    }
  });
  block.col_ptr.assign(cols + 1, 0);
  for (std::size_t j = 0; j < cols; ++j) {
    int64_t at = block.col_ptr[j];
    for (std::vector<int64_t>& counts : next) at += std::exchange(counts[j], at);  // count -> where it starts
    block.col_ptr[j + 1] = at;
  }
  block.row_idx.resize(static_cast<std::size_t>(block.col_ptr.back()));
  block.values.resize(static_cast<std::size_t>(block.col_ptr.back()));
  OnParts(parts, [&](int p) {
    std::vector<int64_t>& at = next[static_cast<std::size_t>(p)];
    for (int64_t r = row_cuts[p]; r < row_cuts[p + 1]; ++r) {
      for (int64_t k = matrix.row_ptr[r]; k < matrix.RowEnd(r); ++k) {
        const uint32_t j = position(matrix.col_idx[k]);
        if (j < begin || j >= end) continue;
        const int64_t to = at[j - begin]++;
        block.row_idx[to] = static_cast<uint32_t>(r);
        block.values[to] = matrix.Value(k);
      }
    }
  });
  return block;
}

ColumnBlock ColumnBlock::OnRows(const ColumnBlock& block, std::span<const uint32_t> new_row, int64_t rows) {
  ColumnBlock kept;
  kept.begin = block.begin;
  kept.end = block.end;
  kept.rows = rows;
  kept.intercept = block.intercept;
  kept.col_ptr.reserve(block.col_ptr.size());
  // Room for every entry, its pages touched only as the kept ones are written.
  kept.row_idx.reserve(block.row_idx.size());
  kept.values.reserve(block.values.size());
  for (std::size_t j = 0; j + 1 < block.col_ptr.size(); ++j) {
    for (int64_t k = block.col_ptr[j]; k < block.col_ptr[j + 1]; ++k) {
      const uint32_t row = new_row[block.row_idx[k]];
      if (row == kDroppedRow) continue;
      kept.row_idx.push_back(row);
      kept.values.push_back(block.values[k]);
    }
    kept.col_ptr.push_back(static_cast<int64_t>(kept.row_idx.size()));
  }
  return kept;
}

void AddBlockMargins(const ColumnBlock& block, std::span<const double> v, std::span<double> margins) {
  for (std::size_t j = 0; j < block.size(); ++j) {
    if (v[j] != 0) AddColumn(block, j, v[j], margins);
  }
}

std::vector<double> BlockLossGradient(const ColumnBlock& block, std::span<const double> row_gradient) {
  std::vector<double> gradient(block.size());
  for (std::size_t j = 0; j < block.size(); ++j) gradient[j] = ColumnDot(block, j, row_gradient);
  return gradient;
}

namespace {

// In a block of dense columns (kSidedBlockEntries or more a column on average: pixels, not
// words), a column of kSidedColumnEntries or more is read in two sides of the block's rows,
// below its middle row and from it, each side summed on its own and the two added: on two
// threads, a side each; on one, the same sums in the same order, so the steps are the same bits
// either way. A handshake between the threads costs about what 300 entries do, and a thread's
// reads of the other's side of the rows move cache lines between the cores: on sparse text
// (Debian packages, ~300 entries a column stepped) two sides took twice one's time, on
// Fashion-MNIST's pixels 0.68 of it.
constexpr int64_t kSidedBlockEntries = 4096;
constexpr int64_t kSidedColumnEntries = 256;

// A spinning thread's courtesy to the core it shares (x86's pause: some 40-140 cycles).
inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// The rows' second side of the sided columns, on a thread of its own (or, on one thread, in the
// caller's): each request applies the last sided step's second side to r, then sums the next
// sided column's second side. Between requests the thread waits (a spin, then a sleep), so the
// caller may read and write all of r once Sum has returned.
class SecondSide {
 public:
  SecondSide(const ColumnBlock& block, std::span<const double> h, std::span<double> r, bool on_thread)
      : block_(block), h_(h), r_(r) {
    if (on_thread) thread_ = std::thread([this] { Serve(); });
  }
  SecondSide(const SecondSide&) = delete;
  SecondSide& operator=(const SecondSide&) = delete;
  ~SecondSide() {
    if (!thread_.joinable()) return;
    stop_ = true;
    Post();
    thread_.join();
  }

  // r += t a over entries [from, to), applied with the next request (or by Settle).
  void Defer(int64_t from, int64_t to, double t) {
    if (pending_.t != 0) Settle();
    pending_ = {from, to, t};
  }
  // The deferred step applied here and now (the thread is idle between requests).
  void Settle() {
    AddEntries(block_, pending_.from, pending_.to, pending_.t, r_);
    pending_ = {};
  }
  // Begins sum_r a_r h_r r_r over entries [from, to) after the deferred step; Sum returns it.
  void Begin(int64_t from, int64_t to) {
    request_ = pending_;
    pending_ = {};
    sum_from_ = from;
    sum_to_ = to;
    if (thread_.joinable()) return Post();
    Serve(request_);
  }
  double Sum() {
    if (thread_.joinable()) AwaitChange(done_, posted_.load(std::memory_order_relaxed), caller_sleeping_);
    return sum_;
  }

 private:
  struct Range {
    int64_t from = 0, to = 0;
    double t = 0;
  };

  // Waits until `counter` reads `value`: a spin (the other side is usually a microsecond away),
  // then a sleep on it, `sleeping` raised so that Raise wakes it (a wake is a system call, too
  // dear for every column).
  static void AwaitChange(const std::atomic<uint32_t>& counter, uint32_t value, std::atomic<bool>& sleeping) {
    for (int spin = 0; spin < 1 << 14; ++spin) {  // about a millisecond
      if (counter.load(std::memory_order_acquire) == value) return;
      Pause();
    }
    sleeping.store(true);
    for (uint32_t seen; (seen = counter.load()) != value;) counter.wait(seen);
    sleeping.store(false);
  }
  // counter = value, and a wake where the other thread sleeps on it (both sequentially
  // consistent with AwaitChange's: it sees the value, or this sees it sleeping).
  static void Raise(std::atomic<uint32_t>& counter, uint32_t value, const std::atomic<bool>& sleeping) {
    counter.store(value);
    if (sleeping.load()) counter.notify_one();
  }
  void Post() { Raise(posted_, posted_.load(std::memory_order_relaxed) + 1, server_sleeping_); }
  void Serve(const Range& update) {
    AddEntries(block_, update.from, update.to, update.t, r_);
    sum_ = DotOfEntries(block_, sum_from_, sum_to_, h_, r_);
  }
  void Serve() {
    for (uint32_t served = 0;;) {
      AwaitChange(posted_, served + 1, server_sleeping_);
      ++served;
      if (stop_) return;
      Serve(request_);
      Raise(done_, served, caller_sleeping_);
    }
  }

  const ColumnBlock& block_;
  std::span<const double> h_;
  std::span<double> r_;
  Range pending_, request_;
  int64_t sum_from_ = 0, sum_to_ = 0;
  double sum_ = 0;
  bool stop_ = false;
  std::atomic<uint32_t> posted_{0}, done_{0};
  std::atomic<bool> server_sleeping_{false}, caller_sleeping_{false};
  std::thread thread_;
};

// Coordinate descent on a block's model q. Where the problem has an intercept b, weight j's
// coordinate moves along e_j - m_j e_b (the intercept following by -m_j its step), where
// m_j = sum_r h_r a_rj / sum_r h_r: column j centred under the rows' curvature, as glmnet centres
// its columns. Centred columns are orthogonal to the intercept in the model's metric, so the
// passes no longer trade between the weights and the intercept the offset that columns of one
// sign share (pixels, counts). Only the coordinates change; q and its minimum do not.
// A centred column's derivative, dq/ddelta_j - m_j dq/ddelta_b, is the same whatever the
// intercept's own steps (they change both terms by sigma t h.a_j): so a block without the
// intercept steps its columns as the intercept's block would, and the blocks' changes of the
// intercept add up to the centred direction's, the intercept's own steps taken once.
// r = A_B delta is kept as its columns' part r_c and the intercept's change delta_b (r = r_c +
// delta_b 1), with sum_r h_r r_c,r, so the intercept's steps cost no pass over the rows.
class BlockDescent {
 public:
  BlockDescent(const ColumnBlock& block, const RowDerivatives& at, std::span<const double> x_block,
               const BlockModelOptions& options, BlockStep& step, bool two_threads)
      : block_(block), at_(at), x_(x_block), options_(options), step_(step), coordinates_(block.size()),
        centred_(block.intercept || options.centred) {
    step.delta.assign(block.size(), 0.0);
    step.margin_change.assign(static_cast<std::size_t>(block.rows), 0.0);
    sided_ = block.nnz() >= kSidedBlockEntries * static_cast<int64_t>(std::max<std::size_t>(block.size(), 1));
    second_side_.emplace(block, at.second, step.margin_change, two_threads && sided_);
  }

  // F's gradient and curvature at x on the eligible coordinates, one pass over their columns;
  // returns those the passes visit: the intercept, weights not at zero, and weights at zero
  // whose gradient lies outside [-l1, l1].
  std::vector<uint32_t> Measure(std::span<const uint8_t> eligible) {
    std::vector<uint32_t> active;
    for (std::size_t j = 0; j < block_.size(); ++j) {
      if (!eligible.empty() && !eligible[j]) continue;  // held at zero, its column not read
      step_.entries_read += ColumnEntries(block_, j);
      Coordinate& c = coordinates_[j];
      c.loss_gradient = ColumnDot(block_, j, at_.first);
      std::tie(c.weight, c.squared) = ColumnMoments(block_, j, at_.second);
      const double gradient = c.loss_gradient + L2Of(j) * x_[j];
      const double v = MinimumNormSubgradient(x_[j], gradient, L1Of(j));
      step_.subgradient_squared += v * v;
      step_.subgradient_max = std::max(step_.subgradient_max, std::abs(v));
      if (IsIntercept(block_, j) || x_[j] != 0 || std::abs(gradient) > L1Of(j)) {
        active.push_back(static_cast<uint32_t>(j));
      }
    }
    MeasureIntercept();
    for (const uint32_t j : active) {
      Centre(j);
      FindSides(j);
    }
    step_.active = active.size();
    return active;
  }

  // A pass over `working`, dropping from it the coordinates newGLMNET's shrinking leaves out;
  // returns the largest of the model's subgradients met.
  double Pass(std::vector<uint32_t>& working, double last_largest) {
    double largest = 0;
    std::size_t kept = 0;
    for (const uint32_t j : working) {
      const double w = x_[j] + step_.delta[j];
      const double gradient = CentredGradient(j);
      // Shrinking: at zero, and inside [-l1, l1] by more than the last pass's largest
      // subgradient over the rows (liblinear's QP_Gmax_old / l).
      const double margin = last_largest / static_cast<double>(std::max<int64_t>(block_.rows, 1));
      if (w == 0 && !IsIntercept(block_, j) && std::abs(gradient) < L1Of(j) - margin) continue;
      working[kept++] = j;
      largest = std::max(largest, std::abs(MinimumNormSubgradient(w, gradient, L1Of(j))));
      const double t = CoordinateStep(gradient, coordinates_[j].curvature, w, L1Of(j));
      if (t != 0) Move(j, t);
    }
    working.resize(kept);
    ++step_.passes;
    return largest;
  }

  // The intercept's change into delta (its own block) or beside it (another centred one), and
  // r = A_B delta with it in every row.
  void Finish() {
    second_side_->Settle();
    for (std::size_t j = 0; j < block_.size(); ++j) {
      if (IsIntercept(block_, j) || step_.delta[j] == 0 || x_[j] + step_.delta[j] != 0) continue;
      if (step_.zero_margin_change.empty()) step_.zero_margin_change.assign(static_cast<std::size_t>(block_.rows), 0.0);
      AddColumn(block_, j, step_.delta[j], step_.zero_margin_change);
      step_.zero_intercept_change -= coordinates_[j].shift * step_.delta[j];
    }
    if (step_.zero_intercept_change != 0) {
      for (double& r : step_.zero_margin_change) r += step_.zero_intercept_change;
    }
    (block_.intercept ? step_.delta[Intercept()] : step_.intercept_change) = delta_b_;
    if (delta_b_ == 0) return;
    for (double& r : step_.margin_change) r += delta_b_;
  }

 private:
  struct Coordinate {
    double loss_gradient = 0;     // g_j at x
    double weight = 0, squared = 0;  // sum_r h_r a_rj and sum_r h_r a_rj^2
    double shift = 0;             // m_j (0 without an intercept)
    double curvature = 0;         // q's along the coordinate's direction
    int64_t second_side = -1;     // a sided column's first entry in the rows' second side (-1: not sided)
  };

  std::size_t Intercept() const { return block_.size() - 1; }
  double L1Of(std::size_t j) const { return IsIntercept(block_, j) ? 0.0 : options_.l1; }  // unregularized
  double L2Of(std::size_t j) const { return IsIntercept(block_, j) ? 0.0 : options_.l2; }

  // The intercept's loss gradient sum_r g_r and curvature sum_r h_r: its coordinate's, in its
  // own block; a pass over the rows' derivatives in another centred one.
  void MeasureIntercept() {
    if (block_.intercept) {
      intercept_gradient_ = coordinates_[Intercept()].loss_gradient;
      intercept_weight_ = coordinates_[Intercept()].weight;
    } else if (centred_) {
      for (const double g : at_.first) intercept_gradient_ += g;
      for (const double h : at_.second) intercept_weight_ += h;
    }
  }

  // m_j, and q's curvature along e_j - m_j e_b: sigma sum_r h_r (a_rj - m_j)^2 + l2 + mu (1 + m_j^2) + nu,
  // where sum_r h_r (a_rj - m_j)^2 = sum_r h_r a_rj^2 - m_j sum_r h_r a_rj.
  void Centre(std::size_t j) {
    Coordinate& c = coordinates_[j];
    const double total = intercept_weight_;  // sum_r h_r
    c.shift = centred_ && !IsIntercept(block_, j) && total > 0 ? c.weight / total : 0;
    c.curvature = options_.curvature_scale * std::max(c.squared - c.shift * c.weight, 0.0) + L2Of(j) +
                  options_.damping * (1 + c.shift * c.shift) + kBlockCurvatureFloor;
  }

  // A column of kSidedColumnEntries or more: where its entries in the rows' second side begin.
  void FindSides(std::size_t j) {
    if (!sided_ || IsIntercept(block_, j) || ColumnEntries(block_, j) < kSidedColumnEntries) return;
    const auto first = block_.row_idx.begin() + block_.col_ptr[j], last = block_.row_idx.begin() + block_.col_ptr[j + 1];
    const auto middle = static_cast<uint32_t>(block_.rows / 2);
    coordinates_[j].second_side = std::lower_bound(first, last, middle) - block_.row_idx.begin();
  }

  // (A_B^T H r)_j: a sided column's as its two sides' sums, the second side's on the other
  // thread (the last sided step's second side applied first); another column's whole.
  double ChangeOfGradient(std::size_t j) {
    const int64_t second = coordinates_[j].second_side;
    if (second < 0) {
      second_side_->Settle();
      return ColumnDot(block_, j, at_.second, step_.margin_change);
    }
    second_side_->Begin(second, block_.col_ptr[j + 1]);
    const double first = DotOfEntries(block_, block_.col_ptr[j], second, at_.second, step_.margin_change);
    return first + second_side_->Sum();
  }

  // r += t a_j: a sided column's second side left to the other thread's next request.
  void AddToChange(std::size_t j, double t) {
    const int64_t second = coordinates_[j].second_side;
    if (second < 0) return AddColumn(block_, j, t, step_.margin_change);
    AddEntries(block_, block_.col_ptr[j], second, t, step_.margin_change);
    second_side_->Defer(second, block_.col_ptr[j + 1], t);
  }

  // q's gradient on weight j at delta: g_j + sigma (A_B^T H r)_j + l2 w_j + mu delta_j.
  double ModelGradient(std::size_t j) {
    const Coordinate& c = coordinates_[j];
    const double hr = ChangeOfGradient(j);
    return c.loss_gradient + options_.curvature_scale * (hr + delta_b_ * c.weight) + L2Of(j) * (x_[j] + step_.delta[j]) +
           options_.damping * step_.delta[j];
  }

  // q's gradient on the intercept at delta: sum_r g_r + sigma sum_r h_r r_r + mu delta_b.
  double InterceptModelGradient() const {
    return intercept_gradient_ + options_.curvature_scale * (hr_sum_ + delta_b_ * intercept_weight_) +
           options_.damping * delta_b_;
  }

  // q's derivative along coordinate j's direction, e_j - m_j e_b.
  double CentredGradient(std::size_t j) {
    if (IsIntercept(block_, j)) return InterceptModelGradient();
    const double shift = coordinates_[j].shift;
    step_.entries_read += ColumnEntries(block_, j);
    return ModelGradient(j) - (shift != 0 ? shift * InterceptModelGradient() : 0.0);
  }

  // delta += t (e_j - m_j e_b), r_c along column j (the intercept's part in delta_b until Finish).
  void Move(std::size_t j, double t) {
    if (IsIntercept(block_, j)) {
      delta_b_ += t;
      return;
    }
    step_.delta[j] += t;
    step_.entries_read += ColumnEntries(block_, j);
    AddToChange(j, t);
    hr_sum_ += t * coordinates_[j].weight;
    delta_b_ -= coordinates_[j].shift * t;
  }

  const ColumnBlock& block_;
  const RowDerivatives& at_;
  std::span<const double> x_;
  const BlockModelOptions& options_;
  BlockStep& step_;
  std::vector<Coordinate> coordinates_;
  const bool centred_;  // the problem has an intercept: this block's columns move it
  double intercept_gradient_ = 0, intercept_weight_ = 0;  // sum_r g_r and sum_r h_r
  double delta_b_ = 0;  // the intercept's change
  double hr_sum_ = 0;   // sum_r h_r r_c,r
  bool sided_ = false;  // dense columns: read in two sides of the rows (kSidedBlockEntries)
  std::optional<SecondSide> second_side_;  // last: its thread ends before the rest goes
};

}  // namespace

BlockStep MinimizeBlockModel(const ColumnBlock& block, const RowDerivatives& at, std::span<const double> x_block,
                             const BlockModelOptions& options, std::span<const uint8_t> eligible, int threads) {
  BlockStep step;
  BlockDescent descent(block, at, x_block, options, step, threads >= 2);
  const std::vector<uint32_t> active = descent.Measure(eligible);
  const double tolerance = options.inner_ratio * step.subgradient_max;
  std::vector<uint32_t> working = active;
  double last_largest = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < options.max_passes; ++pass) {
    last_largest = descent.Pass(working, last_largest);
    if (last_largest > tolerance) continue;
    if (working.size() == active.size()) break;
    working = active;  // the shrunk ones checked once more before the passes end
    last_largest = std::numeric_limits<double>::infinity();
  }
  descent.Finish();
  return step;
}

}  // namespace nimbus
