// Channel benchmark (issue 31): what sealing costs per byte, and what a faster authenticated
// cipher would save the master.
//
// 1. Through nimbus's transport: REPLY messages of S bytes from a worker's DEALER to the
//    master's ROUTER over 127.0.0.1, each answered by a HEARTBEAT, sealed (CurveZMQ with a run's
//    keys) and in plaintext. Both ends and ZeroMQ's one I/O thread are in this process, so its
//    CPU per byte is the channel's whole cost: framing, copies, the kernel's loopback, and when
//    sealed, one seal and one open. Sealed minus plaintext is what the cipher adds per byte.
// 2. The ciphers alone, one core, on messages of 1 MiB: CurveZMQ's own (crypto_box after the
//    key exchange: XSalsa20 with Poly1305), ChaCha20-Poly1305 (IETF) and AES-256-GCM, each
//    through libsodium, and AES-256-GCM through OpenSSL. Seal and open per byte.
//
// The master seals every ROUND and opens every REPLY it handles: multiply the bytes through
// its link by (seal + open) per byte for its CPU on the channel (docs/evaluation.md).
//
// usage: channel [MEGABYTES]   (the bytes each measurement moves; 256 unless given)
#include <openssl/evp.h>
#include <sodium.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "nimbus/core/clock.h"
#include "nimbus/transport/transport.h"
#include "nimbus/wire/codec.h"

namespace nimbus {
namespace {

double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Cost {
  double cpu_ns_per_byte = 0;
  double wall_ns_per_byte = 0;
};

// Sends `count` REPLYs of `doubles` values from a DEALER to a ROUTER, one at a time, each
// acknowledged; the process's CPU and the wall time per byte sent.
Result<Cost> MeasureTransport(bool sealed, std::size_t doubles, int count) {
  constexpr uint64_t kRunId = 31;
  const std::shared_ptr<ZmqContext> context = ZmqContext::Create();
  RunKeys keys;
  if (sealed) {
    NIMBUS_ASSIGN_OR_RETURN(keys, RunKeys::Generate());
  }
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<RouterTransport> master,
                          RouterTransport::Bind(context, "tcp://127.0.0.1:0", kRunId, 1LL << 30, keys.server));
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<DealerTransport> worker,
                          DealerTransport::Connect(context, master->endpoint(), "worker-0", kRunId, keys.client));
  WorkerReply reply;
  std::vector<double> values(doubles);
  for (std::size_t i = 0; i < doubles; ++i) values[i] = 1.0 + 1e-3 * static_cast<double>(i % 997);
  reply.w = SharedVector(std::move(values));
  const WireMessage message = PackReply(Envelope{MessageType::kReply, kRunId, 0, 1, 0}, reply);
  const WireMessage ack = PackHeartbeat(Envelope{MessageType::kHeartbeat, kRunId, 0, 1, 0}, {});
  uint64_t bytes = 0;
  double cpu = 0, wall = 0;
  // One round trip first: the connection and its handshake are not the channel's per-byte cost.
  for (int i = -1; i < count; ++i) {
    const double cpu_start = ProcessCpuSeconds(), wall_start = MonotonicSeconds();
    uint64_t sent = 0;
    NIMBUS_RETURN_IF_ERROR(worker->Send("", message, &sent));
    NIMBUS_ASSIGN_OR_RETURN(const Incoming got, master->Receive(Deadline::After(30)));
    NIMBUS_RETURN_IF_ERROR(master->Send(got.peer, ack));
    NIMBUS_RETURN_IF_ERROR(worker->Receive(Deadline::After(30)).status());
    if (i < 0) continue;
    cpu += ProcessCpuSeconds() - cpu_start;
    wall += MonotonicSeconds() - wall_start;
    bytes += sent;
  }
  return Cost{1e9 * cpu / static_cast<double>(bytes), 1e9 * wall / static_cast<double>(bytes)};
}

// A cipher's seal and open of one message: each returns false on failure.
struct Cipher {
  const char* name;
  std::function<bool(const unsigned char* plain, std::size_t size, unsigned char* sealed)> seal;
  std::function<bool(const unsigned char* sealed, std::size_t size, unsigned char* plain)> open;
};

bool OpenSslGcm(bool encrypt, const unsigned char* key, const unsigned char* nonce, const unsigned char* in,
                std::size_t size, unsigned char* out) {
  // size is the plaintext's; the 16-byte tag follows the ciphertext.
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int length = 0;
  bool ok = ctx != nullptr;
  if (encrypt) {
    ok = ok && EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, nonce) == 1 &&
         EVP_EncryptUpdate(ctx, out, &length, in, static_cast<int>(size)) == 1 &&
         EVP_EncryptFinal_ex(ctx, out + length, &length) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + size) == 1;
  } else {
    unsigned char tag[16];
    std::copy(in + size, in + size + 16, tag);
    ok = ok && EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, nonce) == 1 &&
         EVP_DecryptUpdate(ctx, out, &length, in, static_cast<int>(size)) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1 &&
         EVP_DecryptFinal_ex(ctx, out + length, &length) == 1;
  }
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

