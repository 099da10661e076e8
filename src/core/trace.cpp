#include "nimbus/core/trace.h"

#include <cerrno>

namespace nimbus {

Result<std::unique_ptr<JsonlTraceFile>> JsonlTraceFile::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return ErrnoError("cannot create trace file " + path, errno);
  return std::unique_ptr<JsonlTraceFile>(new JsonlTraceFile(path, file));
}

JsonlTraceFile::~JsonlTraceFile() { std::fclose(file_); }

void JsonlTraceFile::Write(std::string_view json_object) {
  if (!status_.ok()) return;
  if (std::fwrite(json_object.data(), 1, json_object.size(), file_) != json_object.size() ||
      std::fputc('\n', file_) == EOF || std::fflush(file_) != 0) {
    status_ = ErrnoError("cannot write trace file " + path_, errno);
  }
}

}  // namespace nimbus
