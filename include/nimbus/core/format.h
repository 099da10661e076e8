// printf-style formatting into a std::string, for reports, tables and messages.
#pragma once

#include <cstdio>
#include <string>

namespace nimbus {

template <typename... Args>
std::string Format(const char* format, Args... args) {
  const int size = std::snprintf(nullptr, 0, format, args...);
  if (size <= 0) return {};
  std::string text(static_cast<std::size_t>(size), '\0');
  std::snprintf(text.data(), text.size() + 1, format, args...);
  return text;
}

}  // namespace nimbus
