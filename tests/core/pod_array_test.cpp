// PodArray and MappedRegion: reservation, appends, zero-filled growth, shrinking, moves.
#include "nimbus/core/pod_array.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace nimbus {
namespace {

std::size_t PageSize() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

TEST(MappedRegionTest, ReserveRoundsUpToWholePages) {
  Result<MappedRegion> region = MappedRegion::Reserve(1);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  EXPECT_NE(region->data(), nullptr);
  EXPECT_EQ(region->bytes(), PageSize());

  Result<MappedRegion> larger = MappedRegion::Reserve(PageSize() + 1);
  ASSERT_TRUE(larger.ok());
  EXPECT_EQ(larger->bytes(), 2 * PageSize());
}

TEST(MappedRegionTest, ReserveZeroIsEmpty) {
  Result<MappedRegion> region = MappedRegion::Reserve(0);
  ASSERT_TRUE(region.ok());
  EXPECT_EQ(region->data(), nullptr);
  EXPECT_EQ(region->bytes(), 0u);
}

TEST(MappedRegionTest, FreshMemoryIsZeroAndWritable) {
  Result<MappedRegion> region = MappedRegion::Reserve(3 * PageSize());
  ASSERT_TRUE(region.ok());
  auto* bytes = static_cast<unsigned char*>(region->data());
  for (std::size_t i = 0; i < region->bytes(); i += 97) EXPECT_EQ(bytes[i], 0) << i;
  bytes[0] = 1;
  bytes[region->bytes() - 1] = 2;
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[region->bytes() - 1], 2);
}

TEST(MappedRegionTest, TruncateKeepsWholePagesAndContents) {
  Result<MappedRegion> region = MappedRegion::Reserve(4 * PageSize());
  ASSERT_TRUE(region.ok());
  auto* bytes = static_cast<unsigned char*>(region->data());
  bytes[10] = 42;
  region->Truncate(PageSize() + 5);  // rounds up to two pages
  EXPECT_EQ(region->bytes(), 2 * PageSize());
  EXPECT_EQ(region->data(), bytes);
  EXPECT_EQ(bytes[10], 42);
  region->Truncate(10 * PageSize());  // never grows
  EXPECT_EQ(region->bytes(), 2 * PageSize());
  region->Truncate(0);
  EXPECT_EQ(region->bytes(), 0u);
  EXPECT_EQ(region->data(), nullptr);
}

TEST(MappedRegionTest, MoveTransfersOwnership) {
  Result<MappedRegion> reserved = MappedRegion::Reserve(100);
  ASSERT_TRUE(reserved.ok());
  MappedRegion a = std::move(reserved).value();
  void* data = a.data();
  static_cast<char*>(data)[0] = 'x';
  MappedRegion b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(a.bytes(), 0u);
  MappedRegion c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(static_cast<char*>(c.data())[0], 'x');
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move)
}

TEST(PodArrayTest, DefaultIsEmpty) {
  PodArray<double> array;
  EXPECT_EQ(array.size(), 0u);
  EXPECT_EQ(array.capacity(), 0u);
  EXPECT_TRUE(array.full());
  EXPECT_TRUE(array.span().empty());
}

TEST(PodArrayTest, PushBackUntilFull) {
  Result<PodArray<int64_t>> reserved = PodArray<int64_t>::Reserve(1000);
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  PodArray<int64_t> array = std::move(reserved).value();
  EXPECT_EQ(array.capacity(), 1000u);
  EXPECT_EQ(array.size(), 0u);
  EXPECT_FALSE(array.full());
  for (int64_t i = 0; i < 1000; ++i) {
    ASSERT_FALSE(array.full());
    array.push_back(i * i - 7);
  }
  EXPECT_TRUE(array.full());
  EXPECT_EQ(array.size(), 1000u);
  for (std::size_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(array[i], static_cast<int64_t>(i * i) - 7);
  }
  const PodArray<int64_t>& const_array = array;
  EXPECT_EQ(const_array.span().size(), 1000u);
  EXPECT_EQ(const_array.span()[999], 999 * 999 - 7);
  EXPECT_EQ(const_array.data(), array.data());
}

// Appends through Ensure from an empty array: the mapping grows (and moves) many times, and
// every value written before a move is still there after it.
std::vector<int64_t> GrowAndRead(int64_t count, int64_t salt) {
  PodArray<int64_t> array;
  for (int64_t i = 0; i < count; ++i) {
    if (!array.Ensure(1).ok()) return {};
    array.push_back(i * salt);
  }
  return {array.span().begin(), array.span().end()};
}

TEST(PodArrayTest, EnsureGrowsKeepingContents) {
  const std::vector<int64_t> values = GrowAndRead(300000, 3);
  ASSERT_EQ(values.size(), 300000u);
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], static_cast<int64_t>(i) * 3) << i;
}

// Each thread grows arrays of its own, so that one's mapping moves onto addresses another's
// just left. Nothing is shared: under ThreadSanitizer this must report nothing (TSan does not
// see mremap; a move onto pages whose shadow still held another thread's writes was reported as
// a race, as split's parsing threads once were).
TEST(PodArrayTest, ArraysGrownOnSeveralThreadsAtOnce) {
  constexpr int kThreads = 4;
  std::vector<std::vector<int64_t>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &results] {
      for (int round = 0; round < 20; ++round) results[t] = GrowAndRead(20000 + 1000 * round, t + 1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(results[t].size(), 39000u);
    for (std::size_t i = 0; i < results[t].size(); ++i) ASSERT_EQ(results[t][i], static_cast<int64_t>(i) * (t + 1));
  }
}

