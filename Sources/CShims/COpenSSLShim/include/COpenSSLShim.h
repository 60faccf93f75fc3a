// libcrypto through dlopen, loaded only to sign Apple Music developer tokens (ES256): the commands
// that never do (every DJ without an Apple Music key, vote, listen, ...) do not map it (about 1.4 MB resident).
// One pointer per function, typed from the library's own declarations (typeof does not reference
// the symbol, so nothing here makes the linker want the library). Swift calls them through
// `prcrypto_functions()` once `prcrypto_load()` has succeeded.
#ifndef PARTYRADIO_COPENSSLSHIM_H
#define PARTYRADIO_COPENSSLSHIM_H

#include "CDynamicLibrary.h"
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/err.h>

/// libcrypto's soname (Debian 12: libssl3); it is loaded with dlopen, not linked.
#define PRCRYPTO_SONAME "libcrypto.so.3"

#define PRCRYPTO_FUNCTIONS(X) \
    X(BIO_free) \
    X(BIO_new_mem_buf) \
    X(ERR_clear_error) \
    X(ERR_error_string_n) \
    X(ERR_get_error) \
    X(EVP_DigestSign) \
    X(EVP_DigestSignInit) \
    X(EVP_MD_CTX_free) \
    X(EVP_MD_CTX_new) \
    X(EVP_PKEY_free) \
    X(EVP_PKEY_get_base_id) \
    X(EVP_PKEY_get_group_name) \
    X(EVP_sha256) \
    X(PEM_read_bio_PrivateKey) \

/// `prcrypto_table`, `prcrypto_load()`, `prcrypto_load_error()`, `prcrypto_functions()` (CDynamicLibrary).
PRDL_DECLARE(prcrypto, PRCRYPTO_FUNCTIONS)

#endif
