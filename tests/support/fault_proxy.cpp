// nimbus-fault-proxy: a TCP proxy between workers and their master that makes the network a
// master on a server meets with functions in a cloud region. Each connection (a "stream":
// every worker invocation dials two, its link and its heartbeats) is numbered in the order it
// is accepted, and may, as scheduled:
//   - arrive late: a fixed delay plus a uniform jitter, each direction, order kept;
//   - be narrow: a rate cap in Mbit/s, each direction (bytes leave one after another);
//   - be reset (RST to both ends) once N bytes have crossed, or when round R begins;
//   - be blackholed for a while (nothing crosses; what was sent is delivered after, as TCP
//     would retransmit it), from some time after it opened or from the start of round R;
//     or only what the worker sends, from round R on (the worker gets round R, its answer
//     is held: a partition that falls while the worker computes).
// A round begins with a master-to-worker ZMTP frame of at least --round-bytes bytes (a
// ROUND message's vector; heartbeats and handshakes are smaller). ZMTP's framing is plain
// even under CurveZMQ, so rounds are counted on encrypted streams too.
//
// Every event goes to --report as a JSON line (flushed), so a test can check what was done.
// Its last line, at exit, is the proxy's own CPU: in reading (before a chunk's delay starts) and
// in writing (once it is due), which a simulation of a run through the proxy needs apart.
// With --chunks, every read is a JSON line too: when its bytes came in and when they are due
// out, in wall-clock seconds as a nimbus trace has them (bench/link_phases.py puts the two
// side by side).
// The kernel of this machine kind has no netem, and Debian has no toxiproxy: hence this.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

volatile sig_atomic_t g_stop = 0;

// CPU time so far, in seconds: this thread's (CLOCK_THREAD_CPUTIME_ID) or the process's.
double CpuSeconds(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Adds the CPU the thread spends in its scope to `total`.
class CpuSpent {
 public:
  explicit CpuSpent(double& total) : total_(total), start_(CpuSeconds(CLOCK_THREAD_CPUTIME_ID)) {}
  ~CpuSpent() { total_ += CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - start_; }
  CpuSpent(const CpuSpent&) = delete;
  CpuSpent& operator=(const CpuSpent&) = delete;

 private:
  double& total_;
  const double start_;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Now()'s time on the wall clock, as traces have it.
double WallOffset() {
  static const double offset =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() - Now();
  return offset;
}

// What is done to one stream. Times in seconds, rates in bytes per second; -1: never.
struct Faults {
  double delay = 0, jitter = 0, bytes_per_second = 0;
  int64_t reset_at_byte = -1;
  int reset_at_round = -1;
  int blackhole_at_round = -1;
  bool blackhole_up_only = false;  // hold only what the worker sends
  double blackhole_after = -1;     // seconds after the stream opened
  double blackhole_seconds = 0;
};

struct Options {
  std::string listen_host = "127.0.0.1", target_host = "127.0.0.1";
  int listen_port = 0, target_port = 0;
  std::map<int, Faults> streams;
  std::optional<Faults> every;  // streams without their own
  int64_t round_bytes = 1024;
  uint64_t seed = 1;
  std::string report, ready_file, chunks;
};

[[noreturn]] void Usage(const std::string& error) {
  std::fprintf(stderr,
               "nimbus-fault-proxy: %s\n"
               "usage: nimbus-fault-proxy --listen HOST:PORT --target HOST:PORT [--stream K=FAULTS]...\n"
               "       [--round-bytes B] [--seed S] [--report FILE.jsonl] [--chunks FILE.jsonl] [--ready-file FILE]\n"
               "K: the stream's number in accept order (0, 1, ...), or * for every stream without its own.\n"
               "FAULTS, comma-separated: delay:MS jitter:MS rate:MBIT reset-byte:N reset-round:R\n"
               "       blackhole-round:R:MS blackhole-up-round:R:MS blackhole-after:MS:MS\n",
               error.c_str());
  std::exit(2);
}

double Number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0)) Usage(what + ": '" + text + "' is not a number >= 0");
  return value;
}

