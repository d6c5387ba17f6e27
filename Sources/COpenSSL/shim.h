/* The parts of OpenSSL's libcrypto Cairn uses: scrypt (EVP_PBE_scrypt), digests, HMAC and the CSPRNG. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
