#!/usr/bin/env bash
# testbed.sh — a throwaway LAN of network namespaces for partyradio's integration tests.
#
# Rule one: multicast never leaves a test namespace. Every avahi-daemon, D-Bus bus for avahi and
# multicast sender this script starts lives inside a network namespace it created, and every
# entry into a host is checked against the root namespace first. See docs/TESTBED.md.
#
# Usage: scripts/testbed.sh <command> [arguments]   (run with --help for the list)
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
readonly SELF
readonly STATE_ROOT=${PARTYRADIO_TESTBED_DIR:-/tmp/partyradio-testbed}
readonly PACKAGES=(avahi-daemon avahi-utils dbus iproute2 iptables procps)
readonly MAX_HOSTS=50
readonly READY_TIMEOUT_S=${PARTYRADIO_TESTBED_READY_TIMEOUT:-30}

usage() {
    cat <<'EOF'
OVERVIEW: A LAN of network namespaces for partyradio integration tests (needs root).

USAGE: scripts/testbed.sh <command> [arguments]

COMMANDS:
  up N [--name PREFIX] [--tag TAG] [--ip v4|v6|dual] [--subnets 2]
                                Build a LAN of N hosts (PREFIX1..PREFIXN) and print its name.
                                --ip: IPv4 only (default), IPv6 only (ULA fd99:X::N/64 and
                                link-local, no IPv4 address at all), or both.
                                --subnets 2: hosts 1..ceil(N/2) on one subnet, the rest on another,
                                joined by a router (host N+1) that forwards unicast only (in
                                the LAN's families; v6 subnets fd99:X::/64 and fd99:Y::/64).
  run NAME HOST CMD...          Run CMD on HOST in the foreground; its exit code is ours.
  spawn NAME HOST LOGFILE CMD...
                                Run CMD on HOST in the background (output to LOGFILE); print its PID.
  ip NAME HOST [--4|--6]        Print HOST's address: its IPv4 address on a v4 or dual LAN, its
                                IPv6 (ULA) address on a v6 LAN; --4/--6 ask for one family.
  pid NAME HOST                 Print the PID of HOST's init process (the namespace handle).
  loss NAME HOST PERCENT [--in|--out|--both]
                                Drop PERCENT of packets on HOST's eth0 (default inbound); 0 clears.
  down-link NAME HOST           Pull HOST's cable (its switch port goes down; eth0 loses carrier).
  up-link NAME HOST             Plug the cable back in.
  stop-avahi NAME HOST          Stop HOST's avahi-daemon.
  start-avahi NAME HOST         Start it again and wait until it answers.
  down NAME                     Kill everything in NAME's namespaces and delete them (idempotent).
  down-all [--stale] [--tag TAG]
                                down every partyradio testbed; --stale: only those whose owner (the
                                process that ran `up`) has exited; --tag: only those made with TAG.
  list                          Print the names of the testbeds on this machine.
  audit                         Rule-one check: list processes of testbed hosts found in the root
                                network namespace, and any avahi-daemon there; exit 1 if any.
  selftest                      Check the testbed itself on 2 hosts; prints PASS/FAIL lines.

HOST is a 1-based index or the host's full name (PREFIX<i>).
EOF
}

log() { echo "testbed: $*" >&2; }
die() {
    echo "Error: $*" >&2
    exit 1
}

require_root() { [[ $(id -u) -eq 0 ]] || die "testbed needs root (network namespaces, mounts, iptables)."; }

# ---------------------------------------------------------------------------------------------
# Rule one: namespace checks
# ---------------------------------------------------------------------------------------------

# root_netns — the machine's root network namespace, as "net:[inode]". PID 1's link is the usual
# handle, but PID 1 may hide it (seen: Permission denied), so kthreadd, which always lives in the
# root namespace, stands in.
root_netns() {
    local link
    link=$(readlink /proc/1/ns/net 2>/dev/null) ||
        { [[ $(cat /proc/2/comm 2>/dev/null) == kthreadd ]] && link=$(readlink /proc/2/ns/net 2>/dev/null); } ||
        die "rule one: cannot read the root network namespace (/proc/1/ns/net, /proc/2/ns/net); refusing."
    echo "$link"
}

# Namespaces nothing of ours may run in: the root one and the caller's own (set in main).
FORBIDDEN_NETNS=""
forbidden_netns() {
    [[ -n $FORBIDDEN_NETNS ]] || die "rule one: the forbidden namespaces are unknown; refusing."
    echo "$FORBIDDEN_NETNS"
}

# is_forbidden LINK FORBIDDEN — is LINK one of the space-separated FORBIDDEN links?
is_forbidden() { [[ " $2 " == *" $1 "* ]]; }

# netns_link NS — the "net:[inode]" link of the named namespace NS.
netns_link() {
    local ino
    ino=$(stat -L -c %i "/run/netns/$1" 2>/dev/null) || return 1
    echo "net:[$ino]"
}

# avahi_pids_in_root_netns — avahi-daemons in the root network namespace (a rule-one violation).
avahi_pids_in_root_netns() {
    local pid ns forbidden
    forbidden=$(forbidden_netns)
    for pid in $(pgrep -x avahi-daemon || true); do
        ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null) || continue # exited or a zombie
        is_forbidden "$ns" "$forbidden" && echo "$pid"
    done
    return 0
}

# On CI and shared machines an avahi-daemon in the root namespace means some install step broke
# rule one, so we stop. A developer desktop runs its own on purpose: PARTYRADIO_TESTBED_ALLOW_ROOT_AVAHI=1.
refuse_if_root_avahi() {
    local pids
    pids=$(avahi_pids_in_root_netns)
    [[ -z $pids ]] && return 0
    if [[ ${PARTYRADIO_TESTBED_ALLOW_ROOT_AVAHI:-0} == 1 ]]; then
        log "warning: avahi-daemon runs in the root network namespace (PIDs: $(echo $pids)); allowed by PARTYRADIO_TESTBED_ALLOW_ROOT_AVAHI=1."
        return 0
    fi
    die "rule one: avahi-daemon runs in the root network namespace (PIDs: $(echo $pids)).
It multicasts on the machine's real network. Stop it (kill $(echo $pids)) before using the testbed,
or, on a desktop whose own avahi-daemon that is, set PARTYRADIO_TESTBED_ALLOW_ROOT_AVAHI=1."
}

