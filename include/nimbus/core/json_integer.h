// Integers from JSON documents nimbus did not necessarily write (a model, a manifest, a
// checkpoint, a Lambda event, a profile). nlohmann's get<int>() on a number written as 5.5 or
// 1e300 casts a double to the integer type, which is undefined behaviour beyond the type's
// range (the checkpoint fuzzer found it). JsonInteger<T> insists on an integer written as one,
// within T's range, and otherwise throws nlohmann's own exceptions, so that the readers'
// existing `catch (const Json::exception&)` turns it into a message naming the file.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

namespace nimbus {

template <typename T>
T JsonInteger(const nlohmann::json& value) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  using Json = nlohmann::json;
  if (!value.is_number_integer()) throw Json::type_error::create(302, "an integer is required", &value);
  bool fits = false;
  if (value.is_number_unsigned()) {
    fits = value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  } else {
    const int64_t v = value.get<int64_t>();
    if constexpr (std::is_signed_v<T>) {
      fits = v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    } else {
      fits = v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
  }
  if (!fits) throw Json::out_of_range::create(406, "the integer is out of range", &value);
  if (value.is_number_unsigned()) return static_cast<T>(value.get<uint64_t>());
  return static_cast<T>(value.get<int64_t>());
}

template <typename T>
std::vector<T> JsonIntegers(const nlohmann::json& array) {
  if (!array.is_array()) throw nlohmann::json::type_error::create(302, "an array is required", &array);
  std::vector<T> values;
  values.reserve(array.size());
  for (const nlohmann::json& item : array) values.push_back(JsonInteger<T>(item));
  return values;
}

}  // namespace nimbus
