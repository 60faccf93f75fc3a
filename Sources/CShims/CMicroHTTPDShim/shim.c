#include "CMicroHTTPDShim.h"

struct MHD_Daemon *prmhd_start_daemon(unsigned int flags, const struct sockaddr *address,
                                      MHD_AccessHandlerCallback handler, void *handler_context,
                                      unsigned int connection_timeout_seconds,
                                      unsigned int connection_limit,
                                      unsigned int per_ip_connection_limit) {
    // The port argument is ignored when MHD_OPTION_SOCK_ADDR is given.
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                            MHD_OPTION_END);
}

uint16_t prmhd_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}
