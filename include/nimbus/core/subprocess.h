// Starting programs without a shell, in one place: an argument holding quotes or spaces passes
// as it is, and posix_spawn's attributes and file actions are set up once (its own process
// group, a working directory, standard output or error to a file or a pipe).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0]: the program's path (or its name, with search_path)
  bool search_path = false;       // look argv[0] up on PATH
  // The program's environment ("NAME=VALUE" each); none: this process's.
  std::optional<std::vector<std::string>> environment;
  bool own_group = false;  // in a process group of its own (so that it and its children end together)
  std::string directory;   // where it runs (empty: here)
  // Where its standard output and error go: a file opened for writing (created, emptied), or
  // ours (empty).
  std::string stdout_file, stderr_file;
};

// The started program's pid. NotFound when the program is not there, else Unavailable.
Result<pid_t> Spawn(const SpawnOptions& options);

// Waits for a started program to end: its wait status.
Result<int> WaitFor(pid_t pid);

// Runs a program to its end: its wait status and what it wrote on standard output.
struct ProgramOutput {
  int status = 0;
  std::string out;
};
Result<ProgramOutput> RunAndRead(SpawnOptions options);

}  // namespace nimbus