# audit_root_netns — print every process in the root (or the caller's) network namespace that
# carries a testbed host's mark (PARTYRADIO_TESTBED_HOST in its environment, set for everything
# started on a host) — each is a rule-one violation. Returns 1 if there is any.
audit_root_netns() {
    local forbidden procdir pid ns found=0
    forbidden=$(forbidden_netns)
    for procdir in /proc/[0-9]*; do
        pid=${procdir#/proc/}
        ns=$(readlink "$procdir/ns/net" 2>/dev/null) || continue
        is_forbidden "$ns" "$forbidden" || continue
        if tr '\0' '\n' 2>/dev/null <"$procdir/environ" | grep -q '^PARTYRADIO_TESTBED_HOST='; then
            echo "rule one: PID $pid ($(cat "$procdir/comm" 2>/dev/null)) of host $(tr '\0' '\n' <"$procdir/environ" |
                sed -n 's/^PARTYRADIO_TESTBED_HOST=//p') runs in the root network namespace $ns"
            found=1
        fi
    done
    return $((found))
}

# ---------------------------------------------------------------------------------------------
# Starting processes cleanly
# ---------------------------------------------------------------------------------------------

# Children of Foundation's Process (and of Dispatch threads) arrive with SIGTERM, SIGUSR1 and most
# other signals blocked (swift-corelibs-foundation#4772), and bash's `&` ignores SIGINT/SIGQUIT.
# Everything we start goes through this: an empty mask, default dispositions, then exec.
readonly CLEAN_SIGNALS=(perl -MPOSIX -e '
    sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die "sigprocmask: $!\n";
    $SIG{$_} = "DEFAULT" for qw(HUP INT QUIT PIPE TERM USR1 USR2);
    exec {$ARGV[0]} @ARGV or die "exec $ARGV[0]: $!\n";')

# close_extra_fds — close every descriptor above stderr (call in a subshell before exec).
# Foundation's Process sees its child exit when an inherited socket closes; a daemon of ours that
# kept it (or a pipe of the caller's) would make the caller wait forever.
close_extra_fds() {
    local fd
    for fd in /proc/$BASHPID/fd/*; do
        fd=${fd##*/}
        if ((fd > 2)); then eval "exec $fd>&-"; fi
    done
}

# ---------------------------------------------------------------------------------------------
# Packages
# ---------------------------------------------------------------------------------------------

# ensure_packages [EXTRA-COMMAND EXTRA-PACKAGE] — install PACKAGES (and EXTRA-PACKAGE) when a
# command we need is missing.
ensure_packages() {
    local missing=() cmd packages=("${PACKAGES[@]}")
    for cmd in avahi-daemon avahi-browse avahi-publish dbus-daemon dbus-send ip iptables pgrep nsenter unshare setsid flock perl ${1:-}; do
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    [[ -n ${2:-} ]] && packages+=("$2")
    log "missing ${missing[*]}; installing ${packages[*]}"

    # Debian's maintainer scripts start avahi-daemon (invoke-rc.d) on install — in the root
    # namespace. A policy-rc.d that answers 101 forbids that; we restore whatever was there.
    local policy=/usr/sbin/policy-rc.d backup=""
    if [[ -e $policy ]]; then
        backup=$(mktemp /tmp/partyradio-policy-rc.d.XXXXXX)
        cp -p "$policy" "$backup"
    fi
    printf '#!/bin/sh\n# partyradio testbed: never start services while installing\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    POLICY_RESTORE="if [[ -n '$backup' ]]; then mv -f '$backup' '$policy'; else rm -f '$policy'; fi"
    trap 'eval "$POLICY_RESTORE"' EXIT
    trap 'exit 130' INT TERM HUP
    local rc=0
    {
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}" ||
            { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"; }
    } >&2 || rc=$?
    eval "$POLICY_RESTORE"
    trap - EXIT INT TERM HUP
    [[ $rc -eq 0 ]] || die "apt-get install ${packages[*]} failed (exit $rc)."

    local pids
    pids=$(avahi_pids_in_root_netns)
    if [[ -n $pids ]]; then
        kill $pids 2>/dev/null || true
        die "rule one: installing avahi-daemon started it in the root network namespace (PIDs: $(echo $pids)); killed it. Check policy-rc.d/systemd before going on."
    fi
}

# ---------------------------------------------------------------------------------------------
# State: $STATE_ROOT/NAME/state holds KEY=VALUE lines; the last value of a key wins.
# ---------------------------------------------------------------------------------------------

state_dir() { echo "$STATE_ROOT/$1"; }
state_file() { echo "$STATE_ROOT/$1/state"; }
state_get() { sed -n "s/^$2=//p" "$(state_file "$1")" 2>/dev/null | tail -n 1; }
state_all() { sed -n "s/^$2=//p" "$(state_file "$1")" 2>/dev/null; }
state_set() { echo "$2=$3" >>"$(state_file "$1")"; }

# proc_start PID — the process's start time in clock ticks (with its PID, it names one process).
proc_start() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'; }

validate_name() {
    # Ending in a letter keeps host names (NAME<i>) and the bridge (NAMElan) of different testbeds apart.
    [[ $1 =~ ^[a-z]([a-z0-9]{0,10}[a-z])?$ ]] ||
        die "bad testbed name '$1': use 1-12 of [a-z0-9], starting and ending with a letter."
}

require_testbed() {
    validate_name "$1"
    [[ -f $(state_file "$1") ]] || die "no testbed '$1' (no $(state_file "$1")). Hint: scripts/testbed.sh list"
}

