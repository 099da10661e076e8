#include "nimbus/core/build_target.h"

#include <cstring>

namespace nimbus {
namespace {

constexpr std::string_view kLevelPrefix = "x86-64-v";
constexpr std::string_view kNativeSuffix = ", -march=native";
constexpr std::string_view kNoteOwner = "nimbus";
constexpr uint32_t kSectionTypeNote = 7;  // SHT_NOTE

// Little-endian fields of an ELF file, read with bounds checks.
class ElfBytes {
 public:
  explicit ElfBytes(std::string_view bytes) : bytes_(bytes) {}
  bool Has(uint64_t offset, uint64_t size) const { return offset <= bytes_.size() && size <= bytes_.size() - offset; }
  template <typename T>
  T At(uint64_t offset) const {  // callers check Has(offset, sizeof(T)) first
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  std::string_view Slice(uint64_t offset, uint64_t size) const { return bytes_.substr(offset, size); }

 private:
  std::string_view bytes_;
};

uint64_t RoundUp(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// The nimbus notes of one SHT_NOTE section's contents. A note's text and the next note start at
// multiples of `alignment` (from the section's start, which is aligned).
Status ReadNotes(std::string_view section, uint64_t alignment, std::vector<BuildTarget>* targets) {
  const ElfBytes notes(section);
  uint64_t at = 0;
  while (at < section.size()) {
    if (!notes.Has(at, 12)) return DataLoss("a note header runs past its section");
    const uint64_t name_size = notes.At<uint32_t>(at);
    const uint64_t text_size = notes.At<uint32_t>(at + 4);
    const uint32_t type = notes.At<uint32_t>(at + 8);
    const uint64_t name_at = at + 12;
    const uint64_t text_at = RoundUp(name_at + name_size, alignment);
    if (!notes.Has(name_at, name_size) || !notes.Has(text_at, text_size)) return DataLoss("a note runs past its section");
    std::string_view name = notes.Slice(name_at, name_size);
    std::string_view text = notes.Slice(text_at, text_size);
    if (!name.empty() && name.back() == '\0') name.remove_suffix(1);
    if (!text.empty() && text.back() == '\0') text.remove_suffix(1);
    if (name == kNoteOwner && type == kBuildTargetNoteType) {
      Result<BuildTarget> target = BuildTarget::Parse(text);
      if (!target.ok()) return target.status();
      targets->push_back(*target);
    }
    at = RoundUp(text_at + text_size, alignment);
  }
  return Status::Ok();
}

}  // namespace

std::string BuildTarget::ToString() const {
  return std::string(kLevelPrefix) + std::to_string(x86_64_level) + (native ? std::string(kNativeSuffix) : "");
}

Result<BuildTarget> BuildTarget::Parse(std::string_view text) {
  BuildTarget target;
  std::string_view rest = text;
  if (rest.ends_with(kNativeSuffix)) {
    target.native = true;
    rest.remove_suffix(kNativeSuffix.size());
  }
  if (rest.size() != kLevelPrefix.size() + 1 || !rest.starts_with(kLevelPrefix) || rest.back() < '1' ||
      rest.back() > '4') {
    return DataLoss("not a nimbus build target: '" + std::string(text) + "' (expected x86-64-v1 to x86-64-v4)");
  }
  target.x86_64_level = rest.back() - '0';
  return target;
}

BuildTarget CompiledBuildTarget() {
  Result<BuildTarget> target = BuildTarget::Parse(NIMBUS_BUILD_TARGET_TEXT);
  return target.ok() ? *target : BuildTarget{};
}

Result<std::vector<BuildTarget>> ReadBuildTargets(std::string_view elf_file) {
  const ElfBytes elf(elf_file);
  // The ELF header: magic, 64-bit class, little-endian data; then e_shoff, e_shentsize, e_shnum.
  if (!elf.Has(0, 64) || elf_file.substr(0, 4) != "\x7f" "ELF" || elf_file[4] != 2 || elf_file[5] != 1) {
    return InvalidArgument("not a 64-bit little-endian ELF file");
  }
  const uint64_t sections_at = elf.At<uint64_t>(0x28);
  const uint64_t section_header_size = elf.At<uint16_t>(0x3A);
  const uint64_t section_count = elf.At<uint16_t>(0x3C);
  if (section_count > 0 && section_header_size < 64) return DataLoss("ELF section headers are too small");
  if (!elf.Has(sections_at, section_count * section_header_size)) return DataLoss("ELF section headers run past the file");
  std::vector<BuildTarget> targets;
  for (uint64_t i = 0; i < section_count; ++i) {
    const uint64_t header = sections_at + i * section_header_size;
    if (elf.At<uint32_t>(header + 4) != kSectionTypeNote) continue;
    const uint64_t offset = elf.At<uint64_t>(header + 0x18);
    const uint64_t size = elf.At<uint64_t>(header + 0x20);
    const uint64_t alignment = elf.At<uint64_t>(header + 0x30) == 8 ? 8 : 4;  // .note.gnu.property has 8
    if (!elf.Has(offset, size)) return DataLoss("an ELF note section runs past the file");
    if (Status read = ReadNotes(elf.Slice(offset, size), alignment, &targets); !read.ok()) return read;
  }
  return targets;
}

}  // namespace nimbus
