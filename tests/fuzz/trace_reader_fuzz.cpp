// The trace reader on any text (`nimbus report` reads traces it may not have written): an
// accepted trace holds no more events than the text has lines, and the report's breakdown
// of each of its rounds adds up to the round; anything else is a clean error naming the
// trace, and the line wherever there is one. UBSan catches a count cast from a double beyond
// its type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "nimbus/metrics/analysis.h"
#include "nimbus/metrics/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string origin = "fuzz/trace.jsonl";
  nimbus::Result<nimbus::Trace> trace = nimbus::ParseTrace(text, origin);
  if (!trace.ok()) {
    FUZZ_CHECK(trace.status().message().rfind(origin + ":", 0) == 0);
    return 0;
  }
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  // One setup at least, each round, worker event and summary on a line of its own.
  FUZZ_CHECK(1 + trace->rounds.size() + trace->events.size() <= lines);
  for (const nimbus::RoundBreakdown& r : nimbus::BreakdownRounds(*trace)) {
    FUZZ_CHECK(r.master >= 0 && r.compute >= 0 && r.communication >= 0 && r.waiting >= 0);
    if (!std::isfinite(r.wall)) continue;  // two huge times overflow their sum
    const double parts = r.master + r.compute + r.communication + r.waiting;
    FUZZ_CHECK(std::abs(parts - r.wall) <= 1e-9 * r.wall + 1e-300);
  }
  return 0;
}
