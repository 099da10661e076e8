// The test-only seam of the facade: faults injected into a solve's workers (crashes, delays,
// slow rounds; worker/fault_injection.h). Tests and the nimbus binary's --inject-* flags use
// it; it is not installed, and SolveOptions names it only by a forward declaration.
#pragma once

#include <memory>
#include <utility>

#include "nimbus/nimbus.h"
#include "nimbus/worker/fault_injection.h"

namespace nimbus {

struct TestHooks {
  FaultInjection faults;
};

// `options`' workers inject `faults`.
inline void InjectFaults(SolveOptions& options, FaultInjection faults) {
  options.test_hooks = std::make_shared<const TestHooks>(TestHooks{std::move(faults)});
}

}  // namespace nimbus
