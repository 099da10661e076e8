// Reading a run's trace (the JSONL that `nimbus train --trace` writes) back, for reports. Its
// events are the writers' structs (executor/trace_schema.h), read through the same fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/executor/summary.h"
#include "nimbus/executor/trace_schema.h"

namespace nimbus {

// The setup event's fields, then the events after it.
struct Trace : TraceSetup {
  std::vector<TraceRound> rounds;
  std::vector<TraceWorkerEvent> events;
  std::optional<Summary> summary;  // absent if the run did not finish
};

// Errors name the file and line, and the field when one is wrong (a count that is not an
// integer within its type's range, say).
Result<Trace> ReadTrace(const std::string& path);
// The same from text in memory; errors name `origin` as they would the file.
Result<Trace> ParseTrace(std::string_view text, const std::string& origin);

}  // namespace nimbus
