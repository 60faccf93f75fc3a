#!/usr/bin/env bash
# ensure-packages.sh — install the Debian packages partyradio needs, when missing.
#
# Usage: scripts/ensure-packages.sh [--for run|test]
#   run   what building and running partyradio needs (default)
#   test  that, plus what the namespace testbed needs. Installed with service starts blocked
#         (policy-rc.d), so that installing avahi-daemon can never start it in the root network
#         namespace: on test machines every avahi-daemon runs inside a test namespace.
set -euo pipefail

purpose=run
[[ ${1:-} == --for ]] && purpose=${2:-run}

packages=(
    pkg-config
    libavahi-client-dev libcurl4-openssl-dev libmpv-dev libsodium-dev libsqlite3-dev
    libmicrohttpd-dev libtagc0-dev libssl-dev
    avahi-daemon dbus
)
[[ $purpose == test ]] && packages+=(avahi-utils iproute2 iptables python3 procps util-linux)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
echo "partyradio: installing ${missing[*]}" >&2

blocker=""
if [[ $purpose == test && ! -e /usr/sbin/policy-rc.d ]]; then
    blocker=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$blocker" >/dev/null
    $sudo chmod +x "$blocker"
    trap '$sudo rm -f "$blocker"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
