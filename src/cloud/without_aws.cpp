// The cloud module of a build without AWS (NIMBUS_WITH_AWS=OFF): stores are directories only.
#include "nimbus/cloud/s3.h"

namespace nimbus {

Result<std::unique_ptr<Store>> OpenAnyStore(const std::string& uri, bool create) {
  if (uri.rfind("s3://", 0) == 0) {
    return InvalidArgument(uri + ": this build of nimbus has no S3 support (it was built with NIMBUS_WITH_AWS=OFF)");
  }
  return OpenStore(uri, create);
}

}  // namespace nimbus
