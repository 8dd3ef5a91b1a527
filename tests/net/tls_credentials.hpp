// SPDX-License-Identifier: MIT
// A self-signed certificate for localhost and 127.0.0.1, made when a test asks for it (OpenSSL),
// and the server and client TLS contexts that use it.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include <memory>
#include <stdexcept>
#include <string>

namespace tlstest {

struct Credentials {
  std::string certificate_pem;
  std::string key_pem;
};

// A fresh P-256 key and a certificate for it, valid for an hour, naming localhost and 127.0.0.1.
inline Credentials make_self_signed() {
  const auto check = [](bool ok, const char* what) {
    if (!ok) throw std::runtime_error(std::string("making the test certificate: ") + what);
  };
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  check(key != nullptr, "EVP_EC_gen");
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), 2) == 1, "version");
  check(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1) == 1, "serial");
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  check(X509_set_pubkey(cert.get(), key.get()) == 1, "public key");
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  check(X509_set_issuer_name(cert.get(), name) == 1, "issuer");
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, cert.get(), cert.get(), nullptr, nullptr, 0);
  X509_EXTENSION* names = X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
  check(names != nullptr, "subjectAltName");
  X509_add_ext(cert.get(), names, -1);
  X509_EXTENSION_free(names);
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "signing");

  const auto pem = [](auto write) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    write(bio.get());
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
  };
  Credentials out;
  out.certificate_pem = pem([&](BIO* bio) { PEM_write_bio_X509(bio, cert.get()); });
  out.key_pem = pem([&](BIO* bio) { PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  return out;
}

inline boost::asio::ssl::context server_context(const Credentials& credentials) {
  boost::asio::ssl::context context(boost::asio::ssl::context::tls_server);
  context.use_certificate_chain(boost::asio::buffer(credentials.certificate_pem));
  context.use_private_key(boost::asio::buffer(credentials.key_pem), boost::asio::ssl::context::pem);
  return context;
}

// Trusts only the test certificate, and checks it names `host`.
inline boost::asio::ssl::context client_context(const Credentials& credentials) {
  boost::asio::ssl::context context(boost::asio::ssl::context::tls_client);
  context.add_certificate_authority(boost::asio::buffer(credentials.certificate_pem));
  context.set_verify_mode(boost::asio::ssl::verify_peer);
  return context;
}

}  // namespace tlstest
