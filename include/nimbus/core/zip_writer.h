// A minimal ZIP archive writer (deflate, Unix file modes): enough for a Lambda deployment
// package. No ZIP64: archives and members stay below 4 GiB.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

class ZipWriter {
 public:
  // Adds a member; `mode` is its Unix permission bits (0755 for executables).
  Status Add(const std::string& name, std::string_view bytes, uint32_t mode = 0644);
  // The whole archive.
  std::string Finish();

 private:
  struct Member {
    std::string name;
    uint32_t crc = 0;
    uint32_t compressed = 0;
    uint32_t size = 0;
    uint32_t offset = 0;
    uint32_t mode = 0;
    uint16_t method = 0;
  };
  std::string data_;
  std::vector<Member> members_;
};

}  // namespace nimbus