std::vector<std::string> Split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t at; (at = text.find(by, begin)) != std::string::npos; begin = at + 1) {
    parts.push_back(text.substr(begin, at - begin));
  }
  parts.push_back(text.substr(begin));
  return parts;
}

Faults ParseFaults(const std::string& text) {
  Faults faults;
  for (const std::string& item : Split(text, ',')) {
    const std::vector<std::string> f = Split(item, ':');
    auto arg = [&](std::size_t i) { return i < f.size() ? Number(f[i], item) : (Usage(item + ": too few values"), 0.0); };
    if (f[0] == "delay") faults.delay = arg(1) / 1e3;
    else if (f[0] == "jitter") faults.jitter = arg(1) / 1e3;
    else if (f[0] == "rate") faults.bytes_per_second = arg(1) * 1e6 / 8;
    else if (f[0] == "reset-byte") faults.reset_at_byte = static_cast<int64_t>(arg(1));
    else if (f[0] == "reset-round") faults.reset_at_round = static_cast<int>(arg(1));
    else if (f[0] == "blackhole-round" || f[0] == "blackhole-up-round") {
      faults.blackhole_at_round = static_cast<int>(arg(1));
      faults.blackhole_seconds = arg(2) / 1e3;
      faults.blackhole_up_only = f[0] == "blackhole-up-round";
    }
    else if (f[0] == "blackhole-after") faults.blackhole_after = arg(1) / 1e3, faults.blackhole_seconds = arg(2) / 1e3;
    else Usage("unknown fault '" + f[0] + "'");
  }
  return faults;
}

void HostPort(const std::string& text, std::string* host, int* port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) Usage("'" + text + "' is not HOST:PORT");
  *host = text.substr(0, colon);
  *port = static_cast<int>(Number(text.substr(colon + 1), text));
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(flag + ": needs a value");
    const std::string value = argv[++i];
    if (flag == "--listen") HostPort(value, &options.listen_host, &options.listen_port);
    else if (flag == "--target") HostPort(value, &options.target_host, &options.target_port);
    else if (flag == "--round-bytes") options.round_bytes = static_cast<int64_t>(Number(value, flag));
    else if (flag == "--seed") options.seed = static_cast<uint64_t>(Number(value, flag));
    else if (flag == "--report") options.report = value;
    else if (flag == "--chunks") options.chunks = value;
    else if (flag == "--ready-file") options.ready_file = value;
    else if (flag == "--stream") {
      const auto eq = value.find('=');
      if (eq == std::string::npos) Usage("--stream: K=FAULTS");
      const std::string which = value.substr(0, eq);
      if (which == "*") options.every = ParseFaults(value.substr(eq + 1));
      else options.streams[static_cast<int>(Number(which, "--stream"))] = ParseFaults(value.substr(eq + 1));
    } else {
      Usage("unknown option " + flag);
    }
  }
  if (options.target_port == 0) Usage("--target is required");
  return options;
}

// Counts ZMTP 3 frames in a byte stream: a 64-byte greeting, then frames of a flags byte
// (0x02: an 8-byte size follows, else 1 byte) and a body.
class FrameCounter {
 public:
  // Feeds bytes; calls on_large(size) for each frame header announcing >= `large` bytes.
  template <typename F>
  void Feed(const char* data, std::size_t size, int64_t large, F&& on_large) {
    for (std::size_t i = 0; i < size;) {
      if (greeting_left_ > 0) {
        const std::size_t take = std::min<std::size_t>(greeting_left_, size - i);
        greeting_left_ -= static_cast<int64_t>(take), i += take;
      } else if (body_left_ > 0) {
        const std::size_t take = static_cast<std::size_t>(std::min<int64_t>(body_left_, static_cast<int64_t>(size - i)));
        body_left_ -= static_cast<int64_t>(take), i += take;
      } else if (header_.empty()) {
        header_.push_back(data[i++]);
      } else {
        header_.push_back(data[i++]);
        const std::size_t needed = (static_cast<uint8_t>(header_[0]) & 0x02) ? 9 : 2;
        if (header_.size() < needed) continue;
        uint64_t length = 0;
        for (std::size_t b = 1; b < needed; ++b) length = (length << 8) | static_cast<uint8_t>(header_[b]);
        header_.clear();
        body_left_ = static_cast<int64_t>(length);
        if (body_left_ >= large) on_large(body_left_);
      }
    }
  }

