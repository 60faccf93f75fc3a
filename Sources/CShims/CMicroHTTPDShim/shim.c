#include "CMicroHTTPDShim.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

PRDL_DEFINE(prmhd, PRMHD_SONAME, "libmicrohttpd", "libmicrohttpd12", PRMHD_FUNCTIONS)

struct MHD_Daemon *prmhd_start_daemon(unsigned int flags, const struct sockaddr *address,
                                      MHD_AcceptPolicyCallback accept_policy,
                                      MHD_NotifyConnectionCallback notify_connection, void *policy_context,
                                      MHD_AccessHandlerCallback handler, void *handler_context,
                                      MHD_RequestCompletedCallback completed,
                                      unsigned int connection_timeout_seconds,
                                      unsigned int connection_limit) {
    // The port argument is ignored when MHD_OPTION_SOCK_ADDR is given.
    return prmhd_slots.MHD_start_daemon(flags, 0, accept_policy, policy_context, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, policy_context,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, policy_context,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_END);
}

int prmhd_address_text(const struct sockaddr *address, char *out, size_t length) {
    if (address == NULL || length == 0) return -1;
    const char *done = NULL;
    if (address->sa_family == AF_INET) {
        done = inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, out, length);
    } else if (address->sa_family == AF_INET6) {
        const struct in6_addr *v6 = &((const struct sockaddr_in6 *)address)->sin6_addr;
        // An IPv4 client on a dual-stack socket is shown as plain IPv4, as its datagrams are.
        if (IN6_IS_ADDR_V4MAPPED(v6)) {
            done = inet_ntop(AF_INET, &v6->s6_addr[12], out, length);
        } else {
            done = inet_ntop(AF_INET6, v6, out, length);
        }
    }
    return done == NULL ? -1 : 0;
}

uint16_t prmhd_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = prmhd_slots.MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int prmhd_client_address(struct MHD_Connection *connection, char *out, size_t length) {
    const union MHD_ConnectionInfo *info =
        prmhd_slots.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL) return -1;
    return prmhd_address_text(info->client_addr, out, length);
}

int prmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = prmhd_slots.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}
