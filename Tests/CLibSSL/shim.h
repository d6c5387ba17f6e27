/* OpenSSL's libssl for the tests' TLS client: a TLS connection over an existing socket, verified against a CA file. */
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
