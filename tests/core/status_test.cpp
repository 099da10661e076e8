// Status, Result<T> and the error-propagation macros.
#include "nimbus/core/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace nimbus {
namespace {

TEST(StatusTest, DefaultIsOk) {
  const Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.message(), "");
  EXPECT_EQ(status.ToString(), "ok");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(StatusTest, FactoriesSetCodeAndMessage) {
  struct Case {
    Status status;
    StatusCode code;
    const char* name;
  };
  const std::vector<Case> cases = {
      {InvalidArgument("m"), StatusCode::kInvalidArgument, "invalid argument"},
      {NotFound("m"), StatusCode::kNotFound, "not found"},
      {IoError("m"), StatusCode::kIoError, "i/o error"},
      {DataLoss("m"), StatusCode::kDataLoss, "data loss"},
      {FailedPrecondition("m"), StatusCode::kFailedPrecondition, "failed precondition"},
      {DeadlineExceeded("m"), StatusCode::kDeadlineExceeded, "deadline exceeded"},
      {Unavailable("m"), StatusCode::kUnavailable, "unavailable"},
      {Internal("m"), StatusCode::kInternal, "internal error"},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(c.status.ok()) << c.name;
    EXPECT_EQ(c.status.code(), c.code) << c.name;
    EXPECT_EQ(c.status.message(), "m") << c.name;
    EXPECT_STREQ(StatusCodeName(c.code), c.name);
    EXPECT_EQ(c.status.ToString(), std::string(c.name) + ": m");
  }
  EXPECT_STREQ(StatusCodeName(StatusCode::kOk), "ok");
}

TEST(StatusTest, CodeNamesAreDistinct) {
  std::vector<std::string> names;
  for (int code = 0; code <= static_cast<int>(StatusCode::kInternal); ++code) {
    names.push_back(StatusCodeName(static_cast<StatusCode>(code)));
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
  }
}

TEST(StatusTest, WithContextPrefixesTheMessageAndKeepsTheCode) {
  const Status inner = NotFound("shard-00001.bin: no such file");
  const Status outer = inner.WithContext("loading worker 1");
  EXPECT_EQ(outer.code(), StatusCode::kNotFound);
  EXPECT_EQ(outer.message(), "loading worker 1: shard-00001.bin: no such file");
  EXPECT_EQ(inner.message(), "shard-00001.bin: no such file");  // the original is unchanged
  EXPECT_EQ(outer.WithContext("run").message(), "run: loading worker 1: shard-00001.bin: no such file");
}

TEST(StatusTest, WithContextOnOkStaysOk) {
  const Status ok = Status::Ok().WithContext("anything");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(StatusTest, ErrnoErrorAppendsTheSystemMessage) {
  const Status status = ErrnoError("cannot open /x", ENOENT);
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_EQ(status.message(), std::string("cannot open /x: ") + std::strerror(ENOENT));
}

TEST(ResultTest, HoldsAValue) {
  Result<int> result(42);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result.status().ok());
  EXPECT_EQ(result.value(), 42);
  EXPECT_EQ(*result, 42);
  *result = 43;
  EXPECT_EQ(result.value(), 43);
}

TEST(ResultTest, HoldsAnError) {
  Result<std::string> result(NotFound("gone"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(result.status().message(), "gone");
}

TEST(ResultTest, OkStatusBecomesAnInternalError) {
  Result<int> result(Status::Ok());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInternal);
}

TEST(ResultTest, ArrowAndMoveOut) {
  Result<std::string> result(std::string("abc"));
  EXPECT_EQ(result->size(), 3u);
  const Result<std::string>& const_ref = result;
  EXPECT_EQ(const_ref->front(), 'a');
  EXPECT_EQ(*const_ref, "abc");
  const std::string taken = std::move(result).value();
  EXPECT_EQ(taken, "abc");

  Result<std::unique_ptr<int>> pointer(std::make_unique<int>(5));
  std::unique_ptr<int> owned = std::move(pointer).value();
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(*owned, 5);
}

// Helpers exercising the macros.
Status FailIf(bool fail) { return fail ? InvalidArgument("failed") : Status::Ok(); }

Status Chain(bool fail_first, bool fail_second, int* steps) {
  NIMBUS_RETURN_IF_ERROR(FailIf(fail_first));
  ++*steps;
  NIMBUS_RETURN_IF_ERROR(FailIf(fail_second).WithContext("second"));
  ++*steps;
  return Status::Ok();
}

Result<int> Half(int n) {
  if (n % 2 != 0) return InvalidArgument(std::to_string(n) + " is odd");
  return n / 2;
}

Result<int> Quarter(int n) {
  NIMBUS_ASSIGN_OR_RETURN(const int half, Half(n));
  NIMBUS_ASSIGN_OR_RETURN(int quarter, Half(half));  // two uses in one function
  return quarter;
}

TEST(StatusMacrosTest, ReturnIfError) {
  int steps = 0;
  EXPECT_TRUE(Chain(false, false, &steps).ok());
  EXPECT_EQ(steps, 2);
  steps = 0;
  const Status first = Chain(true, false, &steps);
  EXPECT_EQ(first.message(), "failed");
  EXPECT_EQ(steps, 0);
  steps = 0;
  const Status second = Chain(false, true, &steps);
  EXPECT_EQ(second.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(second.message(), "second: failed");
  EXPECT_EQ(steps, 1);
}

TEST(StatusMacrosTest, AssignOrReturn) {
  Result<int> ok = Quarter(12);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  Result<int> first = Quarter(7);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().message(), "7 is odd");
  Result<int> second = Quarter(6);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "3 is odd");
}

}  // namespace
}  // namespace nimbus