 private:
  int64_t greeting_left_ = 64, body_left_ = 0;
  std::string header_;
};

struct Chunk {
  double due;
  std::string bytes;
  std::size_t sent = 0;  // written so far (a socket may take part of a chunk)
};

// One direction of a stream: bytes read from `from`, written to `to` when due.
struct Direction {
  int from = -1, to = -1;
  std::deque<Chunk> queue;
  double line_free_at = 0;  // the rate cap: when the last byte queued has left
  int64_t bytes = 0;
  bool from_closed = false, to_shut = false;
  bool blocked = false;  // `to` would not take more: wait until it is writable
  double hold_until = 0;  // blackholed until then
};

struct Stream {
  int index = 0;
  Faults faults;
  double opened = 0;
  bool blackhole_done = false;
  Direction up, down;  // up: worker to master; down: master to worker
  FrameCounter down_frames;
  int rounds = 0;
  bool dead = false;
};

class Proxy {
 public:
  explicit Proxy(Options options) : options_(std::move(options)), random_(options_.seed) {}

  int Run();

 private:
  void ReportCpu();
  void Report(const Stream& s, const std::string& event, const std::string& detail = "") {
    if (report_ == nullptr) return;
    std::fprintf(report_, "{\"stream\": %d, \"event\": \"%s\", \"seconds\": %.3f, \"rounds\": %d, \"bytes_up\": %lld, "
                 "\"bytes_down\": %lld%s}\n", s.index, event.c_str(), Now() - s.opened, s.rounds,
                 static_cast<long long>(s.up.bytes), static_cast<long long>(s.down.bytes), detail.c_str());
    std::fflush(report_);
  }
  int Listen();
  void Accept();
  void ReadInto(Stream& s, Direction& d, bool down);
  void WriteDue(Direction& d, double now);
  void Reset(Stream& s, const std::string& why);
  void StartBlackhole(Stream& s, double now, const std::string& why);
  double NextDue(double now) const;

  Options options_;
  std::mt19937_64 random_;
  FILE* report_ = nullptr;
  FILE* chunks_ = nullptr;
  int listener_ = -1;
  int accepted_ = 0;
  std::vector<std::unique_ptr<Stream>> streams_;
  double read_cpu_ = 0, write_cpu_ = 0;  // seconds
};

void Proxy::ReportCpu() {
  if (report_ == nullptr) return;
  std::fprintf(report_, "{\"event\": \"cpu\", \"read_seconds\": %.6f, \"write_seconds\": %.6f, \"process_seconds\": %.6f}\n",
               read_cpu_, write_cpu_, CpuSeconds(CLOCK_PROCESS_CPUTIME_ID));
  std::fflush(report_);
}

int Proxy::Listen() {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int on = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(options_.listen_port));
  if (::inet_pton(AF_INET, options_.listen_host.c_str(), &address.sin_addr) != 1) Usage("bad --listen host");
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener_, 64) != 0) {
    std::fprintf(stderr, "nimbus-fault-proxy: cannot listen on %s:%d: %s\n", options_.listen_host.c_str(),
                 options_.listen_port, std::strerror(errno));
    return 1;
  }
  return 0;
}

