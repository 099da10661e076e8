#include "nimbus/metrics/trace_reader.h"

#include <fstream>
#include <istream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nimbus/core/json_fields.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;

// One line's event into the trace; an error names `where` (origin:line).
Status ReadEvent(const Json& event, const std::string& where, Trace& trace, bool& have_setup) {
  const auto name = event.find("event");
  const std::string kind_name = name != event.end() && name->is_string() ? name->get<std::string>() : "";
  const Result<TraceEventKind> kind = ParseChoice<TraceEventKind>(kind_name);
  if (!kind.ok()) return InvalidArgument(where + ": unknown event '" + kind_name + "'");
  try {
    switch (*kind) {
      case TraceEventKind::kSetup:
        have_setup = true;
        static_cast<TraceSetup&>(trace) = FieldsFromJson<TraceSetup>(event);
        break;
      case TraceEventKind::kRound: trace.rounds.push_back(FieldsFromJson<TraceRound>(event)); break;
      case TraceEventKind::kWorker: trace.events.push_back(FieldsFromJson<TraceWorkerEvent>(event)); break;
      case TraceEventKind::kSummary: trace.summary = FieldsFromJson<Summary>(event); break;
    }
  } catch (const BadField& bad) {
    return InvalidArgument(where + ": " + kind_name + " event: field '" + bad.field + "' is " + bad.reason);
  }
  return Status::Ok();
}

Result<Trace> ReadTraceLines(std::istream& in, const std::string& origin) {
  Trace trace;
  std::string line;
  int number = 0;
  bool have_setup = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = origin + ":" + std::to_string(number);
    Json event;
    try {
      event = Json::parse(line);
    } catch (const Json::exception& error) {  // parse errors, and numbers out of range
      return InvalidArgument(where + ": not a JSON object: " + error.what());
    }
    if (!event.is_object()) return InvalidArgument(where + ": not a JSON object");
    NIMBUS_RETURN_IF_ERROR(ReadEvent(event, where, trace, have_setup));
  }
  if (number == 0) return InvalidArgument(origin + ":1: empty trace");
  if (!have_setup) return InvalidArgument(origin + ": no setup event: not a nimbus trace");
  return trace;
}

}  // namespace

Result<Trace> ReadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": no such trace file");
  return ReadTraceLines(in, path);
}

Result<Trace> ParseTrace(std::string_view text, const std::string& origin) {
  std::istringstream in{std::string(text)};
  return ReadTraceLines(in, origin);
}

}  // namespace nimbus
