// Checkpoint files: every double back bit for bit, and anything cut short, damaged or of
// another format refused with the file's name.
#include "nimbus/checkpoint/checkpoint.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;

Checkpoint Sample() {
  Checkpoint c;
  MasterState& s = c.state;
  s.next_round = 12;
  s.z = std::vector<double>{0.1, -2.5e-300, 3e300, 0.0, -0.0, 1.0 / 3.0};
  s.z_last = std::vector<double>{1, 2, 3, 4, 5, std::nextafter(1.0, 2.0)};
  s.rho = 0.123456789012345678;
  s.rho_of_previous_round = 0.2;
  s.dual_residual = 1e-7;
  s.inner_tolerance = 3e-9;
  s.inner_relative = 1e-3;
  s.lean = true;
  s.previous_round_lean = true;
  s.rho_last = 0.2;
  s.rho_previous = 0.4;
  s.alpha = 1.6;
  s.initial_rho = 0.8;
  s.rho_updates = 3;
  s.lean_rounds = 11;
  s.solve_seconds = 12.5;
  s.objective = 0.693;
  s.workers.push_back({100, 1000, std::vector<double>{1.5, -2.5}, std::vector<double>{0.5, 0.25}});
  s.workers.push_back({101, 990, std::vector<double>{std::numeric_limits<double>::denorm_min(), 7}, {}});  // one answer
  c.arguments = {"--data", "train.svm", "--l1", "1e-5", "--runtime", "process"};
  c.working_directory = "/home/user/runs";
  return c;
}

void ExpectSame(const Checkpoint& a, const Checkpoint& b) {
  const MasterState& x = a.state;
  const MasterState& y = b.state;
  EXPECT_EQ(x.algorithm, y.algorithm);
  EXPECT_EQ(x.iterations, y.iterations);
  EXPECT_EQ(x.next_round, y.next_round);
  // Compared as bits: -0.0 and denormals must come back as they were.
  auto bits = [](const SharedVector& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  };
  EXPECT_EQ(bits(x.z), bits(y.z));
  EXPECT_EQ(bits(x.z_last), bits(y.z_last));
  EXPECT_EQ(bits(x.margins), bits(y.margins));
  EXPECT_EQ(bits(x.margin_step), bits(y.margin_step));
  for (const auto& [p, q] : {std::pair{x.rho, y.rho}, {x.rho_of_previous_round, y.rho_of_previous_round},
                             {x.dual_residual, y.dual_residual}, {x.inner_tolerance, y.inner_tolerance},
                             {x.inner_relative, y.inner_relative}, {x.rho_last, y.rho_last},
                             {x.rho_previous, y.rho_previous}, {x.alpha, y.alpha}, {x.initial_rho, y.initial_rho},
                             {x.solve_seconds, y.solve_seconds}, {x.objective, y.objective}, {x.radius, y.radius},
                             {x.gradient_reference, y.gradient_reference},
                             {x.curvature_scale, y.curvature_scale}, {x.damping, y.damping}}) {
    EXPECT_EQ(p, q);
  }
  EXPECT_EQ(x.lean, y.lean);
  EXPECT_EQ(x.previous_round_lean, y.previous_round_lean);
  EXPECT_EQ(x.rho_updates, y.rho_updates);
  EXPECT_EQ(x.lean_rounds, y.lean_rounds);
  ASSERT_EQ(x.workers.size(), y.workers.size());
  for (std::size_t i = 0; i < x.workers.size(); ++i) {
    EXPECT_EQ(x.workers[i].rows, y.workers[i].rows);
    EXPECT_EQ(x.workers[i].nnz, y.workers[i].nnz);
    EXPECT_EQ(bits(x.workers[i].w_last), bits(y.workers[i].w_last));
    EXPECT_EQ(bits(x.workers[i].w_previous), bits(y.workers[i].w_previous));
  }
  EXPECT_EQ(a.arguments, b.arguments);
  EXPECT_EQ(a.working_directory, b.working_directory);
}