# host_index NAME HOST — resolve HOST (index or full name) to its 1-based index.
host_index() {
    local name=$1 host=$2 n
    n=$(state_get "$name" HOSTS)
    [[ $host == "$name"* && ${host#"$name"} =~ ^[0-9]+$ ]] && host=${host#"$name"}
    [[ $host =~ ^[0-9]+$ ]] && ((host >= 1 && host <= n)) || die "testbed '$name' has no host '$2' (hosts 1..$n)."
    echo "$((10#$host))"
}

# host_pid NAME I — the init PID of host I, checked to sit in that host's namespace and not in the root one.
host_pid() {
    local name=$1 i=$2 pid ns want forbidden
    pid=$(state_get "$name" "HOST${i}_PID")
    [[ -n $pid && -d /proc/$pid ]] || die "host $i of '$name' has no live init process (PID '${pid}')."
    ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null) || die "cannot read the namespace of PID $pid."
    want=$(netns_link "$name$i") || die "network namespace $name$i is gone."
    forbidden=$(forbidden_netns)
    ! is_forbidden "$ns" "$forbidden" || die "rule one: PID $pid is in the root (or the caller's) network namespace; refusing."
    [[ $ns == "$want" ]] || die "rule one: PID $pid is in $ns, not in $name$i ($want); refusing."
    echo "$pid"
}

# The guard runs as the first thing inside the host: it re-checks the namespace from within and
# only then execs the command, so a wrong PID can never start a command in the root namespace.
# It also marks the command (PARTYRADIO_TESTBED_HOST) so that `audit` can find strays.
# Arguments: EXPECTED-LINK "FORBIDDEN-LINKS" HOST-NAME CMD...
readonly GUARD='me=$(readlink /proc/self/ns/net)
case " $2 $(readlink /proc/1/ns/net 2>/dev/null) " in *" $me "*) me_forbidden=1 ;; *) me_forbidden=0 ;; esac
if [ "$me_forbidden" = 1 ] || [ "$me" != "$1" ]; then
  echo "Error: rule one: refusing to run in network namespace $me (expected $1, forbidden $2)" >&2; exit 97
fi
PARTYRADIO_TESTBED_HOST=$3; export PARTYRADIO_TESTBED_HOST
shift 3; exec "$@"'

