// Plain structs as JSON objects through one list of their fields, so that the end that writes a
// document and the end that reads it back cannot disagree on a key. The list is a function
// template found by argument-dependent lookup, `Fields(Self& s, Field&& field)` calling
// field("key", s.member) for each field in the order they are written (Self is the struct, or
// the struct const for the writer; executor/trace_schema.h has the trace's). Fields may be
// bool, integers, double, std::string, an enum with a ChoiceNames table (written by its name),
// std::optional of a number or text (not known: not written) and std::vector of structs with
// Fields of their own (an array of objects, which a document must have, even empty). Reading
// is strict: a field must be what its member is (an integer within its type's range:
// JsonInteger) or BadField names it ("shards[2].rows"); absent or null, it leaves the default.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "nimbus/choices.h"
#include "nimbus/core/json_integer.h"
#include "nimbus/core/json_text.h"

namespace nimbus {

// A field that is not what it must be, or a list that is missing.
struct BadField {
  std::string field;   // "rows", "shards[2].rows"
  std::string reason;  // "not an integer", ...
};

namespace json_fields {
template <typename T, template <typename...> class Of>
inline constexpr bool kIs = false;  // T is an Of<...>: kIs<T, std::vector>
template <template <typename...> class Of, typename... Args>
inline constexpr bool kIs<Of<Args...>, Of> = true;
template <typename T>
concept Named = requires { ChoiceNames<T>::names; };
}  // namespace json_fields

template <typename T>
T FieldsFromJson(const nlohmann::json& object, const std::string& where = "");

// `value`'s fields after those `object` begins with (a trace line's "event").
template <typename T>
OrderedJson FieldsToJson(const T& value, OrderedJson object = OrderedJson::object()) {
  Fields(value, [&object](const char* key, const auto& member) {
    using M = std::remove_cvref_t<decltype(member)>;
    if constexpr (json_fields::kIs<M, std::vector>) {
      OrderedJson& items = object[key] = OrderedJson::array();
      for (const auto& item : member) items.push_back(FieldsToJson(item));
    } else if constexpr (json_fields::kIs<M, std::optional>) {
      if (member) object[key] = *member;
    } else if constexpr (json_fields::Named<M>) {
      object[key] = std::string(NameOf(member));
    } else {
      object[key] = member;
    }
  });
  return object;
}

// `json` (neither absent nor null) into `value`; `name` for errors.
template <typename T>
void ReadJsonField(const nlohmann::json& json, const std::string& name, T& value) {
  if constexpr (json_fields::kIs<T, std::optional>) {
    ReadJsonField(json, name, value.emplace());
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!json.is_boolean()) throw BadField{name, "not true or false"};
    value = json.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    try {
      value = JsonInteger<T>(json);  // casting a double such as 1e300 would be undefined behaviour
    } catch (const nlohmann::json::exception&) {
      throw BadField{name, json.is_number_integer() ? "an integer out of range" : "not an integer"};
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!json.is_number()) throw BadField{name, "not a number"};
    value = json.get<T>();
  } else if constexpr (std::is_same_v<T, std::string> || json_fields::Named<T>) {
    if (!json.is_string()) throw BadField{name, "not a string"};
    if constexpr (json_fields::Named<T>) {
      const Result<T> named = ParseChoice<T>(json.get<std::string>());
      if (!named.ok()) throw BadField{name, "not " + ChoiceList<T>()};
      value = *named;
    } else {
      value = json.get<std::string>();
    }
  } else {
    static_assert(json_fields::kIs<T, std::vector>, "a field of a type JSON fields do not hold");
    if (!json.is_array()) throw BadField{name, "not an array"};
    value.clear();
    for (std::size_t i = 0; i < json.size(); ++i) {
      value.push_back(FieldsFromJson<typename T::value_type>(json[i], name + "[" + std::to_string(i) + "]"));
    }
  }
}

// T from `object`, whose place (for errors) is `where` ("shards[2]"; empty at the top).
template <typename T>
T FieldsFromJson(const nlohmann::json& object, const std::string& where) {
  if (!object.is_object()) throw BadField{where, "not an object"};
  const std::string prefix = where.empty() ? where : where + ".";
  T value;
  Fields(value, [&](const char* key, auto& member) {
    constexpr bool kList = json_fields::kIs<std::remove_cvref_t<decltype(member)>, std::vector>;
    const auto it = object.find(key);
    if (it == object.end() && kList) throw BadField{prefix + key, "missing"};
    if (it != object.end() && (kList || !it->is_null())) ReadJsonField(*it, prefix + key, member);
  });
  return value;
}

}  // namespace nimbus
