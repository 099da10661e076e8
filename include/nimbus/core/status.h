// Status and Result<T>: errors as values. Every fallible call in nimbus returns one of these;
// exceptions are not used across module boundaries.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace nimbus {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad user input: a file, a flag, an option value
  kNotFound,            // a file, key or shard that does not exist
  kIoError,             // the operating system refused a read or write
  kDataLoss,            // a checksum or format check failed
  kFailedPrecondition,  // the call makes no sense in the current state
  kDeadlineExceeded,    // a wait ran past its deadline
  kUnavailable,         // a worker or service is gone
  kResourceExhausted,   // out of memory: an allocation or a mapping was refused
  kInternal,            // a bug: an invariant did not hold
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "ok".
  std::string ToString() const;

  // A copy with `context: ` put in front of the message, for errors passed up a layer.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status NotFound(std::string message) { return Status(StatusCode::kNotFound, std::move(message)); }
inline Status IoError(std::string message) { return Status(StatusCode::kIoError, std::move(message)); }
inline Status DataLoss(std::string message) { return Status(StatusCode::kDataLoss, std::move(message)); }
inline Status FailedPrecondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}
inline Status DeadlineExceeded(std::string message) {
  return Status(StatusCode::kDeadlineExceeded, std::move(message));
}
inline Status Unavailable(std::string message) { return Status(StatusCode::kUnavailable, std::move(message)); }
inline Status Internal(std::string message) { return Status(StatusCode::kInternal, std::move(message)); }
inline Status ResourceExhausted(std::string message) {
  return Status(StatusCode::kResourceExhausted, std::move(message));
}

// An IoError whose message ends with strerror(errno) of the failed call (ResourceExhausted
// for ENOMEM).
Status ErrnoError(const std::string& what, int error_number);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(state_).ok()) state_ = Status(StatusCode::kInternal, "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace nimbus

#define NIMBUS_CONCAT_INNER(a, b) a##b
#define NIMBUS_CONCAT(a, b) NIMBUS_CONCAT_INNER(a, b)

#define NIMBUS_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::nimbus::Status nimbus_status_ = (expr);     \
    if (!nimbus_status_.ok()) return nimbus_status_; \
  } while (0)

#define NIMBUS_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                 \
  if (!result.ok()) return result.status();             \
  lhs = std::move(result).value()

#define NIMBUS_ASSIGN_OR_RETURN(lhs, expr) \
  NIMBUS_ASSIGN_OR_RETURN_IMPL(NIMBUS_CONCAT(nimbus_result_, __LINE__), lhs, expr)
