// JSON as nimbus writes it, with nlohmann's documents (the library it also reads with): fields
// in the order they were set (ordered_json), numbers in their shortest form that reads back
// exactly, NaN and infinities as null, and text that is not UTF-8 written with U+FFFD in place
// of its bad bytes rather than refused (a label or a path can hold anything).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nimbus {

using OrderedJson = nlohmann::ordered_json;

// `json` as one line (indent < 0) or indented.
inline std::string JsonText(const OrderedJson& json, int indent = -1) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, OrderedJson::error_handler_t::replace);
}

}  // namespace nimbus
