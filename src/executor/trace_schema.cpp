#include "nimbus/executor/trace_schema.h"

#include "nimbus/core/json_fields.h"

namespace nimbus {

template <typename Event>
static std::string Line(TraceEventKind kind, const Event& event) {
  return JsonText(FieldsToJson(event, OrderedJson{{"event", std::string(NameOf(kind))}}));
}

std::string TraceLine(const TraceSetup& setup) { return Line(TraceEventKind::kSetup, setup); }
std::string TraceLine(const TraceRound& round) { return Line(TraceEventKind::kRound, round); }
std::string TraceLine(const TraceWorkerEvent& event) { return Line(TraceEventKind::kWorker, event); }
std::string TraceLine(const Summary& summary) { return Line(TraceEventKind::kSummary, summary); }

}  // namespace nimbus
