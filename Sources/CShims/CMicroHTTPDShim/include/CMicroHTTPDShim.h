// Typed wrappers for the libmicrohttpd calls Swift cannot make: the variadic ones.
#ifndef PARTYRADIO_CMICROHTTPD_SHIM_H
#define PARTYRADIO_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "CDynamicLibrary.h"

// libmicrohttpd through dlopen, loaded when a DJ starts its server: listeners and the commands
// that serve nothing map neither libmicrohttpd nor GnuTLS and the eight libraries it brings
// (p11-kit, nettle, gmp, libtasn1, libidn2, libunistring, ...: about 2.2 MB resident, and their
// share of every start-up). One pointer per function, typed from libmicrohttpd's own declarations
// (typeof does not reference the symbol, so nothing here makes the linker want the library).

/// libmicrohttpd's soname (Debian 12: libmicrohttpd12); it is loaded with dlopen, not linked.
#define PRMHD_SONAME "libmicrohttpd.so.12"

#define PRMHD_FUNCTIONS(X) \
    X(MHD_add_response_header) \
    X(MHD_lookup_connection_value) \
    X(MHD_queue_response) \
    X(MHD_destroy_response) \
    X(MHD_get_connection_info) \
    X(MHD_create_response_from_buffer) \
    X(MHD_stop_daemon) \
    X(MHD_start_daemon) \
    X(MHD_is_feature_supported) \
    X(MHD_get_daemon_info) \
    X(MHD_get_connection_values) \
    X(MHD_create_response_from_callback) \
    X(MHD_create_response_from_fd64) \
    X(MHD_create_response_from_fd_at_offset64) \

/// `prmhd_table`, `prmhd_load()`, `prmhd_load_error()`, `prmhd_functions()` (CDynamicLibrary).
PRDL_DECLARE(prmhd, PRMHD_FUNCTIONS)

/// MHD_start_daemon is variadic: starts a daemon on `address` (IPv4 or IPv6, port inside) with the
/// given flags, an accept policy and a connection notification (both with `policy_context`, which
/// the request-completed callback gets too), the access handler, an idle timeout per connection and
/// a total limit.
struct MHD_Daemon *prmhd_start_daemon(unsigned int flags, const struct sockaddr *address,
                                      MHD_AcceptPolicyCallback accept_policy,
                                      MHD_NotifyConnectionCallback notify_connection, void *policy_context,
                                      MHD_AccessHandlerCallback handler, void *handler_context,
                                      MHD_RequestCompletedCallback completed,
                                      unsigned int connection_timeout_seconds,
                                      unsigned int connection_limit);

/// A socket address's IP address as text (IPv4-mapped IPv6 addresses as plain IPv4) into `out`;
/// 0 on success, -1 if it is neither family (the accept policy sees only the address).
int prmhd_address_text(const struct sockaddr *address, char *out, size_t length);

/// MHD_get_daemon_info is variadic: the port the daemon listens on, 0 if unknown.
uint16_t prmhd_daemon_port(struct MHD_Daemon *daemon);

/// MHD_get_connection_info is variadic: the client's IP address as text (IPv4-mapped IPv6
/// addresses as plain IPv4) into `out`; 0 on success, -1 if unknown.
int prmhd_client_address(struct MHD_Connection *connection, char *out, size_t length);

/// MHD_get_connection_info is variadic: the connection's socket, -1 if unknown (for a stream to see
/// that its client hung up while it waits).
int prmhd_connection_fd(struct MHD_Connection *connection);

#endif
