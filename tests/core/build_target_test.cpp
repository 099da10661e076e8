#include "nimbus/core/build_target.h"

#include <gtest/gtest.h>

#include <cstring>

#include "nimbus/core/file_io.h"

namespace nimbus {
namespace {

template <typename T>
void Put(std::string* bytes, std::size_t at, T value) {
  std::memcpy(bytes->data() + at, &value, sizeof value);
}

// One ELF note: sizes, type, name and text, each padded to 4 bytes.
std::string Note(const std::string& name, const std::string& text, uint32_t type = kBuildTargetNoteType) {
  std::string note(12, '\0');
  Put<uint32_t>(&note, 0, static_cast<uint32_t>(name.size() + 1));
  Put<uint32_t>(&note, 4, static_cast<uint32_t>(text.size() + 1));
  Put<uint32_t>(&note, 8, type);
  for (const std::string& field : {name, text}) {
    note += field;
    note += '\0';
    note.resize((note.size() + 3) / 4 * 4, '\0');
  }
  return note;
}

// The smallest ELF file with one note section: the header, the notes, and two section headers
// (the null one and the notes').
std::string ElfWithNotes(const std::string& notes) {
  std::string elf(64, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;  // 64-bit
  elf[5] = 1;  // little-endian
  elf[6] = 1;  // version
  const uint64_t notes_at = elf.size();
  elf += notes;
  elf.resize((elf.size() + 7) / 8 * 8, '\0');
  const uint64_t headers_at = elf.size();
  elf.resize(elf.size() + 128, '\0');
  Put<uint32_t>(&elf, headers_at + 64 + 4, 7);  // SHT_NOTE
  Put<uint64_t>(&elf, headers_at + 64 + 0x18, notes_at);
  Put<uint64_t>(&elf, headers_at + 64 + 0x20, notes.size());
  Put<uint64_t>(&elf, headers_at + 64 + 0x30, 4);
  Put<uint64_t>(&elf, 0x28, headers_at);
  Put<uint16_t>(&elf, 0x3A, 64);
  Put<uint16_t>(&elf, 0x3C, 2);
  return elf;
}

TEST(BuildTarget, ThisProgramRecordsWhatItsKernelsWereCompiledFor) {
  const BuildTarget compiled = CompiledBuildTarget();
  EXPECT_GE(compiled.x86_64_level, 1);
  EXPECT_LE(compiled.x86_64_level, 4);
  Result<std::string> self = ReadFileToString("/proc/self/exe");
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  Result<std::vector<BuildTarget>> targets = ReadBuildTargets(*self);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  ASSERT_FALSE(targets->empty());  // the CSR kernels' note and this file's
  for (const BuildTarget& target : *targets) EXPECT_EQ(target.ToString(), compiled.ToString());
}

TEST(BuildTarget, ParseReadsWhatToStringWrites) {
  for (int level = 1; level <= 4; ++level) {
    for (bool native : {false, true}) {
      const BuildTarget target{level, native};
      Result<BuildTarget> parsed = BuildTarget::Parse(target.ToString());
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      EXPECT_EQ(parsed->x86_64_level, level);
      EXPECT_EQ(parsed->native, native);
    }
  }
  EXPECT_EQ((BuildTarget{3, true}).ToString(), "x86-64-v3, -march=native");
  for (const char* bad : {"", "x86-64-v", "x86-64-v5", "x86-64-v0", "x86-64-v12", "aarch64", "x86-64-v3 -march=native"}) {
    Result<BuildTarget> parsed = BuildTarget::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("not a nimbus build target"), std::string::npos);
  }
}

TEST(BuildTarget, ReadsTheNimbusNotesAndSkipsOthers) {
  Result<std::vector<BuildTarget>> targets = ReadBuildTargets(ElfWithNotes(
      Note("GNU", "abc", 3) + Note("nimbus", "x86-64-v3, -march=native") + Note("nimbus", "x86-64-v1", 2) +
      Note("nimbus", "x86-64-v1")));
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  ASSERT_EQ(targets->size(), 2u);
  EXPECT_EQ((*targets)[0].x86_64_level, 3);
  EXPECT_TRUE((*targets)[0].native);
  EXPECT_EQ((*targets)[1].x86_64_level, 1);
  EXPECT_FALSE((*targets)[1].native);

  Result<std::vector<BuildTarget>> none = ReadBuildTargets(ElfWithNotes(Note("GNU", "abc", 3)));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

TEST(BuildTarget, ReadingRefusesWhatIsNotAnElfFileOrIsCut) {
  for (const std::string& not_elf : {std::string(), "#!/bin/sh\nexec nimbus \"$@\"\n" + std::string(80, ' ')}) {
    Result<std::vector<BuildTarget>> targets = ReadBuildTargets(not_elf);
    ASSERT_FALSE(targets.ok());
    EXPECT_EQ(targets.status().message(), "not a 64-bit little-endian ELF file");
  }
  const std::string elf = ElfWithNotes(Note("nimbus", "x86-64-v2"));
  auto message_of = [](const std::string& bytes) {
    Result<std::vector<BuildTarget>> targets = ReadBuildTargets(bytes);
    return targets.ok() ? std::string("ok") : targets.status().message();
  };
  EXPECT_EQ(message_of(elf), "ok");
  EXPECT_EQ(message_of(elf.substr(0, elf.size() - 1)), "ELF section headers run past the file");

  std::string long_name = elf;
  Put<uint32_t>(&long_name, 64, 1u << 30);  // the note's name size
  EXPECT_EQ(message_of(long_name), "a note runs past its section");
  std::string short_section = elf;
  Put<uint64_t>(&short_section, short_section.size() - 64 + 0x20, 8);  // the section's size: part of a header
  EXPECT_EQ(message_of(short_section), "a note header runs past its section");
  std::string past_end = elf;
  Put<uint64_t>(&past_end, past_end.size() - 64 + 0x18, past_end.size());  // the section's offset
  EXPECT_EQ(message_of(past_end), "an ELF note section runs past the file");
  EXPECT_NE(message_of(ElfWithNotes(Note("nimbus", "x86-64-v7"))).find("not a nimbus build target: 'x86-64-v7'"),
            std::string::npos);
}

}  // namespace
}  // namespace nimbus
