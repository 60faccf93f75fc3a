// Umbrella header for the CLDNS system-library target (NLnet Labs' ldns): RFC 2136 updates signed
// with TSIG, and the unicast queries that browse a DNS-SD domain. pkg-config supplies the flags.
#include <ldns/ldns.h>
