// JsonWriter: escaping, nesting, commas, numbers in shortest round-trip form, NaN -> null,
// and the indented layout; all checked against hand-written JSON text.
#include "nimbus/core/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

namespace nimbus {
namespace {

std::string Number(double value) {
  std::string out;
  AppendJsonNumber(out, value);
  return out;
}

std::string Quoted(std::string_view value) {
  std::string out;
  AppendJsonString(out, value);
  return out;
}

TEST(AppendJsonStringTest, PlainText) {
  EXPECT_EQ(Quoted(""), "\"\"");
  EXPECT_EQ(Quoted("abc XYZ 123"), "\"abc XYZ 123\"");
  EXPECT_EQ(Quoted("/slash/ stays"), "\"/slash/ stays\"");
}

TEST(AppendJsonStringTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Quoted("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(Quoted("C:\\dir\\"), R"("C:\\dir\\")");
  EXPECT_EQ(Quoted("a\nb\rc\td"), R"("a\nb\rc\td")");
  EXPECT_EQ(Quoted("\b\f"), R"("\u0008\u000c")");
  EXPECT_EQ(Quoted("\x01\x1f"), R"("\u0001\u001f")");
  EXPECT_EQ(Quoted(std::string_view("a\0b", 3)), R"("a\u0000b")");
}

TEST(AppendJsonStringTest, PassesThroughNonAscii) {
  EXPECT_EQ(Quoted("caf\xc3\xa9 \xe2\x82\xac"), "\"caf\xc3\xa9 \xe2\x82\xac\"");
  EXPECT_EQ(Quoted("\x7f"), "\"\x7f\"");  // DEL needs no escape in JSON
}

TEST(AppendJsonStringTest, InvalidUtf8BecomesReplacementCharacters) {
  // JSON is UTF-8; a path or message may hold any bytes.
  EXPECT_EQ(Quoted("a\xff" "b"), R"("a\ufffdb")");
  EXPECT_EQ(Quoted("\xc3"), R"("\ufffd")");                   // truncated sequence
  EXPECT_EQ(Quoted("\xc0\xaf"), R"("\ufffd\ufffd")");          // overlong '/'
  EXPECT_EQ(Quoted("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // a UTF-16 surrogate
  EXPECT_EQ(Quoted("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");  // U+1F600 is kept
}

TEST(AppendJsonStringTest, AppendsToExistingText) {
  std::string out = "prefix:";
  AppendJsonString(out, "x");
  EXPECT_EQ(out, "prefix:\"x\"");
}

TEST(AppendJsonNumberTest, ShortestForms) {
  EXPECT_EQ(Number(0.0), "0");
  EXPECT_EQ(Number(1.0), "1");
  EXPECT_EQ(Number(-2.5), "-2.5");
  EXPECT_EQ(Number(0.1), "0.1");
  EXPECT_EQ(Number(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(Number(123456.789), "123456.789");
  EXPECT_EQ(Number(1e-7), "1e-07");
  EXPECT_EQ(Number(1e300), "1e+300");
  EXPECT_EQ(Number(5e-324), "5e-324");
}

TEST(AppendJsonNumberTest, NonFiniteIsNull) {
  EXPECT_EQ(Number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(Number(-std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(Number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(Number(-std::numeric_limits<double>::infinity()), "null");
}

// The shortest scientific text that reads back as `value`, from printf: the fewest digits
// that round-trip, found by trying each precision in turn.
std::string ShortestScientific(double value) {
  char text[64];
  for (int precision = 0; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*e", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

TEST(AppendJsonNumberTest, RandomValuesRoundTripInFewestCharacters) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 3000; ++i) {
    const double value = std::ldexp(mantissa(rng), i % 3 == 0 ? exponent(rng) : exponent(rng) / 10);
    const std::string text = Number(value);
    ASSERT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
    // Never longer than the shortest round-tripping scientific form (which to_chars may
    // trade for a fixed form of at most the same length).
    const std::string scientific = ShortestScientific(value);
    EXPECT_LE(text.size(), scientific.size()) << text << " is longer than " << scientific;
  }
}

TEST(AppendJsonNumberTest, DecimalFractionsUseFewestDigits) {
  // Values whose shortest form is known by construction: k / 10^p with few digits.
  for (int k = 1; k < 2000; k += 37) {
    for (int p = 0; p <= 6; ++p) {
      const std::string expected_digits = std::to_string(k);
      char written[64];
      std::snprintf(written, sizeof written, "%de-%d", k, p);
      const double value = std::strtod(written, nullptr);
      const std::string text = Number(value);
      ASSERT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
      std::string digits;
      for (char c : text) {
        if (c == 'e') break;
        if (c >= '0' && c <= '9' && !(digits.empty() && c == '0')) digits += c;
      }
      while (!digits.empty() && digits.back() == '0') digits.pop_back();
      std::string k_digits = expected_digits;
      while (!k_digits.empty() && k_digits.back() == '0') k_digits.pop_back();
      EXPECT_EQ(digits, k_digits) << written << " written as " << text;
    }
  }
}

TEST(JsonWriterTest, FlatObject) {
  JsonWriter w;
  w.BeginObject()
      .Field("name", "nimbus")
      .Field("rows", int64_t{270})
      .Field("ratio", 0.25)
      .Field("ok", true)
      .Field("count", uint64_t{7})
      .Field("small", -3)
      .EndObject();
  EXPECT_EQ(w.str(), R"({"name":"nimbus","rows":270,"ratio":0.25,"ok":true,"count":7,"small":-3})");
}

TEST(JsonWriterTest, NestedObjectsAndArrays) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a").Value(1);
  w.Key("b").BeginArray();
  w.Value(1).Value("x").Value(false).Null();
  w.BeginObject().EndObject();
  w.BeginArray().EndArray();
  w.BeginArray().Value(2.5).BeginArray().Value(3).EndArray().EndArray();
  w.EndArray();
  w.Key("c").BeginObject().Key("d").BeginObject().Key("e").Null().EndObject().EndObject();
  w.Key("f").Value(std::numeric_limits<double>::quiet_NaN());
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[1,"x",false,null,{},[],[2.5,[3]]],"c":{"d":{"e":null}},"f":null})");
}

TEST(JsonWriterTest, KeysAreEscaped) {
  JsonWriter w;
  w.BeginObject().Field("we\"ird\nkey", 1).EndObject();
  EXPECT_EQ(w.str(), R"({"we\"ird\nkey":1})");
}

TEST(JsonWriterTest, IntegerExtremes) {
  JsonWriter w;
  w.BeginArray()
      .Value(std::numeric_limits<int64_t>::min())
      .Value(std::numeric_limits<int64_t>::max())
      .Value(std::numeric_limits<uint64_t>::max())
      .Value(0)
      .EndArray();
  EXPECT_EQ(w.str(), "[-9223372036854775808,9223372036854775807,18446744073709551615,0]");
}

TEST(JsonWriterTest, RawValuesTakeTheirPlaceWithCommas) {
  JsonWriter w;
  w.BeginObject().Key("pre").Raw(R"({"x":[1,2]})").Key("arr").BeginArray().Raw("1").Raw("true").EndArray().EndObject();
  EXPECT_EQ(w.str(), R"({"pre":{"x":[1,2]},"arr":[1,true]})");
}

TEST(JsonWriterTest, TopLevelScalarsAndEmptyScopes) {
  JsonWriter a;
  a.Value(1.5);
  EXPECT_EQ(a.str(), "1.5");
  JsonWriter b;
  b.BeginObject().EndObject();
  EXPECT_EQ(b.str(), "{}");
  JsonWriter c(2);
  c.BeginArray().EndArray();
  EXPECT_EQ(c.str(), "[]");
  JsonWriter d;
  d.Value("text");
  EXPECT_EQ(d.str(), "\"text\"");
}

TEST(JsonWriterTest, IndentedLayout) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("a").Value(1);
  w.Key("b").BeginArray().Value(1).BeginObject().EndObject().BeginObject().Field("k", "v").EndObject().EndArray();
  w.Key("empty").BeginArray().EndArray();
  w.EndObject();
  const std::string expected =
      "{\n"
      "  \"a\": 1,\n"
      "  \"b\": [\n"
      "    1,\n"
      "    {},\n"
      "    {\n"
      "      \"k\": \"v\"\n"
      "    }\n"
      "  ],\n"
      "  \"empty\": []\n"
      "}";
  EXPECT_EQ(w.str(), expected);
}

TEST(JsonWriterTest, IndentWidthFour) {
  JsonWriter w(4);
  w.BeginArray().Value(1).Value(2).EndArray();
  EXPECT_EQ(w.str(), "[\n    1,\n    2\n]");
}

TEST(JsonWriterTest, TakeMovesTheText) {
  JsonWriter w;
  w.BeginArray().Value(1).EndArray();
  const std::string text = w.Take();
  EXPECT_EQ(text, "[1]");
}

}  // namespace
}  // namespace nimbus