# host_exec_argv NAME I CMD... — set EXEC_ARGV to the command line that runs CMD inside host I.
host_exec_argv() {
    local name=$1 i=$2 pid want cmd
    shift 2
    [[ $# -ge 1 ]] || die "no command given."
    pid=$(host_pid "$name" "$i")
    want=$(netns_link "$name$i")
    cmd=$1
    shift
    if [[ $cmd != /* ]]; then
        cmd=$(type -P "$cmd") || die "command '$cmd' not found in PATH."
    fi
    EXEC_ARGV=("${CLEAN_SIGNALS[@]}" nsenter -t "$pid" -m -n -- /bin/sh -c "$GUARD" guard "$want" "$(forbidden_netns)" "$name$i" "$cmd" "$@")
}

# ---------------------------------------------------------------------------------------------
# up
# ---------------------------------------------------------------------------------------------

# pick_subnet — a third octet X for 10.99.X.0/24 that no testbed and no namespace uses yet.
pick_subnet() {
    local used=" " ns x
    for x in $(cat "$STATE_ROOT"/*/state 2>/dev/null | sed -n 's/^SUBNET2\{0,1\}=10\.99\.//p'); do used+="$x "; done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
        for x in $(ip -n "$ns" -4 -o addr show 2>/dev/null | grep -o 'inet 10\.99\.[0-9]*\.' | cut -d. -f3); do
            used+="$x "
        done
    done
    for x in $(seq 10 254); do
        [[ $used == *" $x "* ]] || { echo "$x"; return 0; }
    done
    die "no free 10.99.X.0/24 subnet left; run scripts/testbed.sh down-all --stale."
}

# avahi_conf HOST FAMILY — FAMILY v4, v6 or dual says which protocols avahi speaks.
avahi_conf() {
    local v4=yes v6=no
    case $2 in v6) v4=no; v6=yes ;; dual) v6=yes ;; esac
    cat <<EOF
# partyradio testbed: host $1 — generated by scripts/testbed.sh
[server]
host-name=$1
domain-name=local
use-ipv4=$v4
use-ipv6=$v6
allow-interfaces=eth0
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
publish-aaaa-on-ipv4=no
publish-a-on-ipv6=no
[reflector]
enable-reflector=no
[rlimits]
EOF
}

# avahi_ready PID — does the avahi-daemon of the host whose init is PID answer on D-Bus, running?
avahi_ready() {
    nsenter -t "$1" -m -n -- dbus-send --system --print-reply --reply-timeout=1000 \
        --dest=org.freedesktop.Avahi / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'
}

# wait_avahi DIR I PID DEADLINE — wait until host I's avahi-daemon answers. A daemon that exited on
# its way up (on a loaded machine it can give up on a D-Bus bus that is not there yet) is started
# again through its init (USR1), up to three times; 1 when the init dies or DEADLINE passes.
wait_avahi() {
    local dir=$1 i=$2 pid=$3 deadline=$4 restarts=0 apid
    until avahi_ready "$pid"; do
        kill -0 "$pid" 2>/dev/null || { echo "testbed: host $i's init died" >&2; return 1; }
        (($(date +%s) < deadline)) || return 1
        apid=$(cat "$dir/avahi-$i.pid" 2>/dev/null || true)
        if [[ -n $apid ]] && ! kill -0 "$apid" 2>/dev/null && ((restarts < 3)); then
            restarts=$((restarts + 1))
            log "avahi-daemon on host $i exited on its way up; starting it again ($restarts of 3)."
            echo "testbed: avahi-daemon $apid exited; restart $restarts" >>"$dir/host$i.log"
            kill -USR1 "$pid"
            sleep 0.5
        fi
        sleep 0.1
    done
}

cmd_up() {
    local n="" name="" tag="" family=v4 subnets=1 start
    start=$(date +%s.%N)
    while [[ $# -gt 0 ]]; do
        case $1 in
            --name) name=${2:-}; shift 2 || die "--name needs a value." ;;
            --name=*) name=${1#--name=}; shift ;;
            --tag) tag=${2:-}; shift 2 || die "--tag needs a value." ;;
            --tag=*) tag=${1#--tag=}; shift ;;
            --ip) family=${2:-}; shift 2 || die "--ip needs v4, v6 or dual." ;;
            --ip=*) family=${1#--ip=}; shift ;;
            --subnets) subnets=${2:-}; shift 2 || die "--subnets needs a value." ;;
            -*) die "unknown option '$1'. See 'scripts/testbed.sh --help'." ;;
            *) [[ -z $n ]] || die "unexpected argument '$1'."; n=$1; shift ;;
        esac
    done
    [[ $family =~ ^(v4|v6|dual)$ ]] || die "--ip takes v4, v6 or dual, not '$family'. See 'scripts/testbed.sh --help'."
    [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= MAX_HOSTS)) || die "up needs a host count 1..$MAX_HOSTS. See 'scripts/testbed.sh --help'."
    [[ $subnets == 1 || ($subnets == 2 && $n -ge 2 && $n -lt MAX_HOSTS) ]] ||
        die "--subnets takes 1 or 2 (2 needs 2..$((MAX_HOSTS - 1)) hosts)."
    [[ -n $name ]] || name="pr$$h"
    [[ $tag =~ ^[a-z0-9-]{0,32}$ ]] || die "bad tag '$tag': use up to 32 of [a-z0-9-]."
    validate_name "$name"
    require_root
    ensure_packages
    refuse_if_root_avahi

    local dir x y="" hosts=$n
    ((subnets == 2)) && hosts=$((n + 1))  # the router is one more host
    dir=$(state_dir "$name")
    mkdir -p "$STATE_ROOT"
    {
        flock 9
        [[ ! -e $dir ]] || die "testbed '$name' exists already ($dir). Hint: scripts/testbed.sh down $name"
        x=$(pick_subnet)
        mkdir -p "$dir"
        {
            echo "NAME=$name"
            echo "HOSTS=$hosts"
            echo "SUBNET=10.99.$x"
            echo "BRIDGE_NS=${name}lan"
            echo "OWNER_PID=$PPID"
            echo "OWNER_START=$(proc_start "$PPID")"
            echo "TAG=$tag"
            echo "FAMILY=$family"
        } >"$dir/state"
        if ((subnets == 2)); then
            y=$(pick_subnet)
            state_set "$name" SUBNET2 "10.99.$y"
            state_set "$name" ROUTER "$hosts"
        fi
    } 9>"$STATE_ROOT/.lock"

    # From here on a failure tears down whatever was built.
    UP_NAME=$name
    trap 'rc=$?; if [[ $rc -ne 0 ]]; then log "up failed; tearing down $UP_NAME"; cmd_down "$UP_NAME" >/dev/null 2>&1 || true; fi' EXIT
    trap 'exit 130' INT TERM HUP

    local br="${name}lan" i h forbidden mnt
    forbidden=$(forbidden_netns)
    mnt=$(readlink /proc/self/ns/mnt)
    ip netns add "$br"
    state_set "$name" NETNS "$br"
    # The switch itself has no address of either family; it must not speak IPv6 (router
    # solicitations, MLD) on its own.
    ip netns exec "$br" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    # A dumb switch: no IGMP snooping (it floods multicast, like the cheap switch at a LAN party), no STP.
    ip -n "$br" link add br0 type bridge mcast_snooping 0 stp_state 0
    ip -n "$br" link set br0 up
    ip -n "$br" link set lo up
    if ((subnets == 2)); then
        # The second subnet's switch: a bridge of its own, so no frame (and no multicast) crosses.
        ip -n "$br" link add br1 type bridge mcast_snooping 0 stp_state 0
        ip -n "$br" link set br1 up
    fi

    local side net switch
    for ((i = 1; i <= hosts; i++)); do
        h="$name$i"
        ip netns add "$h"
        state_set "$name" NETNS "$h"
        if [[ $family == v4 ]]; then
            ip netns exec "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
        else
            # No duplicate address detection: the addresses are ours alone, and DAD would hold
            # them "tentative" (unusable) for a second or more after eth0 comes up. No router
            # advertisements are taken either: there is no router, and none may configure us.
            ip netns exec "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
                net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0 \
                net.ipv6.conf.default.dad_transmits=0 net.ipv6.conf.all.dad_transmits=0 \
                net.ipv6.conf.default.accept_ra=0 net.ipv6.conf.all.accept_ra=0
        fi
        side=a net=$x switch=br0
        if ((subnets == 2 && i > (n + 1) / 2 && i <= n)); then side=b net=$y switch=br1; fi
        ip -n "$br" link add "v$i" type veth peer name eth0 netns "$h"
        ip -n "$br" link set "v$i" master "$switch" up
        ip -n "$h" link set lo up
        if ((subnets == 2 && i == hosts)); then
            # The router: eth0 on subnet a, eth1 on subnet b, unicast forwarding on. No multicast
            # routing daemon runs, so the kernel forwards no multicast: each side's mDNS stays there.
            ip -n "$br" link add "w$i" type veth peer name eth1 netns "$h"
            ip -n "$br" link set "w$i" master br1 up
            if [[ $family != v6 ]]; then
                ip -n "$h" addr add "10.99.$x.254/24" dev eth0
                ip -n "$h" addr add "10.99.$y.254/24" dev eth1
                ip netns exec "$h" sysctl -qw net.ipv4.ip_forward=1
                state_set "$name" "HOST${i}_IP" "10.99.$x.254"
                state_set "$name" "HOST${i}_IP2" "10.99.$y.254"
            fi
            if [[ $family != v4 ]]; then
                # IPv6 unicast forwarding (which also makes the kernel ignore router advertisements);
                # no DAD, as on the hosts. Multicast is not forwarded: no MLD proxy, no PIM.
                ip netns exec "$h" sysctl -qw net.ipv6.conf.all.forwarding=1 \
                    net.ipv6.conf.eth0.disable_ipv6=0 net.ipv6.conf.eth0.accept_dad=0 \
                    net.ipv6.conf.eth0.dad_transmits=0 net.ipv6.conf.eth1.disable_ipv6=0 \
                    net.ipv6.conf.eth1.accept_dad=0 net.ipv6.conf.eth1.dad_transmits=0
                ip -n "$h" addr add "fd99:$x::254/64" dev eth0 nodad
                ip -n "$h" addr add "fd99:$y::254/64" dev eth1 nodad
                state_set "$name" "HOST${i}_IP6" "fd99:$x::254"
                state_set "$name" "HOST${i}_IP62" "fd99:$y::254"
            fi
            ip -n "$h" link set eth0 up
            ip -n "$h" link set eth1 up
            [[ $family == v6 ]] || ip -n "$h" route add 224.0.0.0/4 dev eth0
            state_set "$name" "HOST${i}_SIDE" router
        else
            if [[ $family != v6 ]]; then
                ip -n "$h" addr add "10.99.$net.$i/24" dev eth0
                state_set "$name" "HOST${i}_IP" "10.99.$net.$i"
            fi
            if [[ $family != v4 ]]; then
                ip netns exec "$h" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=0 net.ipv6.conf.eth0.accept_dad=0 \
                    net.ipv6.conf.eth0.dad_transmits=0 \
                    net.ipv6.conf.eth0.accept_ra=0
                ip -n "$h" addr add "fd99:$net::$i/64" dev eth0 nodad
                state_set "$name" "HOST${i}_IP6" "fd99:$net::$i"
            fi
            ip -n "$h" link set eth0 up
            # Hosts have no default route on one LAN; multicast needs one to leave through eth0
            # (IPv6 has a link-local ff00::/8 route per interface by itself).
            [[ $family == v6 ]] || ip -n "$h" route add 224.0.0.0/4 dev eth0
            if ((subnets == 2)); then
                [[ $family == v6 ]] || ip -n "$h" route add default via "10.99.$net.254" dev eth0
                [[ $family == v4 ]] || ip -n "$h" -6 route add default via "fd99:$net::254" dev eth0
                state_set "$name" "HOST${i}_SIDE" "$side"
            fi
        fi
        avahi_conf "$h" "$family" >"$dir/avahi-$i.conf"
        (
            close_extra_fds
            exec setsid "${CLEAN_SIGNALS[@]}" ip netns exec "$h" unshare -m --propagation private \
                "$SELF" _host-init "$name" "$i" "$forbidden" "$mnt"
        ) >>"$dir/host$i.log" 2>&1 </dev/null &
    done

    # Wait for every init to report its PID, then for every avahi-daemon to answer on its own bus.
    local deadline pid
    deadline=$(($(date +%s) + READY_TIMEOUT_S))
    for ((i = 1; i <= hosts; i++)); do
        until [[ -s $dir/host$i.pid ]]; do
            (($(date +%s) < deadline)) || die "host $i did not start (see $dir/host$i.log)."
            sleep 0.05
        done
        state_set "$name" "HOST${i}_PID" "$(cat "$dir/host$i.pid")"
    done
    for ((i = 1; i <= hosts; i++)); do
        pid=$(host_pid "$name" "$i")
        wait_avahi "$dir" "$i" "$pid" "$deadline" || die "avahi-daemon on host $i is not running after ${READY_TIMEOUT_S}s; its host's log:
