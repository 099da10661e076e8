// A small streaming JSON writer for summaries, traces and model files. Doubles are written
// in their shortest round-trip form; NaN and infinities become null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nimbus {

class JsonWriter {
 public:
  explicit JsonWriter(int indent = 0) : indent_(indent) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& Value(double value);
  JsonWriter& Value(int64_t value);
  JsonWriter& Value(int value) { return Value(static_cast<int64_t>(value)); }
  JsonWriter& Value(uint64_t value);
  JsonWriter& Value(bool value);
  JsonWriter& Value(std::string_view value);
  JsonWriter& Value(const char* value) { return Value(std::string_view(value)); }
  JsonWriter& Null();
  // Inserts already formatted JSON text as the next value.
  JsonWriter& Raw(std::string_view json_text);
  template <typename T>
  JsonWriter& Field(std::string_view key, const T& value) {
    Key(key);
    return Value(value);
  }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  JsonWriter& EndScope(char close);
  void NewLine();
  int indent_;
  std::string out_;
  std::vector<bool> has_items_;  // per open scope
  bool after_key_ = false;
};

// Appends the shortest text that reads back as `value` ("null" if not finite).
void AppendJsonNumber(std::string& out, double value);
// Appends `value` as a quoted JSON string with escapes.
void AppendJsonString(std::string& out, std::string_view value);

}  // namespace nimbus