std::vector<Cipher> Ciphers(const unsigned char* key, const unsigned char* nonce, const unsigned char* box_key) {
  std::vector<Cipher> ciphers;
  ciphers.push_back({"xsalsa20-poly1305 (CurveZMQ's box, libsodium)",
                     [=](const unsigned char* p, std::size_t n, unsigned char* s) {
                       return crypto_box_easy_afternm(s, p, n, nonce, box_key) == 0;
                     },
                     [=](const unsigned char* s, std::size_t n, unsigned char* p) {
                       return crypto_box_open_easy_afternm(p, s, n + crypto_box_MACBYTES, nonce, box_key) == 0;
                     }});
  ciphers.push_back({"chacha20-poly1305-ietf (libsodium)",
                     [=](const unsigned char* p, std::size_t n, unsigned char* s) {
                       return crypto_aead_chacha20poly1305_ietf_encrypt(s, nullptr, p, n, nullptr, 0, nullptr, nonce,
                                                                        key) == 0;
                     },
                     [=](const unsigned char* s, std::size_t n, unsigned char* p) {
                       return crypto_aead_chacha20poly1305_ietf_decrypt(p, nullptr, nullptr, s, n + 16, nullptr, 0,
                                                                        nonce, key) == 0;
                     }});
  if (crypto_aead_aes256gcm_is_available() != 0) {
    ciphers.push_back({"aes-256-gcm (libsodium, AES-NI)",
                       [=](const unsigned char* p, std::size_t n, unsigned char* s) {
                         return crypto_aead_aes256gcm_encrypt(s, nullptr, p, n, nullptr, 0, nullptr, nonce, key) == 0;
                       },
                       [=](const unsigned char* s, std::size_t n, unsigned char* p) {
                         return crypto_aead_aes256gcm_decrypt(p, nullptr, nullptr, s, n + 16, nullptr, 0, nonce,
                                                              key) == 0;
                       }});
  }
  ciphers.push_back({"aes-256-gcm (OpenSSL)",
                     [=](const unsigned char* p, std::size_t n, unsigned char* s) {
                       return OpenSslGcm(true, key, nonce, p, n, s);
                     },
                     [=](const unsigned char* s, std::size_t n, unsigned char* p) {
                       return OpenSslGcm(false, key, nonce, s, n, p);
                     }});
  return ciphers;
}

// Seal and open per byte of one cipher, on one core: `rounds` messages of `size` bytes.
bool MeasureCipher(const Cipher& cipher, std::size_t size, int rounds, double* seal_ns, double* open_ns) {
  std::vector<unsigned char> plain(size), sealed(size + 64), opened(size);
  randombytes_buf(plain.data(), plain.size());
  double seal = 0, open = 0;
  for (int i = 0; i < rounds; ++i) {
    double start = ProcessCpuSeconds();
    if (!cipher.seal(plain.data(), size, sealed.data())) return false;
    seal += ProcessCpuSeconds() - start;
    start = ProcessCpuSeconds();
    if (!cipher.open(sealed.data(), size, opened.data())) return false;
    open += ProcessCpuSeconds() - start;
  }
  if (opened != plain) return false;
  const double bytes = static_cast<double>(size) * rounds;
  *seal_ns = 1e9 * seal / bytes;
  *open_ns = 1e9 * open / bytes;
  return true;
}

int Main(int argc, char** argv) {
  const double megabytes = argc > 1 ? std::atof(argv[1]) : 256;
  if (!(megabytes > 0) || sodium_init() < 0) {
    std::fprintf(stderr, "usage: channel [MEGABYTES]   (a positive number; and libsodium must start)\n");
    return 2;
  }
  const double total_bytes = megabytes * 1e6;
  std::printf("## Through the transport: a REPLY each way acknowledged, 127.0.0.1, one process\n\n");
  std::printf("| message | plaintext CPU ns/B | sealed CPU ns/B | the seal and open, ns/B | plaintext wall ns/B | "
              "sealed wall ns/B |\n|---|---|---|---|---|---|\n");
  for (const std::size_t bytes : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{8} << 20}) {
    const int count = std::max(4, static_cast<int>(total_bytes / static_cast<double>(bytes)));
    const Result<Cost> plain = MeasureTransport(false, bytes / 8, count);
    const Result<Cost> sealed = MeasureTransport(true, bytes / 8, count);
    if (!plain.ok() || !sealed.ok()) {
      std::fprintf(stderr, "channel: %s\n", (!plain.ok() ? plain : sealed).status().message().c_str());
      return 1;
    }
    std::printf("| %zu KiB | %.3f | %.3f | %.3f | %.3f | %.3f |\n", bytes >> 10, plain->cpu_ns_per_byte,
                sealed->cpu_ns_per_byte, sealed->cpu_ns_per_byte - plain->cpu_ns_per_byte, plain->wall_ns_per_byte,
                sealed->wall_ns_per_byte);
  }
  unsigned char key[32], nonce[24], box_key[crypto_box_BEFORENMBYTES];
  randombytes_buf(key, sizeof key);
  randombytes_buf(nonce, sizeof nonce);
  randombytes_buf(box_key, sizeof box_key);
  constexpr std::size_t kMessage = std::size_t{1} << 20;
  const int rounds = std::max(4, static_cast<int>(total_bytes / kMessage));
  std::printf("\n## The ciphers alone, one core, messages of 1 MiB\n\n");
  std::printf("| cipher | seal ns/B | open ns/B | seal + open ns/B | GB/s sealed and opened |\n|---|---|---|---|---|\n");
  for (const Cipher& cipher : Ciphers(key, nonce, box_key)) {
    double seal = 0, open = 0;
    if (!MeasureCipher(cipher, kMessage, rounds, &seal, &open)) {
      std::fprintf(stderr, "channel: %s failed to seal or open\n", cipher.name);
      return 1;
    }
    std::printf("| %s | %.3f | %.3f | %.3f | %.2f |\n", cipher.name, seal, open, seal + open, 1.0 / (seal + open));
  }
  return 0;
}

}  // namespace
}  // namespace nimbus

int main(int argc, char** argv) { return nimbus::Main(argc, argv); }
