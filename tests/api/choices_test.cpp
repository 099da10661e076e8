// Choices as types: every name parses to its value and back, and a name that is none of them
// is refused naming the option and listing what it takes.
#include "nimbus/choices.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nimbus {
namespace {

template <typename Choice>
void ExpectEveryNameRoundTrips() {
  std::set<std::string_view> names;
  for (const auto& [value, name] : ChoiceNames<Choice>::names) {
    EXPECT_TRUE(names.insert(name).second) << "two values named " << name;
    Result<Choice> parsed = ParseChoice<Choice>(name);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*parsed, value);
    EXPECT_EQ(NameOf(value), name);
  }
}

TEST(Choices, EveryNameParsesToItsValueAndBack) {
  ExpectEveryNameRoundTrips<RuntimeKind>();
  ExpectEveryNameRoundTrips<Algorithm>();
  ExpectEveryNameRoundTrips<Topology>();
  ExpectEveryNameRoundTrips<ConsensusForm>();
  ExpectEveryNameRoundTrips<Multiclass>();
  ExpectEveryNameRoundTrips<MessagePrecision>();
  ExpectEveryNameRoundTrips<Penalty>();
}

TEST(Choices, AnUnknownNameIsRefusedNamingTheOptionAndTheChoices) {
  const struct {
    Status status;
    std::string message;
  } cases[] = {
      {ParseChoice<RuntimeKind>("cloud").status(), "--runtime: 'cloud' is not threads, process, command, lambda or mpi"},
      {ParseChoice<Topology>("ring").status(), "--topology: 'ring' is not star or allreduce"},
      {ParseChoice<Algorithm>("sgd").status(), "--algorithm: 'sgd' is not newton, admm, columns or auto"},
      {ParseChoice<Multiclass>("OVR").status(), "--multiclass: 'OVR' is not ovr, multinomial or auto"},
      {ParseChoice<ConsensusForm>("").status(), "--consensus: '' is not general or dense"},
      {ParseChoice<MessagePrecision>("float16").status(), "--message-precision: 'float16' is not float64 or float32"},
      {ParseChoice<Penalty>("l0").status(), "--penalty: 'l0' is not l1 or l2"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(c.status.message(), c.message);
  }
}

TEST(Choices, AListSaysOrOrAndBeforeTheLast) {
  EXPECT_EQ(ChoiceList<Penalty>(), "l1 or l2");
  EXPECT_EQ(ChoiceList<Algorithm>("and"), "newton, admm, columns and auto");
}

}  // namespace
}  // namespace nimbus