$(tail -n 20 "$dir/host$i.log" 2>/dev/null)"
    done
    refuse_if_root_avahi
    trap - EXIT
    local where="on 10.99.$x.0/24"
    [[ $family == v4 ]] || where="on 10.99.$x.0/24 / fd99:$x::/64"
    if ((subnets == 2)); then
        case $family in
            v4) where="on 10.99.$x.0/24 and 10.99.$y.0/24, router host $hosts" ;;
            v6) where="on fd99:$x::/64 and fd99:$y::/64, router host $hosts" ;;
            dual) where="on 10.99.$x.0/24 / fd99:$x::/64 and 10.99.$y.0/24 / fd99:$y::/64, router host $hosts" ;;
        esac
    fi
    log "up $name: $n hosts ($family) $where in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')s"
    echo "$name"
}

# _host-init NAME I — PID 1 of a host in spirit: runs inside the host's fresh network and mount
# namespaces, gives it a private /run with its own D-Bus system bus and avahi-daemon, and stays
# alive as the handle that nsenter uses. USR1 starts avahi-daemon, USR2 stops it.
cmd_host_init() {
    local name=$1 i=$2 forbidden=$3 caller_mnt=$4 dir me
    dir=$(state_dir "$name")
    me=$(readlink /proc/self/ns/net)
    if [[ -z $forbidden ]] || is_forbidden "$me" "$forbidden $ROOT_NETNS" || [[ $me != "$(netns_link "$name$i")" ]]; then
        echo "Error: rule one: host init is in network namespace $me, not in $name$i; refusing." >&2
        exit 97
    fi
    if [[ -z $caller_mnt || $(readlink /proc/self/ns/mnt) == "$caller_mnt" ]]; then
        echo "Error: host init shares the root mount namespace; refusing to mount over /run." >&2
        exit 97
    fi
    export PARTYRADIO_TESTBED_HOST="$name$i"
    mount --make-rprivate /
    mount -t tmpfs -o mode=0755,size=16m "partyradio-$name$i-run" /run
    # Static services from the machine's /etc/avahi/services must not appear on our LAN.
    mount -t tmpfs -o mode=0755,size=1m "partyradio-$name$i-services" /etc/avahi/services
    mkdir -p /run/dbus /run/avahi-daemon /run/lock

    local dbus_pid avahi_pid="" sleep_pid
    dbus-daemon --system --nofork --nopidfile &
    dbus_pid=$!
    # avahi-daemon gives up without its bus: wait for the socket as long as `up` waits for us.
    for _ in $(seq $((READY_TIMEOUT_S * 20))); do [[ -S /run/dbus/system_bus_socket ]] && break; sleep 0.05; done

    start_avahi() {
        if [[ -n $avahi_pid ]] && kill -0 "$avahi_pid" 2>/dev/null; then return 0; fi
        avahi-daemon --no-chroot --no-rlimits -f "$dir/avahi-$i.conf" </dev/null &
        avahi_pid=$!
        echo "$avahi_pid" >"$dir/avahi-$i.pid"
    }
    stop_avahi() {
        if [[ -n $avahi_pid ]]; then
            kill -TERM "$avahi_pid" 2>/dev/null || true
            wait "$avahi_pid" 2>/dev/null || true
            avahi_pid=""
            rm -f "$dir/avahi-$i.pid"
        fi
    }
    shutdown() {
        trap - TERM INT USR1 USR2
        stop_avahi
        kill -TERM "$dbus_pid" "$sleep_pid" 2>/dev/null || true
        wait 2>/dev/null || true
        exit 0
    }
    trap start_avahi USR1
    trap stop_avahi USR2
    trap shutdown TERM INT
    start_avahi
    echo $$ >"$dir/host$i.pid.tmp" && mv "$dir/host$i.pid.tmp" "$dir/host$i.pid"

    # Stay alive and reap children (the machine's PID 1 may not reap orphans).
    sleep infinity &
    sleep_pid=$!
    while :; do
        wait "$sleep_pid" 2>/dev/null || true
        kill -0 "$sleep_pid" 2>/dev/null || { sleep infinity & sleep_pid=$!; }
    done
}

