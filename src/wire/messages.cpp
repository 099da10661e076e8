#include "nimbus/wire/messages.h"

namespace nimbus {

const char* ReplyStatusName(ReplyStatus status) {
  switch (status) {
    case ReplyStatus::kOk: return "ok";
    case ReplyStatus::kFailed: return "failed";
    case ReplyStatus::kTimedOut: return "timed out";
  }
  return "unknown";
}

}  // namespace nimbus
