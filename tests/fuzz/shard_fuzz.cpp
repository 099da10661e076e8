// The shard decoder on any bytes: a blob it accepts must be a well-formed dataset (its
// header, sizes, checksum and indices were checked), anything else a clean error. Half the
// inputs get their checksums made right first, so that the fuzzer also reaches the checks
// behind them (a mutated shard would otherwise stop at the checksum).
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_check.h"
#include "nimbus/data/shard.h"
#include "nimbus/data/store.h"

#include <xxhash.h>

namespace {

// The header's last two fields: the payload's checksum, then the header's own.
constexpr size_t kPayloadChecksumAt = nimbus::kShardHeaderBytes - 16;
constexpr size_t kHeaderChecksumAt = nimbus::kShardHeaderBytes - 8;

class BytesBlob final : public nimbus::Blob {
 public:
  BytesBlob(const uint8_t* data, size_t size, bool fix_checksums) {
    // 8-byte aligned, as a blob read from a file or the network is.
    words_.resize((size + 7) / 8);
    if (size > 0) std::memcpy(words_.data(), data, size);
    size_ = size;
    if (fix_checksums && size >= nimbus::kShardHeaderBytes) {
      auto* bytes = reinterpret_cast<unsigned char*>(words_.data());
      const uint64_t payload = XXH3_64bits(bytes + nimbus::kShardHeaderBytes, size - nimbus::kShardHeaderBytes);
      std::memcpy(bytes + kPayloadChecksumAt, &payload, 8);
      const uint64_t header = XXH3_64bits(bytes, kHeaderChecksumAt);
      std::memcpy(bytes + kHeaderChecksumAt, &header, 8);
    }
  }
  std::span<const std::byte> bytes() const override {
    return {reinterpret_cast<const std::byte*>(words_.data()), size_};
  }

 private:
  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const bool fix : {false, true}) {
    nimbus::Result<nimbus::Dataset> shard = nimbus::DecodeShard(std::make_shared<BytesBlob>(data, size, fix), "fuzz.bin");
    if (shard.ok()) nimbus::fuzz::CheckDataset(*shard);
  }
  return 0;
}
