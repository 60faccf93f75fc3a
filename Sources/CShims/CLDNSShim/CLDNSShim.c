#include "CLDNSShim.h"

PRDL_DEFINE(prldns, PRLDNS_SONAME, "ldns", "libldns3", PRLDNS_FUNCTIONS)
