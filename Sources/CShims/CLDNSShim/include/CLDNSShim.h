// ldns through dlopen, loaded only with --domain (unicast DNS-SD): every other command maps neither
// libldns nor the OpenSSL it links (about 0.4 MB resident, and their share of every start-up).
// One pointer per function, typed from the library's own declarations (typeof does not reference
// the symbol, so nothing here makes the linker want the library). Swift calls them through
// `prldns_functions()` once `prldns_load()` has succeeded.
#ifndef PARTYRADIO_CLDNSSHIM_H
#define PARTYRADIO_CLDNSSHIM_H

#include "CDynamicLibrary.h"
#include <ldns/ldns.h>

/// ldns's soname (Debian 12: libldns3); it is loaded with dlopen, not linked.
#define PRLDNS_SONAME "libldns.so.3"

#define PRLDNS_FUNCTIONS(X) \
    X(ldns_rr_rdf) \
    X(ldns_rr_list_deep_free) \
    X(ldns_rr_list_rr) \
    X(ldns_rdf_deep_free) \
    X(ldns_dname_new_frm_str) \
    X(ldns_rr_rd_count) \
    X(ldns_pkt_free) \
    X(ldns_rr_set_ttl) \
    X(ldns_rr_set_class) \
    X(ldns_rr_list_rr_count) \
    X(ldns_rr_list_new) \
    X(ldns_resolver_deep_free) \
    X(ldns_update_soa_mname) \
    X(ldns_update_pkt_tsig_add) \
    X(ldns_update_pkt_new) \
    X(ldns_rr_set_type) \
    X(ldns_rr_set_owner) \
    X(ldns_rr_new_frm_str) \
    X(ldns_rr_new) \
    X(ldns_rr_list_push_rr) \
    X(ldns_rr_free) \
    X(ldns_resolver_set_tsig_keyname) \
    X(ldns_resolver_set_tsig_keydata) \
    X(ldns_resolver_set_tsig_algorithm) \
    X(ldns_resolver_set_timeout) \
    X(ldns_resolver_set_retry) \
    X(ldns_resolver_set_port) \
    X(ldns_resolver_set_dnssec) \
    X(ldns_resolver_send_pkt) \
    X(ldns_resolver_query_status) \
    X(ldns_resolver_push_nameserver) \
    X(ldns_resolver_new_frm_file) \
    X(ldns_resolver_new) \
    X(ldns_rdf_size) \
    X(ldns_rdf_new_frm_str) \
    X(ldns_rdf_data) \
    X(ldns_pkt_set_rd) \
    X(ldns_pkt_rr_list_by_type) \
    X(ldns_pkt_get_rcode) \
    X(ldns_get_errorstr_by_id) \

/// `prldns_table`, `prldns_load()`, `prldns_load_error()`, `prldns_functions()` (CDynamicLibrary).
PRDL_DECLARE(prldns, PRLDNS_FUNCTIONS)

#endif
