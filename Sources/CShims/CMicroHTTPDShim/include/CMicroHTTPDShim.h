// Typed wrappers for the libmicrohttpd calls Swift cannot make: the variadic ones.
#ifndef PARTYRADIO_CMICROHTTPD_SHIM_H
#define PARTYRADIO_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// MHD_start_daemon is variadic: starts a daemon on `address` (IPv4 or IPv6, port inside) with the
/// given flags, the access handler, a request-completed callback (its context is NULL), an idle
/// timeout per connection, a total limit and a limit per client address.
struct MHD_Daemon *prmhd_start_daemon(unsigned int flags, const struct sockaddr *address,
                                      MHD_AccessHandlerCallback handler, void *handler_context,
                                      MHD_RequestCompletedCallback completed,
                                      unsigned int connection_timeout_seconds,
                                      unsigned int connection_limit,
                                      unsigned int per_ip_connection_limit);

/// MHD_get_daemon_info is variadic: the port the daemon listens on, 0 if unknown.
uint16_t prmhd_daemon_port(struct MHD_Daemon *daemon);

/// MHD_get_connection_info is variadic: the client's IP address as text (IPv4-mapped IPv6
/// addresses as plain IPv4) into `out`; 0 on success, -1 if unknown.
int prmhd_client_address(struct MHD_Connection *connection, char *out, size_t length);

/// MHD_get_connection_info is variadic: the connection's socket, -1 if unknown (for a stream to see
/// that its client hung up while it waits).
int prmhd_connection_fd(struct MHD_Connection *connection);

#endif
