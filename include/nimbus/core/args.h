// A small command-line parser for the nimbus subcommands: --name VALUE or --name=VALUE,
// boolean switches, generated --help text, and errors that name the option and the value.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <variant>
#include <vector>

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
  struct Option {
    std::string name;
    std::string value_name;
    std::string help;
    std::variant<std::string*, int64_t*, double*, bool*> target;
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

}  // namespace nimbus
