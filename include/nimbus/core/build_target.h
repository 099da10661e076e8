// The instruction set a program's nimbus code was compiled for, recorded in the program.
//
// Code compiled with -march=native (or -march=x86-64-v3, -mavx2, ...) stops with an illegal
// instruction on a CPU without those instructions, such as a Lambda host unlike the build
// machine. Every translation unit that includes this header leaves an ELF note in the program
// it is linked into: owner "nimbus", type kBuildTargetNoteType, text such as "x86-64-v1" or
// "x86-64-v3, -march=native": the x86-64 psABI level its instructions need (from the
// compiler's own feature macros) and whether the build was tuned for the building machine
// (-DNIMBUS_NATIVE=ON). The CSR kernels include it, and so does nimbus/nimbus.h, so a program
// of one's own that serves workers records its own code's level too. `nimbus lambda package`
// reads the notes (ReadBuildTargets) and refuses a program that needs more than every Lambda
// host has; `readelf -p .note.nimbus.build_target PROGRAM` shows them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"

// The lowest x86-64 level that has every instruction-set extension the compiler may use here.
#if defined(__AVX512F__) || defined(__AVX512BW__) || defined(__AVX512CD__) || defined(__AVX512DQ__) || \
    defined(__AVX512VL__)
#define NIMBUS_X86_64_LEVEL "4"
#elif defined(__AVX__) || defined(__AVX2__) || defined(__FMA__) || defined(__BMI__) || defined(__BMI2__) || \
    defined(__LZCNT__) || defined(__MOVBE__) || defined(__F16C__)
#define NIMBUS_X86_64_LEVEL "3"
#elif defined(__SSE3__) || defined(__SSSE3__) || defined(__SSE4_1__) || defined(__SSE4_2__) || defined(__POPCNT__) || \
    defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
#define NIMBUS_X86_64_LEVEL "2"
#else
#define NIMBUS_X86_64_LEVEL "1"
#endif
#ifdef NIMBUS_MARCH_NATIVE  // set by CMake with NIMBUS_NATIVE: -march=native has no macro of its own
#define NIMBUS_BUILD_TARGET_TEXT "x86-64-v" NIMBUS_X86_64_LEVEL ", -march=native"
#else
#define NIMBUS_BUILD_TARGET_TEXT "x86-64-v" NIMBUS_X86_64_LEVEL
#endif

#if defined(__x86_64__) && defined(__ELF__)
// The note itself: name size, description size, type, "nimbus", the text (each padded to 4 bytes).
asm(".pushsection .note.nimbus.build_target, \"a\", @note\n"
    ".balign 4\n"
    ".long 7\n"
    ".long 1002f - 1001f\n"
    ".long 1\n"
    ".asciz \"nimbus\"\n"
    ".balign 4\n"
    "1001: .asciz \"" NIMBUS_BUILD_TARGET_TEXT "\"\n"
    "1002: .balign 4\n"
    ".popsection\n");
#endif

namespace nimbus {

inline constexpr uint32_t kBuildTargetNoteType = 1;

struct BuildTarget {
  int x86_64_level = 0;  // 1 to 4: the x86-64 psABI level its instructions need
  bool native = false;   // -march=native: may also use what only the building CPU has

  // As the note writes it: "x86-64-v1", "x86-64-v3, -march=native".
  std::string ToString() const;
  static Result<BuildTarget> Parse(std::string_view text);
};

// What this library was compiled for.
BuildTarget CompiledBuildTarget();

// The build targets recorded in an ELF file's notes (the file's bytes), one per translation
// unit that recorded one (none for a program without nimbus). An error if it is not a 64-bit
// little-endian ELF file or its notes are malformed.
Result<std::vector<BuildTarget>> ReadBuildTargets(std::string_view elf_file);

}  // namespace nimbus
