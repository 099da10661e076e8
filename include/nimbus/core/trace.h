// Trace sinks: where per-round events go (the metrics module reads them back). The JSONL sink
// writes one JSON object per line, flushed per event, so a trace survives a crash of the run
// that wrote it.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "nimbus/core/status.h"

namespace nimbus {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // One event: a complete JSON object, without a trailing newline.
  virtual void Write(std::string_view json_object) = 0;
};

class JsonlTraceFile final : public TraceSink {
 public:
  static Result<std::unique_ptr<JsonlTraceFile>> Open(const std::string& path);
  ~JsonlTraceFile() override;
  void Write(std::string_view json_object) override;
  // The first write error, if any.
  Status status() const { return status_; }

 private:
  JsonlTraceFile(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  std::string path_;
  std::FILE* file_;
  Status status_;
};

}  // namespace nimbus