TEST(Checkpoint, EveryValueComesBackBitForBit) {
  const Checkpoint sample = Sample();
  Result<Checkpoint> decoded = DecodeCheckpoint(EncodeCheckpoint(sample), "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ExpectSame(sample, *decoded);
}

// The checkpoint file `bytes` with `from` in its metadata replaced by `to`, and its length and
// checksum made right: what a damaged or foreign file that still passes the checksum holds.
std::string WithMetadataChanged(const std::string& bytes, const std::string& from, const std::string& to) {
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + 16, sizeof length);
  std::string changed = bytes.substr(24, length);
  EXPECT_NE(changed.find(from), std::string::npos) << changed;
  if (changed.find(from) == std::string::npos) return bytes;
  changed.replace(changed.find(from), from.size(), to);
  std::string file = bytes.substr(0, 16);
  const uint64_t changed_length = changed.size();
  file.append(reinterpret_cast<const char*>(&changed_length), 8);
  file += changed;
  file += bytes.substr(24 + length, bytes.size() - 24 - length - 8);
  const uint64_t checksum = XXH3_64bits(file.data(), file.size());
  file.append(reinterpret_cast<const char*>(&checksum), 8);
  return file;
}

// A Newton run's state: the iterate, the trust region, the steps made and the stop test's
// scale; no vectors of the workers.
TEST(Checkpoint, ANewtonStateComesBackAndIsChecked) {
  Checkpoint newton;
  MasterState& s = newton.state;
  s.algorithm = Algorithm::kNewton;
  s.radius = 0.7071067811865476;
  s.iterations = 4;
  s.gradient_reference = 0.3333333333333333;
  s.next_round = 37;
  s.z = std::vector<double>{0.5, -0.0, 1e-310};
  s.z_last = s.z;
  s.workers.push_back({100, 1000, {}, {}});
  s.objective = 0.25;
  Result<Checkpoint> decoded = DecodeCheckpoint(EncodeCheckpoint(newton), "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ExpectSame(newton, *decoded);
  for (auto [field, value] : std::vector<std::pair<std::string, double>>{
           {"iterations", 0}, {"radius", -1}, {"gradient_reference", 0}}) {
    Checkpoint bad = newton;
    if (field == "iterations") bad.state.iterations = static_cast<int64_t>(value);
    if (field == "radius") bad.state.radius = value;
    if (field == "gradient_reference") bad.state.gradient_reference = value;
    EXPECT_FALSE(DecodeCheckpoint(EncodeCheckpoint(bad), "c").ok()) << field;
  }
  for (const std::string unknown : {"sgd", "auto"}) {
    Result<Checkpoint> refused = DecodeCheckpoint(
        WithMetadataChanged(EncodeCheckpoint(newton), "\"algorithm\":\"newton\"", "\"algorithm\":\"" + unknown + "\""),
        "c");
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("unknown algorithm '" + unknown + "'"), std::string::npos)
        << refused.status().ToString();
  }
}

