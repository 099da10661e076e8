#include "nimbus/worker/fault_injection.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace nimbus {
namespace {

// A uniform draw in [0, 1) from the decision's coordinates (SplitMix64 finalizer).
double Draw(uint64_t seed, uint64_t salt, int worker, uint64_t invocation, int64_t round) {
  uint64_t z = seed ^ (salt * 0x9e3779b97f4a7c15ULL);
  for (const uint64_t part : {static_cast<uint64_t>(worker), invocation, static_cast<uint64_t>(round)}) {
    z += part * 0xbf58476d1ce4e5b9ULL + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
  }
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

bool FaultInjection::Crashes(int worker, uint64_t invocation, int64_t round) const {
  if (crash_worker >= 0 && worker != crash_worker) return false;
  if (crash_round >= 0) return round == crash_round && invocation == 0;  // the first invocation only
  return crash_probability > 0 && Draw(seed, 1, worker, invocation, round) < crash_probability;
}

double FaultInjection::DelaySeconds(int worker, uint64_t invocation, int64_t round) const {
  if (delay_ms <= 0 || (delay_worker >= 0 && worker != delay_worker)) return 0;
  return Draw(seed, 2, worker, invocation, round) < delay_probability ? delay_ms / 1000.0 : 0;
}

Status FaultInjection::Validate() const {
  if (!(crash_probability >= 0 && crash_probability < 1)) {
    return InvalidArgument("inject-crash: the probability must be in [0, 1), got " + std::to_string(crash_probability));
  }
  if (!(delay_ms >= 0) || !std::isfinite(delay_ms)) return InvalidArgument("inject-delay: milliseconds must be >= 0");
  if (!(slow_factor >= 1) || !std::isfinite(slow_factor)) {
    return InvalidArgument("inject-slow: the factor must be >= 1, got " + std::to_string(slow_factor));
  }
  if (!(delay_probability >= 0 && delay_probability <= 1)) {
    return InvalidArgument("inject-delay: the probability must be in [0, 1], got " + std::to_string(delay_probability));
  }
  return Status::Ok();
}

std::string EncodeFaults(const FaultInjection& f) {
  if (!f.active()) return "";
  char text[400];
  std::snprintf(text, sizeof text, "%.17g %.17g %.17g %d %d %lld %d %.17g %llu", f.crash_probability, f.delay_ms,
                f.delay_probability, f.delay_worker, f.crash_worker, static_cast<long long>(f.crash_round),
                f.slow_worker, f.slow_factor, static_cast<unsigned long long>(f.seed));
  return text;
}

Result<FaultInjection> DecodeFaults(std::string_view text) {
  FaultInjection f;
  if (text.empty()) return f;
  const auto next = [&text](auto* value) {
    const std::size_t space = std::min(text.find(' '), text.size());
    const bool ok = ParseNumber(text.substr(0, space), value);
    text.remove_prefix(std::min(space + 1, text.size()));
    return ok;
  };
  const bool parsed = next(&f.crash_probability) && next(&f.delay_ms) && next(&f.delay_probability) &&
                      next(&f.delay_worker) && next(&f.crash_worker) && next(&f.crash_round) && next(&f.slow_worker) &&
                      next(&f.slow_factor) && next(&f.seed) && text.empty();
  if (!parsed) return InvalidArgument("injected faults: not nine numbers");
  NIMBUS_RETURN_IF_ERROR(f.Validate());
  return f;
}

Status ParseDelaySpec(const std::string& text, FaultInjection* faults) {
  std::string_view rest = text;
  const auto at = rest.find('@');
  if (at != std::string_view::npos) {
    if (!ParseNumber(rest.substr(at + 1), &faults->delay_worker) || faults->delay_worker < 0) {
      return InvalidArgument("--inject-delay: bad worker in '" + text + "' (expected MS[:P][@WORKER])");
    }
    rest = rest.substr(0, at);
  }
  const auto colon = rest.find(':');
  if (colon != std::string_view::npos) {
    if (!ParseNumber(rest.substr(colon + 1), &faults->delay_probability)) {
      return InvalidArgument("--inject-delay: bad probability in '" + text + "' (expected MS[:P][@WORKER])");
    }
    rest = rest.substr(0, colon);
  }
  if (!ParseNumber(rest, &faults->delay_ms)) {
    return InvalidArgument("--inject-delay: bad milliseconds in '" + text + "' (expected MS[:P][@WORKER])");
  }
  return faults->Validate();
}

Status ParseCrashSpec(const std::string& text, FaultInjection* faults) {
  std::string_view rest = text;
  if (rest.starts_with('@')) {  // @WORKER:ROUND
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos || !ParseNumber(rest.substr(1, colon - 1), &faults->crash_worker) ||
        !ParseNumber(rest.substr(colon + 1), &faults->crash_round) || faults->crash_worker < 0 ||
        faults->crash_round < 0) {
      return InvalidArgument("--inject-crash: bad '" + text + "' (expected P[@WORKER] or @WORKER:ROUND)");
    }
    return faults->Validate();
  }
  const auto at = rest.find('@');
  if (at != std::string_view::npos) {
    if (!ParseNumber(rest.substr(at + 1), &faults->crash_worker) || faults->crash_worker < 0) {
      return InvalidArgument("--inject-crash: bad worker in '" + text + "' (expected P[@WORKER] or @WORKER:ROUND)");
    }
    rest = rest.substr(0, at);
  }
  if (!ParseNumber(rest, &faults->crash_probability)) {
    return InvalidArgument("--inject-crash: bad probability in '" + text + "' (expected P[@WORKER] or @WORKER:ROUND)");
  }
  return faults->Validate();
}

Status ParseSlowSpec(const std::string& text, FaultInjection* faults) {
  const auto at = text.find('@');
  if (at == std::string::npos || !ParseNumber(std::string_view(text).substr(0, at), &faults->slow_factor) ||
      !ParseNumber(std::string_view(text).substr(at + 1), &faults->slow_worker) || faults->slow_worker < 0) {
    return InvalidArgument("--inject-slow: bad '" + text + "' (expected FACTOR@WORKER, e.g. 5@0)");
  }
  return faults->Validate();
}

}  // namespace nimbus
