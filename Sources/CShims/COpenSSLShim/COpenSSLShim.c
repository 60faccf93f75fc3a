#include "COpenSSLShim.h"

PRDL_DEFINE(prcrypto, PRCRYPTO_SONAME, "libcrypto", "libssl3", PRCRYPTO_FUNCTIONS)
