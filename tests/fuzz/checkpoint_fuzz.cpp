// The checkpoint decoder on any bytes (a checkpoint is read back from a disk or a bucket that
// may hold anything): an accepted checkpoint written again must decode to the same bytes once
// more; anything else a clean error naming the file. Half the inputs get their trailing
// checksum made right first, so that the fuzzer reaches the checks behind it.
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_check.h"
#include "nimbus/checkpoint/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const bool reseal : {false, true}) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    if (reseal && bytes.size() >= 8) {
      const uint64_t checksum = XXH3_64bits(bytes.data(), bytes.size() - 8);
      std::memcpy(bytes.data() + bytes.size() - 8, &checksum, 8);
    }
    nimbus::Result<nimbus::Checkpoint> checkpoint = nimbus::DecodeCheckpoint(bytes, "fuzz/checkpoint.nimbus");
    if (!checkpoint.ok()) {
      FUZZ_CHECK(checkpoint.status().message().find("fuzz/checkpoint.nimbus") != std::string::npos);
      continue;
    }
    FUZZ_CHECK(checkpoint->state.next_round >= 2);
    const std::string written = nimbus::EncodeCheckpoint(*checkpoint);
    nimbus::Result<nimbus::Checkpoint> again = nimbus::DecodeCheckpoint(written, "again");
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(nimbus::EncodeCheckpoint(*again) == written);
  }
  return 0;
}
