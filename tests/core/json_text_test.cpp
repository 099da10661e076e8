// JsonText: what nimbus's JSON looks like, checked against hand-written text: fields in the
// order set, numbers that read back exactly in their shortest form, NaN and infinities as
// null, escapes, and bytes that are not UTF-8 replaced instead of refused.
#include "nimbus/core/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace nimbus {
namespace {

TEST(JsonText, FieldsKeepTheOrderTheyWereSetIn) {
  OrderedJson json;
  json["zeta"] = 1;
  json["alpha"] = "a";
  json["mid"] = {{"b", true}, {"a", nullptr}};
  EXPECT_EQ(JsonText(json), R"({"zeta":1,"alpha":"a","mid":{"b":true,"a":null}})");
  EXPECT_EQ(JsonText(OrderedJson{{"k", 1}}, 1), "{\n \"k\": 1\n}");
}

TEST(JsonText, NumbersAreShortestAndReadBackExactly) {
  EXPECT_EQ(JsonText(OrderedJson::array({0.1, 1e-300, -2.5, 1e21, 100})), "[0.1,1e-300,-2.5,1e+21,100]");
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> exponent(-300, 300);
  for (int i = 0; i < 1000; ++i) {
    const double value = std::pow(10.0, exponent(random)) * (i % 2 ? -1 : 1);
    const std::string text = JsonText(OrderedJson(value));
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
  }
}

TEST(JsonText, NotFiniteIsNull) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(JsonText(OrderedJson::array({std::nan(""), inf, -inf})), "[null,null,null]");
}

TEST(JsonText, StringsAreEscapedAndBadBytesReplaced) {
  EXPECT_EQ(JsonText(OrderedJson("a\"b\\c\n\x01")), R"("a\"b\\c\n\u0001")");
  EXPECT_EQ(JsonText(OrderedJson("café")), "\"café\"");
  EXPECT_EQ(JsonText(OrderedJson(std::string("x\xff" "y"))), "\"x\xEF\xBF\xBDy\"");
}

}  // namespace
}  // namespace nimbus
