// Where the other nimbus executables are: next to the running one.
#pragma once

#include <string>

#include "nimbus/runtime/launcher.h"

namespace nimbus::cli {

inline std::string SiblingExecutable(const std::string& name) {
  const std::string self = CurrentExecutable();
  const auto slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + name;
}

}  // namespace nimbus::cli
