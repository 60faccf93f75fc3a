#!/usr/bin/env bash
# ensure-packages.sh — install the Debian packages partyradio needs, when missing.
#
# Usage: scripts/ensure-packages.sh [--for run|package|test]
#   run   what building and running partyradio needs (default)
#   package  that, plus what scripts/package needs (dpkg-dev, lintian)
#   test  those, plus what the namespace testbed needs, mpd and mpc (a real music daemon as a live
#         station's source), and zbar-tools (QRCodeTests read the codes
#         back with zbarimg), PulseAudio (SpeakerLANTests and TerminalLANTests play into a null sink),
#         PipeWire with pipewire-pulse and WirePlumber (LivePulseLANTests: a live DJ under PipeWire's
#         pulse server),
#         mpv with mpv-mpris (LiveMPRISLANTests: a player a live DJ follows over MPRIS),
#         tmux (TerminalLANTests run the live views in it), BIND 9 (a unicast DNS-SD server for
#         RoutedLANTests), and the browsers of the three engines guests carry for the web page's
#         tests: Chromium (chromium-driver), WebKit (webkit2gtk-driver's WebKitWebDriver and
#         MiniBrowser under Xvfb, playing through GStreamer's PulseAudio sink) and Firefox ESR (driven
#         over its own WebDriver BiDi with python3-websocket: Debian has no geckodriver). package and
#         test install with service starts blocked (policy-rc.d), so
#         that installing avahi-daemon can never start it in the root network namespace: on test
#         machines every avahi-daemon runs inside a test namespace.
set -euo pipefail

purpose=run
[[ ${1:-} == --for ]] && purpose=${2:-run}

packages=(
    pkg-config
    libavahi-client-dev libcurl4-openssl-dev libmpv-dev libsodium-dev libsqlite3-dev
    libmicrohttpd-dev libtagc0-dev libssl-dev libqrencode-dev libsystemd-dev libldns-dev
    libopus-dev libisal-dev libpulse-dev libspeexdsp-dev
    avahi-daemon dbus
)
[[ $purpose == package ]] && packages+=(dpkg-dev lintian man-db binutils)
[[ $purpose == test ]] && packages+=(curl avahi-utils iproute2 iptables python3 procps util-linux zsh man-db lintian dpkg-dev binutils systemd zbar-tools playerctl tmux pulseaudio pulseaudio-utils chromium chromium-driver python3-selenium fonts-dejavu-core bind9 bind9-dnsutils
    webkit2gtk-driver xvfb xauth dbus-daemon gstreamer1.0-pulseaudio gstreamer1.0-plugins-base firefox-esr python3-websocket
    mpv mpv-mpris pipewire pipewire-bin pipewire-pulse wireplumber)
# A real music daemon writing into a live station's FIFO (LiveMPDLANTests), run only on a testbed host.
[[ $purpose == test ]] && packages+=(mpd mpc)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
echo "partyradio: installing ${missing[*]}" >&2

policy=/usr/sbin/policy-rc.d
backup=""
if [[ $purpose != run ]]; then
    # Whatever policy is there is kept aside and put back; ours answers 101 ("never start").
    if [[ -e $policy ]]; then
        backup=$(mktemp /tmp/partyradio-policy-rc.d.XXXXXX)
        $sudo cp -p "$policy" "$backup"
    fi
    printf '#!/bin/sh\n# partyradio tests: never start services while installing\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    trap 'if [[ -n $backup ]]; then $sudo mv -f "$backup" "$policy"; else $sudo rm -f "$policy"; fi' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

if [[ $purpose != run ]]; then
    # Rule one: nothing of ours multicasts from the root network namespace.
    root_ns=$(readlink /proc/1/ns/net 2>/dev/null || readlink /proc/2/ns/net)
    for pid in $(pgrep -x avahi-daemon || true); do
        if [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) == "$root_ns" ]]; then
            $sudo kill "$pid"
            echo "Error: installing avahi-daemon started it in the root network namespace; stopped it." >&2
            exit 1
        fi
    done
    # mpd runs only on a testbed host (its zeroconf would announce it over mDNS): never the machine's own.
    for pid in $(pgrep -x mpd || true); do
        if [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) == "$root_ns" ]]; then
            $sudo kill "$pid"
            echo "partyradio: installing mpd started it in the root network namespace; stopped it." >&2
        fi
    done
    # BIND runs only on a testbed's router (RoutedLANTests), never as the machine's own server.
    for pid in $(pgrep -x named || true); do
        if [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) == "$root_ns" ]]; then
            $sudo kill "$pid"
            echo "partyradio: installing bind9 started named in the root network namespace; stopped it." >&2
        fi
    done
fi