# ---------------------------------------------------------------------------------------------
# Commands on hosts
# ---------------------------------------------------------------------------------------------

cmd_run() {
    [[ $# -ge 3 ]] || die "usage: run NAME HOST CMD... See 'scripts/testbed.sh --help'."
    require_root
    require_testbed "$1"
    local i
    i=$(host_index "$1" "$2")
    host_exec_argv "$1" "$i" "${@:3}"
    exec "${EXEC_ARGV[@]}"
}

cmd_spawn() {
    [[ $# -ge 4 ]] || die "usage: spawn NAME HOST LOGFILE CMD... See 'scripts/testbed.sh --help'."
    require_root
    require_testbed "$1"
    local i logfile=$3
    i=$(host_index "$1" "$2")
    host_exec_argv "$1" "$i" "${@:4}"
    # No job control here, so setsid does not fork: $! is the PID the command ends up with.
    (
        close_extra_fds
        exec setsid "${EXEC_ARGV[@]}"
    ) >>"$logfile" 2>&1 </dev/null &
    echo "$!"
}

cmd_ip() {
    local want=""
    if [[ $# -eq 3 ]]; then
        case $3 in --4) want=4 ;; --6) want=6 ;; *) die "usage: ip NAME HOST [--4|--6]" ;; esac
    fi
    [[ $# -eq 2 || -n $want ]] || die "usage: ip NAME HOST [--4|--6]"
    require_testbed "$1"
    local i v4 v6
    i=$(host_index "$1" "$2")
    v4=$(state_get "$1" "HOST${i}_IP")
    v6=$(state_get "$1" "HOST${i}_IP6")
    case $want in
        4) [[ -n $v4 ]] || die "host $2 of $1 has no IPv4 address (an IPv6-only LAN)."; echo "$v4" ;;
        6) [[ -n $v6 ]] || die "host $2 of $1 has no IPv6 address (an IPv4-only LAN)."; echo "$v6" ;;
        *) echo "${v4:-$v6}" ;;
    esac
}

cmd_pid() {
    [[ $# -eq 2 ]] || die "usage: pid NAME HOST"
    require_root
    require_testbed "$1"
    local i
    i=$(host_index "$1" "$2")
    host_pid "$1" "$i"
}

# ipt NAME I ARGS... — iptables inside host I, and ip6tables too on a LAN with IPv6 (the same
# rule for both families); fails with the first failure's status.
ipt() {
    local pid tool rc=0 status family
    pid=$(host_pid "$1" "$2")
    family=$(state_get "$1" FAMILY)
    local tools=(iptables)
    [[ $family == v6 || $family == dual ]] && tools+=(ip6tables)
    shift 2
    for tool in "${tools[@]}"; do
        status=0
        nsenter -t "$pid" -m -n -- "$tool" -w "$@" || status=$?
        ((rc != 0)) || rc=$status
    done
    return "$rc"
}

cmd_loss() {
    [[ $# -ge 3 && $# -le 4 ]] || die "usage: loss NAME HOST PERCENT [--in|--out|--both]"
    require_root
    require_testbed "$1"
    local name=$1 i pct=$3 dir=${4:---in} prob chain hook flag
    i=$(host_index "$name" "$2")
    [[ $pct =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v p="$pct" 'BEGIN{exit !(p <= 100)}' ||
        die "PERCENT must be a number 0..100, not '$pct'."
    case $dir in --in | --out | --both) ;; *) die "unknown direction '$dir' (--in, --out or --both)." ;; esac
    prob=$(awk -v p="$pct" 'BEGIN{printf "%.4f", p / 100}')
    for chain in PR_LOSS_IN PR_LOSS_OUT; do
        if [[ $chain == PR_LOSS_IN ]]; then hook=INPUT flag=-i; else hook=OUTPUT flag=-o; fi
        ipt "$name" "$i" -N "$chain" 2>/dev/null || true
        ipt "$name" "$i" -C "$hook" -j "$chain" 2>/dev/null || ipt "$name" "$i" -I "$hook" 1 -j "$chain"
        ipt "$name" "$i" -F "$chain"
        awk -v p="$pct" 'BEGIN{exit !(p > 0)}' || continue
        [[ $dir == --both || ($dir == --in && $chain == PR_LOSS_IN) || ($dir == --out && $chain == PR_LOSS_OUT) ]] || continue
        if [[ $prob == 1.0000 ]]; then
            ipt "$name" "$i" -A "$chain" "$flag" eth0 -j DROP
        else
            ipt "$name" "$i" -A "$chain" "$flag" eth0 -m statistic --mode random --probability "$prob" -j DROP
        fi
    done
}

cmd_link() {
    local state=$1
    shift
    [[ $# -eq 2 ]] || die "usage: down-link|up-link NAME HOST"
    require_root
    require_testbed "$1"
    local i
    i=$(host_index "$1" "$2")
    # The switch side of the cable: the host keeps its address, eth0 just loses carrier.
    ip -n "$(state_get "$1" BRIDGE_NS)" link set "v$i" "$state"
}

cmd_stop_avahi() {
    [[ $# -eq 2 ]] || die "usage: stop-avahi NAME HOST"
    require_root
    require_testbed "$1"
    local i pid deadline
    i=$(host_index "$1" "$2")
    pid=$(host_pid "$1" "$i")
    kill -USR2 "$pid"
    deadline=$(($(date +%s) + 10))
    while [[ -e $(state_dir "$1")/avahi-$i.pid ]] || avahi_ready "$pid"; do
        (($(date +%s) < deadline)) || die "avahi-daemon on host $i did not stop."
        sleep 0.05
    done
}

cmd_start_avahi() {
    [[ $# -eq 2 ]] || die "usage: start-avahi NAME HOST"
    require_root
    require_testbed "$1"
    local i pid deadline
    i=$(host_index "$1" "$2")
    pid=$(host_pid "$1" "$i")
    kill -USR1 "$pid"
    deadline=$(($(date +%s) + READY_TIMEOUT_S))
    wait_avahi "$(state_dir "$1")" "$i" "$pid" "$deadline" ||
        die "avahi-daemon on host $i did not come back (see $(state_dir "$1")/host$i.log)."
}

# ---------------------------------------------------------------------------------------------
# down
# ---------------------------------------------------------------------------------------------

# kill_netns_pids NS — TERM, then (after a second) KILL, every process in network namespace NS.
kill_netns_pids() {
    local ns=$1 pids round
    for round in $(seq 40); do
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        [[ -n $pids ]] || return 0
        if ((round == 1)); then kill -TERM $pids 2>/dev/null || true; fi
        if ((round >= 20)); then kill -KILL $pids 2>/dev/null || true; fi
        sleep 0.05
    done
    log "processes left in $ns: $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
}

cmd_down() {
    [[ $# -eq 1 ]] || die "usage: down NAME"
    validate_name "$1"
    require_root
    local name=$1 dir ns namespaces init _
    dir=$(state_dir "$name")
    # Namespaces named in the state, plus any of the testbed's names left without one.
    namespaces=$( {
        state_all "$name" NETNS
        ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${name}([0-9]+|lan)\$" || true
    } | sort -u)
    for ns in $namespaces; do
        [[ -e /run/netns/$ns ]] || continue
        # The host init first: it stops and reaps its dbus-daemon and avahi-daemon.
        init=$(sed -n "s/^HOST${ns#"$name"}_PID=//p" "$dir/state" 2>/dev/null | tail -n 1)
        if [[ -n $init && $(readlink "/proc/$init/ns/net" 2>/dev/null) == "$(netns_link "$ns")" ]]; then
            kill -TERM "$init" 2>/dev/null || true
            for _ in $(seq 40); do [[ -e /proc/$init/ns/net ]] || break; sleep 0.05; done
        fi
        kill_netns_pids "$ns"
    done
    for ns in $namespaces; do
        [[ -e /run/netns/$ns ]] || continue
        ip netns del "$ns" 2>/dev/null || log "could not delete namespace $ns"
    done
    rm -rf "$dir"
}

cmd_down_all() {
    local stale=0 tag="" any_tag=1 dir name owner start
    while [[ $# -gt 0 ]]; do
        case $1 in
            --stale) stale=1; shift ;;
            --tag) tag=${2:-}; any_tag=0; shift 2 || die "--tag needs a value." ;;
            *) die "usage: down-all [--stale] [--tag TAG]" ;;
        esac
    done
    require_root
    for dir in "$STATE_ROOT"/*/; do
        [[ -f $dir/state ]] || continue
        name=$(basename "$dir")
        ((any_tag)) || [[ $(state_get "$name" TAG) == "$tag" ]] || continue
        if ((stale)); then
            owner=$(state_get "$name" OWNER_PID)
            start=$(state_get "$name" OWNER_START)
            if [[ -n $owner && -n $start && $(proc_start "$owner") == "$start" ]]; then
                continue
            fi
        fi
        log "down $name"
        cmd_down "$name"
    done
    # Namespaces of default-named testbeds whose state vanished.
    if ((!stale && any_tag)); then
        for name in $(ip netns list 2>/dev/null | awk '{print $1}' | sed -nE 's/^(pr[0-9]+h)([0-9]+|lan)$/\1/p' | sort -u); do
            log "down $name (no state)"
            cmd_down "$name"
        done
    fi
}

cmd_audit() {
    require_root
    local rc=0 pids
    audit_root_netns || rc=1
    pids=$(avahi_pids_in_root_netns)
    if [[ -n $pids ]]; then
        echo "rule one: avahi-daemon in the root network namespace: PIDs $(echo $pids)"
        [[ ${PARTYRADIO_TESTBED_ALLOW_ROOT_AVAHI:-0} == 1 ]] || rc=1
    fi
    return $rc
}

cmd_list() {
    local dir
    for dir in "$STATE_ROOT"/*/; do
        [[ -f $dir/state ]] && basename "$dir"
    done
    return 0
}

# ---------------------------------------------------------------------------------------------
# selftest
# ---------------------------------------------------------------------------------------------

SELFTEST_FAILS=0
pass() { echo "PASS: $*"; }
fail() {
    echo "FAIL: $*"
    SELFTEST_FAILS=$((SELFTEST_FAILS + 1))
}

cmd_selftest() {
    require_root
    ensure_packages python3 python3-minimal
    local name="pr$$st" t0 t1 out elapsed
    t0=$(date +%s.%N)
    SELFTEST_NAME=$name
    trap 'cmd_down "$SELFTEST_NAME" >/dev/null 2>&1 || true' EXIT
    "$SELF" up 2 --name "$name" >/dev/null || { fail "up 2"; return 1; }
    t1=$(date +%s.%N)
    pass "up 2 hosts in $(awk -v s="$t0" -v e="$t1" 'BEGIN{printf "%.1f", e-s}')s"

    local dir root h1 h2 ip1 ip2 pub rcv
    dir=$(state_dir "$name")
    root=$ROOT_NETNS
    ip1=$(cmd_ip "$name" 1)
    ip2=$(cmd_ip "$name" 2)

    # Commands land in the host's namespace, never the root one.
    h1=$("$SELF" run "$name" 1 readlink /proc/self/ns/net)
    h2=$("$SELF" run "$name" 2 readlink /proc/self/ns/net)
    if [[ $h1 == "$(netns_link "${name}1")" && $h2 == "$(netns_link "${name}2")" && $h1 != "$root" && $h2 != "$root" ]]; then
        pass "run lands in the host namespaces ($h1, $h2; root is $root)"
    else
        fail "run landed in $h1 / $h2 (root $root)"
    fi

    # mDNS: publish on host 1, resolve on host 2.
    pub=$("$SELF" spawn "$name" 1 "$dir/publish.log" avahi-publish -s "selftest-$name" _partyradio._udp 5353 "v=1")
    t0=$(date +%s.%N)
    out=""
    while :; do
        out=$("$SELF" run "$name" 2 timeout 5 avahi-browse -rtp _partyradio._udp 2>/dev/null || true)
        elapsed=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN{printf "%.2f", e-s}')
        grep -q "^=;eth0;IPv4;selftest-$name;_partyradio._udp;local;${name}1.local;$ip1;5353;" <<<"$out" && break
        awk -v e="$elapsed" 'BEGIN{exit !(e > 5)}' && break
        sleep 0.1
    done
    if grep -q "^=;eth0;IPv4;selftest-$name;_partyradio._udp;.*;$ip1;5353;" <<<"$out"; then
        if awk -v e="$elapsed" 'BEGIN{exit !(e <= 2.5)}'; then
            pass "avahi-browse on host 2 resolved host 1's _partyradio._udp service in ${elapsed}s"
        else
            fail "avahi-browse resolved the service only after ${elapsed}s (want ~2s)"
        fi
    else
        fail "avahi-browse on host 2 did not resolve the service in ${elapsed}s: $out"
    fi
    if [[ $(ip netns identify "$pub" 2>/dev/null) == "${name}1" ]]; then
        pass "avahi-publish (PID $pub) runs in ${name}1"
    else
        fail "avahi-publish (PID $pub) is in '$(ip netns identify "$pub" 2>/dev/null)', not ${name}1"
    fi

    # UDP multicast from host 1 reaches host 2.
    rcv=$("$SELF" spawn "$name" 2 "$dir/mcast-recv.log" python3 -u -c "
import os, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('239.255.1.2', 45999))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton('239.255.1.2') + socket.inet_aton('$ip2'))
print('ready', os.readlink('/proc/self/ns/net'), flush=True)
s.settimeout(5)
data, addr = s.recvfrom(1500)
print('got', data.decode(), addr[0], flush=True)
")
    for _ in $(seq 50); do grep -q ready "$dir/mcast-recv.log" 2>/dev/null && break; sleep 0.1; done
    "$SELF" run "$name" 1 python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
for _ in range(3):
    s.sendto(b'hello-$name', ('239.255.1.2', 45999)); time.sleep(0.2)
" || true
    for _ in $(seq 30); do grep -q '^got' "$dir/mcast-recv.log" 2>/dev/null && break; sleep 0.1; done
    if grep -q "^got hello-$name $ip1\$" "$dir/mcast-recv.log" 2>/dev/null; then
        pass "multicast 239.255.1.2 from host 1 ($ip1) received on host 2"
    else
        fail "multicast not received on host 2: $(cat "$dir/mcast-recv.log" 2>/dev/null)"
    fi
    if grep -qF "ready $h2" "$dir/mcast-recv.log" 2>/dev/null; then
        pass "multicast receiver (PID $rcv) ran in ${name}2 ($h2)"
    else
        fail "multicast receiver (PID $rcv) did not report ${name}2's namespace $h2"
    fi

    # Nothing of ours in the root namespace.
    local bad="" marked
    for pid in $(ip netns pids "${name}1") $(ip netns pids "${name}2"); do
        [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) != "$root" ]] || bad+=" $pid"
    done
    marked=$(for pid in $(ip netns pids "${name}1") $(ip netns pids "${name}2"); do
        tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -c '^PARTYRADIO_TESTBED_HOST=' || true
    done | grep -c 1 || true)
    [[ $marked -ge 4 ]] || bad+=" (only $marked host processes carry the PARTYRADIO_TESTBED_HOST mark)"
    out=$(audit_root_netns) || bad+=" $out"
    [[ -z $(avahi_pids_in_root_netns) ]] || bad+=" avahi-daemon $(echo $(avahi_pids_in_root_netns))"
    if ip maddr show 2>/dev/null | grep -q '239\.255\.1\.2'; then bad+=" root-ns-joined-239.255.1.2"; fi
    if [[ -z $bad ]]; then
        pass "audit: $marked marked host processes, none of ours and no avahi-daemon in the root network namespace"
    else
        fail "rule one:$bad"
    fi

    "$SELF" down "$name"
    if [[ -z $(ip netns list | awk '{print $1}' | grep -E "^${name}([0-9]+|lan)\$") && ! -e $dir ]]; then
        pass "down removed every namespace and the state"
    else
        fail "down left namespaces or state behind"
    fi
    trap - EXIT
    if ((SELFTEST_FAILS == 0)); then
        echo "PASS: selftest"
    else
        echo "FAIL: selftest ($SELFTEST_FAILS failures)"
        return 1
    fi
}

# ---------------------------------------------------------------------------------------------

main() {
    local cmd=${1:-}
    [[ $# -gt 0 ]] && shift
    case $cmd in "" | -h | --help | help) usage; [[ -n $cmd ]]; exit ;; esac
    ROOT_NETNS=$(root_netns)
    if [[ $cmd != _host-init ]]; then
        FORBIDDEN_NETNS=$(printf '%s\n' "$ROOT_NETNS" "$(readlink /proc/self/ns/net)" | sort -u | tr '\n' ' ')
    fi
    case $cmd in
        up) cmd_up "$@" ;;
        run) cmd_run "$@" ;;
        spawn) cmd_spawn "$@" ;;
        ip) cmd_ip "$@" ;;
        pid) cmd_pid "$@" ;;
        loss) cmd_loss "$@" ;;
        down-link) cmd_link down "$@" ;;
        up-link) cmd_link up "$@" ;;
        stop-avahi) cmd_stop_avahi "$@" ;;
        start-avahi) cmd_start_avahi "$@" ;;
        down) cmd_down "$@" ;;
        down-all) cmd_down_all "$@" ;;
        list) cmd_list ;;
        audit) cmd_audit ;;
        selftest | --self-test) cmd_selftest ;;
        _host-init) cmd_host_init "$@" ;;
        *) die "unknown command '$cmd'. See 'scripts/testbed.sh --help'." ;;
    esac
}

main "$@"
