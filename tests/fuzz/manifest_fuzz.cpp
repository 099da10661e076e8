// The manifest parser on any text: an accepted manifest written back and parsed again must
// be the same manifest; anything else a clean error naming the manifest.
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "nimbus/data/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nimbus::Result<nimbus::Manifest> manifest = nimbus::ParseManifest(text, "fuzz/manifest.json");
  if (!manifest.ok()) {
    FUZZ_CHECK(manifest.status().message().find("fuzz/manifest.json") != std::string::npos);
    return 0;
  }
  const std::string written = nimbus::ManifestToJson(*manifest);
  nimbus::Result<nimbus::Manifest> again = nimbus::ParseManifest(written, "again");
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(nimbus::ManifestToJson(*again) == written);
  return 0;
}
