// TLS certificates for tests, made with OpenSSL at run time (no key material
// in the repository): a certificate authority and a server certificate it
// signed for one IP address only (127.0.0.1 unless told), as PEM files in a
// folder the object removes.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace burn::testing {

class TlsFiles {
 public:
  /// `name` keeps the folders of several sets apart; `server_ip` is the one
  /// address the server certificate names.
  explicit TlsFiles(const std::string& name, const std::string& server_ip = "127.0.0.1") {
    dir_ = std::filesystem::temp_directory_path() / ("burn-tls-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const Key ca_key = new_key();
    const Cert ca = new_cert(ca_key.get(), "burn test CA " + name, nullptr, ca_key.get(), /*ca=*/true, nullptr);
    const Key server_key = new_key();
    const std::string alt_name = "IP:" + server_ip;
    const Cert server = new_cert(server_key.get(), server_ip, ca.get(), ca_key.get(), /*ca=*/false, alt_name.c_str());
    write(ca_cert(), [&](FILE* f) { return PEM_write_X509(f, ca.get()); });
    write(server_cert(), [&](FILE* f) { return PEM_write_X509(f, server.get()); });
    write(server_key_file(),
          [&](FILE* f) { return PEM_write_PrivateKey(f, server_key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
    write(ca_key_file(),
          [&](FILE* f) { return PEM_write_PrivateKey(f, ca_key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  }
  ~TlsFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TlsFiles(const TlsFiles&) = delete;
  TlsFiles& operator=(const TlsFiles&) = delete;

  std::string ca_cert() const { return (dir_ / "ca.pem").string(); }
  std::string server_cert() const { return (dir_ / "server.pem").string(); }
  std::string server_key_file() const { return (dir_ / "server.key").string(); }
  /// A key that is not the server certificate's.
  std::string ca_key_file() const { return (dir_ / "ca.key").string(); }

 private:
  struct FreeKey {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  };
  struct FreeCert {
    void operator()(X509* c) const { X509_free(c); }
  };
  using Key = std::unique_ptr<EVP_PKEY, FreeKey>;
  using Cert = std::unique_ptr<X509, FreeCert>;

  static Key new_key() {
    Key key(EVP_EC_gen("P-256"));
    if (!key) throw std::runtime_error("TlsFiles: cannot make an EC key");
    return key;
  }

  static void add_extension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value);
    if (!ext || X509_add_ext(cert, ext, -1) != 1) throw std::runtime_error("TlsFiles: cannot add an extension");
    X509_EXTENSION_free(ext);
  }

  static Cert new_cert(EVP_PKEY* key, const std::string& common_name, X509* issuer, EVP_PKEY* issuer_key, bool ca,
                       const char* subject_alt_name) {
    static long serial = 1;
    Cert cert(X509_new());
    X509* x = cert.get();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
    X509_set_pubkey(x, key);
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                               -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer ? issuer : x, x, nullptr, nullptr, 0);
    add_extension(x, &ctx, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (ca) add_extension(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
    if (subject_alt_name) add_extension(x, &ctx, NID_subject_alt_name, subject_alt_name);
    if (X509_sign(x, issuer_key, EVP_sha256()) == 0) throw std::runtime_error("TlsFiles: cannot sign");
    return cert;
  }

  template <class WriteFn>
  static void write(const std::string& path, WriteFn fn) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("TlsFiles: cannot write " + path);
    const int ok = fn(f);
    std::fclose(f);
    if (ok != 1) throw std::runtime_error("TlsFiles: cannot write " + path);
  }

  std::filesystem::path dir_;
};

}  // namespace burn::testing