// The memory in use grows with pages written (here, resident ones: no address-space limit).
TEST(MemoryInUseTest, GrowsWithPagesWritten) {
  const int64_t before = MemoryInUse();
  ASSERT_GT(before, 0);
  PodArray<char> array = PodArray<char>::Reserve(std::size_t{64} << 20).value();
  array.resize(std::size_t{64} << 20);
  std::memset(array.data(), 1, array.size());
  EXPECT_GE(MemoryInUse(), before + (int64_t{48} << 20));
}

TEST(PodArrayTest, HugeReservationCostsNoMemoryUntilWritten) {
  // 32 GiB of address space, more than a test machine's memory: only possible because pages
  // are not committed up front (MAP_NORESERVE).
  const std::size_t capacity = std::size_t{4} << 30;
  Result<PodArray<double>> reserved = PodArray<double>::Reserve(capacity);
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  PodArray<double> array = std::move(reserved).value();
  EXPECT_EQ(array.capacity(), capacity);
  for (int i = 0; i < 100; ++i) array.push_back(i + 0.5);
  array.ShrinkToFit();
  EXPECT_EQ(array.capacity(), 100u);
  EXPECT_TRUE(array.full());
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(array[i], static_cast<double>(i) + 0.5);
}

TEST(PodArrayTest, ResizeGrowsWithZeros) {
  Result<PodArray<double>> reserved = PodArray<double>::Reserve(50);
  ASSERT_TRUE(reserved.ok());
  PodArray<double> array = std::move(reserved).value();
  array.push_back(3.0);
  array.resize(40);
  EXPECT_EQ(array.size(), 40u);
  EXPECT_EQ(array[0], 3.0);
  for (std::size_t i = 1; i < 40; ++i) EXPECT_EQ(array[i], 0.0) << i;
}

// The header promises "new entries are zero" for resize(n): that must also hold for entries
// that were written, dropped by a smaller resize, and then brought back by a larger one.
TEST(PodArrayTest, ResizeAfterShrinkingGivesZeroNewEntries) {
  Result<PodArray<double>> reserved = PodArray<double>::Reserve(10);
  ASSERT_TRUE(reserved.ok());
  PodArray<double> array = std::move(reserved).value();
  for (int i = 1; i <= 5; ++i) array.push_back(i);
  array.resize(2);
  array.resize(5);
  EXPECT_EQ(array[0], 1.0);
  EXPECT_EQ(array[1], 2.0);
  for (std::size_t i = 2; i < 5; ++i) EXPECT_EQ(array[i], 0.0) << "entry " << i << " is not new-and-zero";
}

TEST(PodArrayTest, ShrinkToFitKeepsContents) {
  Result<PodArray<uint32_t>> reserved = PodArray<uint32_t>::Reserve(100000);
  ASSERT_TRUE(reserved.ok());
  PodArray<uint32_t> array = std::move(reserved).value();
  for (uint32_t i = 0; i < 3000; ++i) array.push_back(i * 3u);
  array.ShrinkToFit();
  EXPECT_EQ(array.size(), 3000u);
  EXPECT_EQ(array.capacity(), 3000u);
  EXPECT_TRUE(array.full());
  for (uint32_t i = 0; i < 3000; ++i) ASSERT_EQ(array[i], i * 3u);
}

TEST(PodArrayTest, ShrinkToFitOfEmptyArray) {
  Result<PodArray<double>> reserved = PodArray<double>::Reserve(100);
  ASSERT_TRUE(reserved.ok());
  PodArray<double> array = std::move(reserved).value();
  array.ShrinkToFit();
  EXPECT_EQ(array.size(), 0u);
  EXPECT_EQ(array.capacity(), 0u);
  EXPECT_TRUE(array.full());
  EXPECT_TRUE(array.span().empty());
}

TEST(PodArrayTest, MoveKeepsData) {
  Result<PodArray<double>> reserved = PodArray<double>::Reserve(8);
  ASSERT_TRUE(reserved.ok());
  PodArray<double> a = std::move(reserved).value();
  a.push_back(1.5);
  a.push_back(2.5);
  const double* data = a.data();
  PodArray<double> b = std::move(a);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.capacity(), 8u);
  EXPECT_EQ(b[1], 2.5);
  PodArray<double> c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c[0], 1.5);
}

TEST(PodArrayTest, WorksForStructs) {
  struct Pair {
    int32_t a;
    double b;
  };
  Result<PodArray<Pair>> reserved = PodArray<Pair>::Reserve(3);
  ASSERT_TRUE(reserved.ok());
  PodArray<Pair> array = std::move(reserved).value();
  array.push_back({1, 2.0});
  array.push_back({3, 4.0});
  EXPECT_EQ(array[1].a, 3);
  EXPECT_EQ(array[1].b, 4.0);
  EXPECT_EQ(array.span().size(), 2u);
}

}  // namespace
}  // namespace nimbus