// A worker's connection, and one of ours to the master for it.
void Proxy::Accept() {
  const int worker = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (worker < 0) return;
  const int master = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(options_.target_port));
  ::inet_pton(AF_INET, options_.target_host.c_str(), &address.sin_addr);
  if (::connect(master, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(worker), ::close(master);
    return;
  }
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  const int on = 1;
  ::setsockopt(master, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  ::setsockopt(worker, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  auto s = std::make_unique<Stream>();
  s->index = accepted_++;
  const auto own = options_.streams.find(s->index);
  s->faults = own != options_.streams.end() ? own->second : options_.every.value_or(Faults{});
  s->opened = Now();
  s->up.from = worker, s->up.to = master;
  s->down.from = master, s->down.to = worker;
  Report(*s, "open");
  streams_.push_back(std::move(s));
}

void Proxy::Reset(Stream& s, const std::string& why) {
  const linger abortive{1, 0};  // close with RST
  for (const int fd : {s.up.from, s.down.from}) {
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
    ::close(fd);
  }
  s.dead = true;
  Report(s, "reset", ", \"why\": \"" + why + "\"");
}

void Proxy::StartBlackhole(Stream& s, double now, const std::string& why) {
  s.up.hold_until = now + s.faults.blackhole_seconds;
  if (!s.faults.blackhole_up_only) s.down.hold_until = s.up.hold_until;
  s.blackhole_done = true;
  Report(s, "blackhole", ", \"why\": \"" + why + "\", \"hold_seconds\": " + std::to_string(s.faults.blackhole_seconds) +
                             ", \"up_only\": " + (s.faults.blackhole_up_only ? "true" : "false"));
}

// Reads of up to 256 kB: a megabyte message costs the proxy a few system calls, not dozens,
// so that its own CPU (it shares the machine with the run) stays small next to the link's.
constexpr std::size_t kReadBytes = 256 * 1024;

void Proxy::ReadInto(Stream& s, Direction& d, bool down) {
  const CpuSpent spent(read_cpu_);
  static std::vector<char> storage(kReadBytes);
  char* buffer = storage.data();
  const ssize_t got = ::recv(d.from, buffer, kReadBytes, 0);
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
    d.from_closed = true;
    return;
  }
  if (got < 0) return;
  const double now = Now();
  const Faults& f = s.faults;
  bool reset = false;
  if (down) {
    s.down_frames.Feed(buffer, static_cast<std::size_t>(got), options_.round_bytes, [&](int64_t) {
      ++s.rounds;
      if (s.rounds == f.reset_at_round) reset = true;
      if (s.rounds == f.blackhole_at_round && !s.blackhole_done) StartBlackhole(s, now, "round");
    });
  }
  d.bytes += got;
  if (reset) return Reset(s, "round " + std::to_string(s.rounds));
  if (f.reset_at_byte >= 0 && s.up.bytes + s.down.bytes >= f.reset_at_byte) return Reset(s, "byte");
  std::uniform_real_distribution<double> jitter(0, f.jitter);
  double due = now + f.delay + (f.jitter > 0 ? jitter(random_) : 0);
  if (!d.queue.empty()) due = std::max(due, d.queue.back().due);  // order is kept
  if (f.bytes_per_second > 0) {
    d.line_free_at = std::max(d.line_free_at, due) + static_cast<double>(got) / f.bytes_per_second;
    due = d.line_free_at;
  }
  d.queue.push_back({due, std::string(buffer, static_cast<std::size_t>(got))});
  if (chunks_ != nullptr) {
    std::fprintf(chunks_, "{\"stream\": %d, \"down\": %s, \"bytes\": %zd, \"read\": %.6f, \"due\": %.6f}\n", s.index,
                 down ? "true" : "false", got, now + WallOffset(), due + WallOffset());
  }
}

void Proxy::WriteDue(Direction& d, double now) {
  while (!d.queue.empty() && d.queue.front().due <= now && now >= d.hold_until) {
    Chunk& head = d.queue.front();
    ssize_t sent = 0;
    {
      const CpuSpent spent(write_cpu_);
      sent = ::send(d.to, head.bytes.data() + head.sent, head.bytes.size() - head.sent, MSG_NOSIGNAL);
    }
    if (sent < 0) {
      if (errno == EAGAIN) d.blocked = true;
      else if (errno != EINTR) d.to_shut = true, d.queue.clear();
      return;
    }
    head.sent += static_cast<std::size_t>(sent);
    if (head.sent < head.bytes.size()) return;
    d.queue.pop_front();
  }
  if (d.from_closed && d.queue.empty() && !d.to_shut) {
    ::shutdown(d.to, SHUT_WR);
    d.to_shut = true;
  }
}

double Proxy::NextDue(double now) const {
  double next = now + 0.2;
  for (const auto& s : streams_) {
    for (const Direction* d : {&s->up, &s->down}) {
      if (!d->queue.empty() && !d->blocked) next = std::min(next, std::max(d->queue.front().due, d->hold_until));
    }
    if (s->faults.blackhole_after >= 0 && !s->blackhole_done) next = std::min(next, s->opened + s->faults.blackhole_after);
  }
  return next;
}

int Proxy::Run() {
  if (!options_.report.empty() && (report_ = std::fopen(options_.report.c_str(), "a")) == nullptr) {
    Usage("cannot write " + options_.report);
  }
  if (!options_.chunks.empty() && (chunks_ = std::fopen(options_.chunks.c_str(), "w")) == nullptr) {
    Usage("cannot write " + options_.chunks);
  }
  if (Listen() != 0) return 1;
  if (!options_.ready_file.empty()) std::fclose(std::fopen(options_.ready_file.c_str(), "w"));
  while (g_stop == 0) {
    std::vector<pollfd> fds{{listener_, POLLIN, 0}};
    std::vector<std::pair<Stream*, Direction*>> owners{{nullptr, nullptr}};
    for (auto& s : streams_) {
      for (Direction* d : {&s->up, &s->down}) {
        if (!d->from_closed) fds.push_back({d->from, POLLIN, 0}), owners.emplace_back(s.get(), d);
        if (d->blocked) fds.push_back({d->to, POLLOUT, 0}), owners.emplace_back(s.get(), d);
      }
    }
    // Woken to the microsecond: bytes leave when due, not at the next millisecond.
    const double now = Now();
    const double wait = std::max(0.0, NextDue(now) - now);
    timespec timeout{static_cast<time_t>(wait), static_cast<long>((wait - std::floor(wait)) * 1e9)};
    if (::ppoll(fds.data(), fds.size(), &timeout, nullptr) < 0 && errno != EINTR) return 1;
    if (fds[0].revents & POLLIN) Accept();
    for (std::size_t i = 1; i < fds.size(); ++i) {
      auto [s, d] = owners[i];
      if (s->dead || fds[i].revents == 0) continue;
      if (fds[i].events == POLLOUT) d->blocked = false;
      else ReadInto(*s, *d, d == &s->down);
    }
    const double after = Now();
    for (auto& s : streams_) {
      if (s->dead) continue;
      if (s->faults.blackhole_after >= 0 && !s->blackhole_done && after >= s->opened + s->faults.blackhole_after) {
        StartBlackhole(*s, after, "time");
      }
      WriteDue(s->up, after);
      WriteDue(s->down, after);
      if (s->up.to_shut && s->down.to_shut) {
        Report(*s, "close");
        ::close(s->up.from), ::close(s->down.from);
        s->dead = true;
      }
    }
    std::erase_if(streams_, [](const std::unique_ptr<Stream>& s) { return s->dead; });
  }
  ReportCpu();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  struct sigaction on_stop{};
  on_stop.sa_handler = [](int) { g_stop = 1; };
  ::sigaction(SIGTERM, &on_stop, nullptr);
  ::sigaction(SIGINT, &on_stop, nullptr);
  return Proxy(ParseOptions(argc, argv)).Run();
}
