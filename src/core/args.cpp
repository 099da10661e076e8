#include "nimbus/core/args.h"

#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstdio>

namespace nimbus {
namespace {

std::string ShortDouble(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

ArgParser::ArgParser(std::string command, std::string usage, std::string about)
    : command_(std::move(command)), usage_(std::move(usage)), about_(std::move(about)) {}

void ArgParser::AddString(const std::string& name, const std::string& value_name, const std::string& help,
                          std::string* target) {
  options_.push_back({name, value_name, help, target, target->empty() ? "" : *target});
}

void ArgParser::AddInt(const std::string& name, const std::string& value_name, const std::string& help,
                       int64_t* target) {
  options_.push_back({name, value_name, help, target, std::to_string(*target)});
}

void ArgParser::AddDouble(const std::string& name, const std::string& value_name, const std::string& help,
                          double* target) {
  options_.push_back({name, value_name, help, target, ShortDouble(*target)});
}

void ArgParser::AddSwitch(const std::string& name, const std::string& help, bool* target) {
  options_.push_back({name, "", help, target, ""});
}

void ArgParser::Require(const std::string& name) {
  if (Option* option = Find(name)) {
    option->required = true;
    option->default_text.clear();
  }
}

void ArgParser::SetPositional(const std::string& name, const std::string& help, std::string* target) {
  positional_name_ = name;
  positional_help_ = help;
  positional_ = target;
}

ArgParser::Option* ArgParser::Find(const std::string& name) {
  for (Option& option : options_) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

Status ArgParser::Assign(Option& option, const std::string& value) {
  const std::string flag = "--" + option.name;
  if (auto* text = std::get_if<std::string*>(&option.target)) {
    if (value.empty()) return InvalidArgument(flag + ": needs a non-empty value");
    **text = value;
  } else if (auto* integer = std::get_if<int64_t*>(&option.target)) {
    int64_t parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size()) {
      return InvalidArgument(flag + ": '" + value + "' is not an integer");
    }
    **integer = parsed;
  } else if (auto* real = std::get_if<double*>(&option.target)) {
    const std::optional<double> parsed = ParseReal(value);
    if (!parsed || !std::isfinite(*parsed)) return InvalidArgument(flag + ": '" + value + "' is not a finite number");
    **real = *parsed;
  } else if (auto* set = std::get_if<ChoiceSetter>(&option.target)) {
    return (*set)(value);
  }
  return Status::Ok();
}

Status ArgParser::Parse(int argc, char** argv, int first) {
  const std::string see_help = " (see 'nimbus " + command_ + " --help')";
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_requested_ = true;
      return Status::Ok();
    }
    if (!arg.starts_with("--")) {
      if (positional_ == nullptr || given_.count("") > 0) return InvalidArgument("unexpected argument '" + arg + "'" + see_help);
      *positional_ = arg;
      given_.insert("");
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    Option* option = Find(name);
    if (option == nullptr) return InvalidArgument("unknown option --" + name + see_help);
    if (given_.count(name) > 0) return InvalidArgument("option --" + name + " given twice");
    given_.insert(name);
    if (auto* flag = std::get_if<bool*>(&option->target)) {
      if (has_value) return InvalidArgument("option --" + name + " takes no value");
      **flag = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) return InvalidArgument("option --" + name + " needs a value " + option->value_name);
      value = argv[++i];
    }
    NIMBUS_RETURN_IF_ERROR(Assign(*option, value));
  }
  if (positional_ != nullptr && given_.count("") == 0) {
    return InvalidArgument("missing " + positional_name_ + see_help);
  }
  for (const Option& option : options_) {
    if (option.required && given_.count(option.name) == 0) {
      return InvalidArgument("missing required option --" + option.name + see_help);
    }
  }
  return Status::Ok();
}

std::string ArgParser::Help() const {
  std::string out = "usage: nimbus " + command_ + " " + usage_ + "\n\n" + about_ + "\n\n";
  if (positional_ != nullptr) {
    std::string left = "  " + positional_name_;
    left.resize(std::max<std::size_t>(left.size() + 1, 28), ' ');
    out += "arguments:\n" + left + positional_help_ + "\n\n";
  }
  out += "options:\n";
  for (const Option& option : options_) {
    std::string left = "  --" + option.name + (option.value_name.empty() ? "" : " " + option.value_name);
    if (left.size() < 28) {
      left.resize(28, ' ');
    } else {
      left += "\n" + std::string(28, ' ');
    }
    out += left + option.help;
    if (option.required) {
      out += " (required)";
    } else if (!option.default_text.empty() && option.help.find("(default") == std::string::npos) {
      out += " (default " + option.default_text + ")";  // (unless the help tells its default itself)
    }
    out += "\n";
  }
  out += "  --help                    show this help\n";
  return out;
}

bool ParseOrExit(ArgParser& parser, int argc, char** argv, int* exit_code, int first) {
  const Status status = parser.Parse(argc, argv, first);
  if (!status.ok()) {
    std::fprintf(stderr, "nimbus %s: %s\n", parser.command().c_str(), status.message().c_str());
    *exit_code = kExitUsage;
    return false;
  }
  if (parser.help_requested()) {
    std::fputs(parser.Help().c_str(), stdout);
    *exit_code = kExitOk;
    return false;
  }
  return true;
}

int ReportError(const std::string& command, const Status& status) {
  std::fprintf(stderr, "nimbus %s: error: %s\n", command.c_str(), status.message().c_str());
  return ExitCodeOf(status);
}

int ExitCodeOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kDataLoss:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

std::optional<double> ParseReal(std::string_view text) {
  double parsed = 0;
  const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), parsed);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return parsed;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    const auto end = std::min(text.find(',', begin), text.size());
    if (end > begin) items.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

}  // namespace nimbus
