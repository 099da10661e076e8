// A small command-line parser for the nimbus subcommands: --name VALUE or --name=VALUE,
// boolean switches, generated --help text, and errors that name the option and the value.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nimbus/choices.h"
#include "nimbus/core/status.h"

namespace nimbus {

class ArgParser {
 public:
  // `usage` is the synopsis line after "nimbus COMMAND", `about` a paragraph for --help.
  ArgParser(std::string command, std::string usage, std::string about);

  void AddString(const std::string& name, const std::string& value_name, const std::string& help, std::string* target);
  void AddInt(const std::string& name, const std::string& value_name, const std::string& help, int64_t* target);
  void AddDouble(const std::string& name, const std::string& value_name, const std::string& help, double* target);
  void AddSwitch(const std::string& name, const std::string& help, bool* target);
  // An option that names one of a choice's values (nimbus/choices.h), parsed as it is read.
  template <typename Choice>
  void AddChoice(const std::string& name, const std::string& value_name, const std::string& help, Choice* target) {
    const ChoiceSetter set = [target](const std::string& value) -> Status {
      NIMBUS_ASSIGN_OR_RETURN(*target, ParseChoice<Choice>(value));
      return Status::Ok();
    };
    options_.push_back({name, value_name, help, set, std::string(NameOf(*target))});
  }
  // Marks an option as required: Parse() fails without it.
  void Require(const std::string& name);
  // One argument without a "--" name (required when declared).
  void SetPositional(const std::string& name, const std::string& help, std::string* target);

  // Parses argv[first..argc). Fails with a message naming the option; sets help_requested().
  Status Parse(int argc, char** argv, int first);
  bool help_requested() const { return help_requested_; }
  bool Given(const std::string& name) const { return given_.count(name) > 0; }
  std::string Help() const;
  const std::string& command() const { return command_; }

 private:
  using ChoiceSetter = std::function<Status(const std::string&)>;
  struct Option {
    std::string name;
    std::string value_name;
    std::string help;
    std::variant<std::string*, int64_t*, double*, bool*, ChoiceSetter> target;
    std::string default_text;
    bool required = false;
  };
  Option* Find(const std::string& name);
  Status Assign(Option& option, const std::string& value);

  std::string command_;
  std::string usage_;
  std::string about_;
  std::vector<Option> options_;
  std::set<std::string> given_;
  std::string positional_name_, positional_help_;
  std::string* positional_ = nullptr;
  bool help_requested_ = false;
};

// Exit statuses of nimbus's commands: 0 on success, 1 when a run failed (a worker failure, an
// I/O error mid-way), 2 for bad usage or bad input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Parses; prints help (returns 0 through *exit_code) or the error (returns 2). Returns true
// when the command should go on.
// `first` is where the options begin in argv (2 for "nimbus train ...", 3 for "nimbus lambda emulate ...").
bool ParseOrExit(ArgParser& parser, int argc, char** argv, int* exit_code, int first = 2);
// Prints "nimbus COMMAND: error: ..." to stderr and returns the exit code for the status:
// 2 for bad input (invalid argument, not found, data loss), 1 otherwise.
int ReportError(const std::string& command, const Status& status);
// That exit code, without the message.
int ExitCodeOf(const Status& status);

// The whole of `text` as a number (an optional leading '+', as the command line allows), or
// nothing; not checked for finiteness.
std::optional<double> ParseReal(std::string_view text);

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& text);

}  // namespace nimbus