// The column method's state: x and its last step, its iterations, the stop test's scale and
// its blocks' models' adaptation; no workers. A file from before these fields reads them as a
// fresh run's (curvature scale 1, no damping).
TEST(Checkpoint, AColumnMethodsStateComesBackAndIsChecked) {
  Checkpoint columns;
  MasterState& s = columns.state;
  s.algorithm = Algorithm::kColumns;
  s.iterations = s.next_round = 6;
  s.gradient_reference = 0.125;
  s.curvature_scale = 2;
  s.damping = 1.5e-5;
  s.z = std::vector<double>{0.5, -0.0, 1e-310};
  s.z_last = std::vector<double>{-0.25, 0.0, 3.0};
  s.margins = std::vector<double>{1.5, -0.0, 2.5, 5e-324};  // four rows
  s.margin_step = std::vector<double>{0.25, 0.5, -0.0, 1.0};
  s.objective = 0.5;
  Result<Checkpoint> decoded = DecodeCheckpoint(EncodeCheckpoint(columns), "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ExpectSame(columns, *decoded);
  for (const std::string field : {"iterations", "gradient_reference", "curvature_scale", "damping", "workers"}) {
    Checkpoint bad = columns;
    if (field == "iterations") bad.state.iterations = 0;
    if (field == "gradient_reference") bad.state.gradient_reference = 0;
    if (field == "curvature_scale") bad.state.curvature_scale = 0.5;
    if (field == "damping") bad.state.damping = -1;
    if (field == "workers") bad.state.workers.push_back({100, 1000, {}, {}});
    EXPECT_FALSE(DecodeCheckpoint(EncodeCheckpoint(bad), "c").ok()) << field;
  }
  const std::string older = WithMetadataChanged(
      WithMetadataChanged(EncodeCheckpoint(columns), "\"curvature_scale\":2.0,", ""), "\"damping\":1.5e-05,", "");
  Result<Checkpoint> before = DecodeCheckpoint(older, "c");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(before->state.curvature_scale, 1.0);
  EXPECT_EQ(before->state.damping, 0.0);
  // Written before the margins were kept: none come back (a resumed run makes them anew).
  Checkpoint without = columns;
  without.state.margins = without.state.margin_step = SharedVector();
  const std::string oldest = WithMetadataChanged(
      WithMetadataChanged(EncodeCheckpoint(without), "\"margin_step_size\":0,", ""), "\"margins_size\":0,", "");
  ASSERT_EQ(oldest.find("margin"), std::string::npos);
  Result<Checkpoint> oldest_decoded = DecodeCheckpoint(oldest, "c");
  ASSERT_TRUE(oldest_decoded.ok()) << oldest_decoded.status().ToString();
  ExpectSame(without, *oldest_decoded);
  // Margins the metadata does not count are bytes beyond the vectors.
  const std::string uncounted = WithMetadataChanged(EncodeCheckpoint(columns), "\"margins_size\":4,", "");
  EXPECT_FALSE(DecodeCheckpoint(uncounted, "c").ok());
}

TEST(Checkpoint, ACutOrDamagedFileIsRefusedWithItsName) {
  const std::string bytes = EncodeCheckpoint(Sample());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    Result<Checkpoint> cut = DecodeCheckpoint(std::string_view(bytes).substr(0, size), "dir/checkpoint.nimbus");
    ASSERT_FALSE(cut.ok()) << size;
    EXPECT_EQ(cut.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(cut.status().message().find("dir/checkpoint.nimbus: not a usable checkpoint"), std::string::npos);
  }
  for (std::size_t at = 0; at < bytes.size(); at += 7) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    EXPECT_FALSE(DecodeCheckpoint(damaged, "c").ok()) << at;
  }
  std::string other_version = bytes;
  other_version[8] = 2;
  EXPECT_NE(DecodeCheckpoint(other_version, "c").status().message().find("format version 2"), std::string::npos);
}

// Found by fuzz_checkpoint: a count written as a double beyond any integer ("next_round":
// 7777...74) was cast to an integer, which is undefined. Counts must be integers in range.
TEST(Checkpoint, CountsThatAreNotIntegersInRangeAreRefused) {
  const std::string bytes = EncodeCheckpoint(Sample());
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"next_round\":12", "\"next_round\":1e300"},
                                 {"\"next_round\":12", "\"next_round\":18446744073709551615"},
                                 {"\"model_size\":6", "\"model_size\":6.5"},
                                 {"\"rows\":100", "\"rows\":-1e300"}}) {
    SCOPED_TRACE(to);
    Result<Checkpoint> refused = DecodeCheckpoint(WithMetadataChanged(bytes, from, to), "dir/checkpoint.nimbus");
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("dir/checkpoint.nimbus: not a usable checkpoint: bad metadata"),
              std::string::npos)
        << refused.status().ToString();
  }
}

TEST(Checkpoint, AStoreHoldsTheNewestAndNothingElse) {
  TempDir dir;
  DirectoryStore store(dir.path());
  EXPECT_EQ(ReadCheckpoint(store).status().code(), StatusCode::kNotFound);
  Checkpoint first = Sample();
  ASSERT_TRUE(WriteCheckpoint(store, first).ok());
  Checkpoint second = Sample();
  second.state.next_round = 20;
  ASSERT_TRUE(WriteCheckpoint(store, second).ok());
  Result<Checkpoint> read = ReadCheckpoint(store);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ExpectSame(second, *read);
  EXPECT_EQ(testing::ListDirectory(dir.path()), std::vector<std::string>{kCheckpointKey});  // no temporaries

  // (A write that fails for a full disk, leaving the previous checkpoint: the e2e tests.)
}

}  // namespace
}  // namespace nimbus
